#pragma once
// Per-rank memory of a training run and of every recompute choice, in four steps: the job's shape (memory/job.hpp,
// the one translation from the config), the candidate recompute options, each option evaluated per pipeline rank
// (memory/rank.hpp), and the fit against the budget. The step-time cost of each option comes from
// memory/step_time.hpp.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/effective_model.hpp"
#include "memory/job.hpp"
#include "memory/layer_model.hpp"
#include "memory/step_time.hpp"

namespace mbl::memory {

struct EstimateInputs {
    std::optional<double> gpu_memory_bytes;  // budget per GPU
    std::optional<int> data_parallel_size;   // --data-parallel-size
    std::optional<int> gpus;                 // --gpus: the job's GPU count
    // Kept free of the activations at the peak: the CUDA context, a NCCL communicator and allocator fragmentation (the
    // default is measured: schemas/gpus.json `reserve`); --reserve changes it.
    std::optional<double> reserve_bytes;
    std::string gpu;  // GPU of the step-time model (schemas/gpus.json); "" = the one matching the budget, else H100
    // The job's measured step time as it is configured (from its log), when known: the replayed work is then taken at
    // the job's own pace and the checkpoints' host time is put in proportion to it.
    std::optional<double> measured_step_seconds;
};

struct RankEstimate {
    int stage = 0;      // pipeline rank
    std::string role;   // "only", "first", "middle", "last"
    int layers = 0;     // layers on this rank
    int in_flight = 0;  // micro-batches (model chunks with VPP) whose activations are alive at the peak
    double params = 0, grads = 0, optimizer = 0;
    double optimizer_lazy = 0;  // part of `optimizer` the first optimizer step creates (Adam moments)
    // Retained by the in-flight micro-batches, as a measurement above the state before the step sees it: their
    // forwards free the leftover below, so it counts once, in `leftover` (stage_activations in memory/rank.hpp).
    double activations = 0;
    // Kept from the previous iteration's backward until each chunk's first forward (memory/README.md, "Left over from
    // the previous iteration"): the MoE dispatchers' router probabilities with their autograd leaves, and each model
    // chunk's last received input with its gradient (`leftover_received`, part of `leftover`).
    double leftover = 0;
    double leftover_received = 0;
    double transient = 0;         // on top at the peak: a layer's backward working set, or the logits and loss
    double unit_activations = 0;  // one in-flight unit (a micro-batch through the stage, or a model chunk): retained
                                  // activations with its input
    double unit_transient = 0;    // one unit's backward working set above its retained activations
    double optimizer_step = 0;    // on top of the states while the optimizer steps (fp32 copies of the gradients)
    double deferred_output_wgrad = 0;     // in its peak: the output layer's deferred inputs and gradients
    double deferred_per_micro_batch = 0;  // what each deferred micro-batch keeps until the flush
    // Local CUDA graphs: their private pool, which holds the layers' activations and backward working set and stays
    // reserved through the optimizer step (Job::local_cuda_graphs).
    double graph_pool = 0;
    double states() const { return params + grads + optimizer; }
    double activation_peak() const { return states() + leftover + activations + transient; }
    // The activations are gone by the optimizer step (the next step's zero_grad frees what it made); the leftover is
    // not.
    double step_peak() const { return states() + leftover + optimizer_step + graph_pool; }
    bool peaks_at_optimizer_step() const { return step_peak() > activation_peak(); }
    double peak() const { return std::max(activation_peak(), step_peak()); }
    // Forward and backward of the first iteration run before the optimizer has created its moments; its step has them.
    double first_iteration_peak() const { return std::max(activation_peak() - optimizer_lazy, step_peak()); }
};

struct OptionEstimate {
    Recompute recompute;
    std::string name;  // "none", "selective [moe_act]", "full uniform 1"
    int hottest_stage = 0;
    double activations = 0;  // leftover + activations + transient on the hottest rank: its peak above the states
    double peak = 0;         // peak of the hottest rank
    double first_iteration_peak = 0;
    double saving = 0;        // activation bytes saved against no recompute (same rank)
    double replay_share = 0;  // extra forward FLOPs as a share of the step's FLOPs
    // Predicted step-time overhead. With a measured step time: (replay at the job's pace + host) over the step without
    // recompute derived from it (Estimate::baseline_step_seconds). Without: the replayed ops' roofline time over the
    // step's roofline (the host time is not in it: see host_seconds).
    double step_overhead = 0;
    double replay_seconds = 0;   // replayed work per step on one rank (at the roofline, or at the measured pace)
    int checkpoints = 0;         // checkpoints run per step on one rank
    double host_seconds = 0;     // their own host time (checkpoint_host(): per checkpoint by kind, per op replayed)
    double added_seconds = 0;    // replay_seconds + host_seconds: what the options are ordered by
    bool current = false;        // what the config sets
    std::optional<bool> fits;    // only with a budget: peak + reserve within it
    bool narrowest_fit = false;  // the cheapest option that fits
};

// The estimate is the job (its shape, schedule, precision, assumptions) with its ranks and options.
struct Estimate : Job {
    std::string gpu;                              // GPU of the step-time model
    double roofline_step_seconds = 0;             // one rank's step at the roofline
    std::optional<double> measured_step_seconds;  // given by the user
    std::optional<double> baseline_step_seconds;  // from it: the step without recompute, what options are compared to
    std::vector<RankEstimate> ranks;              // hottest first
    std::vector<OptionEstimate> options;          // none first, then by predicted added time
    std::optional<double> budget;
    // Kept free beside a peak (CUDA context, NCCL buffers, fragmentation): "fits" counts it.
    ReserveModel reserve_model;
    double reserve = 0;  // at the configured option's peak
    const OptionEstimate* option(const Recompute& rc) const;
    const OptionEstimate* narrowest_fit() const;
    const OptionEstimate* current_option() const;
};

Estimate estimate(const EffectiveModel& model, const EstimateInputs& inputs);

// "80GiB", "80G", "81920MiB", "85899345920" (bytes); GB/MB are decimal. nullopt for anything else.
std::optional<double> parse_byte_size(const std::string& text);
std::string format_gib(double bytes);  // "71.2 GiB"
// "457.18" (milliseconds), "457.18ms", "0.457s" as seconds; nullopt for anything else.
std::optional<double> parse_duration(const std::string& text);
std::string format_duration(double seconds);  // "457.2 ms", "19.5 s"

}  // namespace mbl::memory
