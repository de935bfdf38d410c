#pragma once
// Checks the shape of a config tree before rules run: known sections, known model fields (with "did you mean"),
// value types. Values of the wrong type are replaced by unknown values so no rule reasons about them.
#include <vector>

#include "core/diagnostic.hpp"
#include "core/schema.hpp"
#include "core/value.hpp"

namespace mbl {

std::vector<Diagnostic> validate_config(Value& root, const Revision& revision);

// The same check without touching the tree: the replacements it makes, each at the entry indices from the root down,
// for a caller that copies the tree only where one is made (most trees need none).
struct ValidationEdit {
    std::vector<std::size_t> path;
    Value value;
};
std::vector<Diagnostic> validate_config(const Value& root, const Revision& revision,
                                        std::vector<ValidationEdit>& edits);
void apply_validation_edits(Value& root, std::vector<ValidationEdit> edits);

// A top-level section that names the recipe a YAML file is applied to: no ConfigContainer section, a mapping whose
// `_target_` is a function building a config (a `*_config` function, or one of a `recipes` package), as in
// `recipe: {_target_: megatron.bridge.recipes.qwen.qwen3_8b_pretrain_config}`, or whose `name` is a `*_config` recipe
// name (`recipe: {name: qwen3_8b_pretrain_config}`). A launcher calls it, then merges the file's other sections over
// the config it returns; the section is the launcher's, never merged.
bool names_recipe(const Value::Entry& section);

}  // namespace mbl
