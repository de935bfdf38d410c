#pragma once
// One function per subcommand. Each returns the process exit code:
// 0 no errors; 1 errors found (or warnings with --strict); 2 bad usage or unusable input.
#include <fstream>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "config/rule_selection.hpp"
#include "engine/lint_session.hpp"

namespace CLI {
class App;
}

namespace mbl::cli {

enum ExitCode { kOk = 0, kProblems = 1, kUnusable = 2 };

// Options shared by the commands that read recipes and apply overrides (check, show, estimate).
struct RecipeArgs {
    std::string root;                       // --root
    std::vector<std::string> hf_configs;    // --hf-config
    std::vector<std::string> config_files;  // --config-file
    std::vector<std::string> overrides;     // everything after `--`
    int jobs = 0;                           // --jobs
};

struct CheckArgs {
    std::vector<std::string> paths;  // "-": standard input
    std::string mcore;
    std::string mcore_path;  // --mcore-path: a Megatron Core tree to read the config classes from
    std::string te_version;
    std::string format =
        "full";  // --output-format (--format): full (text), concise, json, sarif, github, gitlab, junit
    std::string color = "auto";
    bool strict = false;
    bool quiet = false;
    bool statistics = false;        // counts per code instead of the diagnostics
    bool exit_zero = false;         // exit 0 even when problems are found (2 still says the input or usage is unusable)
    std::string stdin_filename;     // the path standard input stands for: configuration, front end, output
    bool force_exclude = false;     // exclude patterns apply to named files too
    bool no_skip_vendored = false;  // walks enter git submodules, 3rdparty/ and git-ignored paths too
    CommandLineSelection selection;
    std::string gpu_memory;  // enables the memory advice rules (RC2xx)
    std::string data_parallel_size;
    std::string gpus;     // --gpus: the job's GPU count, for the memory advice rules
    std::string reserve;  // --reserve SIZE: kept free beside the predicted peak
    // Integrations (docs/configuration.md, docs/integrations.md).
    bool fix = false;
    bool unsafe_fixes = false;
    bool diff = false;
    std::string changed_only;  // git ref
    std::string config;        // --config FILE
    std::string output;        // --output FILE
    bool skip_non_configs = false;
    bool show_unknowns = false;
    bool show_settings = false;  // print the settings the first path is checked with, and check nothing
    bool watch = false;          // re-check whenever an input changes, until interrupted
    int watch_interval_ms = 500;
    int watch_max_runs = 0;  // 0: until interrupted; tests stop after a few
    RecipeArgs recipe;
};
void add_check_command(CLI::App& app, CheckArgs& args);
int run_check(const CheckArgs& args);

struct ShowArgs {
    std::string target;
    std::string mcore;
    std::string mcore_path;         // --mcore-path: a Megatron Core tree to read the config classes from
    std::vector<std::string> only;  // --only model.recompute
    RecipeArgs recipe;
};
void add_show_command(CLI::App& app, ShowArgs& args, CLI::App*& show_cmd);
int run_show(const ShowArgs& args);

struct RulesArgs {
    std::string format = "text";
    std::string mcore;
    std::string code;  // for explain
};
void add_rules_commands(CLI::App& app, RulesArgs& args, CLI::App*& rules_cmd, CLI::App*& explain_cmd);
int run_rules(const RulesArgs& args);
int run_explain(const RulesArgs& args);

struct EstimateArgs {
    std::string input;
    std::string mcore;
    std::string mcore_path;  // --mcore-path: a Megatron Core tree to read the config classes from
    std::string gpu_memory;
    std::string gpu;        // --gpu: step-time model (and budget without --gpu-memory)
    std::string step_time;  // --step-time: the job's measured step time
    std::string data_parallel_size;
    std::string gpus;
    std::string reserve;  // --reserve SIZE
    std::string format = "text";
    std::string html;
    std::string color = "auto";
    RecipeArgs recipe;
};
void add_estimate_command(CLI::App& app, EstimateArgs& args);
int run_estimate(const EstimateArgs& args);
// --gpu-memory and --data-parallel-size values; print a plain error and return nullopt when malformed.
std::optional<double> parse_gpu_memory(const std::string& text);
std::optional<int> parse_positive(const std::string& flag, const std::string& text);
// --data-parallel-size, --gpus (not both) and --reserve of `estimate` and `check`; false after a plain error.
bool parse_job_size(const std::string& data_parallel_size, const std::string& gpus, const std::string& reserve,
                    std::optional<int>& dp, std::optional<int>& gpu_count, std::optional<double>& reserve_bytes);
// The one config `estimate` and `gpu-check` work on; `model` is empty when it cannot be used (the located reasons
// are printed on standard error).
struct OneConfig {
    std::optional<EffectiveModel> model;
    const Revision* revision = nullptr;
    std::vector<Diagnostic> rejections;  // the config's errors that are Megatron Core's (rules), not the input's
};
OneConfig load_one_config(const std::string& input, const std::string& mcore, const std::string& mcore_path,
                          const RecipeArgs& recipe, const std::string& color, SourceManager& sources);

struct GpuCheckArgs {
    std::string target;
    std::string mcore;
    std::string mcore_path;  // --mcore-path: a Megatron Core tree to read the config classes from
    int layers = 4;
    int steps = 3;
    int warmup = 1;
    long long micro_batch = 0;  // 0: from the config
    long long seq_length = 0;   // 0: from the config
    std::string attention = "auto";
    std::vector<std::string> recompute;
    double tolerance = 10.0;  // percent
    unsigned long long seed = 1234;
    std::string format = "text";
    std::string reference = "auto";  // --reference: mcore (Megatron Core via Python), harness (CUDA), auto
    std::string python = "python3";  // --python: the interpreter of the Megatron Core reference
    std::string runner;              // --runner: the user's Bridge launch command
    std::string helper_dir;  // --helper-dir (default: the installed share/mbridge-lint/bridge, else the source tree's)
    std::string work_dir;    // --work-dir (default: a new folder under the temporary directory)
    int data_parallel_size = 0;
    int stage = -2;  // --stage R: measure pipeline stage R as the schedule runs it (-1: never; -2: default)
    long long micro_batches = 0;  // --micro-batches: per step in the stage's schedule (0: the default)
    std::string color = "auto";
    RecipeArgs recipe;
};
void add_gpu_check_command(CLI::App& app, GpuCheckArgs& args);
int run_gpu_check(const GpuCheckArgs& args);
struct ConfigArgs {
    std::string path = ".";
    std::string format = "text";
    std::string config;
    std::string mcore;
    std::string mcore_path;  // --mcore-path: a Megatron Core tree to read the config classes from
    std::string te_version;
    // `check --show-settings`: check's own layer over the configuration (rule selection, exclude, memory budget).
    const CommandLineSelection* command_line = nullptr;
    std::string gpu_memory;
};
CLI::App* add_config_command(CLI::App& app, ConfigArgs& args);
int run_config(const ConfigArgs& args);

struct LspArgs {
    int debounce_ms = 150;
    std::size_t max_message_bytes = 0;  // 0: the server's default
    std::size_t max_diagnostics = 0;    // 0: the server's default
    std::string mcore;
    std::string mcore_path;  // --mcore-path: a Megatron Core tree to read the config classes from
    std::string config;
    bool no_cache = false;  // --no-cache: parse every module afresh, keep nothing on disk
};
CLI::App* add_lsp_command(CLI::App& app, LspArgs& args);

// --limit NAME=VALUE (repeatable) on a command that reads input; apply_limit_options sets them for the run before
// anything is read, or says what is wrong with one and returns false.
void add_limit_option(CLI::App& cmd, std::vector<std::string>& limits);
bool apply_limit_options(const std::vector<std::string>& limits);
int run_lsp(const LspArgs& args);

// Resolves --mcore (empty = the default revision); prints the known revisions and returns nullptr when unknown.
}  // namespace mbl::cli

