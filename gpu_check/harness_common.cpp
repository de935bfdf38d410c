// The parts of gpu_check/harness.hpp that need no GPU: recompute specs and config validation.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "gpu_check/harness.hpp"

namespace mbl::gpu {

bool StackConfig::any_moe() const { return std::any_of(moe.begin(), moe.end(), [](bool b) { return b; }); }

std::string StackConfig::validate() const {
    if (moe.empty()) return "no layers to build";
    if (seq_length <= 0 || micro_batch <= 0 || hidden <= 0) return "sequence length, micro-batch size and hidden size must be positive";
    if (heads <= 0 || query_groups <= 0 || head_dim <= 0) return "attention heads, query groups and head size must be positive";
    if (heads % query_groups != 0) return fmt::format("{} attention heads are not a multiple of {} query groups", heads, query_groups);
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

RecomputeSpec RecomputeSpec::selective(std::vector<std::string> labels) {
    RecomputeSpec r;
    r.granularity = Granularity::Selective;
    r.modules = std::move(labels);
    return r;
}

RecomputeSpec RecomputeSpec::full(bool uniform, int num_layers) {
    RecomputeSpec r;
    r.granularity = Granularity::Full;
    r.uniform = uniform;
    r.num_layers = num_layers;
    return r;
}

bool RecomputeSpec::has(const std::string& label) const {
    return granularity == Granularity::Selective && std::find(modules.begin(), modules.end(), label) != modules.end();
}

std::string RecomputeSpec::describe() const {
    switch (granularity) {
        case Granularity::None: return "none";
        case Granularity::Selective: return fmt::format("selective [{}]", fmt::join(modules, ", "));
        case Granularity::Full: return fmt::format("full {} {}", uniform ? "uniform" : "block", num_layers);
    }
    return "none";
}

const std::vector<std::string>& supported_labels() {
    static const std::vector<std::string> labels{"core_attn", "mlp", "moe", "shared_experts", "moe_act", "layernorm"};
    return labels;
}

RecomputeSpec parse_recompute(const std::string& text) {
    std::string s;
    for (char c : text) s += (c == ',' || c == '[' || c == ']') ? ' ' : c;
    std::istringstream in(s);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    auto bad = [&](const std::string& why) {
        return std::invalid_argument(fmt::format("\"{}\": {} (write none, \"selective [a, b]\", \"full uniform 1\" or "
                                                 "\"full block 2\")", text, why));
    };
    if (words.empty()) throw bad("empty recompute option");
    if (words[0] == "none" && words.size() == 1) return RecomputeSpec::none();
    if (words[0] == "selective") {
        std::vector<std::string> labels(words.begin() + 1, words.end());
        for (auto& l : labels)
            for (char c : l)
                if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) throw bad("\"" + l + "\" is not a label");
        return RecomputeSpec::selective(labels);
    }
    if (words[0] == "full") {
        if (words.size() != 3 || (words[1] != "uniform" && words[1] != "block")) throw bad("full needs a method and a layer count");
        int k = 0;
        try {
            k = std::stoi(words[2]);
        } catch (...) {
            throw bad("\"" + words[2] + "\" is not a layer count");
        }
        if (k < 1) throw bad("the layer count must be at least 1");
        return RecomputeSpec::full(words[1] == "uniform", k);
    }
    throw bad("unknown granularity \"" + words[0] + "\"");
}

}  // namespace mbl::gpu
