#pragma once
// The per-tree step of the pipeline, front-end independent: config tree -> validation -> effective model -> rules ->
// diagnostics. It is LintSession's own (engine/lint_session.hpp), which reads and parses the file and applies the
// configuration, suppressions and rule selection around it: nothing outside engine/ includes this header (a test
// holds the tree to that), so every caller, tests included, takes the one pipeline.
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/effective_model.hpp"
#include "engine/lint_session.hpp"
#include "rules/rule.hpp"

namespace mbl {

struct LintOptions {
    const Revision* revision = nullptr;  // required
    RuleOptions rule_options;
    ConfigPreparer prepare;
    bool show_unknowns = false;  // an IN012 info per place a model field became unknown
};

struct LintResult {
    std::vector<Diagnostic> diagnostics;
    bool resolved = false;            // the five recompute fields all have known values
    bool architecture_known = false;  // num_layers, hidden_size and num_attention_heads are known
};

// The effective model of a config tree at `revision`; the problems validation and assembly find go to `errors`.
// `anchor` is where facts without a line point; `precision` the linted tree's lookup of mixed_precision names
// (ParsedConfig::precision), null for the bundled catalog; `recipe` the recipe function's name ("" for YAML).
EffectiveModel model_of_tree(Value root, const Revision& revision, const SourceRange& anchor,
                             std::vector<Diagnostic>& errors, const PrecisionLookup* precision = nullptr,
                             std::string_view recipe = {});

// Lints a config tree (any front end): options.prepare, then its model, then the rules.
LintResult lint_tree(const LintOptions& options, const Value& root, const SourceRange& anchor,
                     const PrecisionLookup* precision = nullptr, std::string_view recipe = {});

}  // namespace mbl
