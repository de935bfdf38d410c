#include "gpu_check/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace mbl::gpu {

Saving saving(double cm, double xm, double cp, double xp) {
    Saving s;
    s.measured = cm - xm;
    s.predicted = cp - xp;
    const double floor = 0.01 * std::abs(cp);
    const double denom = std::max(std::abs(s.predicted), floor);
    s.error = denom > 0 ? std::abs(s.measured - s.predicted) / denom : (s.measured == s.predicted ? 0.0 : INFINITY);
    return s;
}

Comparison compare(const RunRecord& control, const RunRecord& candidate, double tolerance) {
    Comparison c;
    c.candidate = candidate.recompute.describe();
    c.control = control.recompute.describe();
    c.replay_cost = control.measured.step_ms > 0 ? candidate.measured.step_ms / control.measured.step_ms - 1.0 : 0.0;
    c.predicted = control.predicted.has_value() && candidate.predicted.has_value();
    if (!c.predicted) {
        c.retained.measured = control.measured.retained_bytes - candidate.measured.retained_bytes;
        c.peak.measured = control.measured.backward_peak_bytes - candidate.measured.backward_peak_bytes;
        c.retained.error = c.peak.error = NAN;
        return c;
    }
    c.retained = saving(control.measured.retained_bytes, candidate.measured.retained_bytes,
                        control.predicted->retained_bytes, candidate.predicted->retained_bytes);
    c.peak = saving(control.measured.backward_peak_bytes, candidate.measured.backward_peak_bytes,
                    control.predicted->backward_peak_bytes, candidate.predicted->backward_peak_bytes);
    c.pass = c.retained.error <= tolerance;
    return c;
}

std::string fit_problem(const Plan& plan, const DeviceInfo& device,
                        const std::function<std::optional<Prediction>(const StackConfig&, const Recompute&)>& predict) {
    if (device.free_bytes <= 0) return "";
    std::vector<Recompute> all{plan.control};
    all.insert(all.end(), plan.candidates.begin(), plan.candidates.end());
    const double fixed = fixed_bytes(plan.stack);
    for (const auto& rc : all) {
        const auto p = predict(plan.stack, rc);
        if (!p) continue;
        const double need = fixed + std::max(p->backward_peak_bytes, p->retained_bytes);
        if (need > 0.92 * device.free_bytes)
            return fmt::format("the layers do not fit on this GPU: {} ({}) is predicted to need {} ({} of parameters, "
                               "gradients and input, {} of activations at the backward peak) and {} is free; use fewer "
                               "--layers or a smaller --seq-length / --micro-batch",
                               rc.describe(), plan.summary, format_bytes(need), format_bytes(fixed),
                               format_bytes(p->backward_peak_bytes), format_bytes(device.free_bytes));
    }
    return "";
}

CheckResult run_check(const Plan& plan, const std::string& target, const DeviceInfo& device, double tolerance,
                      const RunOptions& options, const CheckHooks& hooks) {
    CheckResult r;
    r.target = target;
    r.summary = plan.summary;
    r.device = device;
    r.stack = plan.stack;
    r.layers = plan.stack.layers();
    r.seq_length = plan.stack.seq_length;
    r.micro_batch = plan.stack.micro_batch;
    r.notes = plan.notes;
    r.tolerance = tolerance;
    r.steps = options.steps;
    r.warmup = options.warmup_steps;
    std::vector<std::pair<std::string, Recompute>> runs{{"control", plan.control}};
    for (const auto& c : plan.candidates) runs.emplace_back("candidate", c);
    for (const auto& [role, rc] : runs) {
        RunRecord rec;
        rec.role = role;
        rec.recompute = rc;
        rec.predicted = hooks.predict ? hooks.predict(plan.stack, rc) : std::nullopt;
        RunOptions o = options;
        o.progress = [&](int done, int total) {
            if (hooks.progress && done < total) hooks.progress(rec, done, total);
        };
        rec.measured = hooks.measure(plan.stack, rc, o);
        const int total = options.warmup_steps + options.steps;
        if (hooks.progress) hooks.progress(rec, total, total);
        r.runs.push_back(std::move(rec));
    }
    compare_runs(r);
    return r;
}

