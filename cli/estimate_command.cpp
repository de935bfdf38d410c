#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "core/revision_detection.hpp"
#include "core/schema.hpp"
#include "engine/linter.hpp"
#include "memory/estimate.hpp"
#include "parser/input_errors.hpp"
#include "report/estimate_report.hpp"
#include "report/report.hpp"

namespace mbl::cli {

void add_estimate_command(CLI::App& app, EstimateArgs& args) {
    CLI::App* cmd = app.add_subcommand("estimate", "Predict per-rank GPU memory and the effect of every recompute choice");
    cmd->add_option("input", args.input, "Config file (YAML)")->required();
    add_mcore_option(*cmd, args.mcore, "Megatron Core revision the job runs (as for check)");
    cmd->add_option("--gpu-memory", args.gpu_memory, "Memory budget per GPU, e.g. 80GiB, 141GB");
    cmd->add_option("--data-parallel-size", args.data_parallel_size, "Data-parallel size (shards the distributed optimizer)");
    cmd->add_option("--gpus", args.gpus, "Total GPUs; the data-parallel size is GPUs / (TP x PP x CP)");
    cmd->add_option("--format", args.format, "Output format")->check(CLI::IsMember({"text", "json"}));
    cmd->add_option("--html", args.html, "Also write a self-contained HTML report to this file");
    cmd->add_option("--color", args.color, "Colour the diagnostics")->check(CLI::IsMember({"auto", "always", "never"}));
}

std::optional<double> parse_gpu_memory(const std::string& text) {
    if (text.empty()) return std::nullopt;
    auto bytes = memory::parse_byte_size(text);
    if (!bytes) std::cerr << fmt::format("mbridge-lint: --gpu-memory \"{}\" is not a size such as 80GiB or 141GB\n", text);
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

int run_estimate(const EstimateArgs& args) {
    // Without --mcore, the revision the Bridge checkout around the input pins (README "Revision detection").
    const Revision* revision = nullptr;
    if (args.mcore.empty())
        if (auto detected = RevisionDetector().detect(args.input.substr(0, args.input.find("::")))) {
            revision = detected->revision;
            std::cerr << detection_note(*detected) << '\n';
        }
    if (!revision) revision = resolve_revision(args.mcore);
    if (!revision) return kUnusable;
    memory::EstimateInputs inputs;
    if (!args.gpu_memory.empty()) {
        inputs.gpu_memory_bytes = parse_gpu_memory(args.gpu_memory);
        if (!inputs.gpu_memory_bytes) return kUnusable;
    }
    if (!args.data_parallel_size.empty() && !args.gpus.empty()) {
        std::cerr << "mbridge-lint: give --data-parallel-size or --gpus, not both\n";
        return kUnusable;
    }
    EstimateHeader header;
    if (!args.data_parallel_size.empty()) {
        inputs.data_parallel_size = parse_positive("--data-parallel-size", args.data_parallel_size);
        if (!inputs.data_parallel_size) return kUnusable;
        header.data_parallel_source = "--data-parallel-size";
    }
    std::optional<int> gpus;
    if (!args.gpus.empty()) {
        gpus = parse_positive("--gpus", args.gpus);
        if (!gpus) return kUnusable;
    }

    LintOptions options;
    options.revision = revision;
    SourceManager sources;
    Linter linter(options, sources);
    std::vector<Diagnostic> problems;
    auto model = linter.effective_model_of(args.input, problems);
    const bool unusable = !model || std::any_of(problems.begin(), problems.end(), [](const Diagnostic& d) {
                              return d.is_input_error() && d.severity == Severity::Error;
                          });
    if (unusable) {
        write_text(std::cerr, problems, sources, TextStyle{use_color(args.color)});
        return kUnusable;
    }
    if (gpus) {
        const auto dim = [&](const char* field) { return std::max<std::int64_t>(1, model->integer(field).value_or(1)); };
        const std::int64_t per_replica = dim("tensor_model_parallel_size") * dim("pipeline_model_parallel_size") *
                                         dim("context_parallel_size");
        if (*gpus % per_replica != 0) {
            std::cerr << fmt::format("mbridge-lint: --gpus {} is not a multiple of TP x PP x CP = {}\n", *gpus, per_replica);
            return kUnusable;
        }
        inputs.data_parallel_size = static_cast<int>(*gpus / per_replica);
        header.data_parallel_source = fmt::format("--gpus {} / (TP x PP x CP = {})", *gpus, per_replica);
    }

    memory::Estimate est = memory::estimate(*model, inputs);
    if (!est.ok) {
        SourceRange where = model->anchor;
        if (const Value* v = model->fields.find(est.why_field); v && v->prov().range.valid()) where = v->prov().range;
        else if (est.why_field == "seq_length" && model->run.seq_length.prov().range.valid()) where = model->run.seq_length.prov().range;
        else if (est.why_field == "micro_batch_size" && model->run.micro_batch_size.prov().range.valid())
            where = model->run.micro_batch_size.prov().range;
        problems.push_back(input_error(InputError::UnknownModel, where, "cannot estimate memory: " + est.why_not));
        write_text(std::cerr, problems, sources, TextStyle{use_color(args.color)});
        return kUnusable;
    }
    header.input = args.input;
    header.revision = revision->name;
    if (!args.html.empty()) {
        std::ofstream html(args.html);
        if (html) write_estimate_html(html, est, header);
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
