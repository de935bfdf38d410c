#pragma once
// File paths as the linter compares and prints them: normalized for comparison (git, editors and front ends name the
// same file differently), relative to a base for output, percent-encoded for URIs.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace mbl {

// What std::filesystem::weakly_canonical(std::filesystem::absolute(path)) gives, with each folder resolved once per
// process: a run names the same few hundred folders thousands of times, and resolving one costs a readlink per
// component. A file that is itself a link, or a path with `.`, `..` or `//`, is resolved in full every time.
std::filesystem::path resolved_path(const std::filesystem::path& path, std::error_code& ec);

// Forgets the folders resolved so far: for a long-lived process (the editor server) when the workspace's files change.
void forget_resolved_paths();

// Absolute, with symbolic links and `..` resolved (as far as the path exists).
std::string normalized_path(const std::string& path);

// `path` relative to the directory `base`, with '/' separators; nullopt when it lies outside `base`.
std::optional<std::string> relative_to(const std::string& path, const std::string& base);

// How a path is shown in diagnostics: relative to the working directory when inside it, else absolute.
std::string display_path(const std::string& path);

// The folder for what the linter keeps between runs (parsed modules): $MBRIDGE_LINT_CACHE_DIR when set ("" or "off":
// none); else, when `by_default`, $XDG_CACHE_HOME/mbridge-lint or ~/.cache/mbridge-lint; else none ("").
std::string user_cache_dir(bool by_default);

// A path as the path part of a URI: letters, digits, '-', '.', '_', '~' and '/' kept, every other byte as %XX.
std::string uri_encode_path(std::string_view path);

}  // namespace mbl
