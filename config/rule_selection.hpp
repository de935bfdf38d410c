#pragma once
// Which diagnostics a project wants: `select` / `ignore` / `per-file-ignores` and severity overrides from the
// configuration file. Rule patterns are a code (RC104), a code prefix (RC1, RC), a rule name
// (shared-experts-recompute-without-shared-experts) or ALL. Input errors (IN0xx) are never dropped or changed.
#include <string>
#include <string_view>
#include <vector>

#include "config/project_config.hpp"
#include "core/diagnostic.hpp"

namespace mbl {

// True when `pattern` names at least one rule; otherwise `why` says what is wrong (with "did you mean").
bool rule_pattern_valid(std::string_view pattern, std::string* why);
bool rule_pattern_matches(std::string_view pattern, std::string_view code, std::string_view name);

// Drops what the configuration deselects for `file` and applies severity overrides. `file` is matched against
// per-file-ignores patterns relative to the configuration's root.
void apply_rule_selection(std::vector<Diagnostic>& diags, const ProjectConfig& config, const std::string& file);

}  // namespace mbl
