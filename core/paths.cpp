#include "core/paths.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <filesystem>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace mbl {

namespace fs = std::filesystem;

namespace {

struct ResolvedFolders {
    std::shared_mutex mutex;
    std::unordered_map<std::string, fs::path> by_spelling;  // absolute spelling -> weakly canonical form
};

ResolvedFolders& resolved_folders() {
    static ResolvedFolders folders;
    return folders;
}

fs::path resolved_folder(const fs::path& folder, std::error_code& ec) {
    ResolvedFolders& cache = resolved_folders();
    {
        std::shared_lock<std::shared_mutex> lock(cache.mutex);
        if (auto it = cache.by_spelling.find(folder.native()); it != cache.by_spelling.end()) return it->second;
    }
    fs::path resolved = fs::weakly_canonical(folder, ec);
    if (ec) return resolved;  // not kept: the next call tries again
    std::unique_lock<std::shared_mutex> lock(cache.mutex);
    cache.by_spelling.emplace(folder.native(), resolved);
    return resolved;
}

// No `.` or `..` component: such a path's folder part can be resolved on its own.
bool without_dots(const fs::path& p) {
    for (const auto& part : p)
        if (part == "." || part == "..") return false;
    return true;
}

}  // namespace

fs::path resolved_path(const fs::path& path, std::error_code& ec) {
    ec.clear();
    fs::path abs = fs::absolute(path, ec);
    if (ec) return abs;
    if (!abs.has_filename() || !abs.has_relative_path() || !without_dots(abs)) return fs::weakly_canonical(abs, ec);
    struct stat st {};
    if (::lstat(abs.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode)) return fs::weakly_canonical(abs, ec);
    } else if (errno != ENOENT) {
        return fs::weakly_canonical(abs, ec);  // let it report what it finds (a folder that cannot be searched)
    }
    fs::path folder = resolved_folder(abs.parent_path(), ec);
    if (ec) return fs::weakly_canonical(abs, ec);
    return folder / abs.filename();
}

void forget_resolved_paths() {
    ResolvedFolders& cache = resolved_folders();
    std::unique_lock<std::shared_mutex> lock(cache.mutex);
    cache.by_spelling.clear();
}

std::string normalized_path(const std::string& path) {
    std::error_code ec;
    return resolved_path(path, ec).lexically_normal().string();
}

std::optional<std::string> relative_to(const std::string& path, const std::string& base) {
    const fs::path rel = fs::path(normalized_path(path)).lexically_relative(fs::path(normalized_path(base)));
    if (rel.empty() || *rel.begin() == "..") return std::nullopt;
    return rel.generic_string();
}

std::string display_path(const std::string& path) {
    std::error_code ec;
    fs::path abs = resolved_path(path, ec);
    if (ec) return path;
    fs::path cwd = resolved_path(fs::current_path(ec), ec);
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
