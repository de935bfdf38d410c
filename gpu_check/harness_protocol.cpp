#include "gpu_check/harness_protocol.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace mbl::gpu {

using nlohmann::json;

namespace {

// A required field of `object`, converted to T; the error names the field.
template <typename T>
T field(const json& object, const char* name) {
    if (!object.is_object() || !object.contains(name))
        throw std::invalid_argument(fmt::format("\"{}\" is missing", name));
    try {
        return object.at(name).get<T>();
    } catch (const json::exception&) {
        throw std::invalid_argument(fmt::format("\"{}\" has the wrong type: {}", name, object.at(name).dump()));
    }
}

const char* attention_name(memory::AttentionKernel a) {
    return a == memory::AttentionKernel::Fused ? "fused" : "unfused";
}

memory::AttentionKernel attention_of(const std::string& name) {
    if (name == "fused") return memory::AttentionKernel::Fused;
    if (name == "unfused") return memory::AttentionKernel::Unfused;
    throw std::invalid_argument(fmt::format("\"attention\" is \"{}\", not fused or unfused", name));
}

ActivationKind activation_of(const std::string& name) {
    if (name == "silu") return ActivationKind::SiLU;
    if (name == "gelu") return ActivationKind::GeLU;
    throw std::invalid_argument(fmt::format("\"activation\" is \"{}\", not silu or gelu", name));
}

// The fields of the stack the harness reads (tools/gpu_harness builds Megatron Core's local spec at tensor
// parallelism 1, so the estimator's parallel, MLA and Mamba fields do not travel).
json stack_json(const StackConfig& s) {
    return {{"seq_length", s.seq_length},
            {"micro_batch", s.micro_batch},
            {"hidden", s.hidden},
            {"heads", s.heads},
            {"query_groups", s.query_groups},
            {"head_dim", s.head_dim},
            {"ffn_hidden", s.ffn_hidden},
            {"gated", s.gated},
            {"activation", s.activation == ActivationKind::GeLU ? "gelu" : "silu"},
            {"fused_activation", s.fused_activation},
            {"linear_bias", s.linear_bias},
            {"layernorm", s.layernorm},
            {"norm_epsilon", s.norm_epsilon},
            {"attention", attention_name(s.attention)},
            {"attention_dropout", s.attention_dropout},
            {"hidden_dropout", s.hidden_dropout},
            {"experts", s.experts},
            {"local_experts", s.local_experts},
            {"topk", s.topk},
            {"expert_ffn", s.expert_ffn},
            {"shared_expert_ffn", s.shared_expert_ffn},
            {"moe", s.moe},
            {"final_norm", s.final_norm}};
}

StackConfig parse_stack(const json& j) {
    StackConfig s;
    s.seq_length = field<std::int64_t>(j, "seq_length");
    s.micro_batch = field<std::int64_t>(j, "micro_batch");
    s.hidden = field<std::int64_t>(j, "hidden");
    s.heads = field<std::int64_t>(j, "heads");
    s.query_groups = field<std::int64_t>(j, "query_groups");
    s.head_dim = field<std::int64_t>(j, "head_dim");
    s.ffn_hidden = field<std::int64_t>(j, "ffn_hidden");
    s.gated = field<bool>(j, "gated");
    s.activation = activation_of(field<std::string>(j, "activation"));
    s.fused_activation = field<bool>(j, "fused_activation");
    s.linear_bias = field<bool>(j, "linear_bias");
    s.layernorm = field<bool>(j, "layernorm");
    s.norm_epsilon = field<double>(j, "norm_epsilon");
    s.attention = attention_of(field<std::string>(j, "attention"));
    s.attention_dropout = field<double>(j, "attention_dropout");
    s.hidden_dropout = field<double>(j, "hidden_dropout");
    s.experts = field<std::int64_t>(j, "experts");
    s.local_experts = field<std::int64_t>(j, "local_experts");
    s.topk = field<std::int64_t>(j, "topk");
    s.expert_ffn = field<std::int64_t>(j, "expert_ffn");
    s.shared_expert_ffn = field<std::int64_t>(j, "shared_expert_ffn");
    s.moe = field<std::vector<bool>>(j, "moe");
    s.final_norm = field<bool>(j, "final_norm");
    return s;
}

}  // namespace

json request_json(const StackConfig& stack, const Recompute& recompute, const RunOptions& options) {
    return {{"protocol", kHarnessProtocol},   {"stack", stack_json(stack)}, {"recompute", recompute.describe()},
            {"warmup", options.warmup_steps}, {"steps", options.steps},     {"seed", options.seed}};
}

HarnessRequest parse_request(const json& j) {
    if (!j.is_object()) throw std::invalid_argument("the request is not a JSON object");
    if (const int protocol = field<int>(j, "protocol"); protocol != kHarnessProtocol)
        throw std::invalid_argument(fmt::format(
            "the request speaks protocol {}, this harness {}: build both from one tree", protocol, kHarnessProtocol));
    HarnessRequest r;
    r.stack = parse_stack(field<json>(j, "stack"));
    r.recompute = parse_recompute(field<std::string>(j, "recompute"));
    r.options.warmup_steps = field<int>(j, "warmup");
    r.options.steps = field<int>(j, "steps");
    r.options.seed = field<std::uint64_t>(j, "seed");
    if (r.options.warmup_steps < 0 || r.options.steps < 1)
        throw std::invalid_argument("\"steps\" must be at least 1 and \"warmup\" at least 0");
    return r;
}

json device_line(const DeviceInfo& d) {
    return {{"event", "device"},          {"name", d.name},  {"devices", d.devices}, {"total_bytes", d.total_bytes},
            {"free_bytes", d.free_bytes}, {"error", d.error}};
}

json step_line(int done, int total) { return {{"event", "step"}, {"done", done}, {"total", total}}; }

json measurement_line(const Measurement& m) {
    return {{"event", "measurement"},
            {"retained_bytes", m.retained_bytes},
            {"forward_peak_bytes", m.forward_peak_bytes},
            {"backward_peak_bytes", m.backward_peak_bytes},
            {"step_ms", m.step_ms},
            {"steps_ms", m.steps_ms},
            {"param_bytes", m.param_bytes},
            {"grad_bytes", m.grad_bytes},
            {"input_bytes", m.input_bytes},
            {"leaked_bytes", m.leaked_bytes},
            {"stable", m.stable}};
}

json error_line(const std::string& kind, const std::string& message) {
    return {{"event", "error"}, {"kind", kind}, {"message", message}};
}

DeviceInfo parse_device(const json& j) {
    DeviceInfo d;
    d.harness_found = true;
    d.name = field<std::string>(j, "name");
    d.devices = field<int>(j, "devices");
    d.total_bytes = field<double>(j, "total_bytes");
    d.free_bytes = field<double>(j, "free_bytes");
    d.error = field<std::string>(j, "error");
    return d;
}

Measurement parse_measurement(const json& j) {
    Measurement m;
    m.retained_bytes = field<double>(j, "retained_bytes");
    m.forward_peak_bytes = field<double>(j, "forward_peak_bytes");
    m.backward_peak_bytes = field<double>(j, "backward_peak_bytes");
    m.step_ms = field<double>(j, "step_ms");
    m.steps_ms = field<std::vector<double>>(j, "steps_ms");
    m.param_bytes = field<double>(j, "param_bytes");
    m.grad_bytes = field<double>(j, "grad_bytes");
    m.input_bytes = field<double>(j, "input_bytes");
    m.leaked_bytes = field<double>(j, "leaked_bytes");
    m.stable = field<bool>(j, "stable");
    return m;
}

}  // namespace mbl::gpu
