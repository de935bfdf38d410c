#include "integrations/lsp/positions.hpp"

#include "core/paths.hpp"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <stdexcept>

namespace mbl::lsp {

const char* encoding_name(PositionEncoding e) { return e == PositionEncoding::Utf8 ? "utf-8" : "utf-16"; }

namespace {

// Length of the UTF-8 sequence starting with byte `c` (1 for a stray continuation byte).
std::size_t sequence_length(unsigned char c) {
    if (c >= 0xF0) return 4;
    if (c >= 0xE0) return 3;
    if (c >= 0xC0) return 2;
    return 1;
}

}  // namespace

std::size_t PositionMapper::offset(int line, int character) const {
    if (line < 0) return 0;
    if (line + 1 > lines_.line_count()) return text_.size();
    const std::size_t begin = lines_.line_start(line + 1), end = lines_.line_end(line + 1);
    if (character <= 0) return begin;
    if (encoding_ == PositionEncoding::Utf8) return std::min(begin + static_cast<std::size_t>(character), end);
    std::size_t i = begin;
    int units = 0;
    while (i < end && units < character) {
        const std::size_t n = std::min(sequence_length(static_cast<unsigned char>(text_[i])), end - i);
        units += n == 4 ? 2 : 1;  // code points above U+FFFF are surrogate pairs in UTF-16
        i += n;
    }
    return i;
}

std::size_t PositionMapper::offset(const json& p) const {
    if (!p.is_object() || !p.contains("line") || !p.contains("character") || !p["line"].is_number_integer() ||
        !p["character"].is_number_integer())
        throw std::invalid_argument("a position needs integer line and character");
    return offset(p["line"].get<int>(), p["character"].get<int>());
}

json PositionMapper::position(std::size_t offset) const {
    offset = std::min(offset, text_.size());
    const int line = lines_.line_of(offset);
    const std::size_t begin = lines_.line_start(line);
    int character = 0;
    if (encoding_ == PositionEncoding::Utf8) {
        character = static_cast<int>(offset - begin);
    } else {
        for (std::size_t i = begin; i < offset;) {
            const std::size_t n = sequence_length(static_cast<unsigned char>(text_[i]));
            character += n == 4 ? 2 : 1;
            i += n;
        }
    }
    return {{"line", line - 1}, {"character", character}};
}

json PositionMapper::range(const SourceRange& r) const {
    if (!r.valid()) return {{"start", position(0)}, {"end", position(0)}};
    const std::size_t b = lines_.offset(r.line, r.column);
    std::size_t e = r.end_line > 0 ? lines_.offset(r.end_line, r.end_column) : b;
    if (e < b) e = b;
    return {{"start", position(b)}, {"end", position(e)}};
}

SourceRange PositionMapper::source_range(const std::string& file, std::size_t b, std::size_t e) const {
    return SourceRange{file, lines_.line_of(b), lines_.column_of(b), lines_.line_of(e), lines_.column_of(e)};
}

std::string uri_to_path(const std::string& uri) {
    if (uri.rfind("file://", 0) != 0) return uri;
    std::string rest = uri.substr(7);
    // file://host/path: only the local host (empty or "localhost") is meaningful here.
    if (rest.rfind("localhost/", 0) == 0) rest = rest.substr(9);
    std::string out;
    for (std::size_t i = 0; i < rest.size(); ++i) {
        if (rest[i] == '%' && i + 2 < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
            out += static_cast<char>(std::stoi(rest.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            out += rest[i];
        }
    }
    return out;
}

std::string path_to_uri(const std::string& path) {
    if (path.find("://") != std::string::npos || path.rfind("untitled:", 0) == 0) return path;
    std::error_code ec;
    return "file://" + uri_encode_path(std::filesystem::absolute(path, ec).lexically_normal().generic_string());
}

}  // namespace mbl::lsp
