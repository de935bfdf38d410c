#include "engine/changed_files.hpp"

#include <fcntl.h>
#include <cerrno>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

namespace mbl {

namespace fs = std::filesystem;

namespace {

struct ProcessResult {
    int status = -1;
    std::string out, err;
};

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

std::string first_line(const std::string& s) {
    std::string line = s.substr(0, s.find('\n'));
    return line.empty() ? "no output" : line;
}

}  // namespace

ChangedFiles git_changed_files(const std::string& ref, const std::string& directory) {
    ChangedFiles out;
    auto top = run_program({"git", "rev-parse", "--show-toplevel"}, directory);
    if (top.status == 127 || top.status < 0) {
        out.error = "--changed-only needs git, which could not be run";
        return out;
    }
    if (top.status != 0) {
        out.error = fmt::format("--changed-only: {} is not inside a git repository ({})", directory, first_line(top.err));
        return out;
    }
    const std::string root = top.out.substr(0, top.out.find('\n'));
    auto base = run_program({"git", "merge-base", ref, "HEAD"}, root);
    if (base.status != 0) {
        out.error = fmt::format("--changed-only: no merge base between \"{}\" and HEAD ({}); is \"{}\" a branch, tag or "
                                "commit that was fetched?",
                                ref, first_line(base.err), ref);
        return out;
    }
    const std::string commit = base.out.substr(0, base.out.find('\n'));
    auto diff = run_program({"git", "diff", "--name-only", "--no-renames", "-z", commit, "--"}, root);
    auto untracked = run_program({"git", "ls-files", "--others", "--exclude-standard", "-z"}, root);
    if (diff.status != 0 || untracked.status != 0) {
        out.error = fmt::format("--changed-only: git diff failed ({})", first_line(diff.err + untracked.err));
        return out;
    }
    for (const std::string* list : {&diff.out, &untracked.out}) {
        size_t pos = 0;
        while (pos < list->size()) {
            size_t end = list->find('\0', pos);
            if (end == std::string::npos) end = list->size();
            if (end > pos) out.files.insert(normalized_path((fs::path(root) / list->substr(pos, end - pos)).string()));
            pos = end + 1;
        }
    }
    return out;
}

std::vector<InputFile> select_changed(const std::vector<InputFile>& inputs, const std::set<std::string>& changed,
                                      LintSession& session) {
    auto touched = [&](const std::string& file) {
        if (changed.count(file)) return true;
        for (const auto& d : session.dependencies(file))
            if (changed.count(d)) return true;
        return false;
    };
    std::vector<InputFile> out;
    for (const auto& in : inputs) {
        const std::string abs = normalized_path(in.path);
        const auto config = session.configs().for_path(in.path);
        const bool config_changed = !config->config.file.empty() && changed.count(normalized_path(config->config.file));
        if (config_changed || touched(abs)) out.push_back(in);
    }
    return out;
}

}  // namespace mbl
