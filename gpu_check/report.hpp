#pragma once
// The GPU check's flow and output, independent of CUDA: runs are made through injected functions, so the
// comparison, the pass/fail verdict and both output formats are tested on machines without a GPU.
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gpu_check/harness.hpp"
#include "gpu_check/plan.hpp"

namespace mbl::gpu {

struct RunRecord {
    std::string role;  // "control" or "candidate"
    Recompute recompute;
    Measurement measured;
    std::optional<Prediction> predicted;
    // |measured - predicted| / measured of the totals (set by compare_runs when a prediction exists).
    double retained_error = NAN, peak_error = NAN;
};

struct Saving {
    double measured = 0, predicted = 0;
    double error = 0;  // |measured - predicted| / max(|predicted|, 1 % of the control's predicted figure)
};

struct Comparison {
    std::string candidate, control;
    bool predicted = false;  // false: no estimator in this build (never a pass)
    Saving retained;         // the verdict: retained-after-forward saving
    Saving peak;             // backward-peak saving, reported
    double replay_cost = 0;  // candidate step time / control step time - 1
    bool pass = false;
};

struct CheckResult {
    std::string target, summary;
    DeviceInfo device;
    // What measured: {"kind": "harness"} (the CUDA harness; `stack` says what it built) or {"kind": "mcore", the
    // Megatron Core, PyTorch and Transformer Engine versions, the spec, the TransformerConfig arguments, ...}.
    nlohmann::json reference = {{"kind", "harness"}};
    StackConfig stack;  // the harness's stack
    int layers = 0;     // layers built (either reference)
    std::int64_t seq_length = 0, micro_batch = 0;
    std::vector<std::string> notes;
    double tolerance = 0.10;
    int steps = 0, warmup = 0;
    std::vector<RunRecord> runs;  // control first
    std::vector<Comparison> comparisons;
    // A pipeline stage as the schedule runs it: each run's totals must agree too (retained within
    // `retained_tolerance` of the measured figure, the peak within `peak_tolerance`).
    bool totals_checked = false;
    double retained_tolerance = 0.03, peak_tolerance = 0.05;
    bool pass = false;
};

Saving saving(double control_measured, double candidate_measured, double control_predicted, double candidate_predicted);
Comparison compare(const RunRecord& control, const RunRecord& candidate, double tolerance);

// Why the stack cannot run on this device (predicted bytes above the free memory), or "".
std::string fit_problem(const Plan& plan, const DeviceInfo& device,
                        const std::function<std::optional<Prediction>(const StackConfig&, const Recompute&)>& predict);

struct CheckHooks {
    std::function<Measurement(const StackConfig&, const Recompute&, const RunOptions&)> measure;
    std::function<std::optional<Prediction>(const StackConfig&, const Recompute&)> predict;
    std::function<void(const RunRecord&, int done, int total)> progress;  // during a run (done < total) and after it
};
// Control and candidates compared, the verdict set (runs filled in, control first).
void compare_runs(CheckResult& result);
CheckResult run_check(const Plan& plan, const std::string& target, const DeviceInfo& device, double tolerance,
                      const RunOptions& options, const CheckHooks& hooks);

std::string format_bytes(double bytes);  // "31.2 GiB", "412.0 MiB"
std::string progress_bar(int done, int total, int width = 20);
// "[####...] control (selective [])  retained 4.6 GiB (predicted 4.6 GiB)  peak ...": measured and predicted totals.
std::string run_line(const RunRecord& run, int done, int total);
std::string comparison_line(const Comparison& c, double tolerance);
void write_text(std::ostream& out,
                const CheckResult& result);  // comparison lines and notes (run lines are printed live)
void write_json(std::ostream& out, const CheckResult& result);

}  // namespace mbl::gpu
