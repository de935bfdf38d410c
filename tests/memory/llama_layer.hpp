#pragma once
// The Llama-like layer several memory tests compute by hand: s 4096, h 4096, 32 heads of 128 in 8 query groups,
// SwiGLU 14336, micro-batch 1, one rank (the sweep's "llama" block, gpu_check/reference/fake_group_sweep.py).
#include "memory/estimate.hpp"

namespace mbl::test {

inline memory::LayerShape llama_layer() {
    memory::LayerShape s;
    s.seq_length = 4096;
    s.hidden = 4096;
    s.heads = 32;
    s.query_groups = 8;
    s.head_dim = 128;
    s.ffn_hidden = 14336;
    s.gated = true;
    return s;
}

}  // namespace mbl::test
