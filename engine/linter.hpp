#pragma once
// The per-tree step of the pipeline, front-end independent: config tree -> validation -> effective model -> rules ->
// diagnostics. Inputs reach it through LintSession (engine/lint_session.hpp), which reads and parses the file and
// applies the configuration, suppressions and rule selection around it; what only needs a tree's model (show,
// estimate, hover) asks Linter::effective_model.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/effective_model.hpp"
#include "core/source_manager.hpp"
#include "rules/rule.hpp"

namespace mbl {

// Runs on every config tree before it is checked (--config-file and command-line overrides, see
// cli/recipe_options.cpp); must be thread-safe. Problems it finds go to `diagnostics`.
using ConfigPreparer = std::function<void(Value& root, const Revision& revision, std::vector<Diagnostic>& diagnostics)>;

struct LintOptions {
    LintOptions(const Revision* rev = nullptr, RuleOptions rules = {})
        : revision(rev), rule_options(std::move(rules)) {}
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

class Linter {
public:
    Linter(LintOptions options, SourceManager& sources) : options_(std::move(options)), sources_(sources) {}

    // Lints an already-built config tree (any front end). `anchor` is where facts without a line point; `precision`
    // the linted tree's lookup of mixed_precision names (ParsedConfig::precision), null for the bundled catalog;
    // `recipe` the recipe function's name ("" for YAML configs).
    LintResult lint_tree(Value root, const SourceRange& anchor, const PrecisionLookup* precision = nullptr,
                         std::string_view recipe = {});

    // The effective model of a tree (validation errors are appended to `errors`).
    std::optional<EffectiveModel> effective_model(Value root, const SourceRange& anchor,
                                                  std::vector<Diagnostic>& errors,
                                                  const PrecisionLookup* precision = nullptr,
                                                  std::string_view recipe = {}) const;

    const LintOptions& options() const { return options_; }

private:
    LintOptions options_;
    SourceManager& sources_;
};

// Expands the command-line paths: files as given, directories walked (sorted) for *.yaml / *.yml / *.py. A Python
// target may name one recipe: `file.py::function`. Every path is shown as display_path shows it (relative to the
// working directory inside it), so a file reached as `./src/x` and as `src/x` is one input.
struct InputFile {
    std::string path;
    bool explicit_input = true;
    std::string function;
};
struct WalkOptions {
    // Files and directories a walk leaves out (the configuration's exclude, --exclude); a directory is not entered.
    // Unset: the default exclude patterns (hidden directories, caches, virtual environments).
    std::function<bool(const std::string& path)> excluded = {};
    // Named files are left out too when they match (--force-exclude: pre-commit names every staged file).
    bool force_exclude = false;
    // Walks leave out other people's code: git submodules, 3rdparty/ and third_party/ folders, what git ignores.
    bool skip_vendored = true;
    // Receives one line per thing a walk passed over on purpose (vendored trees, links out of the tree); may be null.
    std::vector<std::string>* notes = nullptr;
};
std::vector<InputFile> collect_inputs(const std::vector<std::string>& paths, std::vector<Diagnostic>& errors,
                                      const WalkOptions& walk = {});

}  // namespace mbl