void compare_runs(CheckResult& r) {
    r.comparisons.clear();
    r.pass = true;
    for (std::size_t i = 1; i < r.runs.size(); ++i) {
        r.comparisons.push_back(compare(r.runs[0], r.runs[i], r.tolerance));
        r.pass &= r.comparisons.back().pass;
    }
    auto error = [](double measured, double predicted) {
        return measured != 0 ? std::abs(predicted - measured) / std::abs(measured) : (predicted == 0 ? 0.0 : INFINITY);
    };
    for (auto& run : r.runs) {
        if (!run.predicted) continue;
        run.retained_error = error(run.measured.retained_bytes, run.predicted->retained_bytes);
        run.peak_error = error(run.measured.backward_peak_bytes, run.predicted->backward_peak_bytes);
        if (r.totals_checked)
            r.pass &= run.retained_error <= r.retained_tolerance && run.peak_error <= r.peak_tolerance;
    }
    if (r.totals_checked && std::any_of(r.runs.begin(), r.runs.end(), [](const auto& run) { return !run.predicted; }))
        r.pass = false;
}

std::string totals_line(const RunRecord& run, const CheckResult& r) {
    const bool pass = run.retained_error <= r.retained_tolerance && run.peak_error <= r.peak_tolerance;
    return fmt::format("{} ({}): retained error {:.1f} %, peak error {:.1f} %    {} (tolerance {:.0f} % / {:.0f} %)",
                       run.role, run.recompute.describe(), 100.0 * run.retained_error, 100.0 * run.peak_error,
                       pass ? "PASS" : "FAIL", 100.0 * r.retained_tolerance, 100.0 * r.peak_tolerance);
}

