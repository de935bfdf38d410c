#include "engine/changed_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>

#include <filesystem>

#include "core/input_errors.hpp"
#include "engine/walk.hpp"

namespace mbl {

namespace fs = std::filesystem;

namespace {

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
        out.error =
            fmt::format("--changed-only: {} is not inside a git repository ({})", directory, first_line(top.err));
        return out;
    }
    const std::string root = top.out.substr(0, top.out.find('\n'));
    auto base = run_program({"git", "merge-base", ref, "HEAD"}, root);
    if (base.status != 0) {
        out.error =
            fmt::format("--changed-only: no merge base between \"{}\" and HEAD ({}); is \"{}\" a branch, tag or "
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
                                      LintSession& session, std::vector<Dependents>* brought) {
    // Which changed files each file depends on: the changed files' dependents, each found once (a reverse walk of
    // the import graph), instead of every input's dependencies.
    std::map<std::string, std::vector<std::string>> changed_deps;  // input -> changed files it imports
    for (const auto& c : changed)
        for (const auto& d : session.dependents(c)) changed_deps[d].push_back(c);
    std::vector<InputFile> out;
    std::map<std::string, Dependents> groups;
    for (const auto& in : inputs) {
        const std::string abs = normalized_path(in.path);
        const auto config = session.configs().for_path(in.path);
        const bool config_changed = !config->config.file.empty() && changed.count(normalized_path(config->config.file));
        auto deps = changed_deps.find(abs);
        if (!config_changed && !changed.count(abs) && deps == changed_deps.end()) continue;
        out.push_back(in);
        if (deps == changed_deps.end() || changed.count(abs)) continue;
        for (const auto& c : deps->second) {
            auto& g = groups[c];
            g.origin = display_path(c);
            g.files.push_back({in.path, abs});
        }
    }
    if (brought)
        for (auto& [_, g] : groups) brought->push_back(std::move(g));
    return out;
}

std::vector<Dependents> add_dependents(std::vector<InputFile>& inputs, LintSession& session) {
    std::set<std::string> listed;  // files linted whole (not `file.py::function`)
    for (const auto& in : inputs)
        if (in.function.empty()) listed.insert(normalized_path(in.path));
    std::map<std::string, std::string>
        shown;  // how each importer is displayed, worked out once (pre-commit --all-files)
    std::vector<Dependents> out;
    const std::size_t named = inputs.size();
    for (std::size_t i = 0; i < named; ++i) {
        // One recipe of a file (`file.py::function`) stands alone.
        if (!inputs[i].explicit_input || !inputs[i].function.empty()) continue;
        Dependents group{inputs[i].path, {}, true};
        for (const auto& d : session.brought_by(inputs[i].path)) {
            auto it = shown.find(d);
            if (it == shown.end()) it = shown.emplace(d, display_path(d)).first;
            group.files.push_back({it->second, d});
            if (listed.insert(d).second) inputs.push_back(InputFile{it->second, false, {}});
        }
        if (group.files.empty()) continue;
        inputs[i].explicit_input = false;  // checked through its importers when it defines no recipe itself
        out.push_back(std::move(group));
    }
    return out;
}

DependentsReport::DependentsReport(std::vector<Dependents> groups, const std::vector<InputFile>& inputs)
    : groups_(std::move(groups)) {
    for (const auto& in : inputs)
        if (in.explicit_input) named_.insert(normalized_path(in.path));
    for (const auto& g : groups_)
        if (g.named) named_.insert(normalized_path(g.origin));
    for (const auto& g : groups_)
        if (g.named)
            for (const auto& f : g.files)
                if (!named_.count(f.normalized)) added_.insert(f.normalized);
}

std::function<bool(const std::string&)> DependentsReport::may_edit(const InputFile& input) const {
    if (input.explicit_input || !added_.count(normalized_path(input.path))) return {};
    return [this](const std::string& file) { return named_.count(normalized_path(file)) > 0; };
}

void DependentsReport::record(const InputFile& input, const FileResult& result) {
    recipes_[input.path] = result.skipped ? -1 : result.recipes;
}

std::vector<std::string> DependentsReport::notes() const {
    std::vector<std::string> out;
    int more = 0;  // files past the first few that brought others (pre-commit --all-files names hundreds)
    for (const auto& g : groups_) {
        int recipes = 0, files = 0;
        for (const auto& f : g.files)
            if (auto it = recipes_.find(f.path);
                it != recipes_.end() && it->second > 0 && !named_.count(f.normalized)) {
                recipes += it->second;
                ++files;
            }
        if (files == 0) continue;
        if (out.size() == kMaxNotes) {
            ++more;
            continue;
        }
        out.push_back(fmt::format("{} is imported by {} recipe{} in {} file{}; they were linted too", g.origin, recipes,
                                  recipes == 1 ? "" : "s", files, files == 1 ? "" : "s"));
    }
    if (more > 0)
        out.push_back(fmt::format("... and {} more file{} brought the recipes that import {}", more,
                                  more == 1 ? "" : "s", more == 1 ? "it" : "them"));
    return out;
}

std::vector<Diagnostic> DependentsReport::errors() const {
    std::vector<Diagnostic> out;
    for (const auto& g : groups_) {
        auto self = recipes_.find(g.origin);
        if (!g.named || self == recipes_.end() || self->second != -1) continue;  // it has recipes
        bool any = false;
        for (const auto& f : g.files)
            if (auto it = recipes_.find(f.path); it != recipes_.end() && it->second > 0) any = true;
        if (any) continue;
        const std::string importers = g.files.size() == 1
                                          ? std::string("neither does the file that imports it")
                                          : fmt::format("none of the {} files that import it does", g.files.size());
        out.push_back(input_error(InputError::UnknownTarget, SourceRange::whole_file(g.origin),
                                  fmt::format("{} defines no recipe, and {}", g.origin, importers)));
    }
    return out;
}

}  // namespace mbl
