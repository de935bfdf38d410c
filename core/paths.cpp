#include "core/paths.hpp"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>

namespace mbl {

namespace fs = std::filesystem;

std::string normalized_path(const std::string& path) {
    std::error_code ec;
    return fs::weakly_canonical(fs::absolute(path, ec), ec).lexically_normal().string();
}

std::optional<std::string> relative_to(const std::string& path, const std::string& base) {
    const fs::path rel = fs::path(normalized_path(path)).lexically_relative(fs::path(normalized_path(base)));
    if (rel.empty() || *rel.begin() == "..") return std::nullopt;
    return rel.generic_string();
}

std::string display_path(const std::string& path) {
    std::error_code ec;
    fs::path abs = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec) return path;
    fs::path cwd = fs::weakly_canonical(fs::current_path(ec), ec);
    if (ec) return abs.string();
    auto rel = abs.lexically_relative(cwd);
    if (!rel.empty() && rel.native().rfind("..", 0) != 0) return rel.string();
    return abs.string();
}

std::string uri_encode_path(std::string_view path) {
    std::string out;
    for (unsigned char c : path) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') out += static_cast<char>(c);
        else out += fmt::format("%{:02X}", c);
    }
    return out;
}

}  // namespace mbl
