#include "core/paths.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
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

// The working directory as getcwd gives it, without building a std::filesystem::path.
std::optional<std::string> working_directory() {
    char buf[4096];
    if (::getcwd(buf, sizeof buf)) return std::string(buf);
    std::error_code ec;  // a longer path than the buffer: as std::filesystem finds it
    fs::path cwd = fs::current_path(ec);
    if (ec) return std::nullopt;
    return cwd.string();
}

// resolved_path's answer, worked out on strings, for the common case: a path whose components are all plain names
// (no `.`, `..`, or empty ones) naming a file that is not itself a link. nullopt: take the general way. A run asks
// this for every file many times, and building and splitting std::filesystem::path objects cost more than the
// lookups themselves.
std::optional<std::string> resolved_plain(std::string_view path) {
    if (path.empty() || path.back() == '/') return std::nullopt;
    std::string abs;
    if (path.front() == '/') {
        abs = path;
    } else {
        auto cwd = working_directory();
        if (!cwd) return std::nullopt;
        abs = std::move(*cwd);
        if (abs.back() != '/') abs += '/';
        abs += path;
    }
    for (std::size_t start = 1; start <= abs.size();) {  // every component after the leading '/'
        std::size_t end = abs.find('/', start);
        if (end == std::string::npos) end = abs.size();
        const std::string_view part(abs.data() + start, end - start);
        if (part.empty() || part == "." || part == "..") return std::nullopt;
        start = end + 1;
    }
    struct stat st {};
    if (::lstat(abs.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode)) return std::nullopt;
    } else if (errno != ENOENT) {
        return std::nullopt;  // let the general way report what it finds (a folder that cannot be searched)
    }
    const std::size_t slash = abs.rfind('/');
    std::error_code ec;
    const fs::path folder = resolved_folder(fs::path(slash == 0 ? "/" : abs.substr(0, slash)), ec);
    if (ec) return std::nullopt;
    std::string out = folder.native();
    if (out.empty() || out.back() != '/') out += '/';
    out.append(abs, slash + 1, std::string::npos);
    return out;
}

}  // namespace

fs::path resolved_path(const fs::path& path, std::error_code& ec) {
    ec.clear();
    if (auto plain = resolved_plain(path.native())) return fs::path(std::move(*plain));
    // `.` or `..`, a link, a folder that cannot be searched: resolved in full.
    fs::path abs = fs::absolute(path, ec);
    if (ec) return abs;
    return fs::weakly_canonical(abs, ec);
}

void forget_resolved_paths() {
    ResolvedFolders& cache = resolved_folders();
    std::unique_lock<std::shared_mutex> lock(cache.mutex);
    cache.by_spelling.clear();
}

std::string normalized_path(const std::string& path) {
    if (auto plain = resolved_plain(path)) return std::move(*plain);  // normal already
    std::error_code ec;
    return resolved_path(path, ec).lexically_normal().string();
}

namespace {

// `path` below the folder `base`, both absolute and normal: what lexically_relative gives for them ("." for the
// folder itself), or nullopt when `path` is not inside `base`.
std::optional<std::string> below(std::string_view path, std::string_view base) {
    if (base.size() > 1 && base.back() == '/') base.remove_suffix(1);
    if (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    if (path == base) return std::string(".");
    if (base == "/")
        return path.size() > 1 && path.front() == '/' ? std::optional(std::string(path.substr(1))) : std::nullopt;
    if (path.size() > base.size() && path.substr(0, base.size()) == base && path[base.size()] == '/')
        return std::string(path.substr(base.size() + 1));
    return std::nullopt;
}

}  // namespace

std::optional<std::string> relative_to(const std::string& path, const std::string& base) {
    return below(normalized_path(path), normalized_path(base));
}

std::string display_path(const std::string& path) {
    // resolved_path's answer as a string, the plain case without building a std::filesystem::path
    auto resolved = [](const std::string& p) -> std::optional<std::string> {
        if (auto plain = resolved_plain(p)) return plain;
        std::error_code ec;
        fs::path r = resolved_path(p, ec);
        if (ec) return std::nullopt;
        return r.string();
    };
    const auto abs = resolved(path);
    if (!abs) return path;
    const auto cwd = working_directory();
    const auto here = cwd ? resolved(*cwd) : std::nullopt;
    if (!here) return *abs;
    if (auto rel = below(*abs, *here); rel && rel->rfind("..", 0) != 0) return *rel;
    return *abs;
}

std::string uri_encode_path(std::string_view path) {
    std::string out;
    for (unsigned char c : path) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') out += static_cast<char>(c);
        else out += fmt::format("%{:02X}", c);
    }
    return out;
}

std::string user_cache_dir(bool by_default) {
    if (const char* set = std::getenv("MBRIDGE_LINT_CACHE_DIR")) {
        const std::string dir = set;
        return dir == "off" ? std::string() : dir;
    }
    if (!by_default) return {};
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return (std::filesystem::path(xdg) / "mbridge-lint").string();
    if (const char* home = std::getenv("HOME"); home && *home)
        return (std::filesystem::path(home) / ".cache" / "mbridge-lint").string();
    return {};
}

}  // namespace mbl
