#pragma once
// What hovering over a config field shows: its effective value (what Megatron Core will see), where that value came
// from, and what other parts of the linter add (the memory estimator: the predicted saving of a recompute setting).
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/effective_model.hpp"
#include "core/value.hpp"

namespace mbl::lsp {

// A section added under the hover text of a field: markdown, or nullopt when it has nothing to say about it.
using HoverSection = std::function<std::optional<std::string>(const EffectiveModel& model, FieldName field)>;
// Registers a section (at start-up, before the server runs). The memory estimator plugs its predicted saving here.
void add_hover_section(HoverSection section);

// Markdown for `field`; `written` is the value as the file wrote it (null when the file does not set it).
std::string hover_markdown(const EffectiveModel& model, FieldName field, const Value* written);

}  // namespace mbl::lsp
