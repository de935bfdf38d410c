// The memory estimator (memory/layer_model.hpp) asked for exactly the harness's stack: per-rank shapes (so tensor
// parallelism 1 here), the harness's attention kernel, separate norm modules (Megatron's local spec), a final norm,
// bf16.
#include "gpu_check/mcore.hpp"
#include "gpu_check/plan.hpp"

namespace mbl::gpu {

std::optional<Prediction> predict(const StackConfig& s, const RecomputeSpec& rc) {
    memory::LayerShape shape;
    shape.seq_length = s.seq_length;
    shape.micro_batch = s.micro_batch;
    shape.hidden = s.hidden;
    shape.heads = s.heads;
    shape.query_groups = s.query_groups;
    shape.head_dim = s.head_dim;
    shape.ffn_hidden = s.ffn_hidden;
    shape.gated = s.gated;
    shape.linear_bias = s.linear_bias;
    shape.fused_activation = s.fused_activation;
    shape.layernorm = s.norm == NormKind::LayerNorm;
    shape.attention_dropout = s.attention_dropout;
    shape.hidden_dropout = s.hidden_dropout;
    shape.softmax_fp32 = s.softmax_fp32;
    shape.attention = s.attention == AttentionMode::Fused ? memory::AttentionKernel::Fused : memory::AttentionKernel::Unfused;
    shape.input_norm_separate = true;
    shape.pre_mlp_norm_separate = true;
    shape.experts = s.experts;
    shape.topk = s.topk;
    shape.expert_ffn = s.expert_ffn;
    shape.shared_expert_ffn = s.shared_expert_ffn;
    shape.expert_fused_activation = s.fused_activation;
    std::vector<memory::LayerKind> layers;
    for (bool moe : s.moe) layers.push_back(moe ? memory::LayerKind::Moe : memory::LayerKind::Dense);
    return predict_layers(shape, layers, rc, s.final_norm);
}

}  // namespace mbl::gpu
