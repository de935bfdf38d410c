// `mbridge-lint lsp`: the Language Server Protocol server on standard input and output.
#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <csignal>

#include "cli/commands.hpp"
#include "integrations/lsp/server.hpp"

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
    // Hidden: lets the tests exercise the oversized-message path without sending hundreds of megabytes.
    cmd->add_option("--max-message-bytes", args.max_message_bytes, "Largest message accepted")->group("");
    return cmd;
}

int run_lsp(const LspArgs& args) {
    if (!args.mcore.empty() && !resolve_revision(args.mcore)) return kUnusable;
    std::signal(SIGPIPE, SIG_IGN);  // a client that goes away must not kill the server mid-write
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
