#pragma once
// Which diagnostics a project wants, and which files directory walks leave out: `select` / `extend-select` /
// `ignore` / `per-file-ignores` and severity overrides from the configuration file, then the command line's own
// (`--select`, `--extend-select`, `--ignore`), and `exclude` / `extend-exclude` / `--exclude`. Rule patterns are a code
// (RC104, IN010), a code prefix (RC1, RC, IN), a rule or input-error name (unknown-model) or ALL. Input errors (IN0xx of
// severity error: the file cannot be used) are never dropped; IN warnings and infos are selected like rules. No IN
// code is re-ranked.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/project_config.hpp"
#include "core/diagnostic.hpp"

namespace mbl {

// True when `pattern` names at least one rule or input-error code; otherwise `why` says what is wrong (with "did you
// mean").
bool rule_pattern_valid(std::string_view pattern, std::string* why);
// What a mistyped code, prefix or name most likely meant, best first: a prefix written with placeholder x's
// ("RC0xx" -> RC0), a code short of its zeros ("RC04" -> RC004), then the codes, prefixes and names a few edits
// away; at most two. Empty when nothing is close.
std::vector<std::string> rule_pattern_suggestions(std::string_view pattern);
// The codes a prefix (not a whole code) selects, in code order; empty for anything else.
std::vector<std::string> codes_with_prefix(std::string_view prefix);
bool rule_pattern_matches(std::string_view pattern, std::string_view code, std::string_view name);
// True when `pattern` (other than ALL) names an input-error code (IN, IN010, unknown-model): those are not re-ranked.
bool names_input_diagnostics(std::string_view pattern);

// The command line's selection, a layer over the configuration file's (as ruff layers them): --select replaces the
// configuration's select and ignore; --extend-select and --ignore add to what is in force. --exclude replaces the
// configuration's exclude; --extend-exclude adds to it. Command-line path patterns are relative to `base_dir`.
struct CommandLineSelection {
    std::optional<std::vector<std::string>> select;
    std::vector<std::string> extend_select;
    std::vector<std::string> ignore;
    std::optional<std::vector<std::string>> exclude;
    std::vector<std::string> extend_exclude;
    std::string base_dir;  // absolute; the current directory
};

// Drops what the configuration and the command line deselect for `file` and applies severity overrides. `file` is
// matched against per-file-ignores patterns relative to the configuration's root.
void apply_rule_selection(std::vector<Diagnostic>& diags, const ProjectConfig& config, const std::string& file,
                          const CommandLineSelection& command_line = {});

// Whether a directory walk leaves `path` out: one of the configuration's exclude / extend-exclude patterns (relative
// to its root) or the command line's (relative to base_dir) matches the path or, for a pattern without '/', its name.
bool path_excluded(const std::string& path, const ProjectConfig& config, const CommandLineSelection& command_line);

}  // namespace mbl
