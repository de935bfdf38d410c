#pragma once
// Identities of diagnostics that survive edits elsewhere in a file (SARIF partialFingerprints, GitLab fingerprints):
// the rule, the file, the flagged line's text without whitespace (not its number), the message, and which occurrence
// of that key this is.
#include <map>
#include <string>

#include "core/diagnostic.hpp"
#include "core/source_manager.hpp"

namespace mbl {

class Fingerprints {
public:
    Fingerprints(const SourceManager& sources, std::string base_dir)
        : sources_(sources), base_dir_(std::move(base_dir)) {}
    // "0123456789abcdef:1"; call once per diagnostic, in output order.
    std::string next(const Diagnostic& d);

private:
    const SourceManager& sources_;
    std::string base_dir_;
    std::map<std::string, int> seen_;
};

}  // namespace mbl
