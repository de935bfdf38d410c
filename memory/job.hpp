#pragma once
// The one translation from a config to what the estimate models: the effective model and the run's facts
// (core/run_facts.hpp) become the layer shape, the layers and their pipeline stages, the pipeline schedule, the
// precision of parameters, gradients and optimizer states, the vocabulary, PEFT adapters and the data-parallel size,
// each assumption stated. `estimate`, the RC2xx rules and `gpu-check` all start here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/effective_model.hpp"
#include "memory/layer_model.hpp"

namespace mbl::memory {

// Why a value is what it is, for the output ("data-parallel size 1 assumed: pass --data-parallel-size").
struct Assumption {
    std::string text;
};

// What the command line adds to the config.
struct JobInputs {
    std::optional<int> data_parallel_size;  // --data-parallel-size
    std::optional<int> gpus;                // --gpus: the job's GPU count (data parallel = GPUs / (TP x PP x CP))
};

// Bytes per parameter and how the states are sharded (Megatron Core optimizer_config.py, distrib_optimizer.py;
// Transformer Engine FusedAdam).
struct Precision {
    double param_bytes = 2;
    double grad_bytes = 4;     // gradient buffer (main_grad) per parameter
    double master_bytes = 4;   // optimizer's full-precision copy per parameter (0 when the parameters are fp32)
    double moment_bytes = 8;   // Adam's two moments per parameter
    bool master_lazy = false;  // the master copy is created by the first optimizer step (TE FusedAdam)
    // Per trained parameter: the fp32 copy of its gradient that Megatron Core's optimizer makes at its step, when it
    // reads gradients in fp32 from a 16-bit buffer (distrib_optimizer.py line 2782, optimizer.py line 1097 at 2a75ac12).
    double step_grad_bytes = 0;
    bool distributed_optimizer = true;
    int optimizer_instances = 1;                     // ddp.num_distributed_optimizer_instances
    bool shard_grads = false, shard_params = false;  // Megatron FSDP
    double fp8_weight_bytes = 0;  // fp8 training: quantized weight copies Transformer Engine caches per GEMM weight
    bool fp8_primary = false;     // fp8_param: the GEMM weights themselves are stored in one byte
};

// Megatron Core's pipeline schedules (pipeline_parallel/schedules.py, get_pp_rank_microbatches): how many forward
// passes a stage holds before its first backward.
struct Schedule {
    int pp = 1, vpp = 1;
    int group = 1;                    // microbatch_group_size_per_vp_stage (Megatron Core's default: pp)
    bool extra_warmup = false;        // overlap_moe_expert_parallel_comm: one more warm-up forward (interleaved only)
    bool deallocate_outputs = false;  // deallocate_pipeline_outputs: a sent output's data is freed
    // defer_embedding_wgrad_compute: the last stage keeps each micro-batch's output-layer input and logits gradient
    // until the pipeline flush, the first wgrad_deferral_limit of them (0: all).
    bool defer_output_wgrad = false;
    std::int64_t wgrad_deferral_limit = 0;
    std::optional<std::int64_t> micro_batches;  // per step and data-parallel replica (train.global_batch_size)
    bool interleaved() const { return vpp > 1; }
    // Model chunks (micro-batches with 1F1B) whose activations are alive when stage `stage` runs its first backward:
    // the warm-up forwards and the first steady-state one, at most every chunk of the step.
    int in_flight(int stage) const;
    // Forwards before the first steady-state iteration (one forward, one backward) on stage `stage`.
    std::int64_t warmup(int stage) const;
};

// LoRA / DoRA adapters (Bridge megatron.bridge.peft): the base model is frozen.
struct Peft {
    bool active = false;
    bool dora = false;
    std::int64_t rank = 32;                                // LoRA.dim's default
    bool qkv = true, proj = true, fc1 = true, fc2 = true;  // LoRA.target_modules' default: all four
    double dropout = 0;
};

struct Job {
    bool ok = false;
    bool complete = true;  // false when a field it reads is unknown (a default stood in; see assumptions)
    std::string why_not;   // when !ok: which fact is missing
    SourceRange why_at;    // when !ok: where the config writes the missing fact (not valid: nowhere)
    LayerShape shape;
    std::vector<LayerKind> kinds;  // every layer of the model, in order
    std::vector<int> per_stage;    // layers per pipeline stage
    std::int64_t seq_length = 0, micro_batch = 0;
    int data_parallel = 1;
    std::string data_parallel_source;  // how the data-parallel size was found (for the run line)
    Schedule schedule;
    Precision precision;
    Peft peft;
    std::int64_t vocab = 0;  // padded; 0 when unknown
    bool tied_output = false;
    // final_logit_softcapping (a Megatron Bridge provider field, Gemma 2 and Gemma 4): the output layer's logits pass
    // through `scale * tanh(logits / scale)`, and tanh keeps its output for backward (memory/README.md, "The loss").
    bool softcapped_logits = false;
    Recompute current;
    // Megatron Core's own CUDA graphs (cuda_graph_impl local) over whole layers: the layers' activations live in the
    // graphs' private pool, reserved through the optimizer step, and checkpoints inside a graphed layer do not
    // recompute (memory/README.md, "CUDA graphs").
    bool local_cuda_graphs = false;
    std::vector<Assumption> assumptions;
};

Job make_job(const EffectiveModel& model, const JobInputs& inputs);

// The recompute setting the config asks for (after Megatron Core's rewrites); nullopt when unknown.
std::optional<Recompute> recompute_of(const EffectiveModel& model);

// Bytes per element of a dtype as configs write it ("torch.bfloat16", "bf16", "fp32", {_target_: torch.float32}).
std::optional<double> dtype_bytes(const Value& v);

}  // namespace mbl::memory
