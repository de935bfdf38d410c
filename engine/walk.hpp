#pragma once
// The inputs of a run: the command line's paths, directories walked for the config and recipe files under them
// without what the walk leaves out (excluded paths, vendored and git-ignored trees), never leaving the directory
// through a symbolic link.
#include <functional>
#include <string>
#include <vector>

#include "core/diagnostic.hpp"

namespace mbl {

// One input: a file, or one recipe of a Python file (`file.py::function`).
struct InputFile {
    std::string path;
    bool explicit_input = true;
    std::string function;
};

struct WalkOptions {
    // Files and directories a walk leaves out (the configuration's exclude, --exclude); a directory is not entered.
    // Unset: the default exclude patterns (hidden directories, caches, virtual environments).
    std::function<bool(const std::string& path)> excluded = {};
    // Named files are left out too when they match (--force-exclude: pre-commit names every staged file).
    bool force_exclude = false;
    // Walks leave out other people's code: git submodules, 3rdparty/ and third_party/ folders, what git ignores.
    bool skip_vendored = true;
    // Receives one line per thing a walk passed over on purpose (vendored trees, links out of the tree); may be null.
    std::vector<std::string>* notes = nullptr;
};

// Expands the command-line paths: files as given, directories walked (sorted) for *.yaml / *.yml / *.py. A Python
// target may name one recipe: `file.py::function`. Every path is shown as display_path shows it (relative to the
// working directory inside it), so a file reached as `./src/x` and as `src/x` is one input.
std::vector<InputFile> collect_inputs(const std::vector<std::string>& paths, std::vector<Diagnostic>& errors,
                                      const WalkOptions& walk = {});

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