namespace mbl {
struct Revision;
}

namespace mbl::cli {

const Revision* resolve_revision(const std::string& name);

// --mcore with its help: the option on `cmd`, and the revision names with what each is (release tag, commit,
// branch) as the command's --help footer.
// With `path`, --mcore-path too: a Megatron Core tree whose config classes are read instead of the bundled ones.
void add_mcore_option(CLI::App& cmd, std::string& value, const std::string& description, std::string* path = nullptr);
std::string revisions_help();
// Keeps each distinct revision choice of a run once, in the order first seen.
void note_revision_choice(std::vector<RevisionChoice>& seen, const RevisionChoice& choice);
// One line per detected choice (docs/user-guide.md "Revision detection"): which revision files in a Bridge checkout get, and why.
void write_detection_notes(std::ostream& out, const std::vector<RevisionChoice>& choices, bool say_default = true);
// `check --mcore A,B`: the two names, or nullopt when `value` holds no comma.
std::optional<std::pair<std::string, std::string>> split_mcore_pair(const std::string& value);
// `check --mcore A,B`: lints for both and reports what changes (cli/upgrade_check.cpp).
int run_upgrade_check(const CheckArgs& args, const std::string& from, const std::string& to);
// The session options --mcore aside that `check` builds from its arguments; prints a plain error and returns
// nullopt for a malformed value.
std::optional<SessionOptions> check_session_options(const CheckArgs& args);

bool use_color(const std::string& mode);
// --output: the report goes to `path` (opened into `file`, truncated) or, when empty, to standard output; nullptr
// after a plain error when the file cannot be written.
std::ostream* report_stream(const std::string& path, std::ofstream& file);
// Closes a report written to `path` (nothing for standard output): false, said on standard error, when any write,
// the flush or the close failed (a full disk), so that the run exits 2 instead of passing with a lost report.
bool finish_report(const std::string& path, std::ofstream& file);

// The command-line arguments after the first `--` (Hydra-style overrides); `argc` is shortened to exclude them.
std::vector<std::string> split_overrides(int& argc, char** argv);
// Adds --root, --hf-config, --config-file and --jobs to a command.
void add_recipe_options(CLI::App& cmd, RecipeArgs& args);

}  // namespace mbl::cli

namespace mbl::cli {

// Reads --config-file files and the overrides, registers their text in `sources`, and sets `prepare` to apply
// them to every config tree. Returns false (errors in `errors`) when one is malformed.
bool setup_overrides(const RecipeArgs& args, ConfigPreparer& prepare, SourceManager& sources,
                     std::vector<Diagnostic>& errors);

}  // namespace mbl::cli
