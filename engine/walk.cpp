#include "engine/walk.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "config/rule_selection.hpp"
#include "core/input_errors.hpp"
#include "core/paths.hpp"
#include "parser/front_end.hpp"

namespace mbl {

namespace fs = std::filesystem;

namespace {

// A file some front end reads (YAML configs, Python recipes).
bool is_config_source(const fs::path& p) { return front_end_for(p.string()) != nullptr; }

// A folder at or above `dir` has a `.git`: only then is git asked anything (no process is started otherwise).
bool in_git_work_tree(const fs::path& dir) {
    std::error_code ec;
    for (fs::path p = fs::absolute(dir, ec).lexically_normal(); !ec; p = p.parent_path()) {
        if (fs::exists(p / ".git", ec)) return true;
        if (p == p.parent_path()) break;
    }
    return false;
}

// The paths git ignores under `dir` (files, and folders as a whole: `--directory`), absolute and lexically normal.
// Empty outside a git work tree or without git: then nothing counts as ignored.
std::set<std::string> git_ignored(const fs::path& dir) {
    std::set<std::string> out;
    if (!in_git_work_tree(dir)) return out;
    const ProcessResult r = run_program(
        {"git", "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z"}, dir.string());
    if (r.status != 0) return out;
    for (std::size_t at = 0; at < r.out.size();) {
        std::size_t end = r.out.find('\0', at);
        if (end == std::string::npos) end = r.out.size();
        std::string relative = r.out.substr(at, end - at);
        at = end + 1;
        while (!relative.empty() && relative.back() == '/') relative.pop_back();
        if (!relative.empty() && relative != ".") out.insert((dir / relative).lexically_normal().string());
    }
    return out;
}

// Why a folder holds someone else's code, or "" when it is the tree's own.
std::string vendored_reason(const fs::path& folder, const std::set<std::string>& ignored) {
    const std::string name = folder.filename().string();
    if (name == "3rdparty" || name == "third_party" || name == "third-party") return "vendored";
    std::error_code ec;
    // A checked-out submodule (or a repository cloned inside this one) has its own `.git`.
    if (fs::exists(folder / ".git", ec)) return "git submodule";
    if (ignored.count(folder.lexically_normal().string())) return "ignored by git";
    return "";
}

// The config sources under a folder the walk skips, to say how many were left out.
long count_config_sources(const fs::path& folder) {
    long n = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
        std::error_code e;
        if (it->is_regular_file(e) && is_config_source(it->path())) ++n;
    }
    return n;
}

const char* special_kind(const fs::file_status& st) {
    switch (st.type()) {
        case fs::file_type::fifo: return "a FIFO (named pipe)";
        case fs::file_type::socket: return "a socket";
        case fs::file_type::block:
        case fs::file_type::character: return "a device";
        default: return "not a regular file";
    }
}

// The first few problems of one kind, each a diagnostic; past them, a count for one closing line.
struct Flood {
    int shown = 0;
    long more = 0;
    bool take() {
        if (shown < kWalkRepeats) return ++shown, true;
        return ++more, false;
    }
};

}  // namespace

