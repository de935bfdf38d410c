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

struct CheckArgs {
    std::vector<std::string> paths;
    std::string mcore;
    std::string te_version;
    std::string format = "text";
    std::string color = "auto";
    bool strict = false;
    bool quiet = false;
    // Integrations (README "Fixes", "CI", "Configuration").
    bool fix = false;
    bool unsafe_fixes = false;
    bool diff = false;
    std::string changed_only;   // git ref
    std::string config;         // --config FILE
    std::string output;         // --output FILE
    bool skip_non_configs = false;
};
void add_check_command(CLI::App& app, CheckArgs& args);
int run_check(const CheckArgs& args);

struct RulesArgs {
    std::string format = "text";
    std::string mcore;
    std::string code;  // for explain
};
void add_rules_commands(CLI::App& app, RulesArgs& args, CLI::App*& rules_cmd, CLI::App*& explain_cmd);
int run_rules(const RulesArgs& args);
int run_explain(const RulesArgs& args);

struct ConfigArgs {
    std::string path = ".";
    std::string format = "text";
    std::string config;
    std::string mcore;
    std::string te_version;
};
CLI::App* add_config_command(CLI::App& app, ConfigArgs& args);
int run_config(const ConfigArgs& args);

struct LspArgs {
    int debounce_ms = 150;
    std::size_t max_message_bytes = 0;  // 0: the server's default
    std::string mcore;
    std::string config;
};
CLI::App* add_lsp_command(CLI::App& app, LspArgs& args);
int run_lsp(const LspArgs& args);

// Resolves --mcore (empty = the default revision); prints the known revisions and returns nullptr when unknown.
}  // namespace mbl::cli

namespace mbl {
struct Revision;
}

namespace mbl::cli {

const Revision* resolve_revision(const std::string& name);

bool use_color(const std::string& mode);

}  // namespace mbl::cli
