// --mcore, shared by the subcommands: the option, the list of revision names under each command's --help, and the
// `check --mcore A,B` pair.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <ostream>

#include "cli/commands.hpp"
#include "core/schema.hpp"

namespace mbl::cli {

std::string revisions_help() {
    const Schema& schema = Schema::instance();
    std::size_t width = 0;
    for (const auto& name : schema.revision_names()) width = std::max(width, name.size());
    std::string out = "Megatron Core revisions (--mcore):\n";
    for (const auto& name : schema.revision_names()) {
        out += fmt::format("  {:<{}}  {}", name, width, schema.revision_what(name));
        if (name == schema.default_revision()) out += "; the default outside a Bridge checkout";
        out += '\n';
    }
    std::vector<std::string> aliases;
    for (const auto& [alias, target] : schema.revision_aliases())
        aliases.push_back(fmt::format("{} (= {})", alias, target));
    out += fmt::format("  also accepted: {}, a release tag (core_v0.19.0, 0.15.2) or a commit above (7+ hex digits)\n",
                       fmt::join(aliases, ", "));
    out += "  every core_v tag, every commit a Megatron Bridge branch or tag pins, and the first commit of each month "
           "on main and dev since 0.12 have facts of their own and are checked exactly (7+ hex digits, or the tag)\n";
    out += fmt::format("  any other Megatron-LM commit of main or dev to {} or that Megatron Bridge pinned (7+ hex "
                       "digits) is checked with the facts of the nearest commit having them\n",
                       schema.newest_main_commit().date);
    for (const auto& [name, why] : schema.ambiguous_revision_names())
        out += fmt::format("  refused: {} is ambiguous ({})\n", name, why);
    out += "Without --mcore and without mcore in the configuration file, a file inside a Megatron Bridge checkout is\n"
           "linted for the revision that checkout pins (its checked-out 3rdparty/Megatron-LM, else the gitlink, else\n"
           ".main.commit), its config classes read from the checkout when it is checked out; see docs/user-guide.md\n"
           "\"Revision detection\".";
    return out;
}

void add_mcore_option(CLI::App& cmd, std::string& value, const std::string& description, std::string* path) {
    cmd.add_option("--mcore", value, description + "; the names are listed below");
    if (path)
        cmd.add_option("--mcore-path", *path,
                       "The Megatron Core the job imports: a folder holding megatron/core (a Megatron-LM checkout, a "
                       "site-packages); its config classes (fields, types, defaults, recompute labels) are read "
                       "instead of the bundled ones, with the checks of --mcore or of the nearest known revision");
    cmd.footer([] { return revisions_help(); });  // built only for --help: it reads the whole commit table
}

void note_revision_choice(std::vector<RevisionChoice>& seen, const RevisionChoice& choice) {
    for (const auto& c : seen)
        if (c.source == choice.source && c.revision == choice.revision && c.checkout == choice.checkout &&
            c.reason == choice.reason)
            return;
    seen.push_back(choice);
}

void write_detection_notes(std::ostream& out, const std::vector<RevisionChoice>& choices, bool say_default) {
    for (const auto& c : choices)
        // Said once: a revision the checkout pins, a tree read, facts standing in for a commit, or the default.
        if (c.source == RevisionChoice::Source::Detected ||
            (say_default && c.source == RevisionChoice::Source::Default) || !c.mcore_tree.empty() || c.approximate)
            out << detection_note(c) << '\n';
}

std::optional<std::pair<std::string, std::string>> split_mcore_pair(const std::string& value) {
    const auto comma = value.find(',');
    if (comma == std::string::npos) return std::nullopt;
    return std::make_pair(value.substr(0, comma), value.substr(comma + 1));
}

}  // namespace mbl::cli
