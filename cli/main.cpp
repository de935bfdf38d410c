// mbridge-lint: a linter for activation-recompute settings of Megatron Bridge training configs.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/completion.hpp"
#include "cli/usage_errors.hpp"
#include "core/paths.hpp"
#include "core/schema.hpp"
#include "git_commit.hpp"
#include "pyeval/ast_cache.hpp"
#include "version.hpp"

namespace {

// `mbridge-lint --version`: the version, the commit it was built from, and the Megatron Core revisions it knows.
std::string version_text() {
    const mbl::Schema& schema = mbl::Schema::instance();
    return fmt::format("mbridge-lint {} (commit {})\nMegatron Core revisions: {} (default outside a Bridge checkout: "
                       "{}); `mbridge-lint check --help` says what each is",
                       MBRIDGE_LINT_VERSION, MBRIDGE_LINT_COMMIT, fmt::join(schema.revision_names(), ", "),
                       schema.default_revision());
}

// A command's exit code, or 2 when what it printed did not all reach standard output (a full disk, /dev/full): a
// lost report must not pass a CI gate.
int checked_exit(int code) {
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::cerr << fmt::format("mbridge-lint: cannot write standard output: {}\n", std::strerror(errno));
        return mbl::cli::kUnusable;
    }
    // Ends the process without running the static destructors: the caches of compiled Megatron Core and Bridge
    // programs, with what their runs taught, reach 75 MB on a whole tree, and freeing them touches all of it again
    // for nothing (on Bridge 067f987's tree, `check -j 1 .`: 74 M instructions and 870,000 last-level cache misses
    // under callgrind's cache simulation). Standard output is flushed above; standard error is unbuffered.
    std::fflush(stderr);
    std::_Exit(code);
}

}  // namespace

int main(int argc, char** argv) {
    using namespace mbl::cli;
    CLI::App app{
        "mbridge-lint checks the activation-recompute settings of Megatron Bridge training configs against the rules\n"
        "of the Megatron Core revision the job will run, without running anything, and reports every problem at once.\n"
        "\nExit codes: 0 no errors; 1 errors found (or warnings with --strict); 2 bad usage or unusable input.",
        "mbridge-lint"};
    app.set_version_flag("--version", std::function<std::string()>(version_text));
    app.require_subcommand(1);
    app.footer("Run `mbridge-lint <command> --help` (or `mbridge-lint help <command>`) for a command's options. Docs: "
               "README.md");

    // `help [COMMAND]` reads as `[COMMAND] --help`; Hydra-style overrides follow `--` and apply to every config
    // checked, shown, estimated or checked on a GPU.
    std::vector<std::string> args = rewrite_help_command(std::vector<std::string>(argv, argv + argc));
    std::vector<char*> arg_pointers;
    for (auto& a : args) arg_pointers.push_back(a.data());
    argc = static_cast<int>(arg_pointers.size());
    argv = arg_pointers.data();
    const std::vector<std::string> overrides = split_overrides(argc, argv);
    args.resize(static_cast<std::size_t>(argc));
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
    std::vector<std::string> limits;
    for (const char* name : {"check", "show", "estimate", "gpu-check", "config", "lsp"})
        add_limit_option(*app.get_subcommand(name), limits);
    CompletionArgs completion;
    CLI::App* manpage_cmd = nullptr;
    CLI::App* completion_cmd = add_completion_commands(app, completion, manpage_cmd);

    if (report_unknown_command(app, args)) return kUnusable;
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return report_usage_error(app, e, args);
    }
    if (!overrides.empty() && !app.got_subcommand("check") && !show_cmd->parsed() && !app.got_subcommand("estimate") &&
        !app.got_subcommand("gpu-check")) {
        std::cerr << "mbridge-lint: overrides after `--` apply to `check`, `show`, `estimate` and `gpu-check` only\n";
        return kUnusable;
    }
    if (!apply_limit_options(limits)) return kUnusable;
    // Parsed modules are kept on disk only where the user asks (the editor server keeps them by default): a lint in
    // CI writes nothing but its output.
    mbl::py::set_ast_cache_dir(mbl::user_cache_dir(false));
    try {
        if (app.got_subcommand("check")) return checked_exit(run_check(check));
        if (show_cmd->parsed()) return checked_exit(run_show(show));
        if (rules_cmd->parsed()) return checked_exit(run_rules(rules));
        if (app.got_subcommand("estimate")) return checked_exit(run_estimate(estimate));
        if (explain_cmd->parsed()) return checked_exit(run_explain(rules));
        if (app.got_subcommand("gpu-check")) return checked_exit(run_gpu_check(gpu_check));
        if (config_cmd->parsed()) return checked_exit(run_config(config));
        if (lsp_cmd->parsed()) return run_lsp(lsp);
        if (completion_cmd->parsed()) return checked_exit(run_completion(app, completion));
        if (manpage_cmd->parsed()) return checked_exit(run_manpage(app));
    } catch (const std::exception& e) {
        // Only a broken installation (say, corrupt embedded schema data) gets here; input problems are diagnostics.
        std::cerr << fmt::format("mbridge-lint: internal error: {}\n", e.what());
        return kUnusable;
    }
    return kUnusable;
}
