#include "cli/usage_errors.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>

#include "cli/commands.hpp"
#include "core/did_you_mean.hpp"

namespace mbl::cli {

namespace {

std::vector<std::string> command_names(const CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        names.push_back(sub->get_name());
    return names;
}

// The command the arguments name (the first argument that is one), or null for the top level.
const CLI::App* named_command(const CLI::App& app, const std::vector<std::string>& args) {
    for (std::size_t i = 1; i < args.size(); ++i)
        for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
            if (sub->get_name() == args[i]) return sub;
    return nullptr;
}

std::vector<std::string> option_names(const CLI::App& command) {
    std::vector<std::string> names;
    for (const CLI::Option* o : command.get_options()) {
        for (const auto& l : o->get_lnames()) names.push_back("--" + l);
        for (const auto& s : o->get_snames()) names.push_back("-" + s);
    }
    return names;
}

void usage_line(const CLI::App& app, const CLI::App* command) {
    std::cerr << fmt::format("Run `{}{} --help` for usage.\n", app.get_name(),
                             command ? " " + command->get_name() : std::string());
}

std::string did_you_mean_option(const std::string& name, const std::vector<std::string>& known) {
    const auto close = close_matches(name, known, 1);
    return close.empty() ? "" : fmt::format(" (did you mean {}?)", close.front());
}

// "unknown option --formt (did you mean --format?)" for each option among the arguments a command did not take.
std::string unknown_options(const CLI::App& command) {
    std::vector<std::string> found;
    const std::vector<std::string> known = option_names(command);
    for (const auto& arg : command.remaining()) {
        if (arg.size() < 2 || arg[0] != '-') continue;
        const std::string name = arg.substr(0, arg.find('='));
        found.push_back(fmt::format("unknown option {}{}", name, did_you_mean_option(name, known)));
    }
    return fmt::format("{}", fmt::join(found, "; "));
}

}  // namespace

std::vector<std::string> rewrite_help_command(std::vector<std::string> args) {
    if (args.size() < 2 || args[1] != "help") return args;
    std::vector<std::string> out{args[0]};
    if (args.size() > 2) out.push_back(args[2]);
    out.emplace_back("--help");
    return out;
}

bool report_unknown_command(const CLI::App& app, const std::vector<std::string>& args) {
    if (args.size() < 2 || args[1].empty() || args[1][0] == '-') return false;
    const std::vector<std::string> names = command_names(app);
    if (std::find(names.begin(), names.end(), args[1]) != names.end()) return false;
    std::cerr << fmt::format("{}: unknown command \"{}\"{}; the commands are {}\n", app.get_name(), args[1],
                             did_you_mean_suffix(args[1], names), fmt::join(names, ", "));
    usage_line(app, nullptr);
    return true;
}

int report_usage_error(const CLI::App& app, const CLI::ParseError& error, const std::vector<std::string>& args) {
    const CLI::App* command = named_command(app, args);
    std::string message = error.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&error) && command)
        if (std::string options = unknown_options(*command); !options.empty()) message = options;
    if (!command) {
        // `mbridge-lint --foo`: name the option, not the missing command it stood in for.
        std::vector<std::string> unknown;
        const std::vector<std::string> known = option_names(app);
        for (std::size_t i = 1; i < args.size(); ++i) {
            if (args[i].size() < 2 || args[i][0] != '-') continue;
            const std::string name = args[i].substr(0, args[i].find('='));
            if (std::find(known.begin(), known.end(), name) != known.end()) continue;
            unknown.push_back(fmt::format("unknown option {}{}", name, did_you_mean_option(name, known)));
        }
        if (!unknown.empty()) message = fmt::format("{}", fmt::join(unknown, "; "));
        else if (dynamic_cast<const CLI::RequiredError*>(&error))
            message = fmt::format("a command is required: {}", fmt::join(command_names(app), ", "));
    }
    std::cerr << fmt::format("{}: {}\n", app.get_name(), message);
    usage_line(app, command);
    return kUnusable;
}

}  // namespace mbl::cli
