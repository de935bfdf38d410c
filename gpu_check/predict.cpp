// The memory estimator (memory/layer_model.hpp) asked for exactly the harness's stack: per-rank shapes (so tensor
// parallelism 1 here), the harness's attention kernel, separate norm modules (Megatron's local spec), a final norm,
// bf16.
#include "gpu_check/mcore.hpp"
#include "gpu_check/plan.hpp"

namespace mbl::gpu {

std::optional<Prediction> predict(const StackConfig& s, const Recompute& rc) {
    memory::LayerShape shape = s;
    shape.expert_fused_activation = s.fused_activation;  // the harness's experts use the dense MLP's kernel
    std::vector<memory::LayerKind> layers;
    for (bool moe : s.moe) layers.push_back(moe ? memory::LayerKind::Moe : memory::LayerKind::Dense);
    return predict_layers(shape, layers, rc, s.final_norm);
}

}  // namespace mbl::gpu
