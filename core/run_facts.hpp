#pragma once
// The run's facts that live outside `model:` (train, optimizer, ddp, tokenizer, peft, the job's GPU count), read once
// from the config tree when the effective model is built. The memory estimate reads them from here and nowhere
// else, so `estimate`, the RC2xx rules and `gpu-check` see the same run. Each keeps its provenance; a null Value
// means the config does not say.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/value.hpp"

namespace mbl {

struct OptimizerFacts {
    Value optimizer;                      // optimizer.optimizer: "adam", "sgd", ...
    Value use_distributed_optimizer;      // optimizer.use_distributed_optimizer, else ddp.use_distributed_optimizer
    Value use_precision_aware_optimizer;  // optimizer.use_precision_aware_optimizer
    Value main_params_dtype, exp_avg_dtype, exp_avg_sq_dtype;
    // The optimizer's fp8_recipe as Bridge sets it: mixed_precision's (Bridge copies it onto the optimizer whether or
    // not fp8 is on; MixedPrecisionConfig's default is "tensorwise"), else optimizer.fp8_recipe.
    Value fp8_recipe;
    Value cpu_offload;             // optimizer.optimizer_cpu_offload
    Value store_param_remainders;  // optimizer.store_param_remainders
};

struct DdpFacts {
    Value grad_reduce_in_fp32;  // ddp.grad_reduce_in_fp32
    Value num_distributed_optimizer_instances;
    Value use_megatron_fsdp;
    Value data_parallel_sharding_strategy;
};

struct TokenizerFacts {
    Value vocab_size;       // tokenizer.vocab_size
    Value tokenizer_model;  // tokenizer.tokenizer_model (a Hugging Face id the model catalog may know)
};

// Parameter-efficient fine-tuning (Bridge's `peft` section: LoRA or DoRA from megatron.bridge.peft).
struct PeftFacts {
    enum class Scheme { None, Lora, Dora, Other };
    Scheme scheme = Scheme::None;
    std::string target;    // the class the config names ("megatron.bridge.peft.lora.LoRA"), for messages
    Value dim;             // the adapters' rank (LoRA's default 32)
    Value target_modules;  // linear_qkv, linear_proj, linear_fc1, linear_fc2 (the default: all four)
    Value dropout;         // LoRA dropout on the adapter input
    Value section;         // the whole `peft` value, for locating
    bool active() const { return scheme != Scheme::None; }
};

struct RunFacts {
    Value micro_batch_size;   // train.micro_batch_size
    Value global_batch_size;  // train.global_batch_size
    Value seq_length;         // model.seq_length when written, else dataset.seq_length, else the model default
    OptimizerFacts optimizer;
    DdpFacts ddp;
    TokenizerFacts tokenizer;
    PeftFacts peft;
    // The job's GPU count as its launch states it: Bridge's benchmark recipe names carry it
    // (`..._16gpu_h100_...`, schemas/launch.json). Null when nothing states it.
    Value gpus;
};

// `model_seq_length` is the effective model's seq_length (its provenance says whether the config wrote it);
// `recipe` is the recipe function's name ("" for YAML configs), `recipe_at` where it is defined.
RunFacts read_run_facts(const Value& root, const Value& model_seq_length, std::string_view recipe,
                        const SourceRange& recipe_at);

// The GPU count a recipe name states under Bridge's benchmark naming (scripts/training/recipe_metadata.py), if any.
std::optional<int> gpus_in_recipe_name(std::string_view recipe);

}  // namespace mbl
