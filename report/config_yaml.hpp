#pragma once
// `mbridge-lint show`: a config tree as YAML, each value followed by a comment naming where it came from (file and
// line, override, or default). Values the linter could not work out are written `!unknown "reason"`.
#include <iosfwd>
#include <string>
#include <vector>

#include "core/effective_model.hpp"
#include "core/value.hpp"

namespace mbl {

struct ConfigYamlOptions {
    std::vector<std::string> only;  // dotted prefixes ("model.recompute"); empty: everything
    std::string title;              // a comment line before the document
    std::string facts;              // a second one: where the Megatron Core facts (defaults, fields) come from
};

// The model section is the effective model (defaults, mixed precision and comm_overlap applied); every other section
// comes from `root` as built (after overrides).
void write_config_yaml(std::ostream& out, const Value& root, const EffectiveModel& model,
                       const ConfigYamlOptions& options);

// The dotted path of every key write_config_yaml shows ("model", "model.recompute_granularity", "train", ...), for
// checking --only prefixes.
std::vector<std::string> shown_paths(const Value& root, const EffectiveModel& model);

// The comment text for a value: "recipes/llama/llama3.py:250", "<override 1>", "default (Megatron Core 0.19)" ...
std::string provenance_comment(const Value& v, const EffectiveModel& model);

}  // namespace mbl
