// `mbridge-lint gpu-check TARGET`: builds the target's first layers on one GPU, runs them with the target's recompute
// setting and with a matched no-recompute control, and compares the measured memory saving with the prediction.
#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/schema.hpp"
#include "gpu_check/harness.hpp"
#include "gpu_check/mcore.hpp"
#include "gpu_check/plan.hpp"
#include "gpu_check/report.hpp"
#include "gpu_check/runner.hpp"
#include "memory/estimate.hpp"
#include "parser/yaml_loader.hpp"
#include "report/report.hpp"

namespace mbl::cli {

namespace {

// The Bridge helper for --runner: where an installed binary's package put it (<prefix>/bin/../share/mbridge-lint/bridge),
// otherwise the source tree the binary was built from.
std::string default_helper_dir() {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const std::filesystem::path installed = exe.parent_path().parent_path() / MBRIDGE_LINT_INSTALLED_BRIDGE_HELPER;
        if (std::filesystem::is_directory(installed, ec)) return installed.string();
    }
    return MBRIDGE_LINT_BRIDGE_HELPER_DIR;
}

}  // namespace

void add_gpu_check_command(CLI::App& app, GpuCheckArgs& a) {
    CLI::App* cmd = app.add_subcommand(
        "gpu-check",
        "Run a short step of the config's layers on this machine's GPU with and without its recompute setting and "
        "compare the measured memory saving with the prediction.\nExit codes: 0 pass; 1 a saving missed the tolerance; "
        "2 cannot run (no GPU, no PyTorch / Megatron Core and no CUDA harness, unusable config, shapes "
        "that do not fit).");
    cmd->add_option("target", a.target,
                    "recipe.py::function, recipe.py (one recipe), or a YAML config; overrides follow `--`")
        ->required();
    add_mcore_option(*cmd, a.mcore, "Megatron Core revision the job runs (as for `check`)", &a.mcore_path);
    cmd->add_option("--layers", a.layers, "How many of the first pipeline stage's layers to build")
        ->check(CLI::Range(1, 1024));
    cmd->add_option("--steps", a.steps, "Measured steps per run (after the warm-up)")->check(CLI::Range(1, 100));
    cmd->add_option("--warmup", a.warmup, "Warm-up steps per run")->check(CLI::Range(0, 100));
    cmd->add_option("--micro-batch", a.micro_batch, "Micro-batch size (default: train.micro_batch_size, else 1)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--seq-length", a.seq_length, "Sequence length (default: the config's)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--attention", a.attention,
                    "Attention kernel: fused (flash-style, as with Transformer Engine), unfused (Megatron Core's local "
                    "DotProductAttention) or auto (from transformer_impl / attention_backend)")
        ->check(CLI::IsMember({"auto", "fused", "unfused"}));
    cmd->add_option("--recompute", a.recompute,
                    "Recompute option to check instead of the config's own, e.g. \"selective [core_attn, mlp]\", "
                    "\"full uniform 1\", none (repeatable)");
    cmd->add_option("--tolerance", a.tolerance,
                    "Allowed error of the measured saving against the prediction, in percent")
        ->check(CLI::Range(0.0, 1000.0));
    cmd->add_option("--seed", a.seed, "Seed of the parameters, inputs and dropout");
    cmd->add_option(
           "--reference", a.reference,
           "What builds and measures the layers: mcore (the installed Megatron Core, through --python), harness "
           "(the CUDA re-implementation of Megatron Core's local layers, the separate tool mbridge-lint-gpu-harness: "
           "beside mbridge-lint, on PATH or named by MBRIDGE_LINT_GPU_HARNESS) or auto (mcore where PyTorch, "
           "Megatron Core and a GPU are there, else harness)")
        ->check(CLI::IsMember({"auto", "mcore", "harness"}));
    cmd->add_option("--python", a.python, "Python interpreter with PyTorch and Megatron Core for --reference mcore");
    cmd->add_option("--format", a.format, "Output format")->check(CLI::IsMember({"text", "json"}));
    cmd->add_option(
        "--runner", a.runner,
        "Instead of the harness, run this Megatron Bridge launch command twice (the config's recompute setting "
        "and a no-recompute control, passed as model.recompute_* overrides plus train.train_iters) and compare "
        "each rank's peak allocated memory with the estimate of the whole job");
    cmd->add_option("--helper-dir", a.helper_dir,
                    "Folder holding the Bridge helper (integrations/bridge) for --runner");
    cmd->add_option(
        "--work-dir", a.work_dir,
        "Folder for --runner's logs and memory reports, or for the Megatron Core reference's request, output "
        "and log (default: a temporary one)");
    cmd->add_option("--data-parallel-size", a.data_parallel_size,
                    "Data-parallel size of the --runner job (for the estimate)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--stage", a.stage,
                    "Measure this pipeline stage as Megatron Core's schedule runs it (its model chunks, the schedule's "
                    "micro-batches in flight, backwards in order; default with pipeline parallelism: stage 0); -1 "
                    "builds the first layers as one block instead (--reference mcore)")
        ->check(CLI::Range(-1, 1 << 20));
    cmd->add_option("--micro-batches", a.micro_batches,
                    "Micro-batches of the step the stage's schedule runs (default: twice the pipeline size, at most "
                    "the job's)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--color", a.color, "Colour the diagnostics")->check(CLI::IsMember({"auto", "always", "never"}));
    add_recipe_options(*cmd, a.recipe);
}

