#pragma once
// The verdict of Megatron Core's own __post_init__, compiled from its source (core/post_init.hpp), over the rules'
// diagnostics: a named error rule (RC0xx) stands where a raise site it is tied to (RuleInfo::raise_text) certainly
// raises; where such a site raises only depending on something the linter does not know, it becomes a warning that
// says so; where none raises, it goes. Every certain raise no named rule explains is reported as RC000 with Megatron
// Core's own message, file and line.
#include <vector>

#include "core/diagnostic.hpp"
#include "core/effective_model.hpp"
#include "rules/rule.hpp"

namespace mbl {

// Whether the site's message matches one of the rule's fragments ('|' between them).
bool explains(const RuleInfo& rule, const post_init::Site& site);
bool explains(std::string_view raise_text, const post_init::Site& site);

// Whether Megatron Core enforces an error rule at `rev`: its compiled checks have a raise site the rule names (RC000,
// which names none: any raise site). A revision without compiled checks enforces none: no error without the source.
bool enforced_at(const RuleInfo& rule, const Revision& rev);

void apply_megatron_verdict(const EffectiveModel& model, const RuleOptions& options, std::vector<Diagnostic>& diags);

}  // namespace mbl
