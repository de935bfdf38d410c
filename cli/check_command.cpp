#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "core/schema.hpp"
#include "engine/linter.hpp"
#include "report/report.hpp"

namespace mbl::cli {

void add_check_command(CLI::App& app, CheckArgs& args) {
    CLI::App* cmd = app.add_subcommand("check", "Lint config files (YAML) and report every recompute problem");
    cmd->add_option("paths", args.paths, "Config files or directories (directories are searched for *.yaml / *.yml)")
        ->required();
    cmd->add_option("--mcore", args.mcore,
                    fmt::format("Megatron Core revision the job runs: {} (default {})",
                                fmt::join(Schema::instance().revision_names(), ", "), Schema::instance().default_revision()));
    cmd->add_option("--te-version", args.te_version,
                    "Installed Transformer Engine version (e.g. 2.5.0); enables the checks that depend on it");
    cmd->add_option("--format", args.format, "Output format")->check(CLI::IsMember({"text", "json"}));
    cmd->add_option("--color", args.color, "Colour the text output")->check(CLI::IsMember({"auto", "always", "never"}));
    cmd->add_flag("--strict", args.strict, "Exit with 1 on warnings too, not only on errors");
    cmd->add_option("--gpu-memory", args.gpu_memory, "Memory budget per GPU (e.g. 80GiB): enables the memory advice rules");
    cmd->add_option("--data-parallel-size", args.data_parallel_size, "Data-parallel size, for the memory advice rules");
    cmd->add_flag("-q,--quiet", args.quiet, "Print only the diagnostics, without the summary line");
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

    if (!args.gpu_memory.empty()) {
        options.rule_options.gpu_memory_bytes = parse_gpu_memory(args.gpu_memory);
        if (!options.rule_options.gpu_memory_bytes) return kUnusable;
    }
    if (!args.data_parallel_size.empty()) {
        options.rule_options.data_parallel_size = parse_positive("--data-parallel-size", args.data_parallel_size);
        if (!options.rule_options.data_parallel_size) return kUnusable;
    }

    SourceManager sources;
    Linter linter(options, sources);
    std::vector<Diagnostic> all;
    auto inputs = collect_inputs(args.paths, all);
    int checked = 0;
    for (const auto& input : inputs) {
        LintResult r = linter.lint_file(input.path, input.explicit_input);
        if (r.skipped) continue;
        ++checked;
        for (auto& d : r.diagnostics) all.push_back(std::move(d));
    }

    DiagnosticCounts counts;
    bool unusable = false;
    for (const auto& d : all) {
        counts.add(d);
        unusable |= d.is_input_error() && d.severity == Severity::Error;
    }
    if (args.format == "json") {
        write_json(std::cout, all);
    } else {
        write_text(std::cout, all, sources, TextStyle{use_color(args.color)});
        if (!args.quiet) std::cout << summary_line(counts, checked) << '\n';
    }
    if (unusable) return kUnusable;
    if (counts.errors > 0 || (args.strict && counts.warnings > 0)) return kProblems;
    return kOk;
}

}  // namespace mbl::cli
