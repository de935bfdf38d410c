#include "rules/memory_advice.hpp"

#include <fmt/format.h>

namespace mbl::rules {

std::optional<memory::Estimate> budget_estimate(const RuleContext& ctx) {
    if (!ctx.options.gpu_memory_bytes) return std::nullopt;
    memory::EstimateInputs in;
    in.gpu_memory_bytes = ctx.options.gpu_memory_bytes;
    in.data_parallel_size = ctx.options.data_parallel_size;
    memory::Estimate est = memory::estimate(ctx.model, in);
    if (!est.ok || !est.complete || !est.current_option()) return std::nullopt;  // rules never fire on unknown values
    return est;
}

std::string peak_words(const memory::OptionEstimate& option) {
    return fmt::format("{} on pipeline rank {}", memory::format_gib(option.peak), option.hottest_stage);
}

std::string cost_words(const memory::OptionEstimate& option) {
    std::string words = fmt::format("+{:.1f} % step time", option.step_overhead * 100);
    if (option.host_seconds > 0)
        words += fmt::format(" and {} of checkpoint host time per step", memory::format_duration(option.host_seconds));
    return words;
}

void note_assumptions(Diagnostic& d, const memory::Estimate& est) {
    for (const auto& a : est.assumptions) RuleContext::hint(d, "estimate assumes: " + a.text);
}

}  // namespace mbl::rules
