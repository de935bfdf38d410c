#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "core/paths.hpp"
#include "core/schema.hpp"
#include "engine/changed_files.hpp"
#include "engine/file_output.hpp"
#include "engine/lint_session.hpp"
#include "engine/walk.hpp"
#include "report/report.hpp"

namespace mbl::cli {

namespace {

// Rule patterns and path patterns on the command line: comma-separated, repeatable (`--select RC0,IN010`).
void add_selection_options(CLI::App& cmd, CheckArgs& args) {
    cmd.add_option_function<std::vector<std::string>>(
           "--select", [&args](const std::vector<std::string>& v) { args.selection.select = v; },
           "Rule codes, prefixes or names to report (ALL for every one); replaces the configuration's select and "
           "ignore, comma-separated")
        ->delimiter(',')
        ->allow_extra_args(false);
    cmd.add_option("--extend-select", args.selection.extend_select,
                   "Codes, prefixes or names to report on top of those selected, comma-separated")
        ->delimiter(',')
        ->allow_extra_args(false);
    cmd.add_option("--ignore", args.selection.ignore,
                   "Codes, prefixes or names not to report (IN warnings and infos included), comma-separated")
        ->delimiter(',')
        ->allow_extra_args(false);
    cmd.add_option_function<std::vector<std::string>>(
           "--exclude", [&args](const std::vector<std::string>& v) { args.selection.exclude = v; },
           "Paths directory walks leave out (fnmatch patterns relative to the current directory, or a name anywhere); "
           "replaces the configuration's exclude, comma-separated")
        ->delimiter(',')
        ->allow_extra_args(false);
    cmd.add_option("--extend-exclude", args.selection.extend_exclude,
                   "Paths to leave out on top of the excluded ones, comma-separated")
        ->delimiter(',')
        ->allow_extra_args(false);
    cmd.add_flag("--force-exclude", args.force_exclude,
                 "Leave out named files that match an exclude pattern too (pre-commit names every staged file)");
}

}  // namespace

void add_check_command(CLI::App& app, CheckArgs& args) {
    CLI::App* cmd = app.add_subcommand("check", "Lint config files and recipes and report every recompute problem");
    cmd->add_option("paths", args.paths,
                    "Config files, recipe files (file.py, or file.py::function for one recipe), directories "
                    "(searched for *.yaml / *.yml configs and *.py recipes) or - for standard input; Hydra-style "
                    "overrides follow `--`")
        ->required();
    add_mcore_option(*cmd, args.mcore,
                     "Megatron Core revision the job runs; A,B lints for both and reports what changes from A to B "
                     "(exit 1 when B has errors A has not)",
                     &args.mcore_path);
    cmd->add_option("--te-version", args.te_version,
                    "Installed Transformer Engine version (e.g. 2.5.0); enables the checks that depend on it");
    cmd->add_option("--output-format,--format", args.format,
                    "Output format: full (text: source lines, notes, fixes), concise (one line each), json, sarif "
                    "(SARIF 2.1.0), github (Actions annotations), gitlab (Code Quality), junit (JUnit XML)")
        ->check(CLI::IsMember({"full", "text", "concise", "json", "sarif", "github", "gitlab", "junit"}));
    cmd->add_flag("--statistics", args.statistics, "Print how many problems each code has instead of the problems");
    cmd->add_option("--color", args.color, "Colour the text output")->check(CLI::IsMember({"auto", "always", "never"}));
    cmd->add_flag("--strict", args.strict, "Exit with 1 on warnings too, not only on errors");
    cmd->add_flag("--exit-zero", args.exit_zero,
                  "Exit with 0 even when problems are found (2 still means unusable input or usage)");
    add_selection_options(*cmd, args);
    cmd->add_option("--gpu-memory", args.gpu_memory,
                    "Memory budget per GPU (e.g. 80GiB): enables the memory advice rules");
    cmd->add_option("--data-parallel-size", args.data_parallel_size, "Data-parallel size, for the memory advice rules");
    cmd->add_option("--gpus", args.gpus,
                    "The job's GPU count, for the memory advice rules (default: what a recipe's name states, else 1)");
    cmd->add_option(
        "--reserve", args.reserve,
        "Memory the memory advice rules keep free beside the predicted peak (default: measured), e.g. 3GiB");
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
    cmd->add_option("--stdin-filename", args.stdin_filename,
                    "With - as the path: the file standard input stands for (its configuration, its kind, the name "
                    "in the report)");
    cmd->add_flag("--skip-non-configs", args.skip_non_configs,
                  "Skip named files that are not Bridge configs or recipes, as directory walks do (pre-commit)");
    cmd->add_flag("--no-skip-vendored", args.no_skip_vendored,
                  "Walk vendored trees too: git submodules, 3rdparty/ and third_party/ folders, paths git ignores");
    cmd->add_flag("--show-unknowns", args.show_unknowns,
                  "List every model field a recipe computes in a way the linter cannot follow (IN012 infos)");
    cmd->add_flag("--show-settings", args.show_settings,
                  "Print the settings the first path would be checked with, and where each came from; check nothing");
    cmd->add_flag("--watch", args.watch,
                  "Check again whenever a file under the paths changes (polled), until interrupted");
    // Bounds for tests and scripts; hidden from --help, documented in docs/user-guide.md.
    cmd->add_option("--watch-interval-ms", args.watch_interval_ms, "How often --watch looks for changes")
        ->check(CLI::Range(10, 60000))
        ->group("");
    cmd->add_option("--watch-max-runs", args.watch_max_runs, "Stop --watch after this many checks")
        ->check(CLI::Range(1, 1000000))
        ->group("");
    add_recipe_options(*cmd, args.recipe);
}

namespace {

constexpr const char* kStdin = "-";

// The run's inputs as the session sees them, and what the run found.
struct CheckRun {
    std::vector<Diagnostic> all;
    std::vector<std::string> files_checked;
    FileCounts files;
    int fixed = 0, recipes = 0, unresolved = 0, architecture_known = 0;
    std::vector<RevisionChoice>
        revisions;  // each distinct revision choice once (docs/user-guide.md "Revision detection")
    bool any_diff = false, write_failed = false;
    std::ostringstream diffs;
    std::vector<std::string> notes;       // what a walk passed over on purpose, one line each (text formats)
    std::set<std::string> refused;        // files --fix would have edited but may not write
    std::vector<std::string> unfinished;  // why fixes that could apply were left, one per input
};

// --fix writes only inside the trees the user gave, never through a symbolic link: a fix may point at a helper module
// elsewhere, and a link may lead anywhere. A directory given is its own tree; a file given (`recipe.py`, or
// `recipe.py::function`) stands for the working directory when it lies inside it (its helpers are the project's),
// else for its own folder.
std::string why_not_writable(const std::string& file, const CheckArgs& args, const std::string& stdin_name) {
    namespace fs = std::filesystem;
    if (file == stdin_name) return "";
    std::error_code ec;
    if (fs::is_symlink(file, ec)) return "it is a symbolic link";
    const std::string real = normalized_path(file);
    const std::string cwd = normalized_path(fs::current_path(ec).string());
    for (const auto& arg : args.paths) {
        const auto sep = arg.find("::");
        const std::string given = fs::exists(arg, ec) || sep == std::string::npos ? arg : arg.substr(0, sep);
        if (fs::is_symlink(given, ec) && normalized_path(given) == real)
            return fmt::format("it is reached through the symbolic link {}", given);
    }
    for (const auto& arg : args.paths) {
        const auto sep = arg.find("::");
        const std::string given = fs::exists(arg, ec) || sep == std::string::npos ? arg : arg.substr(0, sep);
        std::string root = normalized_path(given);
        if (!fs::is_directory(root, ec)) root = relative_to(root, cwd) ? cwd : fs::path(root).parent_path().string();
        if (real == root || relative_to(real, root)) return "";
    }
    return "it lies outside the paths given on the command line";
}

// Applies fixes to one input: writes the changed files (--fix) or prints their diff (--diff). Standard input is
// not a file: its fixed text stays in the SourceManager for the report.
bool fix_input(LintSession& session, const CheckArgs& args, const InputFile& input, FileResult& result, CheckRun& run,
               const DependentsReport& dependents, const std::string& stdin_name) {
    FixOptions options{.unsafe = args.unsafe_fixes, .may_edit = dependents.may_edit(input)};
    if (!args.diff)
        options.may_edit = [&, named_only = options.may_edit](const std::string& file) {
            if (named_only && !named_only(file)) return false;
            const std::string why = why_not_writable(file, args, stdin_name);
            if (why.empty()) return true;
            if (run.refused.insert(file).second)
                std::cerr << fmt::format("mbridge-lint: not fixing {}: {}\n", file, why);
            return false;
        };
    FixOutcome outcome =
        fix_file(session, input.path, options, !input.explicit_input || args.skip_non_configs, input.function);
    result = std::move(outcome.after);
    run.fixed += outcome.applied;
    if (!outcome.stopped.empty())
        run.unfinished.push_back(fmt::format("{}: {}", display_path(input.path), outcome.stopped));
    for (const auto& [file, text] : outcome.fixed) {
        if (args.diff) {
            run.diffs << unified_diff(file, outcome.original[file], text);
            run.any_diff = true;
            continue;
        }
        if (file == stdin_name) continue;
        const std::string dir = std::filesystem::path(file).parent_path().string();
        for (const auto& gone : remove_stale_temporaries(dir))
            std::cerr << fmt::format("mbridge-lint: removed {}, left by an interrupted --fix\n", display_path(gone));
        std::string error;
        if (!write_file_atomically(file, text, &error, &outcome.original[file])) {
            std::cerr << "mbridge-lint: " << error << '\n';
            return false;
        }
    }
    return true;
}

// `-`: standard input, under the name --stdin-filename gives (so that its configuration and front end are found).
std::optional<std::string> read_stdin_input(const CheckArgs& args, SourceManager& sources) {
    const std::string name = args.stdin_filename.empty() ? kStdin : display_path(args.stdin_filename);
    // Read up to one byte past the size limit and no further: `check - < /dev/zero` must end, refused as too large.
    std::string text;
    char chunk[65536];
    while (text.size() <= SourceManager::max_file_bytes() && std::cin.read(chunk, sizeof chunk).gcount() > 0)
        text.append(chunk, static_cast<std::size_t>(std::cin.gcount()));
    sources.add(name, std::move(text));
    return name;
}

// Plain usage errors of check's own options, before anything is read.
bool check_usage(const CheckArgs& args) {
    const bool reads_stdin = std::find(args.paths.begin(), args.paths.end(), kStdin) != args.paths.end();
    auto fail = [](const std::string& message) {
        std::cerr << "mbridge-lint: " << message << '\n';
        return false;
    };
    if (reads_stdin && args.paths.size() > 1) return fail("- (standard input) is the only path of its run");
    if (!args.stdin_filename.empty() && !reads_stdin) return fail("--stdin-filename names what - stands for; pass -");
    if (reads_stdin && !args.changed_only.empty()) return fail("--changed-only needs files, not standard input");
    if (args.statistics && args.format != "full" && args.format != "concise" && args.format != "json")
        return fail(fmt::format("--statistics prints text or json, not {}", args.format));
    for (const auto* patterns : {&args.selection.extend_select, &args.selection.ignore}) {
        for (const auto& p : *patterns) {
            std::string why;
            if (!rule_pattern_valid(p, &why)) return fail(why);
        }
    }
    if (args.selection.select)
        for (const auto& p : *args.selection.select) {
            std::string why;
            if (!rule_pattern_valid(p, &why)) return fail(why);
        }
    return true;
}

// Takes one input's result into the run (in input order, whichever thread linted it).
void take_result(const InputFile& input, FileResult r, DependentsReport& dependents, CheckRun& run,
                 std::set<DiagnosticIdentity>& reported) {
    dependents.record(input, r);
    if (r.skipped) {
        ++run.files.skipped;
        return;
    }
    ++run.files.checked;
    run.files_checked.push_back(input.path);
    note_revision_choice(run.revisions, r.revision_choice);
    run.recipes += r.recipes;
    run.unresolved += static_cast<int>(r.unresolved.size());
    run.architecture_known += r.architecture_known;
    for (auto& d : r.diagnostics)
        // A broken configuration file, or a helper shared by recipes in several files: report it once.
        if (reported.insert(diagnostic_identity(d)).second) run.all.push_back(std::move(d));
}

void lint_inputs(LintSession& session, const CheckArgs& args, const std::vector<InputFile>& inputs,
                 DependentsReport& dependents, const std::string& stdin_name, CheckRun& run) {
    std::set<DiagnosticIdentity> reported;
    for (const auto& d : run.all) reported.insert(diagnostic_identity(d));
    Progress progress(!args.quiet, inputs.size());
    if (args.fix || args.diff) {
        // One file after another: a fix changes files that the next one may read.
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            progress.at(i, inputs[i].path);
            FileResult r;
            run.write_failed |= !fix_input(session, args, inputs[i], r, run, dependents, stdin_name);
            take_result(inputs[i], std::move(r), dependents, run, reported);
        }
        return;
    }
    std::vector<LintTarget> targets;
    for (const auto& input : inputs)
        targets.push_back({input.path, !input.explicit_input || args.skip_non_configs, input.function});
    std::size_t taken = 0;
    session.lint_all(targets, [&](FileResult r) {
        progress.at(taken, inputs[taken].path);
        take_result(inputs[taken], std::move(r), dependents, run, reported);
        ++taken;
    });
}

// The lines under the diagnostics in the text formats.
void write_text_summary(std::ostream& out, const CheckArgs& args, const CheckRun& run,
                        const DependentsReport& dependents, const DiagnosticCounts& counts) {
    if (args.fix) {
        std::vector<std::string> why = run.unfinished;
        if (!run.refused.empty()) why.push_back("a file it would edit may not be written, see above");
        if (const std::string line =
                fix_summary_line(run.fixed, run.all, args.unsafe_fixes, fmt::format("{}", fmt::join(why, "; ")));
            !line.empty())
            out << line << '\n';
    }
    if (args.quiet) return;
    for (const auto& note : run.notes) out << note << '\n';
    for (const auto& note : dependents.notes()) out << note << '\n';
    out << summary_line(counts, run.files) << '\n';
    if (!args.fix)
        if (const std::string fixable = fixable_line(count_fixable(run.all), args.unsafe_fixes); !fixable.empty())
            out << fixable << '\n';
    if (run.recipes > 0) out << recipes_line(run.recipes, run.recipes - run.unresolved, run.architecture_known) << '\n';
    write_detection_notes(out, run.revisions);
}

void write_report(std::ostream& out, const CheckArgs& args, const CheckRun& run, const DependentsReport& dependents,
                  const SourceManager& sources, const DiagnosticCounts& counts) {
    const std::string base_dir = std::filesystem::current_path().string();
    const TextStyle style{args.output.empty() && use_color(args.color)};
    if (args.statistics && args.format == "json") return write_statistics_json(out, run.all);
    if (args.format == "json") return write_json(out, run.all, run.revisions, run.files);
    if (args.format == "sarif") return write_sarif(out, run.all, sources, SarifOptions{base_dir});
    if (args.format == "github") return write_github(out, run.all, base_dir);
    if (args.format == "gitlab") return write_gitlab(out, run.all, sources, base_dir);
    if (args.format == "junit") return write_junit(out, run.all, run.files_checked, base_dir);
    if (args.statistics) write_statistics(out, run.all);
    else if (args.format == "concise") write_concise(out, run.all, style);
    else write_text(out, run.all, sources, style);
    write_text_summary(out, args, run, dependents, counts);
}

// A walk over thousands of files broken the same way (a generated tree, an unpacked archive) reads as a few lines:
// past kWalkRepeats input errors with one code and message in files a walk found, the rest are one line per message
// (warnings stay: each says something about its own file). The counts, the exit code and the machine-readable
// formats keep every one.
void summarise_floods(CheckRun& run, const std::vector<InputFile>& inputs) {
    std::set<std::string> walked;
    for (const auto& input : inputs)
        if (!input.explicit_input) walked.insert(input.path);
    std::map<std::pair<std::string, std::string>, long> seen;  // (code, message without the file's name) -> count
    std::vector<std::pair<std::string, std::string>> order;
    std::vector<Diagnostic> kept;
    for (auto& d : run.all) {
        if (!d.is_input_error() || d.severity != Severity::Error || !walked.count(d.range.file)) {
            kept.push_back(std::move(d));
            continue;
        }
        std::string message = d.message;
        const std::string& file = d.range.file;
        for (auto at = file.empty() ? std::string::npos : message.find(file); at != std::string::npos;
             at = message.find(file, at + 4))
            message.replace(at, file.size(), "FILE");
        const auto key = std::make_pair(d.code, message);
        if (++seen[key] <= kWalkRepeats) kept.push_back(std::move(d));
        else if (seen[key] == kWalkRepeats + 1) order.push_back(key);
    }
    run.all = std::move(kept);
    for (const auto& key : order)
        run.notes.push_back(fmt::format("and {} more files with {} \"{}\"", seen[key] - kWalkRepeats, key.first,
                                        key.second.size() > 100 ? key.second.substr(0, 97) + "..." : key.second));
}

// Nothing was checked although paths were given (an empty directory, a tree without configs, a mistyped path whose
// error is already reported): a run that checks nothing must not pass a CI gate. --changed-only and
// --skip-non-configs (pre-commit) may select nothing on purpose.
bool nothing_checked(const CheckArgs& args, const CheckRun& run) {
    if (run.files.checked > 0 || !args.changed_only.empty() || args.skip_non_configs) return false;
    for (const auto& note : run.notes) std::cerr << "mbridge-lint: " << note << '\n';  // why the walk found nothing
    for (const auto& d : run.all)
        if (d.is_input_error() && d.severity == Severity::Error) return false;  // said already, exit 2
    std::string what = fmt::format("{}", fmt::join(args.paths, ", "));
    std::cerr << fmt::format("mbridge-lint: nothing to check: {} hold{} no Bridge config or recipe{}\n", what,
                             args.paths.size() == 1 ? "s" : "",
                             run.files.skipped > 0 ? fmt::format(" ({} file{} skipped)", run.files.skipped,
                                                                 run.files.skipped == 1 ? "" : "s")
                                                   : "");
    return true;
}

int exit_code(const CheckArgs& args, const DiagnosticCounts& counts, bool unusable) {
    if (unusable) return kUnusable;
    if (args.exit_zero) return kOk;
    if (counts.errors > 0 || (args.strict && counts.warnings > 0)) return kProblems;
    return kOk;
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

    SessionOptions session_options{
        .mcore = args.mcore, .mcore_path = args.mcore_path, .te_version = args.te_version, .config_file = args.config};
    if (!args.gpu_memory.empty()) {
        session_options.gpu_memory_bytes = parse_gpu_memory(args.gpu_memory);
        if (!session_options.gpu_memory_bytes) return std::nullopt;
    }
    if (!parse_job_size(args.data_parallel_size, args.gpus, args.reserve, session_options.data_parallel_size,
                        session_options.gpus, session_options.reserve_bytes))
        return std::nullopt;

    session_options.root = args.recipe.root;
    session_options.hf_configs = args.recipe.hf_configs;
    session_options.jobs = args.recipe.jobs;
    session_options.show_unknowns = args.show_unknowns;
    session_options.selection = args.selection;
    session_options.selection.base_dir = std::filesystem::current_path().string();
    return session_options;
}

namespace {

int check_once(const CheckArgs& given);

// `--show-settings`: the `config` command's view of the first path, with check's own options layered over it.
int show_settings(const CheckArgs& args) {
    ConfigArgs c;
    const std::string& first = args.paths.front();
    c.path =
        first == kStdin ? (args.stdin_filename.empty() ? "." : args.stdin_filename) : first.substr(0, first.find("::"));
    if (first == kStdin && !args.stdin_filename.empty() && !std::filesystem::exists(c.path))
        c.path = std::filesystem::path(c.path).parent_path().string();
    if (c.path.empty()) c.path = ".";
    c.format = args.format == "json" ? "json" : "text";
    c.config = args.config;
    c.mcore = args.mcore;
    c.mcore_path = args.mcore_path;
    c.te_version = args.te_version;
    c.command_line = &args.selection;
    c.gpu_memory = args.gpu_memory;
    return run_config(c);
}

// What --watch compares between two looks: each file's modification time and size, under the paths given.
using WatchState = std::map<std::string, std::pair<std::filesystem::file_time_type, std::uintmax_t>>;
constexpr std::size_t kWatchMaxFiles = 200000;  // a look stops here: polling must stay cheap

WatchState watch_state(const std::vector<std::string>& paths) {
    namespace fs = std::filesystem;
    WatchState state;
    // A file that goes between listing and reading is left out of this look, not an error: the next look sees it gone.
    auto note = [&](const fs::path& p) {
        const auto ext = p.extension().string();
        if (ext != ".yaml" && ext != ".yml" && ext != ".py" && ext != ".toml") return;
        std::error_code time_ec, size_ec;
        const auto time = fs::last_write_time(p, time_ec);
        const auto size = fs::file_size(p, size_ec);
        if (!time_ec && !size_ec) state[p.string()] = {time, size};
    };
    for (const auto& arg : paths) {
        std::error_code ec;
        const fs::path root = arg.substr(0, fs::exists(arg, ec) ? std::string::npos : arg.find("::"));
        if (!fs::is_directory(root, ec)) {
            note(root);
            continue;
        }
        std::error_code walk_ec;
        for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, walk_ec);
             !walk_ec && it != fs::recursive_directory_iterator() && state.size() < kWatchMaxFiles;
             it.increment(walk_ec)) {
            const std::string name = it->path().filename().string();
            if (it->is_directory(ec) && (name.front() == '.' || name == "__pycache__")) it.disable_recursion_pending();
            else if (it->is_regular_file(ec)) note(it->path());
        }
    }
    return state;
}