std::vector<std::string> walk_directory(const std::string& dir, const WalkOptions& walk,
                                        std::vector<Diagnostic>& errors, std::vector<std::string>& notes) {
    std::vector<std::string> found;
    const fs::path root(dir);
    std::error_code ec;
    const fs::path real_root = fs::canonical(root, ec);
    const std::set<std::string> ignored = walk.skip_vendored ? git_ignored(root) : std::set<std::string>{};
    auto excluded = [&](const fs::path& p) {
        return walk.excluded ? walk.excluded(p.string()) : path_excluded(p.string(), ProjectConfig{}, {});
    };

    Flood special, unreadable;
    long links_out = 0, vendored_files = 0;
    std::string first_link;
    std::vector<std::string> vendored_trees;
    auto cannot_read = [&](const fs::path& folder, const std::error_code& why) {
        if (unreadable.take())
            errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(display_path(folder.string())),
                                         fmt::format("cannot read this directory: {}", why.message())));
    };

    std::vector<fs::path> pending{root};
    while (!pending.empty()) {
        const fs::path folder = std::move(pending.back());
        pending.pop_back();
        ec.clear();
        fs::directory_iterator it(folder, ec);
        for (const fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
            const fs::path& p = it->path();
            std::error_code e;
            fs::file_status st = it->symlink_status(e);
            if (e) continue;  // vanished while walked
            if (fs::is_symlink(st)) {
                // The tree is the boundary: a link is followed only to a place inside the walked directory.
                const fs::path target = fs::canonical(p, e);
                if (e) continue;  // a dangling link: nothing to read
                st = fs::status(target, e);
                if (e) continue;
                if (!relative_to(target.string(), real_root.string())) {
                    if (fs::is_directory(st) || is_config_source(p)) {
                        if (links_out++ == 0)
                            first_link = fmt::format("{} -> {}", display_path(p.string()), target.string());
                    }
                    continue;
                }
                if (fs::is_directory(st)) continue;  // its target is inside the tree and walked there
            }
            if (fs::is_directory(st)) {
                if (excluded(p)) continue;
                if (walk.skip_vendored) {
                    if (const std::string why = vendored_reason(p, ignored); !why.empty()) {
                        if (const long n = count_config_sources(p); n > 0) {
                            vendored_files += n;
                            vendored_trees.push_back(fmt::format("{} ({})", display_path(p.string()), why));
                        }
                        continue;
                    }
                }
                pending.push_back(p);
                continue;
            }
            if (!is_config_source(p)) continue;
            if (!fs::is_regular_file(st)) {
                // Reading a FIFO would wait for a writer, a device for ever: refused by its kind, never opened.
                if (special.take())
                    errors.push_back(input_error(InputError::Unreadable,
                                                 SourceRange::whole_file(display_path(p.string())),
                                                 fmt::format("{} is {}; only regular files are read",
                                                             display_path(p.string()), special_kind(st))));
                continue;
            }
            if (excluded(p)) continue;
            if (walk.skip_vendored && ignored.count(p.lexically_normal().string())) {
                ++vendored_files;
                if (std::find(vendored_trees.begin(), vendored_trees.end(), "files ignored by git") ==
                    vendored_trees.end())
                    vendored_trees.push_back("files ignored by git");
                continue;
            }
            found.push_back(display_path(p.string()));
        }
        if (ec) cannot_read(folder, ec);
    }

    const std::string shown_dir = display_path(dir);
    if (special.more > 0)
        errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(shown_dir),
                                     fmt::format("and {} more FIFOs, sockets or devices with a config's name under {}",
                                                 special.more, shown_dir)));
    if (unreadable.more > 0)
        errors.push_back(input_error(
            InputError::Unreadable, SourceRange::whole_file(shown_dir),
            fmt::format("and {} more directories under {} that cannot be read", unreadable.more, shown_dir)));
    if (links_out > 0)
        notes.push_back(fmt::format("did not follow {} symbolic link{} that lead{} out of {} (first: {})", links_out,
                                    links_out == 1 ? "" : "s", links_out == 1 ? "s" : "", shown_dir, first_link));
    if (vendored_files > 0) {
        std::string trees;
        for (std::size_t k = 0; k < vendored_trees.size() && k < 3; ++k) trees += (k ? ", " : "") + vendored_trees[k];
        if (vendored_trees.size() > 3) trees += fmt::format(" and {} more", vendored_trees.size() - 3);
        notes.push_back(fmt::format("skipped {} file{} in vendored or git-ignored trees: {}; --no-skip-vendored "
                                    "checks them",
                                    vendored_files, vendored_files == 1 ? "" : "s", trees));
    }
    std::sort(found.begin(), found.end());
    return found;
}

