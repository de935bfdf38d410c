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

// Runs every rule that applies to the model's revision; error rules run only where the revision's schema lists
// them as Megatron Core rejections.
// `memo`: where the rules keep what they share about the model (their own when null).
std::vector<Diagnostic> run_rules(const EffectiveModel& model, const RuleOptions& options, RuleMemo* memo = nullptr);

}  // namespace mbl
