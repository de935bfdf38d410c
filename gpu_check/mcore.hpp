#pragma once
// `gpu-check --reference mcore`: the config's first layers built by the installed Megatron Core, measured by a Python
// helper (gpu_check/reference/mcore_reference.py) started as a subprocess, and compared with the memory estimator
// asked for exactly the stack the helper built. Plain C++ (no CUDA): the helper needs PyTorch, Megatron Core and a
// GPU on the machine; this side only writes its request and reads its JSON lines.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/effective_model.hpp"
#include "gpu_check/plan.hpp"
#include "memory/job.hpp"
#include "memory/layer_model.hpp"

namespace mbl::gpu {

// One pipeline stage as the schedule runs it (--stage): its model chunks and the schedule's micro-batches.
struct StageRun {
    int stage = 0;
    memory::Schedule schedule;  // as run: the micro-batches of one step capped for one GPU
    int in_flight = 1;          // model chunks whose activations are alive at the first backward
};

// What the helper is asked to build, and the estimator's view of the same layers.
struct McorePlan {
    std::string error;  // non-empty: nothing to build (exit 2)
    nlohmann::json
        transformer_config;        // TransformerConfig arguments with the job's parallel sizes, no recompute fields
    std::string transformer_impl;  // what the config selects: transformer_engine or local
    memory::LayerShape shape;      // the config's shapes, parallel sizes included, as the estimator sees them
    nlohmann::json parallel;       // the rank run: tp, sp, cp, ep, etp, pp, vpp, stage
    std::vector<memory::LayerKind> kinds;  // the layers built (per model chunk with a stage)
    memory::Job job;                       // the estimate's translation of the config
    std::optional<StageRun> stage;
    RunChoice runs;
    std::string summary;
    std::vector<std::string> notes;
};
McorePlan make_mcore_plan(const EffectiveModel& model, const PlanOptions& options);

// The helper's input (see the helper's docstring for the fields).
nlohmann::json mcore_request(const McorePlan& plan, int warmup, int steps, std::uint64_t seed);

// The helper's `environment` event: what it built, with which versions.
struct McoreEnvironment {
    std::string python, torch, cuda, device, megatron_core, megatron_core_path, spec;
    std::optional<std::string> transformer_engine;
    double total_bytes = 0, free_bytes = 0;
    bool softmax_kernel = false;       // Megatron's fused scale-mask-softmax kernel ran
    bool permute_fusion = false;       // moe_permute_fusion stayed on (Transformer Engine)
    std::string experts_module;        // SequentialMLP, TEGroupedMLP, ... ("" without MoE layers)
    std::vector<std::string> changes;  // "masked_softmax_fusion True -> False: why"
    std::vector<std::string> dropped;  // "field: why"
    nlohmann::json raw;                // the event as received
};

// Why the helper could not run: `kind` is missing_python, missing_torch, missing_megatron, no_gpu (the machine lacks
// something: `auto` falls back to the harness), cannot_build, out_of_memory, bad_request, crash or no_result.
struct HelperFailure {
    std::string kind;
    std::string message;
    bool environment_missing() const;
};

struct McoreOutcome {
    std::optional<HelperFailure> failure;
    std::optional<McoreEnvironment> environment;
    std::vector<Measurement> runs;  // in request order
    std::string log_path;           // the helper's standard error ("" once its temporary folder is removed)
};

struct McoreCallbacks {
    std::function<void(const McoreEnvironment&)> environment;
    std::function<void(int index, int done, int total)> step;
    std::function<void(int index, const Measurement&)> run;
};

// Reads the helper's output lines into `outcome` (exposed for tests: the JSON contract). Returns false once the
// output ended (a `done` or `error` event).
bool read_helper_line(const std::string& line, McoreOutcome& outcome, const McoreCallbacks& callbacks);

// Runs `python helper DIR/request.json`, streaming events to the callbacks. DIR (`work_dir`, else a temporary folder,
// removed unless a failure message names its log) also keeps the helper's output (helper.jsonl) and its standard
// error (helper.log).
McoreOutcome run_mcore_helper(const std::string& python, const std::string& helper, const nlohmann::json& request,
                              const std::string& work_dir, const McoreCallbacks& callbacks);
std::string default_mcore_helper();

// The estimator's shape of what the helper built (its spec and the fusions it kept).
memory::LayerShape built_shape(const McorePlan& plan, const McoreEnvironment& environment);

// The estimator asked for a stack of layers (the function the check compares with; tests pass doubles).
using LayerPredictor = std::function<std::optional<Prediction>(
    const memory::LayerShape&, const std::vector<memory::LayerKind>&, const Recompute&)>;
// `final_norm`: the stack ends in the final norm (a TransformerBlock with post_process, as both references build).
std::optional<Prediction> predict_layers(const memory::LayerShape& shape, const std::vector<memory::LayerKind>& kinds,
                                         const Recompute& recompute, bool final_norm = true);
// A stage as the schedule runs it: the in-flight model chunks' activations when the first backward starts (retained)
// and the peak over the schedule, above the parameters and gradients, as the estimate's rank model predicts them.
std::optional<Prediction> predict_stage(const McorePlan& plan, const memory::LayerShape& shape, const Recompute& rc);

// "Megatron Core 0.20.0 (local spec; Transformer Engine not installed), PyTorch 2.11.0, NVIDIA H200"
std::string describe_environment(const McoreEnvironment& environment);
// The `reference` object of the JSON output.
nlohmann::json reference_json(const McorePlan& plan, const McoreEnvironment& environment);

}  // namespace mbl::gpu
