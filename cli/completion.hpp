#pragma once
// Shell completion scripts and the man page, written from the command definitions (cli/completion.cpp).
#include <string>

namespace CLI {
class App;
}

namespace mbl::cli {

struct CompletionArgs {
    std::string shell;  // bash, zsh or fish
};
// Adds `completion SHELL` (returned) and `manpage` (in `manpage_cmd`).
CLI::App* add_completion_commands(CLI::App& app, CompletionArgs& args, CLI::App*& manpage_cmd);
// Both read the whole command tree of `app`, so they run after every command was added.
int run_completion(const CLI::App& app, const CompletionArgs& args);
int run_manpage(const CLI::App& app);

}  // namespace mbl::cli
