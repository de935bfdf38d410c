// RC027 recompute-with-ep-comm-overlap
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC027",
    "recompute-with-ep-comm-overlap",
    Severity::Error,
    "recompute settings that overlap_moe_expert_parallel_comm does not allow",
    R"md(## What it does
Flags recompute settings combined with `overlap_moe_expert_parallel_comm` (expert-parallel all-to-all overlap):
full recompute, any `recompute_method`, any `recompute_num_layers`, or `moe` in the selective list.

At Megatron-LM's dev branch (`--mcore dev`) full recompute is allowed under the overlap: the schedule then
recomputes each whole pipeline stage (model chunk) itself, so `recompute_method` and `recompute_num_layers` must stay
unset, `attention_dropout` and `hidden_dropout` must be 0, and CUDA graphs (`cuda_graph_impl`), `moe_paged_stash`
and fp8 delayed scaling are not supported with it. Megatron Bridge's comm-overlap setup still refuses full
recompute when the overlap is switched on in its `comm_overlap` section, so that case is flagged at dev too.

Bridge's start-up turns the overlap off itself for Energon's native sequence packing
(`_disable_native_energon_packing_moe_overlap`), before its comm-overlap setup: with such a dataset nothing is
flagged, and a partial config that does not state its `dataset` leaves this check unknown (`--show-unknowns`).

## Why is this bad?
The overlap schedule interleaves the forward and backward of different micro-batches and cannot re-run layers or
whole MoE blocks. Megatron Core asserts against each of these (and Megatron Bridge re-checks it in its
comm-overlap setup). Bridge's `comm_overlap` section can switch the overlap on for the model.

## Example
```yaml
dataset:  # not Energon's native packing, which makes Bridge turn the overlap off
  _target_: megatron.bridge.training.config.GPTDatasetConfig
comm_overlap:
  overlap_moe_expert_parallel_comm: true
model:
  recompute_granularity: selective
  recompute_modules: [moe]
```

## Use instead
```yaml
dataset:
  _target_: megatron.bridge.training.config.GPTDatasetConfig
comm_overlap:
  overlap_moe_expert_parallel_comm: true
model:
  recompute_granularity: selective
  recompute_modules: [moe_act]
```
)md",
    "AssertionError",
    "disable full recomputation when enabling overlap_moe_expert_parallel_comm|disable recomputation method when enabling overlap_moe_expert_parallel_comm|recompute_num_layers must be None when enabling overlap_moe_expert_parallel_comm|disable moe in recompute_modules when enabling overlap_moe_expert_parallel_comm|with overlap_moe_expert_parallel_comm full recompute|overlap_moe_expert_parallel_comm full recompute"};

// The raise site of Bridge's comm-overlap setup (CommOverlapConfig) refusing full recompute; Megatron Core's dev branch
// has none of that text, so at dev only Bridge's decides.
constexpr std::string_view kBridgeFullRecompute =
    "disable full recomputation when enabling overlap_moe_expert_parallel_comm";

