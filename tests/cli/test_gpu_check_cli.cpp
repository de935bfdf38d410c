// `mbridge-lint gpu-check` end to end: exit codes and messages. On a machine with a GPU (and a CUDA build) the
// small config runs for real and must pass; elsewhere the command must say it cannot run and exit 2.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
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

// ---- --runner: the user's own launch command, twice ---------------------------------------------------------------
#include <cmath>

#include "core/schema.hpp"
#include "engine/linter.hpp"
#include "memory/estimate.hpp"
#include "parser/yaml_loader.hpp"

namespace {

// A stand-in for a Bridge launch: reads the recompute overrides, writes two ranks' reports like the helper does.
const char* kFakeLauncher = R"SH(#!/bin/sh
g=""; m=""; it=""
for a in "$@"; do
  case "$a" in
    model.recompute_granularity=*) g="${a#*=}";;
    model.recompute_modules=*) m="${a#*=}";;
    train.train_iters=*) it="${a#*=}";;
  esac
done
echo "$* | PYTHONPATH=$PYTHONPATH" > "$MBRIDGE_LINT_MEMORY_JSON/args.txt"
[ -n "$FAKE_SILENT" ] && exit 0
if [ "$g" = "null" ] || [ "$m" = "[]" ]; then peak=$FAKE_CONTROL; else peak=$FAKE_CANDIDATE; fi
for r in 0 1; do
  printf '{"version": 1, "rank": %s, "peak_allocated_bytes": %s}' "$r" "$((peak - r))" > "$MBRIDGE_LINT_MEMORY_JSON/rank$r.json"
done
)SH";

double predicted_peak_saving(const std::string& yaml) {
    auto y = mbl::load_yaml("runner.yaml", yaml);
    REQUIRE(y.ok());
    mbl::LintOptions o;
    o.revision = mbl::Schema::instance().revision(mbl::Schema::instance().default_revision());
    mbl::SourceManager sources;
    mbl::Linter linter(o, sources);
    std::vector<mbl::Diagnostic> errors;
    auto m = linter.effective_model(y.root, mbl::SourceRange::point("runner.yaml", 1, 1), errors);
    REQUIRE(m);
    const auto est = mbl::memory::estimate(*m, {});
    REQUIRE(est.ok);
    return est.option(mbl::memory::Recompute::none())->peak - est.current_option()->peak;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("runner mode runs the launch command twice with recompute overrides and compares rank peaks", "[cli][gpu_check]") {
    const std::string cfg = write_temp("runner.yaml", kSmall);
    const std::string launcher = write_temp("fake_launch.sh", kFakeLauncher);
    std::filesystem::permissions(launcher, std::filesystem::perms::owner_all);
    const double predicted = predicted_peak_saving(kSmall);
    REQUIRE(predicted > 0);
    const long long control = 100000000000LL;
    auto with = [&](double factor, const std::string& extra = "") {
        const long long candidate = control - std::llround(predicted * factor);
        const std::string work = (std::filesystem::temp_directory_path() / "mbridge-lint-runner-test").string();
        setenv("FAKE_CONTROL", std::to_string(control).c_str(), 1);
        setenv("FAKE_CANDIDATE", std::to_string(candidate).c_str(), 1);
        if (extra.empty()) unsetenv("FAKE_SILENT");
        else setenv("FAKE_SILENT", "1", 1);
        return run("gpu-check " + cfg + " --steps 2 --warmup 1 --work-dir " + work + " --runner '" + launcher +
                   " --config-file job.yaml'");
    };
    auto r = with(1.03);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(r.out.find("control   (selective [])") != std::string::npos);
    CHECK(r.out.find("PASS (tolerance 10 %)") != std::string::npos);
    const std::string work = (std::filesystem::temp_directory_path() / "mbridge-lint-runner-test").string();
    const std::string args = slurp(work + "/candidate/args.txt");
    CHECK(args.find("--config-file job.yaml model.recompute_granularity=selective model.recompute_modules=[core_attn]") !=
          std::string::npos);
    CHECK(args.find("train.train_iters=3") != std::string::npos);
    CHECK(args.find("integrations/bridge") != std::string::npos);  // the helper is on PYTHONPATH
    CHECK(slurp(work + "/control/args.txt").find("model.recompute_modules=[]") != std::string::npos);
    CHECK(with(1.5).code == 1);
    auto silent = with(1.0, "silent");
    unsetenv("FAKE_SILENT");
    CHECK(silent.code == 2);
    CHECK(silent.out.find("no rank*.json") != std::string::npos);
}
