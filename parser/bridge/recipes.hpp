#pragma once
// Recipes: top-level functions that return a ConfigContainer. Finding them needs only the syntax tree; evaluating
// one runs the abstract evaluator and turns the returned config object into the engine's config tree, every value
// carrying the provenance of the statement that set it and the chain of calls that led there.
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/effective_model.hpp"
#include "core/value.hpp"
#include "pyeval/interpreter.hpp"

namespace mbl::py {

struct RecipeInfo {
    Module* module = nullptr;
    std::string name;
    SourceRange def;         // the function's name in its `def` line (where facts without a line point)
    bool annotated = false;  // `-> ConfigContainer`; otherwise found by its *_config name
    // A job script's `if __name__ == "__main__":` block run as the recipe (its body; Interp::run_main_block): the
    // config it hands to pretrain() or finetune(). kNoNode for a recipe function.
    NodeId main_block = kNoNode;
};

// Recipe candidates among the top-level functions of a parsed module. Left out unless `include_private` (one function
// is named, so every function is a candidate): names starting with `_` (helpers), functions with a parameter
// without default (they transform a config they are given), and *_config functions without a `return <value>`.
std::vector<RecipeInfo> find_recipes(const Module& m, bool include_private = false);
// The top-level `if __name__ == "__main__":` block of a parsed module as a recipe named "__main__", anchored at its
// `if`; nullopt when there is none.
std::optional<RecipeInfo> find_main_block(const Module& m);
// Every top-level function name of a parsed module (for "did you mean").
std::vector<std::string> function_names(const Module& m);

struct RecipeOutcome {
    bool is_recipe = true;                // false: a *_config function that does not return a config object
    Value root;                           // the config tree: sections model, mixed_precision, comm_overlap, train, ...
    std::vector<Diagnostic> diagnostics;  // front-end findings (unknown model architecture, evaluation limits)
    std::int64_t steps = 0;               // evaluation steps used
    std::string config_module;            // the dotted module defining the returned config's class ("" if outside)
};

// The tree's lookup of mixed_precision names for configs whose class is defined in `config_module` (a dotted module
// name): the tree's get_mixed_precision_config, evaluated once per name. It refers to `project`, which must outlive it.
std::shared_ptr<const PrecisionLookup> make_precision_lookup(Project& project, std::string config_module);

// Evaluates one recipe of a project whose host is a BridgeHost of `revision`. Thread-safe (one evaluator per call;
// modules are shared read-only).
RecipeOutcome evaluate_recipe(Project& project, const Revision& revision, const RecipeInfo& recipe);

// An evaluator value as a config value; `info` is where it was stored.
Value export_value(const Val& v, const SetInfo& info);
// Provenance for a stored value: its statement, the call chain as notes.
Provenance provenance_of(const SetInfo& info);

}  // namespace mbl::py
