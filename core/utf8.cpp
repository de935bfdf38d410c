#include "core/utf8.hpp"

#include <cstdint>
#include <cstring>

namespace mbl {

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n) {
        // Eight ASCII bytes at a time: most text is ASCII.
        std::uint64_t eight = 0;
        while (i + sizeof eight <= n) {
            std::memcpy(&eight, s + i, sizeof eight);
            if (eight & 0x8080808080808080ULL) break;
            i += sizeof eight;
        }
        if (i >= n) break;
        const unsigned char c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t length = 0;
        // Allowed range of the second byte (Unicode Table 3-7), which rules out overlongs and surrogates.
        unsigned char low = 0x80, high = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) length = 2;
        else if (c == 0xE0) length = 3, low = 0xA0;
        else if (c >= 0xE1 && c <= 0xEC) length = 3;
        else if (c == 0xED) length = 3, high = 0x9F;
        else if (c >= 0xEE && c <= 0xEF) length = 3;
        else if (c == 0xF0) length = 4, low = 0x90;
        else if (c >= 0xF1 && c <= 0xF3) length = 4;
        else if (c == 0xF4) length = 4, high = 0x8F;
        else return i;
        if (i + length > n) return i;
        if (s[i + 1] < low || s[i + 1] > high) return i;
        for (std::size_t k = 2; k < length; ++k)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
        i += length;
    }
    return std::nullopt;
}

}  // namespace mbl
