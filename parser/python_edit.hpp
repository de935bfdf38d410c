#pragma once
// Layout-preserving edits of Python recipe text, driven by provenance: the recipe front end records, for each
// value it assigns, the range of the statement `cfg.model.field = value` or of the keyword argument
// `field=value` in a provider call. From that range alone this module removes the statement, replaces the value,
// inserts a sibling assignment, or replaces one string of a list literal. Comments and formatting elsewhere stay.
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/value.hpp"
#include "parser/front_end.hpp"

namespace mbl::python_edit {

// Every `#` comment outside string literals (triple-quoted strings included).
std::vector<SourceComment> comments(std::string_view text);

// A scalar or a flat list as a Python literal: "uniform", False, None, 3, ["core_attn", "mlp"].
std::string render(const Value& value);

// The edits for one FieldEdit (see FrontEnd::field_edit); empty when the site is not a plain assignment or
// keyword argument, or the edit would leave the code invalid (the only statement of a block).
std::vector<TextEdit> field_edit(const std::string& file, const FieldEdit& edit, const EditSite& site,
                                 std::string_view text, const LineIndex& lines);

}  // namespace mbl::python_edit
