#pragma once
// Lints Python recipes: finds the recipe functions of the targets, evaluates them on a thread pool (modules are
// parsed and evaluated once, shared), lints each config tree, and merges the identical diagnostics that many
// recipes inherit from one shared line. Output is deterministic whatever the thread count.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/source_manager.hpp"
#include "engine/linter.hpp"

namespace mbl {

namespace py {
class Project;
class HfResolver;
struct RecipeInfo;
}  // namespace py

// A Python target: a file (every recipe in it) or `file.py::function`.
struct RecipeTarget {
    std::string file;
    std::string function;  // empty: all recipes of the file
};

// Splits "path/file.py::function" (the function part may be empty).
RecipeTarget parse_recipe_target(const std::string& arg);
bool is_python_target(const std::string& arg);

struct RecipeOptions {
    std::string root;                     // --root; empty: found per file
    std::vector<std::string> hf_configs;  // --hf-config
    std::vector<std::string> hf_cache_dirs;  // empty: $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub
    int jobs = 0;                         // worker threads; 0: one per core
    bool show_unknowns = false;           // report every unknown model field (IN012 infos)
};

// One evaluated recipe, for `show`.
struct EvaluatedRecipe {
    bool is_recipe = true;             // false: a *_config function that returns no config object
    std::string name;
    SourceRange def;
    Value root;                        // the config tree, before overrides
    std::vector<Diagnostic> diagnostics;  // front-end findings
};

struct RecipeRunResult {
    std::vector<Diagnostic> diagnostics;  // merged, sorted
    int files = 0;                        // Python files checked
    int recipes = 0;                      // recipe functions linted
    int resolved = 0;                     // ... whose five recompute fields are all known
    std::vector<std::pair<std::string, SourceRange>> unresolved;  // name and `def` of the others
};

class RecipeSession {
public:
    RecipeSession(const Revision& revision, RecipeOptions options);
    ~RecipeSession();

    // Expands the targets into recipes; missing files/functions and syntax errors become diagnostics.
    std::vector<const py::RecipeInfo*> collect(const std::vector<RecipeTarget>& targets, std::vector<Diagnostic>& errors,
                                               int& files);
    // Evaluates and lints every recipe on the thread pool.
    RecipeRunResult lint(const std::vector<const py::RecipeInfo*>& recipes, const Linter& linter);
    // Evaluates one recipe (thread-safe).
    EvaluatedRecipe evaluate(const py::RecipeInfo& recipe);
    // Registers the text of every Python file read, so text output can quote any of them. Call after evaluating.
    void register_sources(SourceManager& sources) const;
    // Problems found while importing helper modules (syntax errors, unreadable files), once each.
    std::vector<Diagnostic> module_diagnostics();
    // Problems with --hf-config.
    std::vector<std::string> hf_errors() const;

private:
    py::Project& project_for(const std::string& file);

    const Revision& revision_;
    RecipeOptions options_;
    std::unique_ptr<py::HfResolver> hf_;
    std::vector<std::unique_ptr<py::Project>> projects_;
    std::vector<std::unique_ptr<py::RecipeInfo>> recipes_;
    std::set<std::string> reported_;  // syntax errors already reported by collect()
};

// Merges diagnostics that are identical across recipes (same code, location and message) into one, noting the
// other recipes; then sorts.
std::vector<Diagnostic> merge_recipe_diagnostics(std::vector<std::pair<std::string, std::vector<Diagnostic>>> per_recipe);

}  // namespace mbl