// Runs a program (no shell) in `directory` and collects its output.
ProcessResult run_program(const std::vector<std::string>& argv, const std::string& directory) {
    ProcessResult result;
    int out_pipe[2], err_pipe[2];
    if (pipe(out_pipe) != 0) return result;
    if (pipe(err_pipe) != 0) {
        close(out_pipe[0]);
        close(out_pipe[1]);
        return result;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out_pipe[1], 1);
        dup2(err_pipe[1], 2);
        close(out_pipe[0]);
        close(err_pipe[0]);
        if (chdir(directory.c_str()) != 0) _exit(127);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (pid < 0) {
        close(out_pipe[0]);
        close(err_pipe[0]);
        return result;
    }
    // Drain both pipes (stderr after stdout is fine: git writes little to stderr).
    char buf[65536];
    for (int fd : {out_pipe[0], err_pipe[0]}) {
        std::string& into = fd == out_pipe[0] ? result.out : result.err;
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
            if (n > 0) into.append(buf, static_cast<size_t>(n));
        close(fd);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

// `file.py::function` names one recipe of a file; a path that exists as written is taken whole.
static std::optional<InputFile> recipe_target(const std::string& arg) {
    std::error_code ec;
    const auto sep = arg.find("::");
    if (sep == std::string::npos || fs::exists(arg, ec) || !fs::is_regular_file(arg.substr(0, sep), ec))
        return std::nullopt;
    return InputFile{arg.substr(0, sep), true, arg.substr(sep + 2)};
}

// A named path that is neither a file nor a directory: a FIFO would block the read until some writer came, a device
// may never end. What the shell hands over as a pipe (`<(command)`, /dev/stdin) is read: it was made to be.
static std::optional<std::string> special_file(const std::string& path) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || fs::is_regular_file(st) || fs::is_directory(st)) return std::nullopt;
    if (path.rfind("/dev/fd/", 0) == 0 || path.rfind("/proc/self/fd/", 0) == 0 || path == "/dev/stdin")
        return std::nullopt;
    return special_kind(st);
}

// A named file that --force-exclude leaves out: it, or a directory above it inside the working directory, matches.
static bool named_file_excluded(const std::string& path, const WalkOptions& walk) {
    if (!walk.force_exclude || !walk.excluded) return false;
    if (walk.excluded(path)) return true;
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec);
    for (fs::path p = fs::absolute(path, ec).parent_path(); relative_to(p.string(), cwd.string()) && p != cwd;
         p = p.parent_path())
        if (walk.excluded(p.string())) return true;
    return false;
}

std::vector<InputFile> collect_inputs(const std::vector<std::string>& paths, std::vector<Diagnostic>& errors,
                                      const WalkOptions& walk) {
    std::vector<InputFile> out;
    std::map<std::string, std::size_t> seen;  // display path + function -> index in `out`
    auto add = [&](InputFile input) {
        auto [it, inserted] = seen.emplace(input.path + "::" + input.function, out.size());
        if (inserted) out.push_back(std::move(input));
        else out[it->second].explicit_input |= input.explicit_input;  // named and found by a walk: named
    };
    for (const auto& arg : paths) {
        std::error_code ec;
        if (fs::is_directory(arg, ec)) {
            std::vector<std::string> notes;
            for (auto& f : walk_directory(arg, walk, errors, notes)) add({std::move(f), false, {}});
            if (walk.notes) walk.notes->insert(walk.notes->end(), notes.begin(), notes.end());
        } else if (auto kind = special_file(arg)) {
            errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(arg),
                                         fmt::format("{} is {}; only regular files are read (pass - to read standard "
                                                     "input)",
                                                     arg, *kind)));
        } else if (fs::exists(arg, ec)) {
            if (!named_file_excluded(arg, walk)) add({display_path(arg), true, {}});
        } else if (auto target = recipe_target(arg)) {
            target->path = display_path(target->path);
            add(std::move(*target));
        } else {
            // A path that cannot be looked at (a folder above it unreadable) is not said to be missing.
            std::error_code why;
            (void)fs::symlink_status(arg, why);
            errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(arg),
                                         why && why != std::errc::no_such_file_or_directory
                                             ? fmt::format("cannot read: {}", why.message())
                                             : "no such file or directory"));
        }
    }
    return out;
}

}  // namespace mbl
