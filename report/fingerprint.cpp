#include "report/fingerprint.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>

#include "core/paths.hpp"

namespace mbl {

static std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

std::string Fingerprints::next(const Diagnostic& d) {
    std::string content;
    if (auto line = sources_.line(d.range.file, d.range.line)) {
        for (char c : *line)
            if (!std::isspace(static_cast<unsigned char>(c))) content += c;
    }
    const std::string path = relative_to(d.range.file, base_dir_).value_or(d.range.file);
    const std::string key = fmt::format("{}\n{}\n{}\n{}", d.code, path, content, d.message);
    const int occurrence = seen_[key]++;
    return fmt::format("{:016x}:{}", fnv1a(key), occurrence + 1);
}

}  // namespace mbl
