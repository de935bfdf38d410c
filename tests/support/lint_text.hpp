// How tests lint: through the one pipeline `check`, --fix and the editor server run (LintSession: the configuration
// that governs the file, suppression comments, rule selection), so every fixture and rule test exercises them too.
#pragma once
#include <filesystem>
#include <optional>
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

// The effective model of the one config `text` defines, as `show` and `estimate` read it (the same in-memory file
// as lint_text); nullopt when the text defines no config (or not one) or is unusable.
inline std::optional<EffectiveModel> model_of_text(std::string_view text, SessionOptions options = {},
                                                   const std::string& name = "config.yaml") {
    const std::string path = (std::filesystem::temp_directory_path() / "mbridge-lint-in-memory" / name).string();
    SourceManager sources;
    sources.add(path, std::string(text));
    LintSession session(std::move(options), sources);
    const FileResult file = session.lint(path);
    if (file.configs.size() != 1) return std::nullopt;
    return session.effective_model(file, 0);
}

// Lints the file at `path` as `check` names it: its text from disk, the configuration discovered from its folder.
inline FileResult lint_path(const std::string& path, SessionOptions options = {}) {
    SourceManager sources;
    LintSession session(std::move(options), sources);
    return session.lint(path);
}

}  // namespace mbl::test
