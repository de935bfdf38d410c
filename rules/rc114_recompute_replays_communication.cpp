// RC114 recompute-replays-communication
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC114", "recompute-replays-communication", Severity::Info,
                         "the chosen recompute replays communication in the backward pass",
                         R"md(## What it does
Points out recompute choices that replay collective communication: `moe` recompute with expert parallelism
(token dispatch and combine all-to-alls) and `core_attn` recompute with context parallelism (the attention ring
exchange).

## Why is this bad?
Replayed communication costs far more than replayed arithmetic and is rarely hidden behind compute. Narrower labels
(`moe_act`, `shared_experts`) keep the memory saving without it.

## Example
```yaml
model:
  num_moe_experts: 64
  expert_model_parallel_size: 8
  recompute_granularity: selective
  recompute_modules: [moe]
```

## Use instead
```yaml
model:
  num_moe_experts: 64
  expert_model_parallel_size: 8
  moe_grouped_gemm: true
  recompute_granularity: selective
  recompute_modules: [moe_act]
```
)md"};

class RecomputeReplaysCommunication final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m)) return;
        if (m.modules_post.contains("moe") && m.known({field::expert_model_parallel_size, field::num_moe_experts}) &&
            m.is_moe() && m.integer(field::expert_model_parallel_size).value_or(1) > 1) {
            Diagnostic& d =
                rules::report_label(ctx, kRule, "moe",
                                    fmt::format("\"moe\" recompute replays routing and the token dispatch/combine "
                                                "all-to-alls across {} expert-parallel ranks in backward",
                                                m.integer(field::expert_model_parallel_size).value_or(1)));
            RuleContext::hint(d, "\"moe_act\" or \"shared_experts\" save memory without replaying communication");
        }
        if (m.modules_post.contains("core_attn") && m.known({field::context_parallel_size}) &&
            m.integer(field::context_parallel_size).value_or(1) > 1) {
            Diagnostic& d = rules::report_label(
                ctx, kRule, "core_attn",
                fmt::format("\"core_attn\" recompute replays the context-parallel attention exchange "
                            "({} ranks) in backward",
                            m.integer(field::context_parallel_size).value_or(1)));
            RuleContext::hint(d, "measure the step time with and without it before keeping it");
        }
    }
};

}  // namespace

MBL_DEFINE_RULE(RC114, RecomputeReplaysCommunication)

}  // namespace mbl
