// `mbridge-lint show TARGET`: the effective config of a recipe (or YAML file) with the provenance of every value.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>

#include "cli/commands.hpp"
#include "core/did_you_mean.hpp"
#include "core/input_errors.hpp"
#include "core/schema.hpp"
#include "engine/lint_session.hpp"
#include "engine/walk.hpp"
#include "report/config_yaml.hpp"
#include "report/report.hpp"

namespace mbl::cli {

void add_show_command(CLI::App& app, ShowArgs& args, CLI::App*& show_cmd) {
    show_cmd = app.add_subcommand("show", "Print the effective config of a recipe or config file as YAML, each value "
                                          "commented with the file and line (or override, or default) it came from");
    show_cmd
        ->add_option("target", args.target, "recipe.py, recipe.py::function, or a YAML config; overrides follow `--`")
        ->required();
    show_cmd
        ->add_option("--only", args.only,
                     "Show only the keys under this dotted prefix, e.g. model.recompute; repeatable")
        ->allow_extra_args(false);
    add_mcore_option(*show_cmd, args.mcore, "Megatron Core revision whose defaults fill unset fields",
                     &args.mcore_path);
    add_recipe_options(*show_cmd, args.recipe);
}

namespace {

// The closest shown path to a misspelt --only prefix: each key under the prefix's parent, cut to the length that
// comes closest to what was typed ("model.recompte" -> "model.recompute").
std::string closest_prefix(const std::string& prefix, const std::vector<std::string>& paths) {
    const auto dot = prefix.rfind('.');
    const std::string parent = dot == std::string::npos ? "" : prefix.substr(0, dot + 1);
    const std::string last = prefix.substr(parent.size());
    int best = std::max<int>(1, static_cast<int>(last.size()) / 3) + 1;
    std::string found;
    for (const auto& path : paths) {
        if (path.rfind(parent, 0) != 0 || path.find('.', parent.size()) != std::string::npos) continue;
        const std::string key = path.substr(parent.size());
        for (std::size_t k = last.size() > 2 ? last.size() - 2 : 1; k <= key.size() && k <= last.size() + 2; ++k) {
            const int d = edit_distance(last, key.substr(0, k));
            if (d < best) {
                best = d;
                found = parent + key.substr(0, k);
            }
        }
    }
    return found;
}

// An --only prefix that selects nothing in any shown config is a mistake, not an empty answer.
std::vector<Diagnostic> check_only_prefixes(const std::vector<std::string>& only, const std::vector<std::string>& paths,
                                            const std::string& target) {
    std::vector<Diagnostic> errors;
    for (const auto& f : only) {
        const bool matches =
            std::any_of(paths.begin(), paths.end(), [&](const std::string& p) { return p.rfind(f, 0) == 0; });
        if (matches) continue;
        const std::string near = closest_prefix(f, paths);
        errors.push_back(
            input_error(InputError::UnknownKey, SourceRange::whole_file(target),
                        fmt::format("--only {} matches no key of the config{}", f,
                                    near.empty() ? std::string() : fmt::format(" (did you mean {}?)", near))));
    }
    return errors;
}

}  // namespace

int run_show(const ShowArgs& args) {
    const Revision* revision = resolve_revision(args.mcore);
    if (!revision) return kUnusable;
    SourceManager sources;
    std::vector<Diagnostic> problems;
    auto finish = [&](int code) -> int {
        sort_diagnostics(problems);
        write_text(std::cerr, problems, sources, TextStyle{false, false});
        for (const auto& d : problems)
            if (d.is_input_error() && d.severity == Severity::Error) return kUnusable;
        return code;
    };
    SessionOptions session_options;
    session_options.mcore = args.mcore;
    session_options.mcore_path = args.mcore_path;
    session_options.root = args.recipe.root;
    session_options.hf_configs = args.recipe.hf_configs;
    session_options.jobs = args.recipe.jobs;
    if (!setup_overrides(args.recipe, session_options.prepare, sources, problems)) return finish(kUnusable);

    std::vector<InputFile> inputs = collect_inputs({args.target}, problems);
    if (inputs.size() != 1 || !problems.empty()) {
        if (problems.empty())
            problems.push_back(input_error(InputError::UnknownTarget, SourceRange::whole_file(args.target),
                                           fmt::format("{}: show takes one config or recipe file", args.target)));
        return finish(kUnusable);
    }
    LintSession session(session_options, sources);
    FileResult file = session.lint(inputs[0].path, false, inputs[0].function);
    if (file.revision_choice.source == RevisionChoice::Source::Detected)
        std::cerr << detection_note(file.revision_choice) << '\n';
    // Only what makes the config unusable or unknown is repeated here; `check` reports the rest. An input that
    // cannot be used (a malformed override, an unknown field) is not shown.
    for (auto& d : file.diagnostics)
        if (d.is_input_error()) problems.push_back(std::move(d));
    if (!file.revision) return finish(kUnusable);
    if (std::any_of(problems.begin(), problems.end(),
                    [](const Diagnostic& d) { return d.is_input_error() && d.severity == Severity::Error; }))
        return finish(kUnusable);

    ConfigYamlOptions yaml;
    yaml.only = args.only;
    struct Shown {
        const ParsedConfig* config;
        Value as_built;
        EffectiveModel model;
    };
    std::vector<Shown> shown;
    std::vector<std::string> paths;
    for (auto& config : file.configs) {
        std::vector<Diagnostic> ignored;  // the lint above reported the overrides' and validation's problems
        Value as_built = session.prepared_tree(config, *file.revision, ignored);
        EffectiveModel model = session.effective_model(as_built, config, *file.revision, ignored);
        for (auto& p : shown_paths(as_built, model)) paths.push_back(std::move(p));
        shown.push_back(Shown{&config, std::move(as_built), std::move(model)});
    }
    if (file.configs.empty()) {
        problems.push_back(
            input_error(InputError::UnknownTarget, SourceRange::whole_file(args.target),
                        fmt::format("{} defines no recipe (a function returning ConfigContainer)", args.target)));
        return finish(kUnusable);
    }
    if (auto wrong = check_only_prefixes(args.only, paths, args.target); !wrong.empty()) {
        for (auto& d : wrong) problems.push_back(std::move(d));
        return finish(kUnusable);
    }
    for (std::size_t i = 0; i < shown.size(); ++i) {
        const ParsedConfig& config = *shown[i].config;
        yaml.title = config.label.empty()
                         ? fmt::format("config {}", inputs[0].path)
                         : fmt::format("recipe {} ({}:{})", config.label, config.anchor.file, config.anchor.line);
        yaml.facts = fmt::format("Megatron Core {}: {}", file.revision->name, file.revision->facts_source());
        if (i > 0) std::cout << "---\n";
        write_config_yaml(std::cout, shown[i].as_built, shown[i].model, yaml);
    }
    return finish(kOk);
}

}  // namespace mbl::cli
