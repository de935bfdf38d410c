#pragma once
// Byte offsets <-> 1-based (line, byte column) positions of one text, as SourceRange uses them.
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "core/source_range.hpp"

namespace mbl {

// A text ending in a newline has an empty last line after it, as editors (and LSP positions) count lines.
class LineIndex {
public:
    explicit LineIndex(std::string_view text);

    int line_count() const { return static_cast<int>(starts_.size()); }
    // Offset of a 1-based line and byte column, clamped to the line (a column past the end means the line end,
    // before its newline) and to the text.
    std::size_t offset(int line, int column) const;
    std::size_t line_start(int line) const;
    // End of the line's content, before "\n" or "\r\n".
    std::size_t line_end(int line) const;
    // Offset just past the line's newline (the text size on the last line).
    std::size_t next_line_start(int line) const;
    // The text of a 1-based line without its line ending; nullopt outside the text.
    std::optional<std::string_view> line_text(int line) const;
    // 1-based line and column of an offset.
    int line_of(std::size_t offset) const;
    int column_of(std::size_t offset) const { return static_cast<int>(offset - line_start(line_of(offset))) + 1; }

private:
    std::string_view text_;
    std::vector<std::size_t> starts_;
};

}  // namespace mbl