namespace {

// --runner: the user's own job, twice.
int run_runner(const GpuCheckArgs& a, const EffectiveModel& model) {
    memory::EstimateInputs in;
    if (a.data_parallel_size > 0) in.data_parallel_size = a.data_parallel_size;
    const memory::Estimate est = memory::estimate(model, in);
    if (!est.ok) {
        std::cerr << fmt::format("mbridge-lint gpu-check: no estimate for {}: {}\n", a.target, est.why_not);
        return kUnusable;
    }
    if (est.current.granularity == memory::Recompute::Granularity::None) {
        std::cerr << "mbridge-lint gpu-check: the config sets no activation recompute; nothing to compare\n";
        return kUnusable;
    }
    const memory::OptionEstimate* pc = est.option(memory::Recompute::none());
    const memory::OptionEstimate* px = est.current_option();
    if (!pc || !px) {
        std::cerr << "mbridge-lint gpu-check: the estimate lacks the control or the config's option\n";
        return kUnusable;
    }
    gpu::RunnerOptions ro;
    ro.command = a.runner;
    ro.helper_dir = a.helper_dir.empty() ? default_helper_dir() : a.helper_dir;
    ro.iterations = a.warmup + a.steps;
    ro.work_dir = a.work_dir;
    if (ro.work_dir.empty()) {
        std::string tmpl = (std::filesystem::temp_directory_path() / "mbridge-lint-runner-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) {
            std::cerr << "mbridge-lint gpu-check: cannot create a work folder\n";
            return kUnusable;
        }
        ro.work_dir = tmpl;
    }
    Recompute candidate = est.current;
    candidate.distribute_saved_activations = false;  // the runner overrides granularity, method and layers only
    const Recompute control =
        candidate.granularity == Recompute::Granularity::Selective ? Recompute::selective({}) : Recompute::none();
    const bool text = a.format == "text";
    std::vector<gpu::RunnerRun> runs;
    for (const auto& [role, rc] :
         {std::pair{std::string("control"), control}, std::pair{std::string("candidate"), candidate}}) {
        if (text) std::cout << fmt::format("running {} ({}): {}\n", role, rc.describe(), a.runner) << std::flush;
        runs.push_back(gpu::run_job(ro, role, rc));
        const auto& r = runs.back();
        if (!r.error.empty() || r.ranks.empty()) {
            std::cerr << fmt::format("mbridge-lint gpu-check: the {} run gave no figures: {}\n", role, r.error);
            return kUnusable;
        }
        if (text)
            std::cout << fmt::format("{} {:<9} ({})  peak allocated {} (largest of {} ranks)\n",
                                     gpu::progress_bar(1, 1), role, rc.describe(), gpu::format_bytes(r.peak_bytes),
                                     r.ranks.size());
    }
    const gpu::Saving s = gpu::saving(runs[0].peak_bytes, runs[1].peak_bytes, pc->peak, px->peak);
    const bool pass = s.error <= a.tolerance / 100.0;
    if (text) {
        std::cout << fmt::format(
            "{}: peak saving measured {}, predicted {} (error {:.1f} %)    {} (tolerance {:.0f} %)\n",
            candidate.describe(), gpu::format_bytes(s.measured), gpu::format_bytes(s.predicted), 100.0 * s.error,
            pass ? "PASS" : "FAIL", a.tolerance);
        for (const auto& n : est.assumptions) std::cout << "note: " << n.text << '\n';
    } else {
        nlohmann::json j;
        j["kind"] = "gpu-check";  // schemas/output/gpu-check.schema.json, runner mode
        j["version"] = 1;
        j["mode"] = "runner";
        j["target"] = a.target;
        j["command"] = a.runner;
        j["work_dir"] = ro.work_dir;
        j["runs"] = nlohmann::json::array();
        for (const auto& r : runs) {
            nlohmann::json ranks = nlohmann::json::array();
            for (const auto& f : r.ranks)
                ranks.push_back({{"rank", f.rank}, {"peak_allocated_bytes", f.peak_allocated_bytes}});
            j["runs"].push_back({{"role", r.role},
                                 {"recompute", r.recompute.describe()},
                                 {"command", r.command},
                                 {"log", r.log_path},
                                 {"ranks", ranks},
                                 {"peak_allocated_bytes", r.peak_bytes}});
        }
        j["predicted"] = {{"control_peak_bytes", pc->peak}, {"candidate_peak_bytes", px->peak}};
        j["peak_saving"] = {{"measured_bytes", s.measured}, {"predicted_bytes", s.predicted}, {"error", s.error}};
        j["tolerance"] = a.tolerance / 100.0;
        j["result"] = pass ? "pass" : "fail";
        std::cout << j.dump(2) << '\n';
    }
    return pass ? kOk : kProblems;
}

// Live progress on a terminal, the finished run's line on standard output (text format).
struct RunPrinter {
    bool text = true;
    bool live = false;
    void progress(const gpu::RunRecord& run, int done, int total) const {
        if (done < total) {
            if (live) std::cerr << '\r' << gpu::run_line(run, done, total) << std::flush;
            return;
        }
        if (live) std::cerr << '\r' << std::string(60, ' ') << '\r' << std::flush;
        if (text) std::cout << gpu::run_line(run, done, total) << '\n' << std::flush;
    }
};

// --reference mcore: the installed Megatron Core builds and measures the layers (gpu_check/reference/).
// Returns nullopt when the machine lacks what it needs and `fallback` allows the harness instead (`why` says what).
std::optional<int> run_mcore(const GpuCheckArgs& a, const EffectiveModel& model, bool fallback, std::string& why) {
    gpu::PlanOptions po;
    po.layers = a.layers;
    po.candidates = a.recompute;
    if (a.micro_batch > 0) po.micro_batch = a.micro_batch;
    if (a.seq_length > 0) po.seq_length = a.seq_length;
    if (a.stage > -2) po.stage = a.stage;
    if (a.micro_batches > 0) po.micro_batches = a.micro_batches;
    const gpu::McorePlan plan = gpu::make_mcore_plan(model, po);
    if (!plan.error.empty()) {
        std::cerr << fmt::format("mbridge-lint gpu-check: cannot build the layers of {}: {}\n", a.target, plan.error);
        return kUnusable;
    }
    if (a.attention != "auto")
        std::cerr
            << "mbridge-lint gpu-check: --attention applies to the harness; Megatron Core builds the attention the "
               "config and its spec select\n";
    const bool text = a.format == "text";
    const RunPrinter printer{text, isatty(STDERR_FILENO) != 0};
    gpu::CheckResult result;
    result.target = a.target;
    result.summary = plan.summary;
    result.layers = static_cast<int>(plan.kinds.size());
    result.seq_length = plan.shape.seq_length;
    result.micro_batch = plan.shape.micro_batch;
    result.tolerance = a.tolerance / 100.0;
    result.steps = a.steps;
    result.warmup = a.warmup;
    result.notes = plan.notes;
    result.totals_checked = plan.stage.has_value();
    result.runs.push_back({"control", plan.runs.control, {}, std::nullopt});
    for (const auto& c : plan.runs.candidates) result.runs.push_back({"candidate", c, {}, std::nullopt});

    memory::LayerShape shape = plan.shape;
    bool announced = false;
    gpu::McoreCallbacks cb;
    cb.environment = [&](const gpu::McoreEnvironment& env) {
        shape = gpu::built_shape(plan, env);
        for (auto& run : result.runs)
            run.predicted = plan.stage ? gpu::predict_stage(plan, shape, run.recompute)
                                       : gpu::predict_layers(shape, plan.kinds, run.recompute);
        if (text) std::cout << fmt::format("reference: {}\n", gpu::describe_environment(env)) << std::flush;
    };
    cb.step = [&](int index, int done, int total) {
        if (index < static_cast<int>(result.runs.size()) && done < total)
            printer.progress(result.runs[static_cast<std::size_t>(index)], done, total);
    };
    cb.run = [&](int index, const gpu::Measurement& m) {
        if (index >= static_cast<int>(result.runs.size())) return;
        auto& run = result.runs[static_cast<std::size_t>(index)];
        run.measured = m;
        printer.progress(run, 1, 1);
    };
    if (text) {
        std::cout << fmt::format("building {} with Megatron Core ({}) ...\n", plan.summary, a.python) << std::flush;
        announced = true;
    }
    const gpu::McoreOutcome outcome = gpu::run_mcore_helper(
        a.python, gpu::default_mcore_helper(), gpu::mcore_request(plan, a.warmup, a.steps, a.seed), a.work_dir, cb);
    if (outcome.failure) {
        if (printer.live) std::cerr << '\n';
        if (fallback && outcome.failure->environment_missing()) {
            why = outcome.failure->message;
            if (announced) std::cout << "the Megatron Core reference cannot run here; using the CUDA harness\n";
            return std::nullopt;
        }
        const bool environment = outcome.failure->environment_missing();
        std::cerr << fmt::format(
            "mbridge-lint gpu-check: {}: {}\n",
            environment ? "cannot run the Megatron Core reference here" : "the Megatron Core reference failed",
            outcome.failure->message);
        return kUnusable;
    }
    const gpu::McoreEnvironment& env = *outcome.environment;
    result.device.name = env.device;
    result.device.total_bytes = env.total_bytes;
    result.device.free_bytes = env.free_bytes;
    result.reference = gpu::reference_json(plan, env);
    if (env.spec == "local" && plan.transformer_impl == "transformer_engine")
        result.notes.push_back("Transformer Engine is not installed: built Megatron Core's local spec (separate norms, "
                               "unfused attention) where the job runs Transformer Engine layers");
    for (const auto& c : env.changes) result.notes.push_back("the reference changed " + c);
    if (!env.dropped.empty())
        result.notes.push_back(fmt::format("{} config field(s) not passed to Megatron Core {}: {}", env.dropped.size(),
                                           env.megatron_core, fmt::join(env.dropped, "; ")));
    gpu::compare_runs(result);
    if (text) gpu::write_text(std::cout, result);
    else gpu::write_json(std::cout, result);
    return result.pass ? kOk : kProblems;
}

}  // namespace

