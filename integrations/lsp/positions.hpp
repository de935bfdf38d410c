#pragma once
// LSP positions are (0-based line, character) where a character counts UTF-16 code units by default, or bytes
// when the client and server agreed on UTF-8. The linter's SourceRange counts 1-based lines and byte columns.
#include <cstddef>
#include <string>
#include <string_view>

#include "core/line_index.hpp"
#include "core/source_range.hpp"
#include "integrations/lsp/json_rpc.hpp"

namespace mbl::lsp {

enum class PositionEncoding { Utf16, Utf8 };
const char* encoding_name(PositionEncoding e);

// Converts between one text's byte offsets and LSP positions.
class PositionMapper {
public:
    PositionMapper(std::string_view text, PositionEncoding encoding) : text_(text), lines_(text), encoding_(encoding) {}

    // A position past the end of its line means the line's end; a line past the end means the end of the text.
    std::size_t offset(int line, int character) const;
    std::size_t offset(const json& position) const;  // {"line":..,"character":..}; throws on bad shape
    json position(std::size_t offset) const;
    json range(const SourceRange& r) const;  // 1-based byte range -> LSP range; invalid -> start of the text
    SourceRange source_range(const std::string& file, std::size_t begin, std::size_t end) const;

private:
    std::string_view text_;
    LineIndex lines_;
    PositionEncoding encoding_;
};

// file:///abs/path <-> /abs/path (percent-decoding and -encoding); other schemes are returned unchanged.
std::string uri_to_path(const std::string& uri);
std::string path_to_uri(const std::string& path);

}  // namespace mbl::lsp
