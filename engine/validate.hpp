#pragma once
// Checks the shape of a config tree before rules run: known sections, known model fields (with "did you mean"),
// value types. Values of the wrong type are replaced by unknown values so no rule reasons about them.
#include <vector>

#include "core/diagnostic.hpp"
#include "core/schema.hpp"
#include "core/value.hpp"

namespace mbl {

std::vector<Diagnostic> validate_config(Value& root, const Revision& revision);

}  // namespace mbl
