#pragma once
// --changed-only REF: the files a git diff touches, and the inputs whose diagnostics those changes can alter.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/lint_session.hpp"
#include "engine/linter.hpp"

namespace mbl {

struct ChangedFiles {
    std::set<std::string> files;  // absolute, normalized; includes deleted and untracked files
    std::string error;            // non-empty: git failed (not a repository, unknown ref, git missing)
};

// Files that differ between the merge base of `ref` and HEAD, and the working tree (committed, staged, unstaged
// and untracked changes), in the git repository holding `directory`.
ChangedFiles git_changed_files(const std::string& ref, const std::string& directory);

// The inputs to lint: those changed, those that depend (through their front end's imports, transitively) on a
// changed file, and those governed by a configuration file that changed.
std::vector<InputFile> select_changed(const std::vector<InputFile>& inputs, const std::set<std::string>& changed,
                                      LintSession& session);

}  // namespace mbl
