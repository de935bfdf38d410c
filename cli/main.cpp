// mbridge-lint: a linter for activation-recompute settings of Megatron Bridge training configs.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.hpp"
#include "version.hpp"

int main(int argc, char** argv) {
    using namespace mbl::cli;
    CLI::App app{
        "mbridge-lint checks the activation-recompute settings of Megatron Bridge training configs against the rules\n"
        "of the Megatron Core revision the job will run, without running anything, and reports every problem at once.\n"
        "\nExit codes: 0 no errors; 1 errors found (or warnings with --strict); 2 bad usage or unusable input.",
        "mbridge-lint"};
    app.set_version_flag("--version", std::string(MBRIDGE_LINT_VERSION));
    app.require_subcommand(1);
    app.footer("Run `mbridge-lint <command> --help` for a command's options. Docs: README.md");

    // Hydra-style overrides follow `--`; they apply to every config checked, shown, estimated or checked on a GPU.
    const std::vector<std::string> overrides = split_overrides(argc, argv);
    CheckArgs check;
    add_check_command(app, check);
    check.recipe.overrides = overrides;
    ShowArgs show;
    CLI::App* show_cmd = nullptr;
    add_show_command(app, show, show_cmd);
    show.recipe.overrides = overrides;
    RulesArgs rules;
    CLI::App* rules_cmd = nullptr;
    CLI::App* explain_cmd = nullptr;
    add_rules_commands(app, rules, rules_cmd, explain_cmd);
    EstimateArgs estimate;
    add_estimate_command(app, estimate);
    estimate.recipe.overrides = overrides;
    GpuCheckArgs gpu_check;
    add_gpu_check_command(app, gpu_check);
    gpu_check.recipe.overrides = overrides;
    ConfigArgs config;
    CLI::App* config_cmd = add_config_command(app, config);
    LspArgs lsp;
    CLI::App* lsp_cmd = add_lsp_command(app, lsp);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        std::cerr << "Run `mbridge-lint --help` for usage.\n";
        return kUnusable;
    }
    if (!overrides.empty() && !app.got_subcommand("check") && !show_cmd->parsed() && !app.got_subcommand("estimate") &&
        !app.got_subcommand("gpu-check")) {
        std::cerr << "mbridge-lint: overrides after `--` apply to `check`, `show`, `estimate` and `gpu-check` only\n";
        return kUnusable;
    }
    try {
        if (app.got_subcommand("check")) return run_check(check);
        if (show_cmd->parsed()) return run_show(show);
        if (rules_cmd->parsed()) return run_rules(rules);
        if (app.got_subcommand("estimate")) return run_estimate(estimate);
        if (explain_cmd->parsed()) return run_explain(rules);
        if (app.got_subcommand("gpu-check")) return run_gpu_check(gpu_check);
        if (config_cmd->parsed()) return run_config(config);
        if (lsp_cmd->parsed()) return run_lsp(lsp);
    } catch (const std::exception& e) {
        // Only a broken installation (say, corrupt embedded schema data) gets here; input problems are diagnostics.
        std::cerr << fmt::format("mbridge-lint: internal error: {}\n", e.what());
        return kUnusable;
    }
    return kUnusable;
}
