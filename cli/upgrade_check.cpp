// `check --mcore A,B`: lints the same inputs for revisions A and B and reports what changes between them (docs/user-guide.md
// "Upgrade check"). Exit code: 2 unusable input or usage, 1 when B has errors A has not (or warnings, with --strict),
// else 0.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "core/schema.hpp"
#include "engine/changed_files.hpp"
#include "engine/revision_diff.hpp"
#include "engine/walk.hpp"
#include "report/report.hpp"
#include "report/upgrade_report.hpp"

namespace mbl::cli {

int run_upgrade_check(const CheckArgs& args, const std::string& from_name, const std::string& to_name) {
    if (to_name.find(',') != std::string::npos) {
        std::cerr << "mbridge-lint: --mcore takes one revision, or two as A,B\n";
        return kUnusable;
    }
    const Revision* from = resolve_revision(from_name);
    const Revision* to = from ? resolve_revision(to_name) : nullptr;
    if (!from || !to) return kUnusable;
    if (args.fix || args.diff) {
        std::cerr << "mbridge-lint: --mcore A,B compares two revisions; --fix and --diff take one\n";
        return kUnusable;
    }
    if (args.format != "full" && args.format != "json") {
        std::cerr << "mbridge-lint: --mcore A,B reports in --output-format full (text) or json\n";
        return kUnusable;
    }
    if (args.statistics || (args.paths.size() == 1 && args.paths[0] == "-")) {
        std::cerr
            << "mbridge-lint: --mcore A,B compares files; --statistics and - (standard input) take one revision\n";
        return kUnusable;
    }
    std::optional<SessionOptions> base = check_session_options(args);
    if (!base) return kUnusable;
    base->merge_recipes = false;  // compared recipe by recipe

    SourceManager sources;
    std::vector<Diagnostic> setup_errors;
    if (!setup_overrides(args.recipe, base->prepare, sources, setup_errors)) {
        if (args.format == "json") write_json(std::cout, setup_errors);
        else write_text(std::cout, setup_errors, sources, TextStyle{use_color(args.color)});
        return kUnusable;
    }
    std::vector<InputFile> inputs;
    {
        LintSession walker(*base, sources);  // the configurations' exclude patterns
        const WalkOptions walk{.excluded = [&](const std::string& p) { return walker.excluded(p); },
                               .force_exclude = args.force_exclude};
        inputs = collect_inputs(args.paths, setup_errors, walk);
    }

    // Both sides read the same texts; each has its own session, so nothing of A's run leaks into B's.
    std::vector<Diagnostic> side[2];
    int checked = 0;
    bool unusable = false;
    for (int s = 0; s < 2; ++s) {
        SessionOptions options = *base;
        options.mcore = s == 0 ? from->name : to->name;
        LintSession session(options, sources);
        std::vector<InputFile> selected = inputs;
        if (s == 0 && !args.changed_only.empty()) {
            ChangedFiles changed = git_changed_files(args.changed_only, std::filesystem::current_path().string());
            if (!changed.error.empty()) {
                std::cerr << "mbridge-lint: " << changed.error << '\n';
                return kUnusable;
            }
            inputs = select_changed(inputs, changed.files, session);
            selected = inputs;
        }
        side[s] = setup_errors;
        for (const auto& input : selected) {
            FileResult r = session.lint(input.path, !input.explicit_input || args.skip_non_configs, input.function);
            if (r.skipped) continue;
            checked += s == 0;
            for (auto& d : r.diagnostics) side[s].push_back(std::move(d));
        }
        for (const auto& d : side[s]) unusable |= d.is_input_error() && d.severity == Severity::Error;
    }

    const RevisionDiff diff = compare_revisions(side[0], side[1]);
    std::ofstream file_out;
    std::ostream* report = report_stream(args.output, file_out);
    if (!report) return kUnusable;
    std::ostream& out = *report;
    const UpgradeReportHeader header{from->name, to->name, checked};
    if (args.format == "json") write_upgrade_json(out, diff, header);
    else write_upgrade_text(out, diff, header);
    if (!finish_report(args.output, file_out)) return kUnusable;
    if (unusable) return kUnusable;
    if (args.exit_zero) return kOk;
    if (diff.new_errors > 0 || (args.strict && diff.new_warnings > 0)) return kProblems;
    return kOk;
}

}  // namespace mbl::cli
