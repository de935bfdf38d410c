#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "report/estimate_report.hpp"

namespace mbl {

using memory::format_duration;
using memory::format_gib;
using memory::kGiB;

// "52 layers: 23 Mamba, 23 MoE, 6 attention" for stacks of several kinds; "" for a plain stack of one kind.
static std::string estimate_layer_mix(const memory::Estimate& est) {
    std::vector<std::pair<memory::LayerKind, int>> counts;
    for (auto k : est.kinds) {
        auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == k; });
        if (it == counts.end()) counts.push_back({k, 1});
        else ++it->second;
    }
    if (counts.size() < 2) return "";
    std::vector<std::string> parts;
    for (const auto& [kind, n] : counts) parts.push_back(fmt::format("{} {}", n, memory::kind_name(kind)));
    return fmt::format("{} layers: {}", est.kinds.size(), fmt::join(parts, ", "));
}

std::string estimate_model_line(const memory::Estimate& est) {
    const auto& s = est.shape;
    std::string line;
    if (auto mix = estimate_layer_mix(est); !mix.empty()) line = mix + "; ";
    line += fmt::format("h {}, {} heads", s.hidden, s.heads);
    if (s.query_groups != s.heads) line += fmt::format(" / {} query groups", s.query_groups);
    if (s.mla) line += fmt::format(", MLA (q rank {}, kv rank {})", s.q_lora_rank, s.kv_lora_rank);
    line += fmt::format(", FFN {}{}", s.ffn_hidden, s.gated ? " gated" : "");
    if (s.experts > 0)
        line += fmt::format(", MoE {} experts top-{} (expert FFN {}{})", s.experts, s.topk, s.expert_ffn,
                            s.shared_expert_ffn > 0 ? fmt::format(", shared {}", s.shared_expert_ffn) : "");
    line += s.attention == memory::AttentionKernel::Fused ? "; attention: fused (no s x s tensors)"
                                                          : "; attention: unfused (s x s scores kept)";
    if (std::find(est.kinds.begin(), est.kinds.end(), memory::LayerKind::Mamba) != est.kinds.end())
        line += fmt::format(", Mamba {} x {} heads, state {}",
                            s.mamba_heads > 0 ? s.mamba_heads : 2 * s.hidden / s.mamba_head_dim, s.mamba_head_dim,
                            s.mamba_state);
    if (s.fp8) line += "; fp8";
    return line;
}

std::string estimate_run_line(const memory::Estimate& est, const EstimateHeader& header) {
    const auto& s = est.shape;
    return fmt::format("seq {}, micro-batch {}, TP {}{}, PP {}{}, CP {}, EP {}, DP {} ({}); recompute: {}",
                       est.seq_length, est.micro_batch, s.tp, s.sequence_parallel ? " (SP)" : "", est.schedule.pp,
                       est.schedule.vpp > 1 ? fmt::format(" x VPP {}", est.schedule.vpp) : "", s.cp, s.ep,
                       est.data_parallel, header.data_parallel_source.empty() ? "assumed" : header.data_parallel_source,
                       est.current.describe());
}

std::string time_column_name(const memory::Estimate& est) { return est.measured_step_seconds ? "step time" : "replay"; }

std::string time_column_words(const memory::Estimate& est) {
    if (est.measured_step_seconds)
        return fmt::format(
            "predicted overhead over the step without recompute ({}, from the measured {}): the replayed "
            "work at the job's pace plus the checkpoints' host time",
            format_duration(est.baseline_step_seconds.value_or(*est.measured_step_seconds)),
            format_duration(*est.measured_step_seconds));
    return fmt::format(
        "the replayed work's predicted share of the step (a roofline of each replayed op on an {}); pass "
        "--step-time with the job's measured step time to add the host time in",
        est.gpu);
}

