// How tests lint: through the one pipeline `check`, --fix and the editor server run (LintSession: the configuration
// that governs the file, suppression comments, rule selection), so every fixture and rule test exercises them too.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "engine/lint_session.hpp"

namespace mbl::test {

// Lints `text` as a file named `name` in a folder of its own that exists nowhere on disk: the text stays in memory,
// and no configuration file of the source tree governs it.
inline std::vector<Diagnostic> lint_text(std::string_view text, SessionOptions options = {},
                                         const std::string& name = "config.yaml") {
    const std::string path = (std::filesystem::temp_directory_path() / "mbridge-lint-in-memory" / name).string();
    SourceManager sources;
    sources.add(path, std::string(text));
    LintSession session(std::move(options), sources);
    return session.lint(path).diagnostics;
}

// Lints the file at `path` as `check` names it: its text from disk, the configuration discovered from its folder.
inline FileResult lint_path(const std::string& path, SessionOptions options = {}) {
    SourceManager sources;
    LintSession session(std::move(options), sources);
    return session.lint(path);
}

}  // namespace mbl::test
