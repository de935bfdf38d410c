#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "cli/commands.hpp"
#include "core/schema.hpp"
#include "engine/changed_files.hpp"
#include "engine/file_output.hpp"
#include "engine/lint_session.hpp"
#include "engine/linter.hpp"
#include "report/report.hpp"

namespace mbl::cli {

void add_check_command(CLI::App& app, CheckArgs& args) {
    CLI::App* cmd = app.add_subcommand("check", "Lint config files and recipes and report every recompute problem");
    cmd->add_option("paths", args.paths,
                    "Config files, recipe files (file.py, or file.py::function for one recipe) or directories "
                    "(searched for *.yaml / *.yml configs and *.py recipes); Hydra-style overrides follow `--`")
        ->required();
    add_mcore_option(*cmd, args.mcore,
                     "Megatron Core revision the job runs; A,B lints for both and reports what changes from A to B "
                     "(exit 1 when B has errors A has not)");
    cmd->add_option("--te-version", args.te_version,
                    "Installed Transformer Engine version (e.g. 2.5.0); enables the checks that depend on it");
    cmd->add_option("--format", args.format, "Output format (sarif: SARIF 2.1.0; github: GitHub Actions annotations)")
        ->check(CLI::IsMember({"text", "json", "sarif", "github"}));
    cmd->add_option("--color", args.color, "Colour the text output")->check(CLI::IsMember({"auto", "always", "never"}));
    cmd->add_flag("--strict", args.strict, "Exit with 1 on warnings too, not only on errors");
    cmd->add_option("--gpu-memory", args.gpu_memory,
                    "Memory budget per GPU (e.g. 80GiB): enables the memory advice rules");
    cmd->add_option("--data-parallel-size", args.data_parallel_size, "Data-parallel size, for the memory advice rules");
    cmd->add_flag("-q,--quiet", args.quiet, "Print only the diagnostics, without the summary line");
    cmd->add_flag("--fix", args.fix, "Apply safe fixes to the files, in place (atomically)");
    cmd->add_flag("--unsafe-fixes", args.unsafe_fixes,
                  "With --fix or --diff: also apply fixes that change what the run does");
    cmd->add_flag("--diff", args.diff,
                  "Print the fixes as a unified diff instead of writing them; exit 1 if there is one");
    cmd->add_option("--changed-only", args.changed_only,
                    "Lint only files changed since the merge base with this git ref (and files that import them)");
    cmd->add_option("--config", args.config, "Use this configuration file instead of discovering one per file");
    cmd->add_option("-o,--output", args.output, "Write the report to this file instead of standard output");
    cmd->add_flag("--skip-non-configs", args.skip_non_configs,
                  "Skip named files that are not Bridge configs or recipes, as directory walks do (pre-commit)");
    cmd->add_flag("--show-unknowns", args.show_unknowns,
                  "List every model field a recipe computes in a way the linter cannot follow (IN012 infos)");
    add_recipe_options(*cmd, args.recipe);
}

namespace {

// Applies fixes to one input: writes the changed files (--fix) or prints their diff (--diff).
bool fix_input(LintSession& session, const CheckArgs& args, const InputFile& input, FileResult& result, int& fixed,
               bool& any_diff, std::ostream& diff_out, const DependentsReport& dependents) {
    const FixOptions options{.unsafe = args.unsafe_fixes, .may_edit = dependents.may_edit(input)};
    FixOutcome outcome =
        fix_file(session, input.path, options, !input.explicit_input || args.skip_non_configs, input.function);
    result = std::move(outcome.after);
    fixed += outcome.applied;
    for (const auto& [file, text] : outcome.fixed) {
        if (args.diff) {
            diff_out << unified_diff(file, outcome.original[file], text);
            any_diff = true;
            continue;
        }
        std::string error;
        if (!write_file_atomically(file, text, &error)) {
            std::cerr << "mbridge-lint: " << error << '\n';
            return false;
        }
    }
    return true;
}

}  // namespace

std::optional<SessionOptions> check_session_options(const CheckArgs& args) {
    if (!args.te_version.empty() && !Version::parse(args.te_version)) {
        std::cerr << fmt::format("mbridge-lint: --te-version \"{}\" is not a version such as 2.6.0\n", args.te_version);
        return std::nullopt;
    }
    if (args.diff && args.fix) {
        std::cerr << "mbridge-lint: --diff previews fixes and --fix writes them; pass one of them\n";
        return std::nullopt;
    }
    if (args.unsafe_fixes && !args.fix && !args.diff) {
        std::cerr << "mbridge-lint: --unsafe-fixes only makes sense with --fix or --diff\n";
        return std::nullopt;
    }

    SessionOptions session_options{.mcore = args.mcore, .te_version = args.te_version, .config_file = args.config};
    if (!args.gpu_memory.empty()) {
        session_options.gpu_memory_bytes = parse_gpu_memory(args.gpu_memory);
        if (!session_options.gpu_memory_bytes) return std::nullopt;
    }
    if (!args.data_parallel_size.empty()) {
        session_options.data_parallel_size = parse_positive("--data-parallel-size", args.data_parallel_size);
        if (!session_options.data_parallel_size) return std::nullopt;
    }

    session_options.root = args.recipe.root;
    session_options.hf_configs = args.recipe.hf_configs;
    session_options.jobs = args.recipe.jobs;
    session_options.show_unknowns = args.show_unknowns;
    return session_options;
}

int run_check(const CheckArgs& args) {
    if (auto pair = split_mcore_pair(args.mcore)) return run_upgrade_check(args, pair->first, pair->second);
    // Checked here for a plain usage error; the session applies them (over the configuration file's values).
    if (!args.mcore.empty() && !resolve_revision(args.mcore)) return kUnusable;
    std::optional<SessionOptions> options = check_session_options(args);
    if (!options) return kUnusable;
    SessionOptions& session_options = *options;

    SourceManager sources;
    std::vector<Diagnostic> all;
    const TextStyle style{args.output.empty() && use_color(args.color)};
    if (!setup_overrides(args.recipe, session_options.prepare, sources, all)) {
        // A malformed override or --config-file: nothing is checked.
        if (args.format == "json") write_json(std::cout, all);
        else write_text(std::cout, all, sources, TextStyle{use_color(args.color)});
        return kUnusable;
    }
    LintSession session(session_options, sources);
    auto inputs = collect_inputs(args.paths, all);
    std::vector<Dependents> brought;  // inputs linted because they import a changed or named file
    if (!args.changed_only.empty()) {
        ChangedFiles changed = git_changed_files(args.changed_only, std::filesystem::current_path().string());
        if (!changed.error.empty()) {
            std::cerr << "mbridge-lint: " << changed.error << '\n';
            return kUnusable;
        }
        inputs = select_changed(inputs, changed.files, session, &brought);
    }
    for (auto& d : add_dependents(inputs, session)) brought.push_back(std::move(d));
    DependentsReport dependents(std::move(brought), inputs);
    int checked = 0, fixed = 0, recipes = 0, unresolved = 0, architecture_known = 0;
    // Each distinct revision choice once (docs/user-guide.md "Revision detection").
    std::vector<RevisionChoice> revisions;
    std::set<DiagnosticIdentity> reported;
    for (const auto& d : all) reported.insert(diagnostic_identity(d));
    bool any_diff = false, write_failed = false;
    std::ostringstream diffs;
    auto take = [&](const InputFile& input, FileResult r) {
        dependents.record(input, r);
        if (r.skipped) return;
        ++checked;
        note_revision_choice(revisions, r.revision_choice);
        recipes += r.recipes;
        unresolved += static_cast<int>(r.unresolved.size());
        architecture_known += r.architecture_known;
        for (auto& d : r.diagnostics)
            // A broken configuration file, or a helper shared by recipes in several files: report it once.
            if (reported.insert(diagnostic_identity(d)).second) all.push_back(std::move(d));
    };
    if (args.fix || args.diff) {
        // One file after another: a fix changes files that the next one may read.
        for (const auto& input : inputs) {
            FileResult r;
            write_failed |= !fix_input(session, args, input, r, fixed, any_diff, diffs, dependents);
            take(input, std::move(r));
        }
    } else {
        std::vector<LintTarget> targets;
        for (const auto& input : inputs)
            targets.push_back({input.path, !input.explicit_input || args.skip_non_configs, input.function});
        std::size_t taken = 0;
        session.lint_all(targets, [&](FileResult r) { take(inputs[taken++], std::move(r)); });
    }
    if (!args.skip_non_configs)
        for (auto& d : dependents.errors()) all.push_back(std::move(d));
    merge_subjects_across_files(all);  // one unknown model loaded in several files: reported once; sorts

    if (write_failed) return kUnusable;

    DiagnosticCounts counts;
    bool unusable = false;
    for (const auto& d : all) {
        counts.add(d);
        unusable |= d.is_input_error() && d.severity == Severity::Error;
    }
    if (args.diff) {
        std::cout << diffs.str();
        if (unusable) return kUnusable;
        return any_diff ? kProblems : kOk;
    }
    std::ofstream file_out;
    std::ostream* report = report_stream(args.output, file_out);
    if (!report) return kUnusable;
    std::ostream& out = *report;
    const std::string base_dir = std::filesystem::current_path().string();
    if (args.format == "json") {
        write_json(out, all, revisions);
    } else if (args.format == "sarif") {
        write_sarif(out, all, sources, SarifOptions{base_dir});
    } else if (args.format == "github") {
        write_github(out, all, base_dir);
    } else {
        write_text(out, all, sources, style);
        if (args.fix && fixed > 0) out << fmt::format("fixed {} problem{}\n", fixed, fixed == 1 ? "" : "s");
        if (!args.quiet) {
            for (const auto& note : dependents.notes()) out << note << '\n';
            out << summary_line(counts, checked) << '\n';
            if (recipes > 0)
                out << fmt::format("{} recipe{} evaluated; {} resolve all five recompute fields ({:.1f}%); {} have a "
                                   "known architecture ({:.1f}%)\n",
                                   recipes, recipes == 1 ? "" : "s", recipes - unresolved,
                                   100.0 * (recipes - unresolved) / recipes, architecture_known,
                                   100.0 * architecture_known / recipes);
            write_detection_notes(out, revisions);
        }
    }
    if (unusable) return kUnusable;
    if (counts.errors > 0 || (args.strict && counts.warnings > 0)) return kProblems;
    return kOk;
}

}  // namespace mbl::cli
