// The Megatron Core reference live: the installed Megatron Core (python3 with PyTorch, Megatron Core and a GPU; on a
// machine without them the binary exits 77, reported as skipped) builds a small stack, and the estimator's prediction
// of the same stack must agree with it, while a test double with one wrong term must not.
#define CATCH_CONFIG_RUNNER
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>

#include "../support/lint_text.hpp"
#include "core/schema.hpp"
#include "gpu_check/mcore.hpp"
#include "gpu_check/report.hpp"

using namespace mbl;
using namespace mbl::gpu;

namespace {

// Dense GQA layers on Megatron Core's local spec: unfused attention keeps fp32 and bf16 probabilities.
const char* kDense = R"(model:
  transformer_impl: local
  num_layers: 4
  hidden_size: 2048
  ffn_hidden_size: 5632
  num_attention_heads: 16
  num_query_groups: 4
  kv_channels: 128
  gated_linear_unit: true
  activation_func: torch.nn.functional.silu
  normalization: RMSNorm
  add_bias_linear: false
  hidden_dropout: 0.0
  attention_dropout: 0.0
  seq_length: 2048
  bf16: true
  recompute_granularity: selective
  recompute_modules: [core_attn]
)";

CheckResult measure_with(const McorePlan& plan, const McoreOutcome& outcome, const LayerPredictor& predictor) {
    CheckResult r;
    r.tolerance = 0.10;
    const memory::LayerShape shape = built_shape(plan, *outcome.environment);
    std::vector<Recompute> specs{plan.runs.control};
    specs.insert(specs.end(), plan.runs.candidates.begin(), plan.runs.candidates.end());
    for (std::size_t i = 0; i < specs.size(); ++i)
        r.runs.push_back(
            {i ? "candidate" : "control", specs[i], outcome.runs.at(i), predictor(shape, plan.kinds, specs[i])});
    compare_runs(r);
    return r;
}

}  // namespace

TEST_CASE("Megatron Core's layers agree with the estimator, and a wrong estimator term fails", "[gpu][mcore]") {
    auto model = test::model_of_text(kDense, {}, "dense.yaml");
    REQUIRE(model);
    PlanOptions po;
    po.candidates = {"selective [core_attn]", "selective [mlp]", "full uniform 1"};
    const McorePlan plan = make_mcore_plan(*model, po);
    REQUIRE(plan.error.empty());
    const McoreOutcome outcome =
        run_mcore_helper("python3", default_mcore_helper(), mcore_request(plan, 1, 2, 7), "", {});
    INFO((outcome.failure ? outcome.failure->kind + ": " + outcome.failure->message : std::string("ran")));
    REQUIRE_FALSE(outcome.failure);
    REQUIRE(outcome.environment);
    CHECK(outcome.environment->spec == "local");
    REQUIRE(outcome.runs.size() == 4);

    const CheckResult real = measure_with(
        plan, outcome, [](const auto& s, const auto& k, const auto& rc) { return predict_layers(s, k, rc); });
    for (const auto& c : real.comparisons) {
        std::cout << comparison_line(c, real.tolerance) << '\n';
        CHECK(c.pass);
    }
    // The double forgets the fp32 copy of the attention probabilities that the unfused softmax keeps.
    const CheckResult wrong = measure_with(plan, outcome, [](memory::LayerShape s, const auto& k, const auto& rc) {
        s.softmax_fp32 = false;
        return predict_layers(s, k, rc);
    });
    REQUIRE(wrong.comparisons.size() == 3);
    std::cout << "with the wrong term: " << comparison_line(wrong.comparisons[0], wrong.tolerance) << '\n';
    CHECK_FALSE(wrong.comparisons[0].pass);  // selective [core_attn]
    CHECK_FALSE(wrong.pass);
}

int main(int argc, char** argv) {
    bool listing = false;
    for (int i = 1; i < argc; ++i) listing |= std::string(argv[i]).rfind("--list", 0) == 0;
    if (!listing &&
        std::system("python3 -c 'import torch, megatron.core; assert torch.cuda.is_available()' 2>/dev/null") != 0) {
        std::cout << "SKIPPED: these tests need python3 with PyTorch, Megatron Core and a GPU\n";
        return 77;
    }
    return Catch::Session().run(argc, argv);
}
