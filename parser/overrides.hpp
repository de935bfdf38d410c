#pragma once
// Hydra-style command-line overrides, as Megatron Bridge applies them after the recipe and the --config-file YAML:
//   a.b=v   set an existing key          +a.b=v   add a key that must not exist
//   ++a.b=v add or replace               ~a.b     delete (~a.b=v: only when the value is v)
// Values: null, true/false, integers, floats (1e-3, inf, nan), 'quoted' / "quoted" strings, unquoted strings,
// [lists], {key: value} dicts, nested. Each override text is its own pseudo-file ("<override 1>") so a
// diagnostic can show it with a caret.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/schema.hpp"
#include "core/value.hpp"

namespace mbl {

struct Override {
    enum class Kind { Set, Add, ForceAdd, Delete };
    Kind kind = Kind::Set;
    std::vector<std::string> path;  // model.recompute_granularity -> {"model", "recompute_granularity"}
    std::optional<Value> value;     // absent for a plain delete
    std::string text;               // as written
    SourceRange range;              // the whole override
    SourceRange key_range;
    std::string dotted() const;
};

struct OverrideParse {
    std::optional<Override> override;
    std::optional<Diagnostic> error;  // IN007 with the offending column
};

// Parses one override; `source_name` is its pseudo-file name ("<override 1>").
OverrideParse parse_override(const std::string& source_name, std::string_view text);

// Applies overrides in order to a config tree. A plain set needs the key to exist (every ConfigContainer section,
// every model field of the revision, or anything already in the tree); `+` needs it absent; `~` needs it present
// and not None. Problems become located IN004 / IN007 errors and the override is skipped.
void apply_overrides(Value& root, const std::vector<Override>& overrides, const Revision& revision,
                     std::vector<Diagnostic>& errors);

// Merges a YAML override file (same nesting as the config) into the tree: mappings merge key by key, anything else
// replaces the value. Runs before the command-line overrides.
void merge_config_tree(Value& root, const Value& file_tree);

}  // namespace mbl
