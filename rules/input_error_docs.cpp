// The documentation of the input-error codes (IN0xx, core/input_errors.def), in the rules' format: `mbridge-lint
// explain IN004` prints it and docs/rules.md lists it after the rules. An input error is not a rule (nothing to
// select or suppress); the code says why the linter could not use a file.
#include "core/input_errors.hpp"
#include "rules/registry.hpp"

namespace mbl {

const std::vector<RuleInfo>& input_error_docs() {
    static const std::vector<RuleInfo> docs = [] {
        std::vector<RuleInfo> v;
        for (const auto& e : input_error_table()) v.push_back(RuleInfo{e.code, e.name, e.severity, e.summary, e.doc});
        return v;
    }();
    return docs;
}

}  // namespace mbl
