// `mbridge-lint completion bash|zsh|fish` and `mbridge-lint manpage`: shell completion scripts and a man page,
// written from the CLI11 command tree itself, so that neither can fall behind an option added to a command.
#include "cli/completion.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "version.hpp"

namespace mbl::cli {

namespace {

// One option as the scripts and the page need it.
struct OptionSpec {
    std::vector<std::string> longs, shorts;  // without dashes
    std::string description;
    bool takes_value = false;
    std::vector<std::string> choices;  // an IsMember check's set, when it has one
};

struct CommandSpec {
    std::string name, description;
    std::vector<OptionSpec> options;
    std::vector<std::string> positionals;  // their names, in order
};

// CLI11 writes an IsMember check into the option's type name as "TEXT:{a,b,c}".
std::vector<std::string> choices_of(const CLI::Option& o) {
    const std::string type = o.get_type_name();
    const auto open = type.find('{'), close = type.rfind('}');
    if (open == std::string::npos || close == std::string::npos || close < open) return {};
    std::vector<std::string> out;
    std::istringstream in(type.substr(open + 1, close - open - 1));
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

// Options in a group of their own name "" are hidden from --help, and from completion and the page too.
CommandSpec command_spec(const CLI::App& app) {
    CommandSpec c{app.get_name(), app.get_description(), {}, {}};
    for (const CLI::Option* o : app.get_options()) {
        if (o->get_group().empty()) continue;
        if (!o->nonpositional()) {
            c.positionals.push_back(o->get_name(true, false));
            continue;
        }
        // A flag expects no item (CLI11 gives it expected(0)); an option at least one.
        OptionSpec s{o->get_lnames(), o->get_snames(), o->get_description(), o->get_items_expected_max() != 0,
                     choices_of(*o)};
        c.options.push_back(std::move(s));
    }
    return c;
}

std::vector<CommandSpec> commands_of(const CLI::App& app) {
    std::vector<CommandSpec> out;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        out.push_back(command_spec(*sub));
    return out;
}

std::vector<std::string> flag_names(const OptionSpec& o) {
    std::vector<std::string> out;
    for (const auto& s : o.shorts) out.push_back("-" + s);
    for (const auto& l : o.longs) out.push_back("--" + l);
    return out;
}

// The first sentence of a description: completion menus have one line.
std::string brief(const std::string& text) {
    std::string line = text.substr(0, text.find('\n'));
    if (auto semi = line.find("; "); semi != std::string::npos) line = line.substr(0, semi);
    return line;
}

std::string single_quoted_sh(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

void write_bash(const CLI::App& app, std::ostream& out) {
    const auto commands = commands_of(app);
    std::vector<std::string> names;
    for (const auto& c : commands) names.push_back(c.name);
    out << "# bash completion for mbridge-lint, written by `mbridge-lint completion bash`\n"
           "_mbridge_lint() {\n"
           "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" cmd=\"\" i\n"
           "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
        << fmt::format("        case \"${{COMP_WORDS[i]}}\" in {}) cmd=\"${{COMP_WORDS[i]}}\"; break ;; esac\n",
                       fmt::join(names, "|"))
        << "    done\n"
           "    case \"$cmd\" in\n"
        << fmt::format("    \"\") COMPREPLY=($(compgen -W {} -- \"$cur\")) ;;\n",
                       single_quoted_sh(fmt::format("{} --help --version", fmt::join(names, " "))));
    for (const auto& c : commands) {
        out << fmt::format("    {})\n        case \"$prev\" in\n", c.name);
        std::vector<std::string> all;  // --help is among the command's options
        std::vector<std::string> free_values;
        for (const auto& o : c.options) {
            const auto f = flag_names(o);
            all.insert(all.end(), f.begin(), f.end());
            if (!o.takes_value) continue;
            if (o.choices.empty()) free_values.insert(free_values.end(), f.begin(), f.end());
            else
                out << fmt::format("        {}) COMPREPLY=($(compgen -W {} -- \"$cur\")); return ;;\n",
                                   fmt::join(f, "|"), single_quoted_sh(fmt::format("{}", fmt::join(o.choices, " "))));
        }
        // A value with no fixed choices: files, the shell's default (complete -o default).
        if (!free_values.empty())
            out << fmt::format("        {}) COMPREPLY=(); return ;;\n", fmt::join(free_values, "|"));
        out << "        esac\n"
            << fmt::format("        if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W {} -- \"$cur\")); fi ;;\n",
                           single_quoted_sh(fmt::format("{}", fmt::join(all, " "))));
    }
    out << "    esac\n"
           "}\n"
           "complete -o default -F _mbridge_lint mbridge-lint\n";
}

// zsh's _arguments specs: the description in [...] escapes what _arguments reads as syntax.
std::string zsh_text(const std::string& s) {
    std::string out;
    for (char c : brief(s)) {
        if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out;
}

void write_zsh(const CLI::App& app, std::ostream& out) {
    const auto commands = commands_of(app);
    out << "#compdef mbridge-lint\n"
           "# zsh completion for mbridge-lint, written by `mbridge-lint completion zsh`\n"
           "_mbridge_lint() {\n"
           "    local curcontext=\"$curcontext\" state line\n"
           "    _arguments -C '(- *)--help[show help]' '(- *)--version[show the version]' '1: :->command' "
           "'*:: :->args'\n"
           "    case $state in\n"
           "    command)\n"
           "        local -a commands\n"
           "        commands=(\n";
    for (const auto& c : commands) out << fmt::format("            '{}:{}'\n", c.name, zsh_text(c.description));
    out << "        )\n"
           "        _describe command commands ;;\n"
           "    args)\n"
           "        case $line[1] in\n";
    for (const auto& c : commands) {
        out << fmt::format("        {})\n            _arguments", c.name);
        for (const auto& o : c.options)
            for (const auto& name : flag_names(o)) {
                std::string spec = fmt::format("{}[{}]", name, zsh_text(o.description));
                if (o.takes_value)
                    spec += o.choices.empty() ? ":value:_files" : fmt::format(":value:({})", fmt::join(o.choices, " "));
                out << fmt::format(" \\\n                '{}'", spec);
            }
        if (!c.positionals.empty()) out << " \\\n                '*:file:_files'";
        out << " ;;\n";
    }
    out << "        esac ;;\n"
           "    esac\n"
           "}\n"
           "_mbridge_lint \"$@\"\n";
}

std::string fish_quoted(const std::string& s) {
    std::string out = "'";
    for (char c : brief(s)) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

void write_fish(const CLI::App& app, std::ostream& out) {
    const auto commands = commands_of(app);
    std::vector<std::string> names;
    for (const auto& c : commands) names.push_back(c.name);
    out << "# fish completion for mbridge-lint, written by `mbridge-lint completion fish`\n"
           "complete -c mbridge-lint -f\n"
           "complete -c mbridge-lint -n __fish_use_subcommand -l help -d 'show help'\n"
           "complete -c mbridge-lint -n __fish_use_subcommand -l version -d 'show the version'\n";
    for (const auto& c : commands)
        out << fmt::format("complete -c mbridge-lint -n __fish_use_subcommand -a {} -d {}\n", c.name,
                           fish_quoted(c.description));
    for (const auto& c : commands) {
        const std::string when = fmt::format("-n '__fish_seen_subcommand_from {}'", c.name);
        for (const auto& o : c.options) {
            std::string line = fmt::format("complete -c mbridge-lint {}", when);
            for (const auto& s : o.shorts) line += " -s " + s;
            for (const auto& l : o.longs) line += " -l " + l;
            if (o.takes_value)
                line += o.choices.empty()
                            ? std::string(" -r -F")
                            : fmt::format(" -x -a {}", fish_quoted(fmt::format("{}", fmt::join(o.choices, " "))));
            out << line << " -d " << fish_quoted(o.description) << '\n';
        }
        if (!c.positionals.empty()) out << fmt::format("complete -c mbridge-lint {} -F\n", when);
    }
}

// roff: a backslash is \e, a minus in an option name \-, and a line may not start with a control character.
std::string roff(const std::string& s) {
    std::string out;
    for (char c : s) out += c == '\\' ? std::string("\\e") : std::string(1, c);
    std::string lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        lines += (!line.empty() && (line[0] == '.' || line[0] == '\'') ? "\\&" : "") + line + "\n";
    return lines;
}

std::string roff_flag(const std::string& name) {
    std::string out;
    for (char c : name) out += c == '-' ? std::string("\\-") : std::string(1, c);
    return out;
}

void write_man(const CLI::App& app, std::ostream& out) {
    out << fmt::format(".TH MBRIDGE\\-LINT 1 \"\" \"mbridge-lint {}\" \"User Commands\"\n", MBRIDGE_LINT_VERSION)
        << ".SH NAME\nmbridge\\-lint \\- lint the activation-recompute settings of Megatron Bridge training configs\n"
        << ".SH SYNOPSIS\n.B mbridge\\-lint\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIPATH\\fR...] [\\-\\- "
           "\\fIOVERRIDE\\fR...]\n"
        << ".SH DESCRIPTION\n"
        << roff(app.get_description()) << ".SH COMMANDS\n";
    for (const auto& c : commands_of(app)) {
        out << fmt::format(".SS \"mbridge\\-lint {}{}\"\n", c.name,
                           c.positionals.empty() ? "" : fmt::format(" {}", fmt::join(c.positionals, " ")))
            << roff(c.description);
        for (const auto& o : c.options) {
            std::vector<std::string> names;
            for (const auto& n : flag_names(o)) names.push_back(fmt::format("\\fB{}\\fR", roff_flag(n)));
            std::string value;
            if (o.takes_value)
                value = o.choices.empty() ? " \\fIVALUE\\fR" : fmt::format(" {{{}}}", fmt::join(o.choices, "|"));
            out << ".TP\n" << fmt::format("{}{}\n", fmt::join(names, ", "), value) << roff(o.description);
        }
    }
    out << ".SH EXIT STATUS\n.TP\n0\nno errors (warnings and infos may have been printed)\n.TP\n1\n"
           "at least one error, or a warning with \\fB\\-\\-strict\\fR\n.TP\n2\n"
           "bad usage, unusable input, nothing to check, or a report that could not be written\n"
           ".SH ENVIRONMENT\n.TP\nNO_COLOR\nwhen set and not empty, no colour (unless \\fB\\-\\-color always\\fR)\n"
           ".TP\nFORCE_COLOR\nwhen set and not empty, colour even when standard output is no terminal (unless "
           "NO_COLOR is set or \\fB\\-\\-color never\\fR)\n"
           ".TP\nMBRIDGE_LINT_DOCS_URL\nthe web address of the rule documentation each diagnostic links to\n"
           ".SH SEE ALSO\n\\fBmbridge\\-lint explain\\fR \\fICODE\\fR for one rule; the README and docs/ of the "
           "source tree\n";
}

}  // namespace

CLI::App* add_completion_commands(CLI::App& app, CompletionArgs& args, CLI::App*& manpage_cmd) {
    CLI::App* cmd = app.add_subcommand("completion", "Print a shell completion script (bash, zsh or fish)");
    cmd->add_option("shell", args.shell, "The shell")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
    manpage_cmd = app.add_subcommand("manpage", "Print the manual page (roff), for man -l or a man1 folder");
    return cmd;
}

int run_completion(const CLI::App& app, const CompletionArgs& args) {
    if (args.shell == "bash") write_bash(app, std::cout);
    else if (args.shell == "zsh") write_zsh(app, std::cout);
    else write_fish(app, std::cout);
    return kOk;
}

int run_manpage(const CLI::App& app) {
    write_man(app, std::cout);
    return kOk;
}

}  // namespace mbl::cli
