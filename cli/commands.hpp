#pragma once
// One function per subcommand. Each returns the process exit code:
// 0 no errors; 1 errors found (or warnings with --strict); 2 bad usage or unusable input.
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace mbl::cli {

enum ExitCode { kOk = 0, kProblems = 1, kUnusable = 2 };

// Options shared by the commands that read recipes and apply overrides (check, show).
struct RecipeArgs {
    std::string root;                       // --root
    std::vector<std::string> hf_configs;    // --hf-config
    std::vector<std::string> config_files;  // --config-file
    std::vector<std::string> overrides;     // everything after `--`
    int jobs = 0;                           // --jobs
};

struct CheckArgs {
    std::vector<std::string> paths;
    std::string mcore;
    std::string te_version;
    std::string format = "text";
    std::string color = "auto";
    bool strict = false;
    bool quiet = false;
    bool show_unknowns = false;
    RecipeArgs recipe;
};
void add_check_command(CLI::App& app, CheckArgs& args);
int run_check(const CheckArgs& args);

struct ShowArgs {
    std::string target;
    std::string mcore;
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

// Resolves --mcore (empty = the default revision); prints the known revisions and returns nullptr when unknown.
}  // namespace mbl::cli

namespace mbl {
struct Revision;
}

namespace mbl::cli {

const Revision* resolve_revision(const std::string& name);

bool use_color(const std::string& mode);

// The command-line arguments after the first `--` (Hydra-style overrides); `argc` is shortened to exclude them.
std::vector<std::string> split_overrides(int& argc, char** argv);
// Adds --root, --hf-config, --config-file and --jobs to a command.
void add_recipe_options(CLI::App& cmd, RecipeArgs& args);

}  // namespace mbl::cli

namespace mbl {
struct LintOptions;
class SourceManager;
struct Diagnostic;
}  // namespace mbl

namespace mbl::cli {

// Reads --config-file files and the overrides, registers their text in `sources`, and installs
// `options.prepare` to apply them to every config tree. Returns false (errors in `errors`) when one is malformed.
bool setup_overrides(const RecipeArgs& args, const Revision& revision, LintOptions& options, SourceManager& sources,
                     std::vector<Diagnostic>& errors);

}  // namespace mbl::cli
