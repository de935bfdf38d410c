// The one config a command works on (`estimate`, `gpu-check`): a YAML file or one recipe, read as `check` reads it,
// with --root, --hf-config, --config-file and the overrides after `--`.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "cli/commands.hpp"
#include "core/input_errors.hpp"
#include "engine/lint_session.hpp"
#include "engine/walk.hpp"
#include "report/report.hpp"

namespace mbl::cli {
namespace {

// "FILE defines N recipes; name one of them:", then each target (FILE::FUNCTION) as a note of its own line (a tree's file
// may define dozens), or "defines no recipe".
Diagnostic not_one_recipe(const std::string& path, const FileResult& file) {
    if (file.configs.empty())
        return input_error(InputError::UnknownTarget, SourceRange::whole_file(path),
                           fmt::format("{} defines no recipe (a function returning ConfigContainer)", path));
    Diagnostic d = input_error(InputError::UnknownTarget, SourceRange::whole_file(path),
                               fmt::format("{} defines {} recipes; name one of them:", path, file.configs.size()));
    for (const auto& c : file.configs) {
        Note target;  // a plain note: no location
        target.message = fmt::format("{}::{}", path, c.label);
        d.notes.push_back(std::move(target));
    }
    return d;
}

}  // namespace

OneConfig load_one_config(const std::string& input, const std::string& mcore, const std::string& mcore_path,
                          const RecipeArgs& recipe, const std::string& color, SourceManager& sources) {
    OneConfig out;
    // Without --mcore, the lint session chooses (configuration file, the Bridge checkout's pin, the default).
    const Revision* revision = mcore.empty() ? nullptr : resolve_revision(mcore);
    if (!mcore.empty() && !revision) return out;
    std::vector<Diagnostic> problems;
    auto fail = [&]() {
        sort_diagnostics(problems);
        write_text(std::cerr, problems, sources, TextStyle{use_color(color)});
        return out;
    };
    SessionOptions session_options;
    session_options.mcore = mcore;
    session_options.mcore_path = mcore_path;
    session_options.root = recipe.root;
    session_options.hf_configs = recipe.hf_configs;
    session_options.jobs = recipe.jobs;
    if (!setup_overrides(recipe, session_options.prepare, sources, problems)) return fail();
    std::vector<InputFile> targets = collect_inputs({input}, problems);
    if (targets.size() != 1 || !problems.empty()) {
        if (problems.empty())
            problems.push_back(input_error(InputError::UnknownTarget, SourceRange::whole_file(input),
                                           fmt::format("{}: give one config or recipe file", input)));
        return fail();
    }
    LintSession session(session_options, sources);
    FileResult file = session.lint(targets[0].path, false, targets[0].function);
    for (auto& d : file.diagnostics)
        if (d.is_input_error() && d.severity == Severity::Error) problems.push_back(std::move(d));
    if (!problems.empty() || !file.revision) return fail();
    // One model per command: say which targets there are instead of picking one.
    if (file.configs.size() != 1) {
        problems.push_back(not_one_recipe(targets[0].path, file));
        return fail();
    }
    // --mcore wins; otherwise the revision the session chose for this file (said on stderr when detected). With
    // --mcore-path, the session's revision holds the tree's classes.
    if (mcore.empty() || !mcore_path.empty()) {
        revision = file.revision;
        write_detection_notes(std::cerr, {file.revision_choice}, false);
    }
    const ParsedConfig& config = file.configs.front();
    Value tree = session.prepared_tree(config, *revision, problems);
    std::vector<Diagnostic> ignored;  // validation problems: `check` reports them
    EffectiveModel model = session.effective_model(std::move(tree), config, *revision, ignored);
    for (auto& d : ignored)
        if (d.is_input_error() && d.severity == Severity::Error) problems.push_back(std::move(d));
    if (!problems.empty()) return fail();
    for (const auto& d : file.diagnostics)
        if (!d.is_input_error() && d.severity == Severity::Error) out.rejections.push_back(d);
    out.model = std::move(model);
    out.revision = revision;
    return out;
}

}  // namespace mbl::cli
