// Context parallelism's attention as Transformer Engine 2.18.0 (e7c550c5) saves it, by cp_comm_type
// (memory/README.md, "Context parallelism"): hand-computed per-rank bytes of a Llama-like layer.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "core/effective_model.hpp"
#include "core/schema.hpp"
#include "memory/estimate.hpp"
#include "parser/yaml_loader.hpp"
#include "tests/memory/llama_layer.hpp"

using namespace mbl::memory;

namespace {

constexpr double kCpMiB = 1024.0 * 1024;

// s 4096 over CP 2, h 4096, 32 heads of 128 in 8 groups, SwiGLU 14336, RMSNorm, no dropout, bf16, TE attention.
LayerShape cp_layer(CpComm comm) {
    LayerShape s = mbl::test::llama_layer();
    s.attention = AttentionKernel::Fused;
    s.cp = 2;
    s.cp_comm = comm;
    return s;
}

double cp_named(const LayerActivations& a, const std::string& prefix) {
    double b = 0;
    for (const auto& t : a.saved)
        if (t.name.rfind(prefix, 0) == 0) b += t.bytes;
    return b;
}

double cp_module_sum(const LayerActivations& a, const std::string& module) {
    double b = 0;
    for (const auto& t : a.saved)
        if (t.module == module) b += t.bytes;
    return b;
}

CpComm comm_of(const std::string& line) {
    auto loaded =
        mbl::load_yaml("test.yaml", "model:\n  num_layers: 2\n  hidden_size: 1024\n  num_attention_heads: 16\n"
                                    "  seq_length: 4096\n  context_parallel_size: 2\n" +
                                        line);
    REQUIRE(loaded.ok());
    auto fin = mbl::finalize(loaded.root, *mbl::Schema::instance().revision("main"), {});
    REQUIRE(fin.errors.empty());
    const Estimate est = estimate(fin.model, {});
    REQUIRE(est.ok);
    return est.shape.cp_comm;
}

}  // namespace

TEST_CASE("context parallel p2p: TE saves its own q and the ring's last key/value buffer, not the QKV output",
          "[memory]") {
    const LayerActivations a = layer_activations(cp_layer(CpComm::P2P), LayerKind::Dense, {});
    // T = 2048 tokens per rank: q 2048 x 32 x 128 x 2 = 16 kCpMiB, k + v 2048 x 2 x 8 x 128 x 2 = 8 kCpMiB,
    // the output 16 kCpMiB, the statistics 32 x 2048 x 4 = 0.25 kCpMiB.
    CHECK(cp_named(a, "query (made contiguous") == 16 * kCpMiB);
    CHECK(cp_named(a, "key and value received at the ring's last step") == 8 * kCpMiB);
    CHECK(cp_named(a, "attention output (output projection input)") == 16 * kCpMiB);
    CHECK(cp_named(a, "softmax statistics") == 0.25 * kCpMiB);
    CHECK(cp_named(a, "QKV projection output") == 0);
    CHECK(cp_named(a, "query (reshaped copy") == 0);
    CHECK(cp_module_sum(a, "core_attn") == (16 + 8 + 0.25) * kCpMiB);
}

TEST_CASE("context parallel a2a and a2a+p2p keep the output twice, all_gather as p2p", "[memory]") {
    const LayerActivations p2p = layer_activations(cp_layer(CpComm::P2P), LayerKind::Dense, {});
    const LayerActivations ag = layer_activations(cp_layer(CpComm::AllGather), LayerKind::Dense, {});
    const LayerActivations a2a = layer_activations(cp_layer(CpComm::AllToAll), LayerKind::Dense, {});
    const LayerActivations hier = layer_activations(cp_layer(CpComm::AllToAllP2P), LayerKind::Dense, {});
    CHECK(ag.internal_bytes() == p2p.internal_bytes());
    CHECK(a2a.internal_bytes() == p2p.internal_bytes() + 16 * kCpMiB);
    CHECK(hier.internal_bytes() == a2a.internal_bytes());
    CHECK(cp_named(a2a, "attention output before the reverse all-to-all") == 16 * kCpMiB);
    CHECK(cp_named(a2a, "key and value after the all-to-all") == 8 * kCpMiB);
}

TEST_CASE("context parallel core_attn: the checkpoint keeps the QKV output and the reshaped query it was given",
          "[memory]") {
    const LayerActivations a = layer_activations(cp_layer(CpComm::P2P), LayerKind::Dense, {"core_attn"});
    CHECK(cp_module_sum(a, "core_attn") == 0);
    // QKV output 2048 x (32 + 16) x 128 x 2 = 24 kCpMiB; 8 groups on the rank, so the query is a reshaped copy: 16 kCpMiB.
    CHECK(cp_named(a, "QKV projection output (checkpoint input") == 24 * kCpMiB);
    CHECK(cp_named(a, "query (reshaped copy of the grouped QKV output; checkpoint input)") == 16 * kCpMiB);
    // MHA: the query is a view of the QKV output, no copy kept.
    LayerShape mha = cp_layer(CpComm::P2P);
    mha.query_groups = 32;
    const LayerActivations m = layer_activations(mha, LayerKind::Dense, {"core_attn"});
    CHECK(cp_named(m, "QKV projection output (checkpoint input") == 48 * kCpMiB);
    CHECK(cp_named(m, "query (reshaped copy") == 0);
}

TEST_CASE("context parallel p2p backward: the ring's double buffers and the upper-triangle step", "[memory]") {
    // The attention phase binds when the MLP is small: FFN 1024.
    LayerShape s = cp_layer(CpComm::P2P);
    s.ffn_hidden = 1024;
    const LayerActivations a = layer_activations(s, LayerKind::Dense, {});
    // Input norm output 2048 x 4096 x 2 = 16 kCpMiB and its fp32 statistics 8 KiB; saved q, kv, out, statistics
    // (40.25 kCpMiB); dout 16; dq_buffer 16; two [2, k+v] buffers 32; the statistics' second half 0.125; the
    // upper-triangle step: halves of q, out, dout 24, dq half 8, dk and dv 8.
    const double expected = 16 * kCpMiB + 2048 * 4 + 40.25 * kCpMiB + 16 * kCpMiB + 16 * kCpMiB + 32 * kCpMiB +
                            0.125 * kCpMiB + 24 * kCpMiB + 8 * kCpMiB + 8 * kCpMiB;
    CHECK(a.backward_alive_bytes == Approx(expected));
}

TEST_CASE("cp_comm_type: Megatron Core's p2p when unset, the costliest entry of a per-layer list", "[memory]") {
    CHECK(comm_of("") == CpComm::P2P);
    CHECK(comm_of("  cp_comm_type: a2a\n") == CpComm::AllToAll);
    CHECK(comm_of("  cp_comm_type: all_gather\n") == CpComm::AllGather);
    CHECK(comm_of("  cp_comm_type: [p2p, a2a+p2p]\n") == CpComm::AllToAllP2P);
}