void write_estimate_text(std::ostream& out, const memory::Estimate& est, const EstimateHeader& header) {
    out << fmt::format("{} (Megatron Core {})\n", header.input, header.revision);
    out << "  model: " << estimate_model_line(est) << '\n';
    out << "  run:   " << estimate_run_line(est, header) << "\n\n";

    const std::string fits_head = est.budget ? fmt::format("fits {}", format_gib(*est.budget)) : "";
    out << fmt::format("{:<16} {:>6} {:>9} {:>10} {:>10} {:>10} {:>12} {:>10} {:>10} {:>9}  {}\n", "rank (pp stage)",
                       "layers", "in flight", "params", "grads", "optim", "activations", "transient", "peak", "reserve",
                       fits_head);
    for (const auto& r : est.ranks) {
        std::string fits;
        if (est.budget) fits = r.peak() + est.reserve_model.at(r.peak()) <= *est.budget ? "yes" : "no";
        std::string row = fmt::format("{:<16} {:>6} {:>9} {:>10} {:>10} {:>10} {:>12} {:>10} {:>10} {:>9}  {}",
                                      fmt::format("{} ({})", r.stage, r.role), r.layers, r.in_flight,
                                      format_gib(r.params), format_gib(r.grads), format_gib(r.optimizer),
                                      format_gib(r.activations), format_gib(r.transient), format_gib(r.peak()),
                                      format_gib(est.reserve_model.at(r.peak())), fits);
        out << row.erase(row.find_last_not_of(' ') + 1) << '\n';
    }

    for (const auto& r : est.ranks) {
        if (format_gib(r.leftover) == format_gib(0)) continue;  // a few received tensors: below the table's unit
        const bool received = r.leftover_received > 0, moe = r.leftover > r.leftover_received;
        out << fmt::format(
            "rank {} also holds {} left over from the previous iteration's backward ({}{}{}), freed by its forward "
            "passes: in its peak, not in its activations\n",
            r.stage, format_gib(r.leftover),
            received ? "the last input each model chunk received, with its gradient" : "", received && moe ? "; " : "",
            moe ? "the MoE dispatchers' router probabilities and their autograd leaves" : "");
    }
    for (const auto& r : est.ranks)
        if (format_gib(r.deferred_output_wgrad) != format_gib(0))
            out << fmt::format(
                "rank {} holds {} in its peak for the output layer's deferred weight gradient "
                "(defer_embedding_wgrad_compute: each micro-batch's input and logits gradient, with the received input "
                "and gradient the input's autograd graph keeps, until the pipeline flush)\n",
                r.stage, format_gib(r.deferred_output_wgrad));
    const auto first = std::max_element(est.ranks.begin(), est.ranks.end(), [](const auto& a, const auto& b) {
        return a.first_iteration_peak() < b.first_iteration_peak();
    });
    if (first != est.ranks.end() && first->optimizer_lazy > 0) {
        const bool at_step = first->step_peak() > first->activation_peak() - first->optimizer_lazy;
        out << fmt::format(
            "first iteration: peak {} on rank {}{} (the optimizer creates {} of states at its first "
            "step{})\n",
            format_gib(first->first_iteration_peak()), first->stage, at_step ? ", at its optimizer step" : "",
            format_gib(first->optimizer_lazy),
            at_step ? fmt::format(" beside its fp32 copies of the gradients, {}", format_gib(first->optimizer_step))
                    : "");
    }
    for (const auto& r : est.ranks)
        if (r.peaks_at_optimizer_step())
            out << fmt::format(
                "rank {} peaks at the optimizer step: {} with the activations gone (the optimizer's fp32 copies of "
                "the gradients, {}, beside the states)\n",
                r.stage, format_gib(r.step_peak()), format_gib(r.optimizer_step));

    size_t name_width = 28;
    for (const auto& o : est.options) name_width = std::max(name_width, o.name.size());
    out << fmt::format("\n{:<{}} {:>16} {:>10} {:>10} {:>10} {:>15} {:>9}  {}\n", "recompute option", name_width,
                       "act.+transient", "peak", "saving", time_column_name(est), "host (ckpts)", "FLOPs",
                       est.budget ? "fits" : "");
    for (const auto& o : est.options) {
        const bool none = o.recompute.granularity == memory::Recompute::Granularity::None;
        std::string fits;
        if (o.fits) fits = *o.fits ? "yes" : "no";
        std::string mark;
        if (o.narrowest_fit) mark = "   <- narrowest that fits";
        if (o.current) mark += mark.empty() ? "   <- current" : ", current";
        std::string row =
            fmt::format("{:<{}} {:>16} {:>10} {:>10} {:>10} {:>15} {:>9}  {:<4}{}", o.name, name_width,
                        fmt::format("{} (r{})", format_gib(o.activations), o.hottest_stage), format_gib(o.peak),
                        none ? "-" : format_gib(o.saving), none ? "-" : fmt::format("+{:.1f} %", o.step_overhead * 100),
                        none ? "-" : fmt::format("{:.1f} ms ({})", o.host_seconds * 1e3, o.checkpoints),
                        none ? "-" : fmt::format("+{:.1f} %", o.replay_share * 100), fits, mark);
        out << row.erase(row.find_last_not_of(' ') + 1) << '\n';
    }
    if (est.budget && !est.narrowest_fit())
        out << fmt::format("\nno recompute option fits {}: reduce the micro-batch size or add model parallelism\n",
                           format_gib(*est.budget));
    // One term a line: a terminal or a CI log shows a 700-character line badly.
    out << fmt::format(
        "\nactivations: kept by the in-flight micro-batches\n"
        "transient: on top at the peak (a layer's backward working set, or the logits and loss)\n"
        "peak: what PyTorch allocates\n"
        "reserve: kept free beside it for the CUDA context, a NCCL communicator's own memory and the allocator's "
        "slack (fits: peak + reserve within the budget)\n"
        "{}: {}\n"
        "host: the checkpoints' own host time per step on one rank, on the critical path when the host paces the step; "
        "options are ordered by replay plus host time\n"
        "FLOPs: replayed FLOPs as a share of the step's\n",
        time_column_name(est), time_column_words(est));
    if (!est.assumptions.empty()) {
        out << "assumptions:\n";
        for (const auto& a : est.assumptions) out << "  - " << a.text << '\n';
    }
}

}  // namespace mbl
