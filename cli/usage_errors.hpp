#pragma once
// Errors of the command line itself (a misspelt command or option, a missing argument): one plain message, with
// "did you mean" where a known name is close, and one line saying where the usage is. Exit code 2.
#include <string>
#include <vector>

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace mbl::cli {

// `mbridge-lint help [COMMAND]` reads as `mbridge-lint [COMMAND] --help`, as git and cargo read it.
std::vector<std::string> rewrite_help_command(std::vector<std::string> args);

// When the first argument is neither an option nor a command: says so (with "did you mean") and returns true.
bool report_unknown_command(const CLI::App& app, const std::vector<std::string>& args);

// Prints a parse error of `app` (or of the command it was parsing) and returns the exit code, 2.
int report_usage_error(const CLI::App& app, const CLI::ParseError& error, const std::vector<std::string>& args);

}  // namespace mbl::cli
