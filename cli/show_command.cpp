// `mbridge-lint show TARGET`: the effective config of a recipe (or YAML file) with the provenance of every value.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.hpp"
#include "core/input_errors.hpp"
#include "core/schema.hpp"
#include "engine/lint_session.hpp"
#include "engine/linter.hpp"
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
    add_mcore_option(*show_cmd, args.mcore, "Megatron Core revision whose defaults fill unset fields");
    add_recipe_options(*show_cmd, args.recipe);
}

int run_show(const ShowArgs& args) {
    const Revision* revision = resolve_revision(args.mcore);
    if (!revision) return kUnusable;
    SourceManager sources;
    std::vector<Diagnostic> problems;
    auto finish = [&](int code) -> int {
        sort_diagnostics(problems);
        write_text(std::cerr, problems, sources, TextStyle{false});
        for (const auto& d : problems)
            if (d.is_input_error() && d.severity == Severity::Error) return kUnusable;
        return code;
    };
    SessionOptions session_options;
    session_options.mcore = args.mcore;
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
    // Only what makes the config unusable or unknown is repeated here; `check` reports the rest.
    for (auto& d : file.diagnostics)
        if (d.is_input_error()) problems.push_back(std::move(d));
    if (!file.revision) return finish(kUnusable);

    LintOptions options{file.revision, file.rule_options};
    Linter linter(options, sources);
    ConfigYamlOptions yaml;
    yaml.only = args.only;
    bool first = true;
    for (auto& config : file.configs) {
        Value root = std::move(config.root);
        if (session_options.prepare) session_options.prepare(root, *file.revision, problems);
        Value as_built = root;
        std::vector<Diagnostic> ignored;  // validation problems: `check` reports them
        auto model = linter.effective_model(std::move(root), config.anchor, ignored, config.precision.get());
        if (!model) continue;
        yaml.title = config.label.empty()
                         ? fmt::format("config {}", inputs[0].path)
                         : fmt::format("recipe {} ({}:{})", config.label, config.anchor.file, config.anchor.line);
        if (!first) std::cout << "---\n";
        first = false;
        write_config_yaml(std::cout, as_built, *model, yaml);
    }
    if (file.configs.empty() && problems.empty())
        problems.push_back(
            input_error(InputError::UnknownTarget, SourceRange::whole_file(args.target),
                        fmt::format("{} defines no recipe (a function returning ConfigContainer)", args.target)));
    return finish(kOk);
}

}  // namespace mbl::cli
