#pragma once
// Checks the shape of a config tree before rules run: known sections, known model fields (with "did you mean"),
// value types. Values of the wrong type are replaced by unknown values so no rule reasons about them.
#include <vector>

#include "core/diagnostic.hpp"
#include "core/schema.hpp"
#include "core/value.hpp"

namespace mbl {

// Whether a value fits a schema field type (None and unknown values fit every type).
bool type_matches(const Value& v, FieldType t);

std::vector<Diagnostic> validate_config(Value& root, const Revision& revision);

// True when a YAML root looks like a Megatron Bridge config (used to skip unrelated YAML in directory walks).
bool looks_like_bridge_config(const Value& root);

}  // namespace mbl
