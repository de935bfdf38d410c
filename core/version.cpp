#include "core/version.hpp"

#include <cctype>

namespace mbl {

std::optional<Version> Version::parse(std::string_view text) {
    Version v;
    size_t i = 0;
    if (i < text.size() && (text[i] == 'v' || text[i] == 'V')) ++i;
    while (true) {
        if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
        int n = 0;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
            n = n * 10 + (text[i] - '0');
            if (n > 1000000) return std::nullopt;
            ++i;
        }
        v.parts.push_back(n);
        if (i < text.size() && text[i] == '.' && i + 1 < text.size() &&
            std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
            ++i;
            continue;
        }
        break;
    }
    if (i < text.size() && text[i] == '.') ++i;
    std::string_view rest = text.substr(i);
    auto starts = [&](std::string_view p) { return rest.substr(0, p.size()) == p; };
    size_t skip = 0;
    if (starts("dev")) v.pre_rank = 0, skip = 3;
    else if (starts("rc")) v.pre_rank = 2, skip = 2;
    else if (starts("a") || starts("b")) v.pre_rank = 1, skip = 1;
    else if (!rest.empty() && rest[0] != '+') return std::nullopt;
    rest.remove_prefix(skip);
    while (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest[0]))) {
        v.pre_number = v.pre_number * 10 + (rest[0] - '0');
        if (v.pre_number > 1000000) return std::nullopt;  // same bound as the release parts: no overflow
        rest.remove_prefix(1);
    }
    if (!rest.empty() && rest[0] != '+') return std::nullopt;  // "+local" build tags are ignored
    return v;
}

int Version::compare(const Version& o) const {
    size_t n = std::max(parts.size(), o.parts.size());
    for (size_t k = 0; k < n; ++k) {
        int a = k < parts.size() ? parts[k] : 0, b = k < o.parts.size() ? o.parts[k] : 0;
        if (a != b) return a < b ? -1 : 1;
    }
    if (pre_rank != o.pre_rank) return pre_rank < o.pre_rank ? -1 : 1;
    if (pre_number != o.pre_number) return pre_number < o.pre_number ? -1 : 1;
    return 0;
}

}  // namespace mbl
