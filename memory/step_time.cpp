#include "memory/step_time.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "core/schema.hpp"

namespace mbl::memory {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

const nlohmann::json& gpus_json() {
    static const nlohmann::json j = [] {
        auto text = schema_file("gpus.json");
        if (!text) throw std::runtime_error("schemas/gpus.json is missing from the build");
        return nlohmann::json::parse(*text);
    }();
    return j;
}

std::vector<GpuSpec> load_table() {
    const auto& j = gpus_json();
    std::vector<GpuSpec> out;
    for (const auto& g : j.at("gpus")) {
        GpuSpec s;
        s.name = g.at("name").get<std::string>();
        for (const auto& a : g.value("aliases", nlohmann::json::array())) s.aliases.push_back(a.get<std::string>());
        s.memory_bytes = g.at("memory_gib").get<double>() * kGiB;
        s.bf16_flops = g.at("bf16_tflops").get<double>() * 1e12;
        s.fp8_flops = g.at("fp8_tflops").get<double>() * 1e12;
        s.hbm_bytes_per_s = g.at("hbm_tb_per_s").get<double>() * 1e12;
        s.link_bytes_per_s = g.at("link_gb_per_s").get<double>() * 1e9;
        s.source = g.value("source", "");
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace

const std::vector<GpuSpec>& gpu_table() {
    static const std::vector<GpuSpec> table = load_table();
    return table;
}

const GpuSpec* find_gpu(std::string_view name) {
    const std::string key = lower(name);
    for (const auto& g : gpu_table()) {
        if (lower(g.name) == key) return &g;
        for (const auto& a : g.aliases)
            if (lower(a) == key) return &g;
    }
    return nullptr;
}

const GpuSpec* gpu_with_memory(double bytes) {
    // Budgets are written in GB or GiB ("80GB", "141GB", "80GiB"): the nearest capacity within 8 % is that GPU.
    const GpuSpec* best = nullptr;
    for (const auto& g : gpu_table()) {
        const double off = std::abs(g.memory_bytes - bytes) / g.memory_bytes;
        if (off <= 0.08 && (!best || off < std::abs(best->memory_bytes - bytes) / best->memory_bytes)) best = &g;
    }
    return best;
}

const CheckpointHost& checkpoint_host() {
    static const CheckpointHost host = [] {
        const auto& h = gpus_json().at("checkpoint_host");
        return CheckpointHost{h.at("reentrant_us").get<double>() * 1e-6, h.at("discarding_us").get<double>() * 1e-6,
                              h.at("per_replayed_op_us").get<double>() * 1e-6,
                              h.at("per_replayed_norm_module_us").get<double>() * 1e-6};
    }();
    return host;
}

const ReserveModel& default_reserve() {
    static const ReserveModel model = [] {
        const auto& r = gpus_json().at("reserve");
        const double mib =
            r.at("context_mib").get<double>() + r.at("nccl_mib").get<double>() + r.at("allocator_mib").get<double>();
        return ReserveModel{mib * 1024 * 1024, r.at("fragmentation").get<double>()};
    }();
    return model;
}

std::string gpu_names() {
    std::vector<std::string> names;
    for (const auto& g : gpu_table()) names.push_back(g.name);
    return fmt::format("{}", fmt::join(names, ", "));
}

double op_seconds(const Op& op, const GpuSpec& gpu, bool fp8) {
    const double rate = op.gemm && fp8 ? gpu.fp8_flops : gpu.bf16_flops;
    const double compute = op.flops / rate;
    const double memory = op.bytes / gpu.hbm_bytes_per_s;
    const double link = op.comm_bytes / gpu.link_bytes_per_s;
    return std::max(compute, memory) + link;
}

double ops_seconds(const std::vector<Op>& ops, const GpuSpec& gpu, bool fp8) {
    double t = 0;
    for (const auto& op : ops) t += op_seconds(op, gpu, fp8);
    return t;
}

}  // namespace mbl::memory
