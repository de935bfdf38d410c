#pragma once
#include <memory>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace mbl {

// Every rule, in code order (the order of rules/rules.def).
const std::vector<std::unique_ptr<Rule>>& all_rules();
const Rule* find_rule(std::string_view code_or_name);

// The documentation of the input-error codes (IN0xx) in code order, in the rules' format (rules/input_error_docs.cpp).
const std::vector<RuleInfo>& input_error_docs();
// A rule's or an input error's documentation, by code (any case) or name; nullptr when there is none.
const RuleInfo* find_doc(std::string_view code_or_name);

// The diagnostics of every rule that applies to the model's revision (the rules' run; `mbridge-lint rules` is
// cli::run_rules): error rules run only where the revision's schema lists them as Megatron Core rejections, and a
// rule that yields to one that reported says nothing (RuleInfo::yields_to).
// `memo`: where the rules keep what they share about the model (their own when null).
std::vector<Diagnostic> rule_diagnostics(const EffectiveModel& model, const RuleOptions& options,
                                         RuleMemo* memo = nullptr);

}  // namespace mbl
