#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mbl {

// A dotted release version such as Transformer Engine's "2.6.0dev0" or "1.13.0+cu128".
// Pre-release tags (dev/rc/a/b) sort before the release, as in PEP 440.
struct Version {
    std::vector<int> parts;
    int pre_rank = 3;  // 0 dev, 1 a/b, 2 rc, 3 final
    int pre_number = 0;

    static std::optional<Version> parse(std::string_view text);
    int compare(const Version& other) const;
    bool operator<(const Version& o) const { return compare(o) < 0; }
    bool operator>=(const Version& o) const { return compare(o) >= 0; }
};

}  // namespace mbl