class RecomputeWithEpCommOverlap final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::overlap_moe_expert_parallel_comm, field::recompute_granularity, field::recompute_method,
                      field::recompute_num_layers, field::moe_layer_recompute}))
            return;
        if (!m.flag(field::overlap_moe_expert_parallel_comm)) return;
        // `cause` / `cause_note`: the other field involved, noted before the rejection.
        auto add = [&](FieldName at_field, std::string message, const Value* at = nullptr,
                       std::optional<FieldName> cause = std::nullopt, std::string cause_note = {}) {
            Diagnostic& d =
                at ? ctx.report_at(kRule, *at, std::move(message)) : ctx.report(kRule, at_field, std::move(message));
            ctx.note_field(d, field::overlap_moe_expert_parallel_comm,
                           "overlap_moe_expert_parallel_comm is enabled here");
            if (cause) ctx.note_field(d, *cause, std::move(cause_note));
            return &d;
        };
        const bool full = m.granularity_post == "full";
        // dev: the overlap schedule recomputes whole stages, with requirements of its own.
        const bool stages = rules::ep_overlap_recomputes_stages(m);
        if (full && !stages)
            add(field::recompute_granularity,
                "full recompute cannot be combined with overlap_moe_expert_parallel_comm");
        if (full && stages) check_stage_recompute(ctx, m, add);
        const std::string_view mode = full && stages ? " (the overlap schedule recomputes whole stages)" : "";
        if (!m[field::recompute_method].is_null()) {
            Diagnostic* d = add(
                field::recompute_method,
                fmt::format("recompute_method must be unset when overlap_moe_expert_parallel_comm is enabled{}", mode));
            // Unsafe, unlike RC108's removal of an ignored method: under full recompute the method is in effect, and
            // removing it changes which layers are recomputed.
            d->fix = Fix::unsafe("Remove recompute_method", {{FieldEdit::Op::Remove, field::recompute_method, "", -1}});
        }
        if (!m[field::recompute_num_layers].is_null())
            add(field::recompute_num_layers,
                fmt::format("recompute_num_layers must be unset when overlap_moe_expert_parallel_comm is enabled{}",
                            mode));
        // Megatron Core checks the module list whatever the granularity (from 0.17 on).
        if (ctx.revision().enum_values(revision_enum::ep_overlap_forbids_moe_recompute) ==
                std::vector<std::string>{"true"} &&
            m.modules_post.known && m.modules_post.contains("moe")) {
            const Value* item = rules::module_item(m, "moe");
            Diagnostic* d = add(m.moe_layer_converted && !item ? field::moe_layer_recompute : field::recompute_modules,
                                "\"moe\" recompute cannot be combined with overlap_moe_expert_parallel_comm", item);
            RuleContext::hint(
                *d,
                "recompute \"moe_act\" (with moe_grouped_gemm) or \"shared_experts\" instead of the whole MoE layer");
        }
    }

private:
    // The requirements of the dev branch's whole-stage full recompute under the overlap (each an assert of its own).
    template <typename Add>
    static void check_stage_recompute(RuleContext& ctx, const EffectiveModel& m, Add& add) {
        // Megatron Bridge's comm-overlap setup may refuse full recompute before Megatron Core sees the model: its
        // raise site, compiled from Bridge's source (schemas/bridge/checks.json), decides whether this stands.
        Diagnostic& refused = ctx.report(
            kRule, field::recompute_granularity,
            "full recompute cannot be combined with overlap_moe_expert_parallel_comm switched on in comm_overlap");
        ctx.note_field(refused, field::overlap_moe_expert_parallel_comm, "comm_overlap switches the overlap on here");
        RuleContext::hint(refused,
                          fmt::format("Megatron Core {} itself would recompute whole stages", ctx.revision().name));
        refused.raise_text = kBridgeFullRecompute;
        if (m.known({field::attention_dropout, field::hidden_dropout})) {
            for (FieldName dropout : {field::attention_dropout, field::hidden_dropout}) {
                auto p = m.number(dropout);
                if (!p || *p == 0.0) continue;
                add(field::recompute_granularity,
                    fmt::format("full recompute under overlap_moe_expert_parallel_comm needs {} 0, but it is {}",
                                dropout, m[dropout].display()),
                    nullptr, dropout, fmt::format("{} is set here (the default is 0.1)", dropout));
            }
        }
        if (m.known({field::cuda_graph_impl}) && m.str(field::cuda_graph_impl).value_or("none") != "none")
            add(field::recompute_granularity,
                fmt::format("full recompute under overlap_moe_expert_parallel_comm does not support CUDA graphs, but "
                            "cuda_graph_impl is {}",
                            m[field::cuda_graph_impl].display()),
                nullptr, field::cuda_graph_impl, "CUDA graphs are configured here");
        if (m.known({field::moe_paged_stash}) && m.flag(field::moe_paged_stash))
            add(field::recompute_granularity,
                "full recompute under overlap_moe_expert_parallel_comm cannot be combined with moe_paged_stash",
                nullptr, field::moe_paged_stash, "moe_paged_stash is enabled here");
        if (m.known({field::fp8, field::fp8_recipe}) && m[field::fp8].truthy() &&
            m.str(field::fp8_recipe) == "delayed") {
            Diagnostic* d =
                add(field::recompute_granularity,
                    "full recompute under overlap_moe_expert_parallel_comm does not support fp8 delayed scaling",
                    nullptr, field::fp8_recipe, "fp8_recipe is \"delayed\"");
            RuleContext::hint(*d, "use a current-scaling (tensorwise), mxfp8 or blockwise fp8 recipe");
        }
    }
};

}  // namespace

MBL_DEFINE_RULE(RC027, RecomputeWithEpCommOverlap)

}  // namespace mbl
