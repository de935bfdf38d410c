#include "core/line_index.hpp"

#include <algorithm>

namespace mbl {

LineIndex::LineIndex(std::string_view text) : text_(text) {
    starts_.push_back(0);
    if (text.find('\r') == std::string_view::npos) {  // the usual text: its lines end at each "\n", found by memchr
        for (std::size_t i = text.find('\n'); i != std::string_view::npos; i = text.find('\n', i + 1))
            starts_.push_back(i + 1);
        return;
    }
    // A lone "\r" ends a line too, as Python's tokenizer and YAML read it (old Mac OS line endings).
    for (std::size_t i = 0; i < text.size(); ++i)
        if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')))
            starts_.push_back(i + 1);
}

std::size_t LineIndex::line_start(int line) const {
    if (line < 1) return 0;
    if (line > line_count()) return text_.size();
    return starts_[static_cast<std::size_t>(line - 1)];
}

std::size_t LineIndex::next_line_start(int line) const {
    if (line < 1) return 0;
    if (line >= line_count()) return text_.size();
    return starts_[static_cast<std::size_t>(line)];
}

std::size_t LineIndex::line_end(int line) const {
    std::size_t end = next_line_start(line);
    if (end > line_start(line) && end <= text_.size() && end > 0 && text_[end - 1] == '\n') --end;
    if (end > line_start(line) && text_[end - 1] == '\r') --end;
    return end;
}

std::size_t LineIndex::offset(int line, int column) const {
    if (line > line_count()) return text_.size();
    const std::size_t start = line_start(line);
    const std::size_t col = column < 1 ? 0 : static_cast<std::size_t>(column - 1);
    return std::min(start + col, line_end(line));
}

std::optional<std::string_view> LineIndex::line_text(int line) const {
    if (line < 1 || line > line_count()) return std::nullopt;
    return text_.substr(line_start(line), line_end(line) - line_start(line));
}

int LineIndex::line_of(std::size_t offset) const {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
    return static_cast<int>(it - starts_.begin());
}

}  // namespace mbl