std::string format_bytes(double bytes) {
    const double a = std::abs(bytes);
    if (a >= 1024.0 * 1024.0 * 1024.0) return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    if (a >= 1024.0 * 1024.0) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
    if (a >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
    return fmt::format("{:.0f} B", bytes);
}

std::string progress_bar(int done, int total, int width) {
    const int filled = total > 0 ? std::clamp(done * width / total, 0, width) : width;
    std::string bar(static_cast<std::size_t>(width) + 2, '.');
    bar.front() = '[';
    bar.back() = ']';
    for (int i = 0; i < filled; ++i) bar[static_cast<std::size_t>(i) + 1] = '#';
    return bar;
}

std::string run_line(const RunRecord& run, int done, int total) {
    std::string head = fmt::format("{} {:<9} ({})", progress_bar(done, total), run.role, run.recompute.describe());
    if (done < total) return head;
    auto predicted = [&](double Prediction::*figure) {
        return run.predicted ? fmt::format(" (predicted {})", format_bytes((*run.predicted).*figure)) : std::string();
    };
    return fmt::format("{:<50} retained {:>9}{}  peak {:>9}{}  step {:.1f} ms", head,
                       format_bytes(run.measured.retained_bytes), predicted(&Prediction::retained_bytes),
                       format_bytes(run.measured.backward_peak_bytes), predicted(&Prediction::backward_peak_bytes),
                       run.measured.step_ms);
}

std::string comparison_line(const Comparison& c, double tolerance) {
    if (!c.predicted)
        return fmt::format("{}: saving measured {}; no prediction (this build has no memory estimator)   FAIL",
                           c.candidate, format_bytes(c.retained.measured));
    return fmt::format(
        "{}: saving measured {}, predicted {} (error {:.1f} %)   peak saving measured {}, predicted {}   "
        "replay cost: {:+.1f} % step time    {} (tolerance {:.0f} %)",
        c.candidate, format_bytes(c.retained.measured), format_bytes(c.retained.predicted), 100.0 * c.retained.error,
        format_bytes(c.peak.measured), format_bytes(c.peak.predicted), 100.0 * c.replay_cost, c.pass ? "PASS" : "FAIL",
        100.0 * tolerance);
}

void write_text(std::ostream& out, const CheckResult& r) {
    for (const auto& c : r.comparisons) out << comparison_line(c, r.tolerance) << '\n';
    if (r.totals_checked)
        for (const auto& run : r.runs)
            if (run.predicted) out << totals_line(run, r) << '\n';
    for (const auto& run : r.runs)
        if (run.measured.leaked_bytes != 0 || !run.measured.stable)
            out << fmt::format("note: {} ({}): memory figures {} between steps{}\n", run.role, run.recompute.describe(),
                               run.measured.stable ? "stable" : "varied",
                               run.measured.leaked_bytes ? fmt::format(", {} still allocated after a step",
                                                                       format_bytes(run.measured.leaked_bytes))
                                                         : "");
    for (const auto& n : r.notes) out << "note: " << n << '\n';
}

void write_json(std::ostream& out, const CheckResult& r) {
    using nlohmann::json;
    auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    json j;
    j["kind"] = "gpu-check";  // schemas/output/gpu-check.schema.json, reference mode
    j["version"] = 1;
    j["mode"] = "reference";
    j["target"] = r.target;
    j["device"] = {{"name", r.device.name}, {"total_bytes", r.device.total_bytes}, {"free_bytes", r.device.free_bytes}};
    j["reference"] = r.reference;
    const StackConfig& s = r.stack;
    if (r.reference.value("kind", "") != "harness")
        j["stack"] = {
            {"summary", r.summary}, {"layers", r.layers}, {"seq_length", r.seq_length}, {"micro_batch", r.micro_batch}};
    else
        j["stack"] = {{"summary", r.summary},
                      {"layers", s.layers()},
                      {"moe_layers", std::count(s.moe.begin(), s.moe.end(), true)},
                      {"seq_length", s.seq_length},
                      {"micro_batch", s.micro_batch},
                      {"hidden", s.hidden},
                      {"heads", s.heads},
                      {"query_groups", s.query_groups},
                      {"head_dim", s.head_dim},
                      {"ffn_hidden", s.ffn_hidden},
                      {"gated", s.gated},
                      {"activation", s.activation == ActivationKind::SiLU ? "silu" : "gelu"},
                      {"normalization", s.layernorm ? "LayerNorm" : "RMSNorm"},
                      {"attention", s.attention == memory::AttentionKernel::Fused ? "fused" : "unfused"},
                      {"linear_bias", s.linear_bias},
                      {"attention_dropout", s.attention_dropout},
                      {"hidden_dropout", s.hidden_dropout},
                      {"experts", s.experts},
                      {"local_experts", s.local_experts},
                      {"topk", s.topk},
                      {"expert_ffn", s.expert_ffn},
                      {"shared_expert_ffn", s.shared_expert_ffn}};
    j["tolerance"] = r.tolerance;
    j["steps"] = r.steps;
    j["warmup_steps"] = r.warmup;
    j["runs"] = json::array();
    for (const auto& run : r.runs) {
        const Measurement& m = run.measured;
        json jr = {{"role", run.role},
                   {"recompute", run.recompute.describe()},
                   {"measured",
                    {{"retained_bytes", m.retained_bytes},
                     {"forward_peak_bytes", m.forward_peak_bytes},
                     {"backward_peak_bytes", m.backward_peak_bytes},
                     {"step_ms", m.step_ms},
                     {"steps_ms", m.steps_ms},
                     {"param_bytes", m.param_bytes},
                     {"grad_bytes", m.grad_bytes},
                     {"input_bytes", m.input_bytes},
                     {"leaked_bytes", m.leaked_bytes},
                     {"stable", m.stable}}}};
        jr["predicted"] = run.predicted ? json{{"retained_bytes", run.predicted->retained_bytes},
                                               {"backward_peak_bytes", run.predicted->backward_peak_bytes}}
                                        : json(nullptr);
        jr["retained_error"] = num(run.retained_error);
        jr["peak_error"] = num(run.peak_error);
        j["runs"].push_back(jr);
    }
    j["comparisons"] = json::array();
    for (const auto& c : r.comparisons) {
        auto sv = [&](const Saving& sav) {
            return json{{"measured_bytes", sav.measured},
                        {"predicted_bytes", c.predicted ? json(sav.predicted) : json(nullptr)},
                        {"error", num(sav.error)}};
        };
        j["comparisons"].push_back({{"candidate", c.candidate},
                                    {"control", c.control},
                                    {"retained_saving", sv(c.retained)},
                                    {"backward_peak_saving", sv(c.peak)},
                                    {"replay_cost", num(c.replay_cost)},
                                    {"pass", c.pass}});
    }
    j["notes"] = r.notes;
    if (r.totals_checked) j["totals_tolerance"] = {{"retained", r.retained_tolerance}, {"peak", r.peak_tolerance}};
    j["result"] = r.pass ? "pass" : "fail";
    out << j.dump(2) << '\n';
}

}  // namespace mbl::gpu
