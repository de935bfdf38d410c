#pragma once
// The recompute labels the estimator models, in the order it offers them (labels.def), and the ones it knows of but
// does not model.
#include <string_view>
#include <vector>

#include "memory/labels/label.hpp"

namespace mbl::memory::labels {

const std::vector<const LabelModel*>& modeled();
const LabelModel* find(std::string_view name);  // nullptr when not modelled
const std::vector<UnmodeledLabel>& unmodeled();

}  // namespace mbl::memory::labels
