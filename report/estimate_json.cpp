#include <nlohmann/json.hpp>
#include <ostream>

#include "report/estimate_report.hpp"

namespace mbl {

namespace {

using nlohmann::ordered_json;

ordered_json bytes(double b) { return {{"bytes", static_cast<std::int64_t>(b)}, {"gib", b / memory::kGiB}}; }

}  // namespace

void write_estimate_json(std::ostream& out, const memory::Estimate& est, const EstimateHeader& header) {
    const auto& s = est.shape;
    ordered_json j;
    j["kind"] = "estimate";  // schemas/output/estimate.schema.json
    j["version"] = 1;
    j["input"] = header.input;
    j["mcore"] = header.revision;
    j["model"] = {{"hidden_size", s.hidden},
                  {"num_attention_heads", s.heads},
                  {"num_query_groups", s.query_groups},
                  {"kv_channels", s.head_dim},
                  {"ffn_hidden_size", s.ffn_hidden},
                  {"gated_linear_unit", s.gated},
                  {"num_moe_experts", s.experts},
                  {"moe_router_topk", s.topk},
                  {"moe_ffn_hidden_size", s.expert_ffn},
                  {"multi_latent_attention", s.mla},
                  {"attention", s.attention == memory::AttentionKernel::Fused ? "fused" : "unfused"},
                  {"fp8_approximation", s.fp8}};
    ordered_json layer_kinds = ordered_json::object();
    for (auto k : est.kinds) {
        const std::string name = memory::kind_name(k);
        layer_kinds[name] = layer_kinds.value(name, 0) + 1;
    }
    j["model"]["layers"] = est.kinds.size();
    j["model"]["layer_kinds"] = std::move(layer_kinds);
    j["model"]["padded_vocab_size"] = est.vocab;
    j["run"] = {{"seq_length", est.seq_length},
                {"micro_batch_size", est.micro_batch},
                {"tensor_parallel", s.tp},
                {"sequence_parallel", s.sequence_parallel},
                {"pipeline_parallel", est.schedule.pp},
                {"virtual_pipeline_parallel", est.schedule.vpp},
                {"context_parallel", s.cp},
                {"expert_parallel", s.ep},
                {"data_parallel", est.data_parallel},
                {"data_parallel_source", header.data_parallel_source.empty() ? "assumed" : header.data_parallel_source},
                {"recompute", est.current.describe()}};
    j["budget"] = est.budget ? bytes(*est.budget) : ordered_json(nullptr);
    j["reserve"] = bytes(est.reserve);
    j["gpu"] = est.gpu;
    ordered_json ranks = ordered_json::array();
    for (const auto& r : est.ranks) {
        ordered_json o = {{"stage", r.stage},
                          {"role", r.role},
                          {"layers", r.layers},
                          {"in_flight", r.in_flight},
                          {"params", bytes(r.params)},
                          {"grads", bytes(r.grads)},
                          {"optimizer", bytes(r.optimizer)},
                          {"activations", bytes(r.activations)},
                          {"leftover", bytes(r.leftover)},
                          {"transient", bytes(r.transient)},
                          {"optimizer_step", bytes(r.optimizer_step)},
                          {"deferred_output_wgrad", bytes(r.deferred_output_wgrad)},
                          {"peak", bytes(r.peak())},
                          {"optimizer_created_at_first_step", bytes(r.optimizer_lazy)},
                          {"first_iteration_peak", bytes(r.first_iteration_peak())}};
        o["fits"] =
            est.budget ? ordered_json(r.peak() + est.reserve_model.at(r.peak()) <= *est.budget) : ordered_json(nullptr);
        ranks.push_back(std::move(o));
    }
    j["ranks"] = std::move(ranks);
    ordered_json options = ordered_json::array();
    for (const auto& o : est.options) {
        ordered_json x = {{"option", o.name},
                          {"hottest_stage", o.hottest_stage},
                          {"activations", bytes(o.activations)},
                          {"peak", bytes(o.peak)},
                          {"saving", bytes(o.saving)},
                          {"replay_share", o.replay_share},
                          {"step_overhead", o.step_overhead},
                          {"replay_seconds", o.replay_seconds},
                          {"checkpoints", o.checkpoints},
                          {"host_seconds", o.host_seconds},
                          {"added_seconds", o.added_seconds},
                          {"first_iteration_peak", bytes(o.first_iteration_peak)},
                          {"current", o.current}};
        x["fits"] = o.fits ? ordered_json(*o.fits) : ordered_json(nullptr);
        x["narrowest_fit"] = o.narrowest_fit;
        options.push_back(std::move(x));
    }
    j["options"] = std::move(options);
    j["step_time"] = {{"gpu", est.gpu},
                      {"roofline_seconds", est.roofline_step_seconds},
                      {"measured_seconds",
                       est.measured_step_seconds ? ordered_json(*est.measured_step_seconds) : ordered_json(nullptr)},
                      {"baseline_seconds",
                       est.baseline_step_seconds ? ordered_json(*est.baseline_step_seconds) : ordered_json(nullptr)},
                      {"checkpoint_host_seconds", memory::checkpoint_host().reentrant_seconds},
                      {"discarding_checkpoint_host_seconds", memory::checkpoint_host().discarding_seconds},
                      {"replayed_op_host_seconds", memory::checkpoint_host().per_op_seconds},
                      {"step_overhead_includes_host", est.measured_step_seconds.has_value()}};
    ordered_json assumptions = ordered_json::array();
    for (const auto& a : est.assumptions) assumptions.push_back(a.text);
    j["assumptions"] = std::move(assumptions);
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace mbl
