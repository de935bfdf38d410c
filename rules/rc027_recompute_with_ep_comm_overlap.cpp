// RC027 recompute-with-ep-comm-overlap
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC027", "recompute-with-ep-comm-overlap", Severity::Error,
    "recompute settings that overlap_moe_expert_parallel_comm does not allow",
    R"md(## What it does
Flags recompute settings combined with `overlap_moe_expert_parallel_comm` (expert-parallel all-to-all overlap):
full recompute, any `recompute_method`, any `recompute_num_layers`, or `moe` in the selective list.

## Why is this bad?
The overlap schedule interleaves the forward and backward of different micro-batches and cannot re-run layers or
whole MoE blocks. Megatron Core asserts against each of these (and Megatron Bridge re-checks it in its
comm-overlap setup). Bridge's `comm_overlap` section can switch the overlap on for the model.

## Example
```yaml
comm_overlap:
  overlap_moe_expert_parallel_comm: true
model:
  recompute_granularity: selective
  recompute_modules: [moe]
```

## Use instead
```yaml
comm_overlap:
  overlap_moe_expert_parallel_comm: true
model:
  recompute_granularity: selective
  recompute_modules: [moe_act]
```
)md"};

class RecomputeWithEpCommOverlap final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({"overlap_moe_expert_parallel_comm", "recompute_granularity", "recompute_method", "recompute_num_layers",
                      "moe_layer_recompute"}))
            return;
        if (!m.flag("overlap_moe_expert_parallel_comm")) return;
        auto add = [&](std::string_view field, std::string message, const Value* at = nullptr) {
            Diagnostic& d = at ? ctx.report_at(kRule, *at, std::move(message)) : ctx.report(kRule, field, std::move(message));
            ctx.note_field(d, "overlap_moe_expert_parallel_comm", "overlap_moe_expert_parallel_comm is enabled here");
            RuleContext::hint(d, rules::rejection_note(m, "AssertionError"));
            return &d;
        };
        if (m.granularity_post == "full") add("recompute_granularity", "full recompute cannot be combined with overlap_moe_expert_parallel_comm");
        if (!m["recompute_method"].is_null()) {
            Diagnostic* d = add("recompute_method", "recompute_method must be unset when overlap_moe_expert_parallel_comm is enabled");
            d->fix = Fix{"Remove recompute_method", {{FieldEdit::Op::Remove, "model.recompute_method", "", -1}}, {}, false};
        }
        if (!m["recompute_num_layers"].is_null())
            add("recompute_num_layers", "recompute_num_layers must be unset when overlap_moe_expert_parallel_comm is enabled");
        // Megatron Core checks the module list whatever the granularity (from 0.17 on).
        if (ctx.revision().enum_values("ep_overlap_forbids_moe_recompute") == std::vector<std::string>{"true"} &&
            m.modules_post.known && m.modules_post.contains("moe")) {
            const Value* item = rules::module_item(m, "moe");
            Diagnostic* d = add(m.moe_layer_converted && !item ? "moe_layer_recompute" : "recompute_modules",
                                "\"moe\" recompute cannot be combined with overlap_moe_expert_parallel_comm", item);
            RuleContext::hint(*d, "recompute \"moe_act\" (with moe_grouped_gemm) or \"shared_experts\" instead of the whole MoE layer");
        }
    }
};

}  // namespace

MBL_DEFINE_RULE(RC027, RecomputeWithEpCommOverlap)

}  // namespace mbl
