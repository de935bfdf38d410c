#pragma once
// The recompute vocabulary shared by the rules, the memory estimator and the GPU check: how a run recomputes
// activations (nothing, selective recompute_modules labels, or full recompute of layer chunks). What each Megatron
// Core revision accepts as labels, what an unset recompute_modules becomes and which labels' checkpoints discard their
// output is data, read from schemas/mcore/*.json into Revision (core/schema.hpp). Plain C++17 without project types:
// the GPU check's CUDA sources include it.
#include <string>
#include <vector>

namespace mbl {

struct Recompute {
    enum class Granularity { None, Selective, Full };
    enum class Method { Uniform, Block };
    Granularity granularity = Granularity::None;
    std::vector<std::string> modules;  // selective labels
    Method method = Method::Uniform;
    int num_layers = 1;  // full: chunk size (uniform) or count (block), per (virtual) stage
    bool distribute_saved_activations = false;

    static Recompute none() { return {}; }
    static Recompute selective(std::vector<std::string> labels);
    static Recompute full(Method method, int num_layers);
    bool has(const std::string& label) const;  // selective, with `label` among the modules
    std::string describe() const;              // "none", "selective [core_attn, mlp]", "full uniform 1"
};

// Parses what describe() prints (also "selective []", "full block 2"); throws std::invalid_argument.
Recompute parse_recompute(const std::string& text);

}  // namespace mbl
