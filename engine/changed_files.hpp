#pragma once
// --changed-only REF: the files a git diff touches, and the inputs whose diagnostics those changes can alter.
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/lint_session.hpp"
#include "engine/walk.hpp"

namespace mbl {

struct ChangedFiles {
    std::set<std::string> files;  // absolute, normalized; includes deleted and untracked files
    std::string error;            // non-empty: git failed (not a repository, unknown ref, git missing)
};

// Files that differ between the merge base of `ref` and HEAD, and the working tree (committed, staged, unstaged
// and untracked changes), in the git repository holding `directory`.
ChangedFiles git_changed_files(const std::string& ref, const std::string& directory);

// Inputs linted because they import a named or changed file (directly or not): a helper module brings the recipes
// that depend on it.
struct Dependents {
    std::string origin;  // the named or changed file, as given (or as git names it)
    struct File {
        std::string path;        // as it is linted (an input's path)
        std::string normalized;  // as files are compared (core/paths.hpp)
    };
    std::vector<File> files;  // the inputs that import it
    bool named = false;       // named on the command line (else changed, for --changed-only)
};

// The inputs to lint: those changed, those that depend (through their front end's imports, transitively) on a
// changed file, and those governed by a configuration file that changed. `brought`, when given, receives the
// inputs selected because they import a changed file, grouped by that file.
std::vector<InputFile> select_changed(const std::vector<InputFile>& inputs, const std::set<std::string>& changed,
                                      LintSession& session, std::vector<Dependents>* brought = nullptr);

// Adds to `inputs` the files that import a named file (`check helper.py`, pre-commit's staged files), as its front end
// scopes them (LintSession::brought_by): the recipes built from a module are checked with it, and report the problems
// located in it. A named file that others import is then linted like a file found in a directory walk (skipped when
// it defines no recipe). Returns what was added, by named file.
std::vector<Dependents> add_dependents(std::vector<InputFile>& inputs, LintSession& session);

// What a run says about the files it linted because they import a named or changed file, and the error for a named
// file that is no recipe and is imported by no recipe either.
class DependentsReport {
public:
    // `inputs`: everything about to be linted (named files and what add_dependents added).
    DependentsReport(std::vector<Dependents> groups, const std::vector<InputFile>& inputs);
    // Which files --fix may edit while fixing `input`: any for an input of its own; the named files for one linted
    // because it imports a named file (the recipe is not yours to change, the helper is). Null: any.
    std::function<bool(const std::string&)> may_edit(const InputFile& input) const;
    // After each input is linted.
    void record(const InputFile& input, const FileResult& result);
    // "src/pkg/common.py is imported by 54 recipes in 6 files; they were linted too", one line per named or changed
    // file (the first kMaxNotes, then a count), counting the importers that were not named themselves (and not
    // changed, for --changed-only).
    std::vector<std::string> notes() const;
    // IN009 for a named file without recipes whose importers define none either (nothing was checked for it);
    // not asked for under --skip-non-configs.
    std::vector<Diagnostic> errors() const;

    static constexpr std::size_t kMaxNotes = 5;

private:
    std::vector<Dependents> groups_;
    std::set<std::string> named_, added_;  // normalized: the files named, and those they brought
    std::map<std::string, int> recipes_;   // per linted input path: recipes evaluated (-1: skipped)
};

}  // namespace mbl
