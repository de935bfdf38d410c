#pragma once
// From a config to what the GPU check runs: the harness's layer stack (the first pipeline stage's first N layers,
// one tensor-parallel rank's shapes), the recompute options to compare, and the predictions for exactly that stack.
// The shapes come from the memory estimate's own translation (memory/job.hpp), so the check builds what the estimate
// models. Plain C++: built and tested without CUDA.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/effective_model.hpp"
#include "core/value.hpp"
#include "gpu_check/harness.hpp"

namespace mbl::gpu {

struct PlanOptions {
    int layers = 4;  // --layers: how many of the first stage's layers to build (per model chunk with --stage)
    std::optional<std::int64_t> micro_batch;  // --micro-batch (default: train.micro_batch_size, else 1)
    std::optional<std::int64_t> seq_length;   // --seq-length (default: model.seq_length / dataset.seq_length)
    std::string attention = "auto";           // auto | fused | unfused
    std::vector<std::string> candidates;      // --recompute OPTION...; empty: the config's own setting
    // --stage R: measure pipeline stage R as the schedule runs it (its model chunks, the schedule's micro-batches in
    // flight, backwards in order); the default with pipeline parallelism is the first stage. -1: never.
    std::optional<int> stage;
    std::optional<std::int64_t>
        micro_batches;  // --micro-batches: per step in the schedule (default: 2 x PP, at most the job's)
};

// What every reference shares: how many of the first pipeline stage's layers to build, the sequence and micro-batch
// of one rank, and the runs to compare (the candidates, and the matched control: `selective []` when every candidate
// is selective, else `none`; Megatron Core measures the two alike).
struct RunChoice {
    std::string error;  // non-empty: nothing to run (exit 2)
    int layers = 0;
    std::int64_t seq_length = 0, micro_batch = 1;
    Recompute control;
    std::vector<Recompute> candidates;
    std::vector<std::string> notes;
};
// `supported` says which selective labels the reference applies; the others are dropped with a note.
RunChoice choose_runs(const EffectiveModel& model, const PlanOptions& options,
                      const std::function<bool(const std::string&)>& supported);

struct Plan {
    std::string error;  // non-empty: the stack cannot be built from this config (exit 2)
    StackConfig stack;
    std::string
        summary;  // "4 layers of the first pipeline stage (h=4096, 32 heads, 8 query groups, SwiGLU 14336, ...)"
    Recompute control;
    std::vector<Recompute> candidates;
    std::vector<std::string> notes;  // what the harness does not emulate, labels dropped, clamps
};

Plan make_plan(const EffectiveModel& model, const PlanOptions& options);

// One tensor-parallel rank's shapes with every parallel size 1 (heads, query groups and FFN widths over TP, this
// rank's experts over EP), as both references build them; "" or why not.
std::string one_rank(memory::LayerShape& shape, std::vector<std::string>& notes);

// Predicted figures for one harness run (same baseline as Measurement).
struct Prediction {
    double retained_bytes = 0;
    double backward_peak_bytes = 0;
};
// The memory estimator, asked for exactly the harness's stack; nullopt when the build has no estimator.
std::optional<Prediction> predict(const StackConfig& stack, const Recompute& recompute);
// Parameter, gradient and input bytes the harness allocates before its base (for the fit check).
double fixed_bytes(const StackConfig& stack);

}  // namespace mbl::gpu