int run_gpu_check(const GpuCheckArgs& a) {
    SourceManager sources;
    OneConfig one = load_one_config(a.target, a.mcore, a.mcore_path, a.recipe, a.color, sources);
    if (!one.model) {
        std::cerr << fmt::format("mbridge-lint gpu-check: {} is not a usable config (run `mbridge-lint check {}`)\n",
                                 a.target, a.target);
        return kUnusable;
    }
    const EffectiveModel& model = *one.model;
    if (!a.runner.empty()) return run_runner(a, model);
    std::string mcore_missing;  // why the Megatron Core reference could not run (auto falls back to the harness)
    if (a.reference != "harness")
        if (auto code = run_mcore(a, model, a.reference == "auto", mcore_missing)) return *code;

    gpu::PlanOptions po;
    po.layers = a.layers;
    po.attention = a.attention;
    po.candidates = a.recompute;
    if (a.micro_batch > 0) po.micro_batch = a.micro_batch;
    if (a.seq_length > 0) po.seq_length = a.seq_length;
    const gpu::Plan plan = gpu::make_plan(model, po);
    if (!plan.error.empty()) {
        std::cerr << fmt::format("mbridge-lint gpu-check: cannot build the layers of {}: {}\n", a.target, plan.error);
        return kUnusable;
    }
    const gpu::DeviceInfo device = gpu::device_info();
    if (!device.usable()) {
        const std::string harness = device.harness_found ? "no GPU: " + device.error : device.error;
        if (mcore_missing.empty()) std::cerr << fmt::format("mbridge-lint gpu-check: cannot run here: {}\n", harness);
        else
            std::cerr << fmt::format(
                "mbridge-lint gpu-check: cannot run here: the Megatron Core reference: {}; the CUDA "
                "harness: {}\n",
                mcore_missing, harness);
        return kUnusable;
    }
    if (auto why = gpu::fit_problem(plan, device, gpu::predict); !why.empty()) {
        std::cerr << "mbridge-lint gpu-check: " << why << '\n';
        return kUnusable;
    }

    const bool text = a.format == "text";
    const RunPrinter printer{text, isatty(STDERR_FILENO) != 0};
    if (text) std::cout << fmt::format("building {} on {} ...\n", plan.summary, device.name) << std::flush;
    gpu::RunOptions ro;
    ro.steps = a.steps;
    ro.warmup_steps = a.warmup;
    ro.seed = a.seed;
    gpu::CheckHooks hooks;
    hooks.measure = gpu::measure;
    hooks.predict = gpu::predict;
    hooks.progress = [&](const gpu::RunRecord& run, int done, int total) { printer.progress(run, done, total); };
    gpu::CheckResult result;
    try {
        result = gpu::run_check(plan, a.target, device, a.tolerance / 100.0, ro, hooks);
    } catch (const gpu::OutOfMemory& e) {
        if (printer.live) std::cerr << '\n';
        std::cerr << fmt::format(
            "mbridge-lint gpu-check: the GPU ran out of memory ({}); use fewer --layers or a smaller "
            "--seq-length\n",
            e.what());
        return kUnusable;
    } catch (const gpu::NoGpu& e) {
        std::cerr << fmt::format("mbridge-lint gpu-check: cannot run here: {}\n", e.what());
        return kUnusable;
    } catch (const std::runtime_error& e) {  // the harness tool failed otherwise (its message says how)
        std::cerr << fmt::format("mbridge-lint gpu-check: {}\n", e.what());
        return kUnusable;
    }
    if (!mcore_missing.empty()) result.notes.push_back("the Megatron Core reference cannot run here: " + mcore_missing);
    if (text) gpu::write_text(std::cout, result);
    else gpu::write_json(std::cout, result);
    return result.pass ? kOk : kProblems;
}

}  // namespace mbl::cli
