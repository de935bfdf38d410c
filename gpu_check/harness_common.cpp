// The stack's validation and the labels the harness implements: shared by gpu-check's plan and the harness tool.
#include <fmt/format.h>

#include <algorithm>

#include "gpu_check/harness.hpp"
#include "memory/labels/registry.hpp"

namespace mbl::gpu {

bool StackConfig::any_moe() const {
    return std::any_of(moe.begin(), moe.end(), [](bool b) { return b; });
}

std::string StackConfig::validate() const {
    if (moe.empty()) return "no layers to build";
    if (seq_length <= 0 || micro_batch <= 0 || hidden <= 0)
        return "sequence length, micro-batch size and hidden size must be positive";
    if (heads <= 0 || query_groups <= 0 || head_dim <= 0)
        return "attention heads, query groups and head size must be positive";
    if (heads % query_groups != 0)
        return fmt::format("{} attention heads are not a multiple of {} query groups", heads, query_groups);
    if (head_dim > 256) return fmt::format("head size {} is above the harness's limit of 256", head_dim);
    const bool has_dense = std::any_of(moe.begin(), moe.end(), [](bool b) { return !b; });
    if (has_dense && ffn_hidden <= 0) return "dense layers need a positive FFN hidden size";
    if (any_moe()) {
        if (experts <= 0 || local_experts <= 0 || topk <= 0 || expert_ffn <= 0)
            return "MoE layers need experts, local experts, top-k and an expert FFN size";
        if (topk > experts) return fmt::format("top-k {} exceeds the {} experts", topk, experts);
        if (local_experts > experts) return "more local experts than experts";
    }
    if (attention_dropout < 0 || attention_dropout >= 1 || hidden_dropout < 0 || hidden_dropout >= 1)
        return "dropout probabilities must be in [0, 1)";
    return "";
}

const std::vector<std::string>& supported_labels() {
    // The labels whose checkpoint the harness builds (memory/labels/: `harness`); it builds no multi-latent attention.
    static const std::vector<std::string> labels = [] {
        std::vector<std::string> out;
        for (const auto* label : memory::labels::modeled())
            if (label->harness) out.emplace_back(label->name);
        return out;
    }();
    return labels;
}

}  // namespace mbl::gpu
