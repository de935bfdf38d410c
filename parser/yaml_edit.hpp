#pragma once
// Layout-preserving edits of YAML text: find where a `key: value` entry sits (block or flow style), remove it,
// replace its value, insert a sibling after it, replace one item of a list. Everything else in the file (comments,
// quoting, blank lines, key order) stays byte for byte as written.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/value.hpp"
#include "parser/front_end.hpp"

namespace mbl::yaml_edit {

struct EntrySpan {
    std::size_t key_begin = 0;
    std::size_t colon = 0;        // the `:` after the key
    std::size_t value_begin = 0;  // first byte of a value written on the key's line
    std::size_t value_end = 0;    // end of that value, before spaces and any comment
    bool inline_value = true;     // false: the value sits on the following lines (block list/map/scalar) or is empty
    bool flow = false;            // the entry is inside `{...}`
    std::size_t line_begin = 0;   // block: start of the key's line
    std::size_t entry_end = 0;    // block: just past the newline of the entry's last line; flow: value_end
};

// The entry whose key starts at `key_offset`; nullopt when the text there is not a key this module can edit
// safely (a key inside a `- key: v` list item, a complex key, unterminated quotes, ...).
std::optional<EntrySpan> entry_at(std::string_view text, std::size_t key_offset);

// Every comment (`#` at a line start or after whitespace, outside quoted scalars).
std::vector<SourceComment> comments(std::string_view text);

// A scalar or a flat list as YAML flow text: `uniform`, `false`, `null`, `[core_attn, mlp]`, `"yes"`.
std::string render(const Value& value);

// The edits for one FieldEdit (see FrontEnd::field_edit); `file` names the text in the returned ranges.
std::vector<TextEdit> field_edit(const std::string& file, const FieldEdit& edit, const EditSite& site,
                                 std::string_view text, const LineIndex& lines);

}  // namespace mbl::yaml_edit
