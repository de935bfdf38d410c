#pragma once
// Shared by the memory advice rules (RC2xx): they run only when the user states a GPU memory budget, and every
// diagnostic quotes the figures it rests on.
#include <optional>
#include <string>

#include "memory/estimate.hpp"
#include "rules/rule.hpp"

namespace mbl::rules {

// The estimate under the stated budget, computed once per model and shared by the RC2xx rules (RuleContext::memo);
// nullptr without a budget or when the config lacks what the estimate needs.
const memory::Estimate* budget_estimate(const RuleContext& ctx);
// "71.2 GiB on rank 0 (first pipeline stage)".
std::string peak_words(const memory::OptionEstimate& option);
// "+1.1 % step time and 8.1 ms of checkpoint host time per step": the option's predicted cost.
std::string cost_words(const memory::OptionEstimate& option);
// Adds the estimate's assumptions as notes.
void note_assumptions(Diagnostic& d, const memory::Estimate& est);
// The unsafe fix that sets the recompute fields to `option` (the recommended one), at the lines that set them.
Fix recompute_fix(const EffectiveModel& model, const memory::OptionEstimate& option);

}  // namespace mbl::rules
