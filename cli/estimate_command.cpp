// `mbridge-lint estimate TARGET`: per-rank memory and every recompute option of one config (a YAML file or one
// recipe), with the same inputs as `check` and `show`: --root, --hf-config, --config-file and overrides after `--`.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "core/input_errors.hpp"
#include "core/schema.hpp"
#include "engine/lint_session.hpp"
#include "memory/estimate.hpp"
#include "report/estimate_report.hpp"
#include "report/report.hpp"

namespace mbl::cli {

void add_estimate_command(CLI::App& app, EstimateArgs& args) {
    CLI::App* cmd =
        app.add_subcommand("estimate", "Predict per-rank GPU memory and the effect of every recompute choice");
    cmd->add_option("input", args.input,
                    "recipe.py::function, recipe.py (one recipe), or a YAML config; overrides follow `--`")
        ->required();
    add_mcore_option(*cmd, args.mcore, "Megatron Core revision the job runs (as for check)", &args.mcore_path);
    cmd->add_option("--gpu-memory", args.gpu_memory, "Memory budget per GPU, e.g. 80GiB, 141GB");
    cmd->add_option("--gpu", args.gpu,
                    "GPU of the step-time model and, without --gpu-memory, of the budget: " + memory::gpu_names());
    cmd->add_option("--step-time", args.step_time,
                    "Measured time of one training step of this job as configured, e.g. 457.18 or 457.18ms (Megatron's "
                    "log: \"elapsed time per iteration (ms)\") or 0.46s: each option's step time is then the replayed "
                    "work at the job's pace plus the checkpoints' host time, as one percentage");
    cmd->add_option("--data-parallel-size", args.data_parallel_size,
                    "Data-parallel size (shards the distributed optimizer)");
    cmd->add_option("--gpus", args.gpus,
                    "The job's GPU count (default: what the recipe's name states, else 1); the data-parallel size is "
                    "GPUs / (TP x PP x CP)");
    cmd->add_option("--reserve", args.reserve,
                    "Memory kept free beside the predicted peak for the CUDA context, NCCL buffers and fragmentation "
                    "(default: measured, see `estimate`'s assumptions), e.g. 3GiB; 0 for none");
    cmd->add_option("--format", args.format, "Output format")->check(CLI::IsMember({"text", "json"}));
    cmd->add_option("--html", args.html, "Also write a self-contained HTML report to this file");
    cmd->add_option("--color", args.color, "Colour the diagnostics")->check(CLI::IsMember({"auto", "always", "never"}));
    add_recipe_options(*cmd, args.recipe);
}

std::optional<double> parse_gpu_memory(const std::string& text) {
    if (text.empty()) return std::nullopt;
    auto bytes = memory::parse_byte_size(text);
    if (!bytes)
        std::cerr << fmt::format("mbridge-lint: --gpu-memory \"{}\" is not a size such as 80GiB or 141GB\n", text);
    return bytes;
}

std::optional<int> parse_positive(const std::string& flag, const std::string& text) {
    try {
        size_t used = 0;
        const long v = std::stol(text, &used);
        if (used == text.size() && v > 0 && v <= 1'000'000) return static_cast<int>(v);
    } catch (...) {
    }
    std::cerr << fmt::format("mbridge-lint: {} \"{}\" is not a positive integer\n", flag, text);
    return std::nullopt;
}

namespace {

// A measured step far from the roofline step is more likely a wrong unit (ms for s) or another job's time than a
// fact. The roofline step is this config's work at the GPU's peak rates (memory/step_time.hpp), so a real step is not
// shorter; the model's own error (within 25 % on the measured rows, docs/memory.md) leaves a factor of 2 of margin.
// A step over 20 times longer runs below 5 % of peak, far under what Megatron jobs reach.
constexpr double kFastestPlausibleStep = 0.5;   // times the roofline step
constexpr double kSlowestPlausibleStep = 20.0;  // times the roofline step

std::string step_time_note(const memory::Estimate& est) {
    if (!est.measured_step_seconds || est.roofline_step_seconds <= 0) return "";
    const double measured = *est.measured_step_seconds, roofline = est.roofline_step_seconds;
    std::string why;
    if (measured < kFastestPlausibleStep * roofline)
        why = fmt::format("less than half the roofline step, {:.4g} s ({} at its peak rates): no step of this "
                          "config runs that fast",
                          roofline, est.gpu);
    else if (measured > kSlowestPlausibleStep * roofline)
        why = fmt::format("{:.0f} times the roofline step, {:.4g} s ({} at its peak rate)", measured / roofline,
                          roofline, est.gpu);
    if (why.empty()) return "";
    return fmt::format("mbridge-lint: note: --step-time {:.4g} s is {}; check its unit (457.18 and 457.18ms are "
                       "milliseconds, 0.46s seconds), the GPU (--gpu) and that the config is the measured job's\n",
                       measured, why);
}

// --gpu, --gpu-memory, --step-time, --data-parallel-size, --gpus and --reserve; nullopt after a plain error.
std::optional<memory::EstimateInputs> estimate_inputs(const EstimateArgs& args) {
    memory::EstimateInputs inputs;
    if (!args.gpu.empty()) {
        const memory::GpuSpec* gpu = memory::find_gpu(args.gpu);
        if (!gpu) {
            std::cerr << fmt::format("mbridge-lint: --gpu \"{}\" is not one of {}\n", args.gpu, memory::gpu_names());
            return std::nullopt;
        }
        inputs.gpu = gpu->name;
        inputs.gpu_memory_bytes = gpu->memory_bytes;
    }
    if (!args.gpu_memory.empty()) {
        inputs.gpu_memory_bytes = parse_gpu_memory(args.gpu_memory);
        if (!inputs.gpu_memory_bytes) return std::nullopt;
    }
    if (!args.step_time.empty()) {
        inputs.measured_step_seconds = memory::parse_duration(args.step_time);
        if (!inputs.measured_step_seconds) {
            std::cerr << fmt::format(
                "mbridge-lint: --step-time \"{}\" is not a duration such as 457.18 (milliseconds), 457.18ms or 0.46s\n",
                args.step_time);
            return std::nullopt;
        }
    }
    if (!parse_job_size(args.data_parallel_size, args.gpus, args.reserve, inputs.data_parallel_size, inputs.gpus,
                        inputs.reserve_bytes))
        return std::nullopt;
    return inputs;
}

}  // namespace

bool parse_job_size(const std::string& data_parallel_size, const std::string& gpus, const std::string& reserve,
                    std::optional<int>& dp, std::optional<int>& gpu_count, std::optional<double>& reserve_bytes) {
    if (!data_parallel_size.empty() && !gpus.empty()) {
        std::cerr << "mbridge-lint: give --data-parallel-size or --gpus, not both\n";
        return false;
    }
    if (!data_parallel_size.empty() && !(dp = parse_positive("--data-parallel-size", data_parallel_size))) return false;
    if (!gpus.empty() && !(gpu_count = parse_positive("--gpus", gpus))) return false;
    if (!reserve.empty()) {
        // 0 is a size here: no reserve at all.
        reserve_bytes = reserve == "0" ? std::optional<double>(0.0) : memory::parse_byte_size(reserve);
        if (!reserve_bytes) {
            std::cerr << fmt::format("mbridge-lint: --reserve \"{}\" is not a size such as 2GiB or 1500MiB\n", reserve);
            return false;
        }
    }
    return true;
}

int run_estimate(const EstimateArgs& args) {
    EstimateHeader header;
    const auto inputs_or = estimate_inputs(args);
    if (!inputs_or) return kUnusable;
    const memory::EstimateInputs& inputs = *inputs_or;
    SourceManager sources;
    OneConfig one = load_one_config(args.input, args.mcore, args.mcore_path, args.recipe, args.color, sources);
    if (!one.model) return kUnusable;
    const Revision* revision = one.revision;
    std::optional<EffectiveModel>& model = one.model;
    std::vector<Diagnostic> problems;
    auto fail = [&]() {
        sort_diagnostics(problems);
        write_text(std::cerr, problems, sources, TextStyle{use_color(args.color)});
        return kUnusable;
    };
    memory::Estimate est = memory::estimate(*model, inputs);
    header.data_parallel_source = est.data_parallel_source;
    if (!est.ok) {
        // A config Megatron Core rejects has no memory to estimate: its errors say why.
        problems = one.rejections;
        if (!problems.empty()) {
            fail();
            std::cerr << "mbridge-lint: cannot estimate memory: Megatron Core rejects this config (the errors above)\n";
            return kUnusable;
        }
        const SourceRange where = est.why_at.valid() ? est.why_at : model->anchor;
        Diagnostic unknown = input_error(InputError::UnknownModel, where, "cannot estimate memory: " + est.why_not);
        unknown.severity = Severity::Error;  // check warns and goes on; an estimate cannot be made without it
        problems.push_back(std::move(unknown));
        return fail();
    }
    std::cerr << step_time_note(est);
    header.input = args.input;
    header.revision = revision->name;
    if (!args.html.empty()) {
        std::ofstream html(args.html);
        if (html) write_estimate_html(html, est, header);
        if (html) html.close();  // a full disk shows at the close
        if (!html) {
            std::cerr << fmt::format("mbridge-lint: cannot write {}\n", args.html);
            return kUnusable;
        }
    }
    if (args.format == "json") write_estimate_json(std::cout, est, header);
    else write_estimate_text(std::cout, est, header);
    return kOk;
}

}  // namespace mbl::cli
