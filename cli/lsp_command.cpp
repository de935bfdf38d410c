// `mbridge-lint lsp`: the Language Server Protocol server on standard input and output.
#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <csignal>

#include "cli/allocator_settings.hpp"
#include "cli/commands.hpp"
#include "core/paths.hpp"
#include "integrations/lsp/server.hpp"
#include "pyeval/ast_cache.hpp"

namespace mbl::cli {

CLI::App* add_lsp_command(CLI::App& app, LspArgs& args) {
    CLI::App* cmd = app.add_subcommand("lsp", "Run the Language Server Protocol server on stdin/stdout (for editors)");
    cmd->add_option("--debounce-ms", args.debounce_ms, "Pause after an edit before linting again (default 150)")
        ->check(CLI::Range(0, 10000));
    cmd->add_option("--max-diagnostics", args.max_diagnostics,
                    fmt::format("Diagnostics shown per document, then one summary of the rest (default {})",
                                lsp::kDefaultMaxDiagnostics))
        ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
    add_mcore_option(*cmd, args.mcore, "Megatron Core revision, overriding the configuration files", &args.mcore_path);
    cmd->add_option("--config", args.config, "Use this configuration file instead of discovering one per file");
    cmd->add_flag("--no-cache", args.no_cache,
                  "Keep no parsed modules on disk. By default the server keeps them in $MBRIDGE_LINT_CACHE_DIR, else "
                  "$XDG_CACHE_HOME/mbridge-lint or ~/.cache/mbridge-lint, so that the next start reads the tree's "
                  "modules instead of parsing them (MBRIDGE_LINT_CACHE_DIR=off turns it off too)");
    // Hidden: lets the tests exercise the oversized-message path without sending hundreds of megabytes.
    cmd->add_option("--max-message-bytes", args.max_message_bytes, "Largest message accepted")->group("");
    return cmd;
}

int run_lsp(const LspArgs& args) {
    if (!args.mcore.empty() && !resolve_revision(args.mcore)) return kUnusable;
    std::signal(SIGPIPE, SIG_IGN);  // a client that goes away must not kill the server mid-write
    allocator_for_long_run();
    // An editor waits for its first diagnostics, most of which is parsing the modules a recipe imports: the server
    // keeps their trees for its next start. The other commands keep none unless MBRIDGE_LINT_CACHE_DIR names a folder.
    py::set_ast_cache_dir(args.no_cache ? std::string() : user_cache_dir(true));
    lsp::ServerOptions options;
    options.debounce = std::chrono::milliseconds(args.debounce_ms);
    options.mcore = args.mcore;
    options.mcore_path = args.mcore_path;
    options.config_file = args.config;
    if (args.max_message_bytes > 0) options.max_message_bytes = args.max_message_bytes;
    if (args.max_diagnostics > 0) options.max_diagnostics = args.max_diagnostics;
    lsp::Server server(options, STDIN_FILENO, STDOUT_FILENO);
    return server.run();
}

}  // namespace mbl::cli