// --watch: a check, then another each time a look finds a file changed, added or removed. Returns the last check's
// exit code when --watch-max-runs stops it.
int watch(const CheckArgs& args) {
    if (std::find(args.paths.begin(), args.paths.end(), kStdin) != args.paths.end()) {
        std::cerr << "mbridge-lint: --watch needs files or directories, not standard input\n";
        return kUnusable;
    }
    int code = kOk;
    WatchState seen = watch_state(args.paths);
    for (int run = 1;; ++run) {
        code = check_once(args);
        std::cout << fmt::format("[watching {} for changes; Ctrl-C stops]", fmt::join(args.paths, ", ")) << std::endl;
        if (args.watch_max_runs > 0 && run >= args.watch_max_runs) return code;
        for (WatchState now = watch_state(args.paths);; now = watch_state(args.paths)) {
            if (now != seen) {
                seen = std::move(now);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(args.watch_interval_ms));
        }
        std::cout << "[a file changed; checking again]" << std::endl;
    }
}

}  // namespace

int run_check(const CheckArgs& args) {
    if (args.show_settings) return show_settings(args);
    if (args.watch) return watch(args);
    return check_once(args);
}

namespace {

int check_once(const CheckArgs& given) {
    CheckArgs args = given;
    if (args.format == "text") args.format = "full";
    if (auto pair = split_mcore_pair(args.mcore)) return run_upgrade_check(args, pair->first, pair->second);
    // Checked here for a plain usage error; the session applies them (over the configuration file's values).
    if (!args.mcore.empty() && !resolve_revision(args.mcore)) return kUnusable;
    if (!check_usage(args)) return kUnusable;
    std::optional<SessionOptions> options = check_session_options(args);
    if (!options) return kUnusable;

    SourceManager sources;
    CheckRun run;
    if (!setup_overrides(args.recipe, options->prepare, sources, run.all)) {
        // A malformed override or --config-file: nothing is checked.
        if (args.format == "json") write_json(std::cout, run.all);
        else write_text(std::cout, run.all, sources, TextStyle{use_color(args.color)});
        return kUnusable;
    }
    LintSession session(*options, sources);
    std::string stdin_name;
    std::vector<InputFile> inputs;
    if (args.paths.size() == 1 && args.paths[0] == kStdin) {
        stdin_name = *read_stdin_input(args, sources);
        inputs.push_back({stdin_name, true, {}});
    } else {
        const WalkOptions walk{.excluded = [&](const std::string& p) { return session.excluded(p); },
                               .force_exclude = args.force_exclude,
                               .skip_vendored = !args.no_skip_vendored,
                               .notes = &run.notes};
        inputs = collect_inputs(args.paths, run.all, walk);
    }
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
    lint_inputs(session, args, inputs, dependents, stdin_name, run);
    if (!args.skip_non_configs)
        for (auto& d : dependents.errors()) run.all.push_back(std::move(d));
    merge_subjects_across_files(run.all);  // one unknown model loaded in several files: reported once; sorts

    if (run.write_failed) return kUnusable;
    if (nothing_checked(args, run)) return kUnusable;

    DiagnosticCounts counts;
    bool unusable = false;
    for (const auto& d : run.all) {
        counts.add(d);
        unusable |= d.is_input_error() && d.severity == Severity::Error;
    }
    if (args.format == "full" || args.format == "concise") summarise_floods(run, inputs);
    if (args.diff) {
        std::cout << run.diffs.str();
        // What --fix would say it left, so that an empty diff is not mistaken for nothing to fix.
        for (const auto& why : run.unfinished) std::cerr << "mbridge-lint: fix not shown: " << why << '\n';
        if (unusable) return kUnusable;
        return run.any_diff && !args.exit_zero ? kProblems : kOk;
    }
    if (args.fix && !stdin_name.empty()) {
        // Like a formatter on standard input: the fixed text on standard output, the report on standard error.
        if (const std::string* text = sources.text(stdin_name)) std::cout << *text;
        write_report(std::cerr, args, run, dependents, sources, counts);
        return exit_code(args, counts, unusable);
    }
    std::ofstream file_out;
    std::ostream* report = report_stream(args.output, file_out);
    if (!report) return kUnusable;
    write_report(*report, args, run, dependents, sources, counts);
    if (!finish_report(args.output, file_out)) return kUnusable;
    return exit_code(args, counts, unusable);
}

}  // namespace

}  // namespace mbl::cli
