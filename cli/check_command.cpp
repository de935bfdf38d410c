#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "core/schema.hpp"
#include "engine/linter.hpp"
#include "engine/recipe_runner.hpp"
#include "report/report.hpp"

namespace mbl::cli {

void add_check_command(CLI::App& app, CheckArgs& args) {
    CLI::App* cmd = app.add_subcommand(
        "check", "Lint config files (YAML) and Python recipes, and report every recompute problem");
    cmd->add_option("paths", args.paths,
                    "Config files, recipe files (file.py, file.py::function) or directories (searched for *.yaml, "
                    "*.yml and *.py); overrides follow `--`")
        ->required();
    cmd->add_option("--mcore", args.mcore,
                    fmt::format("Megatron Core revision the job runs: {} (default {})",
                                fmt::join(Schema::instance().revision_names(), ", "), Schema::instance().default_revision()));
    cmd->add_option("--te-version", args.te_version,
                    "Installed Transformer Engine version (e.g. 2.5.0); enables the checks that depend on it");
    cmd->add_option("--format", args.format, "Output format")->check(CLI::IsMember({"text", "json"}));
    cmd->add_option("--color", args.color, "Colour the text output")->check(CLI::IsMember({"auto", "always", "never"}));
    cmd->add_flag("--strict", args.strict, "Exit with 1 on warnings too, not only on errors");
    cmd->add_flag("-q,--quiet", args.quiet, "Print only the diagnostics, without the summary line");
    cmd->add_flag("--show-unknowns", args.show_unknowns,
                  "List every model field a recipe computes in a way the linter cannot follow (IN012 infos)");
    add_recipe_options(*cmd, args.recipe);
}

int run_check(const CheckArgs& args) {
    const Revision* revision = resolve_revision(args.mcore);
    if (!revision) return kUnusable;
    LintOptions options;
    options.revision = revision;
    if (!args.te_version.empty()) {
        options.rule_options.te_version = Version::parse(args.te_version);
        if (!options.rule_options.te_version) {
            std::cerr << fmt::format("mbridge-lint: --te-version \"{}\" is not a version such as 2.6.0\n", args.te_version);
            return kUnusable;
        }
    }

    SourceManager sources;
    std::vector<Diagnostic> all;
    const TextStyle style{use_color(args.color)};
    if (!setup_overrides(args.recipe, *revision, options, sources, all)) {
        // A malformed override or --config-file: nothing is checked.
        if (args.format == "json") write_json(std::cout, all);
        else write_text(std::cout, all, sources, style);
        return kUnusable;
    }

    Linter linter(options, sources);
    std::vector<std::string> plain;
    std::vector<RecipeTarget> recipe_targets;
    for (const auto& p : args.paths) {
        if (is_python_target(p)) recipe_targets.push_back(parse_recipe_target(p));
        else plain.push_back(p);
    }
    auto inputs = collect_inputs(plain, all);
    int checked = 0;
    for (const auto& input : inputs) {
        if (is_python_target(input.path)) {
            recipe_targets.push_back(RecipeTarget{input.path, {}});
            continue;
        }
        LintResult r = linter.lint_file(input.path, input.explicit_input);
        if (r.skipped) continue;
        ++checked;
        for (auto& d : r.diagnostics) all.push_back(std::move(d));
    }

    RecipeRunResult recipes;
    if (!recipe_targets.empty()) {
        RecipeOptions ropts;
        ropts.root = args.recipe.root;
        ropts.hf_configs = args.recipe.hf_configs;
        ropts.jobs = args.recipe.jobs;
        ropts.show_unknowns = args.show_unknowns;
        RecipeSession session(*revision, ropts);
        for (const auto& e : session.hf_errors()) {
            std::cerr << "mbridge-lint: " << e << '\n';
            return kUnusable;
        }
        int files = 0;
        auto found = session.collect(recipe_targets, all, files);
        recipes = session.lint(found, linter);
        checked += files;
        for (auto& d : recipes.diagnostics) all.push_back(std::move(d));
        session.register_sources(sources);
    }
    sort_diagnostics(all);

    DiagnosticCounts counts;
    bool unusable = false;
    for (const auto& d : all) {
        counts.add(d);
        unusable |= d.is_input_error() && d.severity == Severity::Error;
    }
    if (args.format == "json") {
        write_json(std::cout, all);
    } else {
        write_text(std::cout, all, sources, style);
        if (!args.quiet) {
            std::cout << summary_line(counts, checked) << '\n';
            if (recipes.recipes > 0)
                std::cout << fmt::format("{} recipe{} evaluated; {} resolve all five recompute fields ({:.1f}%)\n",
                                         recipes.recipes, recipes.recipes == 1 ? "" : "s", recipes.resolved,
                                         100.0 * recipes.resolved / recipes.recipes);
        }
    }
    if (unusable) return kUnusable;
    if (counts.errors > 0 || (args.strict && counts.warnings > 0)) return kProblems;
    return kOk;
}

}  // namespace mbl::cli
