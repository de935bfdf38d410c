// `mbridge-lint gpu-check` end to end: exit codes and messages. On a machine with a GPU (and a CUDA build) the
// small config runs for real and must pass; elsewhere the command must say it cannot run and exit 2.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "gpu_check/harness.hpp"

namespace {

struct Run {
    int code;
    std::string out;
};

Run run(const std::string& args, bool merge_stderr = true) {
    const std::string cmd = std::string(MBRIDGE_LINT_BINARY) + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
    FILE* pipe = popen(cmd.c_str(), "r");
    REQUIRE(pipe);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string write_temp(const std::string& name, const std::string& text) {
    auto dir = std::filesystem::temp_directory_path() / "mbridge-lint-gpu-check-test";
    std::filesystem::create_directories(dir);
    auto path = dir / name;
    std::ofstream(path) << text;
    return path.string();
}

const char* kSmall = R"(model:
  num_layers: 4
  hidden_size: 256
  ffn_hidden_size: 704
  num_attention_heads: 4
  num_query_groups: 2
  gated_linear_unit: true
  activation_func: {_target_: torch.nn.functional.silu, _call_: false}
  normalization: RMSNorm
  add_bias_linear: false
  hidden_dropout: 0.0
  attention_dropout: 0.0
  seq_length: 256
  transformer_impl: local
  recompute_granularity: selective
  recompute_modules: [core_attn]
)";

}  // namespace

TEST_CASE("gpu-check exists in every build and says plainly when it cannot run", "[cli][gpu_check]") {
    const std::string cfg = write_temp("small.yaml", kSmall);
    const auto info = mbl::gpu::device_info();
    auto r = run("gpu-check " + cfg + " --steps 1");
    if (!info.usable()) {
        CHECK(r.code == 2);
        CHECK(r.out.find("mbridge-lint gpu-check: cannot run here: ") != std::string::npos);
        CHECK(r.out.find(info.cuda_built ? "GPU" : "without CUDA support") != std::string::npos);
        auto j = run("gpu-check " + cfg + " --format json");
        CHECK(j.code == 2);
    } else {
        INFO(r.out);
        CHECK(r.code == 0);
        CHECK(r.out.find("control   (selective [])") != std::string::npos);
        CHECK(r.out.find("PASS (tolerance 10 %)") != std::string::npos);
        auto j = run("gpu-check " + cfg + " --steps 1 --format json --recompute none --recompute \"full uniform 1\"", false);
        INFO(j.out);
        CHECK(j.code == 0);
        auto doc = nlohmann::json::parse(j.out);
        CHECK(doc["runs"].size() == 3);
        CHECK(doc["result"] == "pass");
    }
}

TEST_CASE("gpu-check refuses what it cannot build, before looking for a GPU", "[cli][gpu_check]") {
    auto r = run("gpu-check recipes/llama.py::pretrain");
    CHECK(r.code == 2);
    CHECK(r.out.find("recipe target") != std::string::npos);
    r = run("gpu-check /nonexistent.yaml");
    CHECK(r.code == 2);
    r = run("gpu-check " + write_temp("norc.yaml", "model: {num_layers: 2, hidden_size: 64, num_attention_heads: 4}\n"));
    CHECK(r.code == 2);
    CHECK(r.out.find("no activation recompute") != std::string::npos);
    r = run("gpu-check " + write_temp("bad.yaml", "model: {recompute_granularity: full}\n"));
    CHECK(r.code == 2);
    CHECK(run("gpu-check --help").code == 0);
    CHECK(run("gpu-check " + write_temp("small2.yaml", kSmall) + " --attention sideways").code == 2);
}
