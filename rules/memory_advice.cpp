#include "rules/memory_advice.hpp"

#include <fmt/format.h>

namespace mbl::rules {

const memory::Estimate* budget_estimate(const RuleContext& ctx) {
    if (!ctx.options.gpu_memory_bytes) return nullptr;
    std::any& slot = ctx.memo("memory-estimate");
    if (!slot.has_value()) {
        memory::EstimateInputs in;
        in.gpu_memory_bytes = ctx.options.gpu_memory_bytes;
        in.data_parallel_size = ctx.options.data_parallel_size;
        in.gpus = ctx.options.gpus;
        in.reserve_bytes = ctx.options.reserve_bytes;
        memory::Estimate est = memory::estimate(ctx.model, in);
        // Rules never fire on unknown values.
        const bool usable = est.ok && est.complete && est.current_option();
        slot = usable ? std::make_shared<const memory::Estimate>(std::move(est))
                      : std::shared_ptr<const memory::Estimate>();
    }
    return std::any_cast<const std::shared_ptr<const memory::Estimate>&>(slot).get();
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

Fix recompute_fix(const EffectiveModel& m, const memory::OptionEstimate& option) {
    const Recompute& rc = option.recompute;
    std::vector<FieldEdit> edits;
    auto set = [&](FieldName field, std::string value) {
        edits.push_back({FieldEdit::Op::Set, field, std::move(value), -1});
    };
    switch (rc.granularity) {
        case Recompute::Granularity::None: set(field::recompute_granularity, "null"); break;
        case Recompute::Granularity::Selective: {
            set(field::recompute_granularity, "selective");
            std::string list = "[";
            for (std::size_t i = 0; i < rc.modules.size(); ++i) list += (i ? ", " : "") + rc.modules[i];
            set(field::recompute_modules, list + "]");
            break;
        }
        case Recompute::Granularity::Full:
            set(field::recompute_granularity, "full");
            set(field::recompute_method, rc.method == Recompute::Method::Block ? "block" : "uniform");
            set(field::recompute_num_layers, std::to_string(rc.num_layers));
            break;
    }
    // Fields the new setting does not use are set to None where the config sets them, so that Megatron Core does
    // not reject the result (recompute_method or recompute_num_layers under selective: RC003, RC006) and no new
    // warning follows (recompute_modules under full: RC109).
    auto clear = [&](FieldName field) {
        if (!m[field].is_null() && m[field].prov().origin != Origin::Default) set(field, "null");
    };
    if (rc.granularity != Recompute::Granularity::Full) {
        clear(field::recompute_method);
        clear(field::recompute_num_layers);
    } else {
        clear(field::recompute_modules);
    }
    return Fix::unsafe(fmt::format("Set the recompute to {}", option.name), std::move(edits));
}

}  // namespace mbl::rules
