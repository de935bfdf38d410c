#pragma once
// UTF-8 validation. Recipes and configs are UTF-8 (YAML is Unicode; Python 3 source defaults to UTF-8), and every
// report format (JSON, SARIF, LSP) must carry the source text it quotes, so a file that is not valid UTF-8 is
// rejected at the front door rather than failing deep inside an output writer.
#include <cstddef>
#include <optional>
#include <string_view>

namespace mbl {

// Byte offset of the first byte that does not start or continue a well-formed UTF-8 sequence (overlong forms,
// surrogates and code points above U+10FFFF are not well-formed), or nullopt when the whole text is valid.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

}  // namespace mbl
