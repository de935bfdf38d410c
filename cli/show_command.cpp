// `mbridge-lint show TARGET`: the effective config of a recipe (or YAML file) with the provenance of every value.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "core/schema.hpp"
#include "engine/linter.hpp"
#include "engine/recipe_runner.hpp"
#include "parser/input_errors.hpp"
#include "parser/python/recipes.hpp"
#include "parser/yaml_loader.hpp"
#include "report/config_yaml.hpp"
#include "report/report.hpp"

namespace mbl::cli {

void add_show_command(CLI::App& app, ShowArgs& args, CLI::App*& show_cmd) {
    show_cmd = app.add_subcommand("show", "Print the effective config of a recipe or config file as YAML, each value "
                                          "commented with the file and line (or override, or default) it came from");
    show_cmd->add_option("target", args.target, "recipe.py, recipe.py::function, or a YAML config; overrides follow `--`")
        ->required();
    show_cmd->add_option("--only", args.only, "Show only the keys under this dotted prefix, e.g. model.recompute; repeatable")
        ->allow_extra_args(false);
    show_cmd->add_option("--mcore", args.mcore, "Megatron Core revision whose defaults fill unset fields");
    add_recipe_options(*show_cmd, args.recipe);
}

int run_show(const ShowArgs& args) {
    const Revision* revision = resolve_revision(args.mcore);
    if (!revision) return kUnusable;
    LintOptions options;
    options.revision = revision;
    SourceManager sources;
    std::vector<Diagnostic> problems;
    const TextStyle style{false};
    auto finish = [&](int code) -> int {
        sort_diagnostics(problems);
        write_text(std::cerr, problems, sources, style);
        for (const auto& d : problems)
            if (d.is_input_error() && d.severity == Severity::Error) return kUnusable;
        return code;
    };
    if (!setup_overrides(args.recipe, *revision, options, sources, problems)) return finish(kUnusable);
    Linter linter(options, sources);
    ConfigYamlOptions yaml;
    yaml.only = args.only;

    auto show_tree = [&](Value root, const SourceRange& anchor, const std::string& title) {
        if (options.prepare) options.prepare(root, problems);
        Value original = root;
        auto model = linter.effective_model(std::move(root), anchor, problems);
        if (!model) return;
        yaml.title = title;
        write_config_yaml(std::cout, original, *model, yaml);
    };

    if (!is_python_target(args.target)) {
        std::string error;
        const std::string* text = sources.load(args.target, &error);
        if (!text) {
            problems.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(args.target),
                                           fmt::format("cannot read {}: {}", args.target, error)));
            return finish(kUnusable);
        }
        YamlLoadResult loaded = load_yaml(args.target, *text);
        if (!loaded.ok()) {
            problems = std::move(loaded.errors);
            return finish(kUnusable);
        }
        SourceRange anchor = SourceRange::point(args.target, 1, 1);
        show_tree(std::move(loaded.root), anchor, fmt::format("config {}", args.target));
        return finish(kOk);
    }

    RecipeOptions ropts;
    ropts.root = args.recipe.root;
    ropts.hf_configs = args.recipe.hf_configs;
    ropts.jobs = 1;
    RecipeSession session(*revision, ropts);
    for (const auto& e : session.hf_errors()) {
        std::cerr << "mbridge-lint: " << e << '\n';
        return kUnusable;
    }
    int files = 0;
    auto recipes = session.collect({parse_recipe_target(args.target)}, problems, files);
    bool first = true;
    for (const auto* r : recipes) {
        EvaluatedRecipe e = session.evaluate(*r);
        if (!e.is_recipe) continue;  // a *_config helper that returns no config
        for (auto& d : e.diagnostics) problems.push_back(std::move(d));
        if (!first) std::cout << "---\n";
        first = false;
        show_tree(std::move(e.root), e.def, fmt::format("recipe {} ({}:{})", e.name, e.def.file, e.def.line));
    }
    for (auto& d : session.module_diagnostics()) problems.push_back(std::move(d));
    session.register_sources(sources);
    if (recipes.empty() && problems.empty())
        problems.push_back(input_error(InputError::UnknownTarget, SourceRange::whole_file(args.target),
                                       fmt::format("{} defines no recipe (a function returning ConfigContainer)",
                                                   args.target)));
    return finish(kOk);
}

}  // namespace mbl::cli
