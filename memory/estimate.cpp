// The estimate in four steps: the job's shape (make_job), the candidate options, each option evaluated per rank,
// and the fit against the budget.
#include "memory/estimate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/effective_model.hpp"
#include "core/post_init.hpp"
#include "memory/job_parts.hpp"
#include "memory/labels/registry.hpp"
#include "memory/option_time.hpp"
#include "memory/rank.hpp"

namespace mbl::memory {
namespace {

bool is_none(const Recompute& rc) { return rc.granularity == Recompute::Granularity::None; }
// An empty selective list is the same run as no recompute (Megatron Core measures them alike).
bool recomputes_nothing(const Recompute& rc) {
    return is_none(rc) || (rc.granularity == Recompute::Granularity::Selective && rc.modules.empty());
}

// The GPU of the step-time model: --gpu, else the one whose memory matches the budget, else an H100.
const GpuSpec* choose_gpu(const EstimateInputs& in, Estimate& est) {
    if (!in.gpu.empty()) return find_gpu(in.gpu);
    if (est.budget)
        if (const GpuSpec* g = gpu_with_memory(*est.budget)) return g;
    est.assumptions.push_back({"step time modelled on an H100 (pass --gpu to choose another)"});
    return find_gpu("H100");
}

// Candidate options: none, each label that acts on this model, all acting labels together (but nested ones), the
// configured option, full uniform 1. `crashing_layernorm`: layernorm recompute crashes these layers (RC107), so it is not offered.
std::vector<Recompute> candidates(const Estimate& est, bool crashing_layernorm) {
    std::vector<Recompute> out{Recompute::none()};
    std::vector<LayerKind> present;
    for (auto k : est.kinds)
        if (std::find(present.begin(), present.end(), k) == present.end()) present.push_back(k);
    std::vector<std::string> acting;
    for (const std::string& label : modeled_labels()) {
        if (label == "layernorm" && crashing_layernorm) continue;
        bool acts = false;
        for (auto k : present) {
            const auto a = layer_activations(est.shape, k, {label});
            acts |=
                a.ignored_labels.empty() && a.internal_bytes() < layer_activations(est.shape, k, {}).internal_bytes();
        }
        if (!acts) continue;
        acting.push_back(label);
        out.push_back(Recompute::selective({label}));
    }
    // All acting labels together, but none inside another's checkpoint (moe_act and shared_experts inside moe).
    std::vector<std::string> outer;
    for (const auto& label : acting)
        if (const auto* model = labels::find(label); !model || !has(acting, model->nested_in)) outer.push_back(label);
    if (outer.size() > 1) out.push_back(Recompute::selective(outer));
    if (!recomputes_nothing(est.current)) out.push_back(est.current);
    out.push_back(Recompute::full(Recompute::Method::Uniform, 1));
    return out;
}

// The model as it would be with `option`: the recompute fields it sets, the ones it does not use unset.
EffectiveModel with_option(const EffectiveModel& m, const Recompute& option) {
    EffectiveModel out = m;
    const bool full = option.granularity == Recompute::Granularity::Full;
    const bool selective = option.granularity == Recompute::Granularity::Selective;
    out.set(field::recompute_granularity, full        ? Value::string("full")
                                          : selective ? Value::string("selective")
                                                      : Value::null());
    out.set(field::recompute_method,
            full ? Value::string(option.method == Recompute::Method::Block ? "block" : "uniform") : Value::null());
    out.set(field::recompute_num_layers, full ? Value::integer(option.num_layers) : Value::null());
    if (selective) {
        std::vector<Value> labels;
        for (const auto& label : option.modules) labels.push_back(Value::string(label));
        out.set(field::recompute_modules, Value::list(std::move(labels)));
    }
    return out;
}

// Where Megatron Core's own __post_init__ (compiled from its source) certainly rejects the job with `option` and not
// as configured: the message and line of its first such raise, or "".
std::string rejection_of(const EffectiveModel& m, const Recompute& option) {
    return rejection_after(m, [&](EffectiveModel& written) { written = with_option(written, option); });
}

// An option's time: its replay as a share of the step (the roofline's ratio; its FLOPs' share beside it) and its
// checkpoints' host seconds, per step on one rank.
struct TimeParts {
    double replay_ratio = 0, flop_share = 0, host_seconds = 0, checkpoints = 0;
};

TimeParts time_parts(const Estimate& est, const StepModel& time, const Recompute& option) {
    TimeParts t;
    const std::vector<Op> replayed = replayed_model_ops(est, option);
    t.replay_ratio = time.step_seconds > 0 ? ops_seconds(replayed, *time.gpu, time.fp8) / time.step_seconds : 0;
    double flops = 0;
    for (const auto& op : replayed) flops += op.flops;
    t.flop_share = time.step_flops > 0 ? flops / time.step_flops : 0;
    const double micro_batches = static_cast<double>(est.schedule.micro_batches.value_or(1));
    const CheckpointCount n = model_checkpoints(est, option);
    const double per_step = micro_batches / est.schedule.pp;
    t.checkpoints = n.total() * per_step;
    t.host_seconds = n.host_seconds() * per_step;
    return t;
}

// With a measured step time (the job as configured, its own recompute included), the step without recompute B:
// measured = B (1 + replay ratio) + host. Said in the assumptions either way.
void read_step_time(Estimate& est, const StepModel& time) {
    const CheckpointHost& h = checkpoint_host();
    const std::string host = fmt::format(
        "{:.2f} ms per checkpoint ({:.2f} ms output-discarding) and {:.3f} ms per op it "
        "replays ({:.2f} ms more for a norm module)",
        h.reentrant_seconds * 1e3, h.discarding_seconds * 1e3, h.per_op_seconds * 1e3, h.per_norm_module_seconds * 1e3);
    if (!est.measured_step_seconds) {
        est.assumptions.push_back({fmt::format(
            "step time: the replayed work's share of a roofline step ({}); the checkpoints' host time is beside it, "
            "{} (pass --step-time with the job's measured step time to add the two up)",
            format_duration(est.roofline_step_seconds), host)});
        return;
    }
    const double measured = *est.measured_step_seconds;
    const TimeParts current = time_parts(est, time, est.current);
    est.baseline_step_seconds = (measured - current.host_seconds) / (1 + current.replay_ratio);
    std::string whence = fmt::format("the measured {} step", format_duration(measured));
    if (est.baseline_step_seconds < 0.5 * measured) {
        // More than half the step would be the current option's overhead: keep the measurement as it is.
        est.baseline_step_seconds = measured;
        whence += fmt::format(", taken as it is (the configured recompute's predicted {} would be most of it)",
                              format_duration(current.replay_ratio * measured + current.host_seconds));
    } else if (est.baseline_step_seconds < measured) {
        whence = fmt::format("the step without recompute, {} (the measured {} less the configured {}'s predicted {})",
                             format_duration(*est.baseline_step_seconds), format_duration(measured),
                             est.current.describe(), format_duration(measured - *est.baseline_step_seconds));
    }
    est.assumptions.push_back({fmt::format(
        "step time: replayed work at the pace of {}, plus the checkpoints' host time, {} (on the critical path when "
        "the host paces the step); the roofline's step is {}",
        whence, host, format_duration(est.roofline_step_seconds))});
}

// One option evaluated: the hottest rank's figures, its saving against `none_activations`, its time.
OptionEstimate evaluate(const Estimate& est, const StepModel& time, const Recompute& option, double none_activations) {
    const std::vector<RankEstimate> ranks = evaluate_ranks(est, option);
    OptionEstimate o;
    o.recompute = option;
    o.name = option.describe();
    o.hottest_stage = ranks.front().stage;
    o.activations = ranks.front().leftover + ranks.front().activations + ranks.front().transient;
    o.peak = ranks.front().peak();
    for (const auto& r : ranks) o.first_iteration_peak = std::max(o.first_iteration_peak, r.first_iteration_peak());
    o.saving = is_none(option) ? 0 : none_activations - o.activations;
    const TimeParts t = time_parts(est, time, option);
    o.replay_share = t.flop_share;
    o.checkpoints = static_cast<int>(std::lround(t.checkpoints));
    o.host_seconds = t.host_seconds;
    const double pace = est.baseline_step_seconds.value_or(est.roofline_step_seconds);
    o.replay_seconds = t.replay_ratio * pace;
    o.step_overhead = est.baseline_step_seconds ? (o.replay_seconds + o.host_seconds) / pace : t.replay_ratio;
    o.added_seconds = o.replay_seconds + o.host_seconds;
    o.current = o.name == est.current.describe() || (recomputes_nothing(est.current) && is_none(option));
    if (est.budget) o.fits = o.peak + est.reserve_model.at(o.peak) <= *est.budget;
    return o;
}

// The fit: with a budget, when no recompute does not fit and checkpointing every layer is more than needed, the
// fewest checkpointed layers per (virtual) stage that fit (full block k) and that Megatron Core accepts; then the
// options by added time, and the cheapest that fits marked.
void fit(Estimate& est, const EffectiveModel& m, const StepModel& time) {
    const int most = *std::max_element(est.per_stage.begin(), est.per_stage.end());
    const int unit_layers = std::max(1, most / est.schedule.vpp);
    const bool none_fits = est.budget && est.options.front().fits.value_or(false);
    for (int k = 1; est.budget && !none_fits && k < unit_layers; ++k) {
        const Recompute block = Recompute::full(Recompute::Method::Block, k);
        OptionEstimate o = evaluate(est, time, block, est.options.front().activations);
        if (!*o.fits) continue;
        // The same test as the candidates': advice (and the unsafe fix that writes it) never names a rejected job.
        if (std::string why = rejection_of(m, block); !why.empty()) {
            est.assumptions.push_back({fmt::format("{} would fit but is not offered: Megatron Core rejects it for this "
                                                   "job: {}",
                                                   block.describe(), why)});
            break;
        }
        if (!est.option(block)) est.options.push_back(std::move(o));
        break;
    }
    std::stable_sort(est.options.begin() + 1, est.options.end(),
                     [](const auto& a, const auto& b) { return a.added_seconds < b.added_seconds; });
    if (!est.budget) return;
    for (auto& o : est.options)
        if (o.fits && *o.fits) {
            o.narrowest_fit = true;
            break;
        }
}

}  // namespace

const OptionEstimate* Estimate::option(const Recompute& rc) const {
    for (const auto& o : options)
        if (o.name == rc.describe()) return &o;
    return nullptr;
}
const OptionEstimate* Estimate::narrowest_fit() const {
    for (const auto& o : options)
        if (o.narrowest_fit) return &o;
    return nullptr;
}
const OptionEstimate* Estimate::current_option() const {
    for (const auto& o : options)
        if (o.current) return &o;
    return nullptr;
}

Estimate estimate(const EffectiveModel& m, const EstimateInputs& in) {
    Estimate est;
    static_cast<Job&>(est) = make_job(m, JobInputs{in.data_parallel_size, in.gpus});
    if (!est.ok) return est;
    est.budget = in.gpu_memory_bytes;
    const GpuSpec* gpu = choose_gpu(in, est);
    if (!gpu) {
        est.ok = false;
        est.why_at = {};  // a command-line choice, not written in the config
        est.why_not = fmt::format("GPU \"{}\" is not in the table ({})", in.gpu, gpu_names());
        return est;
    }
    est.gpu = gpu->name;
    est.reserve_model = in.reserve_bytes ? ReserveModel{*in.reserve_bytes, 0} : default_reserve();
    est.ranks = evaluate_ranks(est, est.current);
    est.reserve = est.reserve_model.at(est.ranks.front().peak());
    est.assumptions.push_back(
        {in.reserve_bytes
             ? fmt::format("{} kept free beside the peak (--reserve)", format_gib(est.reserve))
             : fmt::format(
                   "{} kept free beside the peak for the CUDA context, a NCCL communicator's own memory and the "
                   "allocator's slack (measured on an H200 with PyTorch and a one-rank NCCL communicator: "
                   "gpu_check/DEVICE_RUNS.md; --reserve changes it); CUDA-graph pools are not in it, nor "
                   "the buffers of NCCL communicators with peers (9.19 MiB a rank per channel and algorithm, "
                   "channels chosen by NCCL at start-up: memory/README.md, Headroom)",
                   format_gib(est.reserve))});
    const StepModel time = step_model(est, *gpu);
    est.roofline_step_seconds =
        time.step_seconds / est.schedule.pp * static_cast<double>(est.schedule.micro_batches.value_or(1));
    est.measured_step_seconds = in.measured_step_seconds;
    read_step_time(est, time);
    const bool local = m.str(field::transformer_impl) == "local";
    const bool crashing_layernorm =
        local && m.revision && m.revision->crashes(known_crash::layernorm_recompute_local_impl);
    double none_activations = 0;
    for (const auto& option : candidates(est, crashing_layernorm)) {
        if (est.option(option)) continue;
        // An option Megatron Core refuses for this job is no option: say so instead of offering it.
        if (std::string why = rejection_of(m, option); !why.empty() && !(option.describe() == est.current.describe())) {
            est.assumptions.push_back(
                {fmt::format("{} is not offered: Megatron Core rejects it for this job: {}", option.describe(), why)});
            continue;
        }
        est.options.push_back(evaluate(est, time, option, none_activations));
        if (is_none(option)) none_activations = est.options.back().activations;
    }
    fit(est, m, time);
    return est;
}

std::optional<double> parse_byte_size(const std::string& text) {
    size_t i = 0;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    if (i == start) return std::nullopt;
    double value;
    try {
        size_t used = 0;
        value = std::stod(text.substr(start, i - start), &used);
        if (used != i - start) return std::nullopt;
    } catch (...) {
        return std::nullopt;
    }
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit;
    for (; i < text.size(); ++i) {
        if (std::isspace(static_cast<unsigned char>(text[i]))) break;
        unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
    }
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i != text.size()) return std::nullopt;
    double scale;
    if (unit.empty() || unit == "b") scale = 1;
    else if (unit == "kib" || unit == "ki") scale = 1024.0;
    else if (unit == "mib" || unit == "mi") scale = 1024.0 * 1024;
    else if (unit == "gib" || unit == "gi" || unit == "g") scale = kGiB;
    else if (unit == "tib" || unit == "ti" || unit == "t") scale = kGiB * 1024;
    else if (unit == "kb") scale = 1e3;
    else if (unit == "mb") scale = 1e6;
    else if (unit == "gb") scale = 1e9;
    else if (unit == "tb") scale = 1e12;
    else return std::nullopt;
    const double bytes = value * scale;
    if (!std::isfinite(bytes) || bytes <= 0) return std::nullopt;
    return bytes;
}

std::string format_gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / kGiB); }

std::string format_duration(double seconds) {
    return seconds >= 1 ? fmt::format("{:.1f} s", seconds) : fmt::format("{:.1f} ms", seconds * 1e3);
}

std::optional<double> parse_duration(const std::string& text) {
    size_t end = text.size();
    while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
    double scale = 1e-3;  // a bare number is milliseconds, as Megatron's log prints it
    if (end >= 2 && text.compare(end - 2, 2, "ms") == 0) {
        end -= 2;
    } else if (end >= 1 && text[end - 1] == 's') {
        end -= 1;
        scale = 1;
    }
    const std::string number = text.substr(0, end);
    try {
        size_t used = 0;
        const double value = std::stod(number, &used);
        while (used < number.size() && std::isspace(static_cast<unsigned char>(number[used]))) ++used;
        if (used != number.size() || !std::isfinite(value) || value <= 0) return std::nullopt;
        return value * scale;
    } catch (...) {
        return std::nullopt;
    }
}

}  // namespace mbl::memory
