#pragma once
// Writing fixed files and previewing fixes: atomic replacement (a temporary file in the same directory, renamed over
// the original, so a crash never leaves a half-written config) and unified diffs.
#include <string>
#include <string_view>

namespace mbl {

// Replaces `path` with `text` atomically, keeping the file's permission bits. False (and `error`) on failure; the
// original is then untouched.
bool write_file_atomically(const std::string& path, std::string_view text, std::string* error);

// A unified diff (3 lines of context) between two versions of `path`; "" when they are equal.
std::string unified_diff(const std::string& path, std::string_view before, std::string_view after);

}  // namespace mbl
