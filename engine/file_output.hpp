#pragma once
// Writing fixed files and previewing fixes: atomic replacement (a temporary file in the same directory, renamed over
// the original, so a crash never leaves a half-written config) and unified diffs.
#include <string>
#include <string_view>
#include <vector>

namespace mbl {

// Replaces `path` with `text` atomically, keeping the file's permission bits. False (and `error`) on failure; the
// original is then untouched. With `expected`, the file must still hold exactly that text just before the rename
// (another program's edit since it was read is never overwritten). The temporary file is
// `.NAME.mbridge-lint-PID-XXXXXX` beside it, so that a later run recognises one left by a killed run.
bool write_file_atomically(const std::string& path, std::string_view text, std::string* error,
                           const std::string* expected = nullptr);

// Removes the temporary files of write_file_atomically in `directory` whose process is gone (a run killed while
// writing); returns their paths.
std::vector<std::string> remove_stale_temporaries(const std::string& directory);

// A unified diff (3 lines of context) between two versions of `path`; "" when they are equal.
std::string unified_diff(const std::string& path, std::string_view before, std::string_view after);

}  // namespace mbl
