#pragma once
// Directory walks: the config and recipe files under a directory, without what the walk leaves out (excluded paths,
// vendored and git-ignored trees), never leaving the directory through a symbolic link.
#include <string>
#include <vector>

#include "core/diagnostic.hpp"
#include "engine/linter.hpp"

namespace mbl {

// Past this many problems of one kind in a walk (special files, unreadable folders, links out of the tree), the
// rest are one line.
inline constexpr int kWalkRepeats = 5;

// The files of `dir`, sorted, shown as display_path shows them. Problems the user must act on (a special file with a
// config's name, a folder that cannot be read) go to `errors` (IN001); what the walk passed over on purpose (links
// out of the tree, vendored trees) is one line each in `notes`.
std::vector<std::string> walk_directory(const std::string& dir, const WalkOptions& walk,
                                        std::vector<Diagnostic>& errors, std::vector<std::string>& notes);

// A process's result, for the git questions of walks and --changed-only.
struct ProcessResult {
    int status = -1;
    std::string out, err;
};
// Runs a program (no shell) in `directory` and collects its output.
ProcessResult run_program(const std::vector<std::string>& argv, const std::string& directory);

}  // namespace mbl
