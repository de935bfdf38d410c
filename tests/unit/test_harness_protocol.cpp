// The JSON interface between gpu-check and the CUDA harness tool (gpu_check/harness_protocol.hpp): what one side
// writes, the other reads back unchanged, and a request the harness cannot use is refused with the field named.
#include <catch2/catch.hpp>

#include "gpu_check/harness_protocol.hpp"

using namespace mbl::gpu;
using mbl::Recompute;
using nlohmann::json;

namespace {

StackConfig moe_stack() {
    StackConfig s;
    s.seq_length = 512;
    s.micro_batch = 2;
    s.hidden = 256;
    s.heads = 8;
    s.query_groups = 2;
    s.head_dim = 32;
    s.ffn_hidden = 704;
    s.gated = false;
    s.activation = ActivationKind::GeLU;
    s.fused_activation = true;
    s.linear_bias = true;
    s.layernorm = true;
    s.norm_epsilon = 1e-6;
    s.attention = mbl::memory::AttentionKernel::Fused;
    s.attention_dropout = 0.1;
    s.hidden_dropout = 0.05;
    s.experts = 8;
    s.local_experts = 4;
    s.topk = 2;
    s.expert_ffn = 128;
    s.shared_expert_ffn = 256;
    s.moe = {false, true, true};
    s.final_norm = false;
    return s;
}

}  // namespace

TEST_CASE("a request travels to the harness unchanged", "[harness_protocol]") {
    const StackConfig s = moe_stack();
    RunOptions o;
    o.warmup_steps = 0;
    o.steps = 5;
    o.seed = 987654321012ULL;
    const Recompute rc = Recompute::selective({"core_attn", "moe_act"});
    // Through text, as the file between the two processes.
    const HarnessRequest r = parse_request(json::parse(request_json(s, rc, o).dump()));
    CHECK(r.recompute.describe() == "selective [core_attn, moe_act]");
    CHECK(r.options.warmup_steps == 0);
    CHECK(r.options.steps == 5);
    CHECK(r.options.seed == 987654321012ULL);
    const StackConfig& t = r.stack;
    CHECK(t.seq_length == 512);
    CHECK(t.micro_batch == 2);
    CHECK(t.hidden == 256);
    CHECK(t.heads == 8);
    CHECK(t.query_groups == 2);
    CHECK(t.head_dim == 32);
    CHECK(t.ffn_hidden == 704);
    CHECK_FALSE(t.gated);
    CHECK(t.activation == ActivationKind::GeLU);
    CHECK(t.fused_activation);
    CHECK(t.linear_bias);
    CHECK(t.layernorm);
    CHECK(t.norm_epsilon == 1e-6);
    CHECK(t.attention == mbl::memory::AttentionKernel::Fused);
    CHECK(t.attention_dropout == 0.1);
    CHECK(t.hidden_dropout == 0.05);
    CHECK(t.experts == 8);
    CHECK(t.local_experts == 4);
    CHECK(t.topk == 2);
    CHECK(t.expert_ffn == 128);
    CHECK(t.shared_expert_ffn == 256);
    CHECK(t.moe == std::vector<bool>{false, true, true});
    CHECK_FALSE(t.final_norm);
    CHECK(t.validate().empty());
    // Full recompute and no recompute too.
    CHECK(parse_request(request_json(s, Recompute::full(Recompute::Method::Block, 2), o)).recompute.describe() ==
          "full block 2");
    CHECK(parse_request(request_json(s, Recompute::none(), o)).recompute.describe() == "none");
}

TEST_CASE("a request the harness cannot use names what is wrong", "[harness_protocol]") {
    const json good = request_json(moe_stack(), Recompute::none(), RunOptions{});
    auto why = [&](const std::function<void(json&)>& spoil) {
        json j = good;
        spoil(j);
        try {
            parse_request(j);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(why([](json& j) { j["stack"].erase("hidden"); }) == "\"hidden\" is missing");
    CHECK(why([](json& j) { j["stack"]["moe"] = "all"; }) == "\"moe\" has the wrong type: \"all\"");
    CHECK(why([](json& j) { j["stack"]["attention"] = "sideways"; }) ==
          "\"attention\" is \"sideways\", not fused or unfused");
    CHECK(why([](json& j) { j["protocol"] = 2; }).find("protocol 2, this harness 1") != std::string::npos);
    CHECK(why([](json& j) { j["steps"] = 0; }).find("\"steps\" must be at least 1") != std::string::npos);
    CHECK(why([](json& j) { j["recompute"] = "sometimes"; }) != "accepted");
    CHECK(why([](json& j) { j = json::array(); }) == "the request is not a JSON object");
    CHECK(why([](json&) {}) == "accepted");
}

TEST_CASE("the harness's lines read back as the measurement and the device", "[harness_protocol]") {
    Measurement m;
    m.retained_bytes = 1234567890;
    m.forward_peak_bytes = 1300000000;
    m.backward_peak_bytes = 2400000000;
    m.step_ms = 12.5;
    m.steps_ms = {12.0, 12.5, 13.0};
    m.param_bytes = 1e6;
    m.grad_bytes = 2e6;
    m.input_bytes = 3e6;
    m.leaked_bytes = 512;
    m.stable = false;
    const Measurement back = parse_measurement(json::parse(measurement_line(m).dump()));
    CHECK(back.retained_bytes == m.retained_bytes);
    CHECK(back.forward_peak_bytes == m.forward_peak_bytes);
    CHECK(back.backward_peak_bytes == m.backward_peak_bytes);
    CHECK(back.step_ms == m.step_ms);
    CHECK(back.steps_ms == m.steps_ms);
    CHECK(back.param_bytes == m.param_bytes);
    CHECK(back.grad_bytes == m.grad_bytes);
    CHECK(back.input_bytes == m.input_bytes);
    CHECK(back.leaked_bytes == m.leaked_bytes);
    CHECK_FALSE(back.stable);
    CHECK(measurement_line(m)["event"] == "measurement");

    DeviceInfo d;
    d.harness_found = true;
    d.devices = 2;
    d.name = "NVIDIA H200";
    d.total_bytes = 150e9;
    d.free_bytes = 140e9;
    const DeviceInfo dback = parse_device(json::parse(device_line(d).dump()));
    CHECK(dback.usable());
    CHECK(dback.name == "NVIDIA H200");
    CHECK(dback.devices == 2);
    CHECK(dback.total_bytes == 150e9);
    CHECK(dback.free_bytes == 140e9);
    d.devices = 0;
    d.error = "no CUDA GPU found on this machine";
    CHECK_FALSE(parse_device(device_line(d)).usable());
    CHECK(parse_device(device_line(d)).error == "no CUDA GPU found on this machine");
    CHECK(error_line("out_of_memory", "x") == json{{"event", "error"}, {"kind", "out_of_memory"}, {"message", "x"}});
    CHECK(step_line(2, 4) == json{{"event", "step"}, {"done", 2}, {"total", 4}});
}
