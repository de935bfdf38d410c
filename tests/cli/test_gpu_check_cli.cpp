// `mbridge-lint gpu-check` end to end: exit codes and messages. Stand-ins play the Megatron Core helper and the CUDA
// harness tool through their JSON interfaces, so every path runs on any machine; the real harness is driven by
// tests/gpu/test_harness_tool.sh (label `gpu`).
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "../support/output_schema.hpp"
#include "../support/temp_dir.hpp"

namespace {

struct Run {
    int code;
    std::string out;
};

Run run_command(const std::string& cmd) {
    FILE* pipe = popen(cmd.c_str(), "r");
    REQUIRE(pipe);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// This test process's own folder: ctest runs the test cases of this file as processes side by side, and a folder
// they shared would be emptied or rewritten under another's running command. Removed when the process ends.
const std::filesystem::path& test_dir() {
    static const mbl::test::TempDir dir;
    return dir.path();
}

// The command's temporary folder: gpu-check keeps a helper's folder whose log a failure message names (for the user
// to read), and the failure tests here would otherwise leave them in /tmp.
const std::string& child_tmpdir() {
    static const std::string dir = [] {
        auto d = test_dir() / "tmp";
        std::filesystem::create_directories(d);
        return d.string();
    }();
    return dir;
}

Run run(const std::string& args, bool merge_stderr = true) {
    return run_command("TMPDIR=" + child_tmpdir() + " " + std::string(MBRIDGE_LINT_BINARY) + " " + args +
                       (merge_stderr ? " 2>&1" : " 2>/dev/null"));
}

std::string write_temp(const std::string& name, const std::string& text) {
    auto path = test_dir() / name;
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

TEST_CASE("gpu-check says how to get the CUDA harness where it is not built", "[cli][gpu_check]") {
    namespace fs = std::filesystem;
    // mbridge-lint alone in a folder, with a PATH that has no harness either.
    const fs::path alone = test_dir() / "without-harness";
    fs::remove_all(alone);
    fs::create_directories(alone);
    fs::copy_file(MBRIDGE_LINT_BINARY, alone / "mbridge-lint");
    const std::string cfg = write_temp("small.yaml", kSmall);
    const std::string env = "env -u MBRIDGE_LINT_GPU_HARNESS PATH=/usr/bin:/bin ";
    for (const std::string format : {"text", "json"}) {
        auto r = run_command(env + (alone / "mbridge-lint").string() + " gpu-check " + cfg +
                             " --reference harness --steps 1 --format " + format + " 2>&1");
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(r.out.find("mbridge-lint gpu-check: cannot run here: the CUDA harness (mbridge-lint-gpu-harness) is not "
                         "built") != std::string::npos);
        CHECK(r.out.find("cmake --build build --target mbridge-lint-gpu-harness") != std::string::npos);
        CHECK(r.out.find("or use --reference mcore") != std::string::npos);
    }
    auto r = run_command("MBRIDGE_LINT_GPU_HARNESS=/nonexistent/harness " + std::string(MBRIDGE_LINT_BINARY) +
                         " gpu-check " + cfg + " --reference harness 2>&1");
    CHECK(r.code == 2);
    CHECK(r.out.find("MBRIDGE_LINT_GPU_HARNESS names /nonexistent/harness, which is not an executable file") !=
          std::string::npos);
    fs::remove_all(alone);
}

TEST_CASE("gpu-check refuses what it cannot build, before looking for a GPU", "[cli][gpu_check]") {
    // A recipe target is read like estimate reads it: a missing file is the loader's located error, not a refusal.
    auto r = run("gpu-check recipes/llama.py::pretrain");
    CHECK(r.code == 2);
    CHECK(r.out.find("error[IN001]: no such file or directory") != std::string::npos);
    CHECK(r.out.find("is not a usable config") != std::string::npos);
    r = run("gpu-check /nonexistent.yaml");
    CHECK(r.code == 2);
    r = run("gpu-check " +
            write_temp("norc.yaml", "model: {num_layers: 2, hidden_size: 64, num_attention_heads: 4}\n"));
    CHECK(r.code == 2);
    CHECK(r.out.find("no activation recompute") != std::string::npos);
    r = run("gpu-check " + write_temp("bad.yaml", "model: {recompute_granularity: full}\n"));
    CHECK(r.code == 2);
    CHECK(run("gpu-check --help").code == 0);
    CHECK(run("gpu-check " + write_temp("small2.yaml", kSmall) + " --attention sideways").code == 2);
}

// ---- --runner: the user's own launch command, twice ---------------------------------------------------------------
#include <cmath>

#include "../support/lint_text.hpp"
#include "core/schema.hpp"
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

// A YAML config's tree and effective model at the default revision (the path `check` takes).
struct Effective {
    mbl::Value root;
    mbl::EffectiveModel model;
};
Effective effective_of(const std::string& name, const std::string& yaml) {
    auto y = mbl::load_yaml(name, yaml);
    REQUIRE(y.ok());
    auto m = mbl::test::model_of_text(yaml, {}, name);
    REQUIRE(m);
    return {y.root, *m};
}

double predicted_peak_saving(const std::string& yaml) {
    const auto est = mbl::memory::estimate(effective_of("runner.yaml", yaml).model, {});
    REQUIRE(est.ok);
    return est.option(mbl::memory::Recompute::none())->peak - est.current_option()->peak;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("runner mode runs the launch command twice with recompute overrides and compares rank peaks",
          "[cli][gpu_check]") {
    const std::string cfg = write_temp("runner.yaml", kSmall);
    const std::string launcher = write_temp("fake_launch.sh", kFakeLauncher);
    std::filesystem::permissions(launcher, std::filesystem::perms::owner_all);
    const double predicted = predicted_peak_saving(kSmall);
    REQUIRE(predicted > 0);
    const long long control = 100000000000LL;
    auto with = [&](double factor, const std::string& extra = "", const std::string& format = "") {
        const long long candidate = control - std::llround(predicted * factor);
        const std::string work = (test_dir() / "runner-test").string();
        setenv("FAKE_CONTROL", std::to_string(control).c_str(), 1);
        setenv("FAKE_CANDIDATE", std::to_string(candidate).c_str(), 1);
        if (extra.empty()) unsetenv("FAKE_SILENT");
        else setenv("FAKE_SILENT", "1", 1);
        return run("gpu-check " + cfg + " --steps 2 --warmup 1 --work-dir " + work + " --runner '" + launcher +
                       " --config-file job.yaml'" + format,
                   format.empty());
    };
    auto r = with(1.03);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(r.out.find("control   (selective [])") != std::string::npos);
    CHECK(r.out.find("PASS (tolerance 10 %)") != std::string::npos);
    // The JSON report keeps its contract (schemas/output/gpu-check.schema.json, runner mode).
    auto as_json = with(1.03, "", " --format json");
    CHECK(as_json.code == 0);
    CHECK(mbl::test::output_schema_violations("gpu-check", as_json.out) == "");
    CHECK(nlohmann::json::parse(as_json.out)["mode"] == "runner");
    const std::string work = (test_dir() / "runner-test").string();
    const std::string args = slurp(work + "/candidate/args.txt");
    CHECK(
        args.find("--config-file job.yaml model.recompute_granularity=selective model.recompute_modules=[core_attn]") !=
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

// ---- --reference mcore: the Megatron Core helper as a subprocess --------------------------------------------------
#include "gpu_check/mcore.hpp"
#include "gpu_check/report.hpp"

namespace gpu = mbl::gpu;
namespace memory = mbl::memory;

namespace {

// A stand-in for `--python`: a script that ignores the helper and its request and prints what it is given.
std::string standin(const std::string& name, const std::string& body) {
    const std::string path = write_temp(name, "#!/bin/sh\n" + body + "\n");
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
}

std::string error_reply_line(const std::string& kind, const std::string& message) {
    return fmt::format("echo '{{\"event\": \"error\", \"kind\": \"{}\", \"message\": \"{}\"}}'; exit 2", kind, message);
}

std::string recorded(const std::string& name) {
    return std::string(MBRIDGE_LINT_TEST_DATA) + "/data/gpu/reference/h200/" + name;
}
std::string example(const std::string& name) {
    return std::string(MBRIDGE_LINT_TEST_DATA) + "/../examples/gpu_check/" + name;
}

// Each H200 run recorded in tests/data/gpu/reference/h200 (scripts/gpu-device-check.sh mcore), with its config and options.
// They ran the first layers as one block, before the stage check existed: `--stage -1` asks for that again (with
// pipeline parallelism the default is now stage 0 as the schedule runs it, several micro-batches in flight).
struct RecordedCase {
    std::string transcript, config;
    std::vector<std::string> candidates;
    std::string options() const {
        std::string o = " --stage -1";
        for (const auto& c : candidates) o += " --recompute '" + c + "'";
        return o;
    }
};
const std::vector<RecordedCase>& recorded_cases() {
    const std::string data = std::string(MBRIDGE_LINT_TEST_DATA) + "/data/gpu/reference/";
    static const std::vector<RecordedCase> cases{
        {"dense.jsonl",
         example("dense_gqa_swiglu.yaml"),
         {"none", "selective [core_attn]", "selective [mlp]", "full uniform 1", "full block 2"}},
        {"moe.jsonl",
         example("moe_shared_expert.yaml"),
         {"none", "selective [moe_act]", "selective [moe]", "selective [shared_experts]", "selective [core_attn]",
          "full uniform 1"}},
        {"gpt.jsonl",
         example("gpt_local_unfused.yaml"),
         {"none", "selective [core_attn]", "full uniform 1", "full block 2"}},
        {"moe16.jsonl",
         data + "moe16_top4.yaml",
         {"none", "selective [moe]", "selective [core_attn, moe]", "full uniform 1"}},
        {"mqa.jsonl", data + "mqa.yaml", {"none", "selective [core_attn]", "selective [mlp]"}},
    };
    return cases;
}

// A recorded case's plan and helper output, read the way the CLI reads them.
struct Replayed {
    gpu::McorePlan plan;
    gpu::McoreOutcome outcome;
};
Replayed replay(const RecordedCase& c) {
    const Effective e = effective_of(c.config, slurp(c.config));
    gpu::PlanOptions po;
    po.candidates = c.candidates;
    po.stage = -1;  // recorded as one block (RecordedCase)
    Replayed r;
    r.plan = gpu::make_mcore_plan(e.model, po);
    REQUIRE(r.plan.error.empty());
    std::ifstream in(recorded(c.transcript));
    REQUIRE(in);
    for (std::string line; std::getline(in, line);)
        if (!gpu::read_helper_line(line, r.outcome, {})) break;
    REQUIRE_FALSE(r.outcome.failure);
    REQUIRE(r.outcome.environment);
    REQUIRE(r.outcome.runs.size() == r.plan.runs.candidates.size() + 1);
    return r;
}

gpu::CheckResult compare_with(const Replayed& r, const gpu::LayerPredictor& predictor) {
    gpu::CheckResult result;
    result.tolerance = 0.10;
    const auto shape = gpu::built_shape(r.plan, *r.outcome.environment);
    std::vector<mbl::Recompute> specs{r.plan.runs.control};
    specs.insert(specs.end(), r.plan.runs.candidates.begin(), r.plan.runs.candidates.end());
    for (std::size_t i = 0; i < specs.size(); ++i)
        result.runs.push_back(
            {i ? "candidate" : "control", specs[i], r.outcome.runs[i], predictor(shape, r.plan.kinds, specs[i])});
    gpu::compare_runs(result);
    return result;
}

}  // namespace

TEST_CASE("the Megatron Core reference says what is missing and exits 2", "[cli][gpu_check][mcore]") {
    const std::string cfg = write_temp("mcore.yaml", kSmall);
    struct Missing {
        std::string kind, message, expect;
    };
    for (const auto& m :
         std::vector<Missing>{{"missing_torch", "PyTorch is not importable by the stand-in",
                               "cannot run the Megatron Core reference here: PyTorch"},
                              {"missing_megatron", "Megatron Core is not importable by the stand-in",
                               "here: Megatron Core is not importable"},
                              {"no_gpu", "PyTorch 2.11 sees no CUDA GPU", "here: PyTorch 2.11 sees no CUDA GPU"},
                              {"cannot_build", "Megatron Core 0.20.0 rejects the config: ValueError: bad heads",
                               "the Megatron Core reference failed: Megatron Core 0.20.0 rejects the config"},
                              {"out_of_memory", "the GPU ran out of memory", "failed: the GPU ran out of memory"}}) {
        INFO(m.kind);
        const std::string python = standin(m.kind + ".sh", error_reply_line(m.kind, m.message));
        auto r = run("gpu-check " + cfg + " --reference mcore --python " + python);
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(r.out.find("mbridge-lint gpu-check: ") != std::string::npos);
        CHECK(r.out.find(m.expect) != std::string::npos);
        CHECK(run("gpu-check " + cfg + " --reference mcore --format json --python " + python).code == 2);
    }
    // No interpreter at all, a helper that dies without a word, one whose output breaks the contract.
    auto r = run("gpu-check " + cfg + " --reference mcore --python /nonexistent/python3");
    CHECK(r.code == 2);
    CHECK(r.out.find("cannot start the Python interpreter /nonexistent/python3") != std::string::npos);
    r = run("gpu-check " + cfg + " --reference mcore --python " +
            standin("dies.sh", "echo 'Segmentation fault near layer 3' >&2; exit 139"));
    CHECK(r.code == 2);
    CHECK(r.out.find("stopped (exit 139) without a result") != std::string::npos);
    CHECK(r.out.find("Segmentation fault near layer 3") != std::string::npos);  // the end of its log
    // The log it names is there to read, in the command's temporary folder.
    const auto log_at = r.out.find(child_tmpdir() + "/mbridge-lint-mcore-");
    REQUIRE(log_at != std::string::npos);
    const auto log_end = r.out.find("/helper.log", log_at);
    REQUIRE(log_end != std::string::npos);
    CHECK(std::filesystem::exists(r.out.substr(log_at, log_end - log_at) + "/helper.log"));
    r = run("gpu-check " + cfg + " --reference mcore --python " +
            standin("early.sh", "echo '{\"event\": \"run\", \"index\": 0}'"));
    CHECK(r.code == 2);
    CHECK(r.out.find("a run came before the environment") != std::string::npos);
}

// ---- --reference harness: the CUDA harness tool through its JSON interface, played by a stand-in ----------------
#include <map>

#include "gpu_check/harness_protocol.hpp"

namespace {

// A stand-in for mbridge-lint-gpu-harness: `--device` answers `device`; each run's request is copied into `dir`
// (request0.json, request1.json, ...) and answered by `answers[its recompute option]`, after two step lines.
std::string standin_harness(const std::string& name, const std::string& dir, const gpu::DeviceInfo& device,
                            const std::map<std::string, std::string>& answers) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::string body = "if [ \"$1\" = --device ]; then echo '" + gpu::device_line(device).dump() + "'; exit 0; fi\n" +
                       "n=$(ls '" + dir + "' | wc -l); cp \"$1\" '" + dir + "'/request$n.json\n" +
                       "rc=$(sed -n 's/.*\"recompute\":\"\\([^\"]*\\)\".*/\\1/p' \"$1\")\n" + "echo '" +
                       gpu::step_line(1, 2).dump() + "'; echo '" + gpu::step_line(2, 2).dump() + "'\n" +
                       "case \"$rc\" in\n";
    for (const auto& [rc, answer] : answers) body += "  \"" + rc + "\") " + answer + " ;;\n";
    return standin(name, body + "esac");
}

gpu::DeviceInfo standin_gpu(const std::string& error = "") {
    gpu::DeviceInfo d;
    d.name = "Stand-in GPU";
    d.devices = error.empty() ? 1 : 0;
    d.total_bytes = d.free_bytes = 80e9;
    d.error = error;
    return d;
}

// A measurement line reporting `factor` times the predicted figures.
std::string measured_as(const std::optional<gpu::Prediction>& p, double factor) {
    REQUIRE(p);
    gpu::Measurement m;
    m.retained_bytes = m.forward_peak_bytes = p->retained_bytes * factor;
    m.backward_peak_bytes = p->backward_peak_bytes * factor;
    m.step_ms = 10;
    m.steps_ms = {10};
    return "echo '" + gpu::measurement_line(m).dump() + "'";
}

struct WithHarness {  // MBRIDGE_LINT_GPU_HARNESS for the commands run while it lives
    explicit WithHarness(const std::string& path) { setenv("MBRIDGE_LINT_GPU_HARNESS", path.c_str(), 1); }
    ~WithHarness() { unsetenv("MBRIDGE_LINT_GPU_HARNESS"); }
};

}  // namespace

TEST_CASE("gpu-check runs the CUDA harness tool through its JSON interface", "[cli][gpu_check][harness]") {
    const std::string cfg = write_temp("harness.yaml", kSmall);
    const Effective e = effective_of(cfg, kSmall);
    const gpu::Plan plan = gpu::make_plan(e.model, gpu::PlanOptions{});  // the CLI's defaults
    REQUIRE(plan.error.empty());
    REQUIRE(plan.candidates.size() == 1);
    const std::string control = plan.control.describe(), candidate = plan.candidates[0].describe();
    CHECK(control == "selective []");
    const std::string dir = (test_dir() / "harness-requests").string();
    auto harness = [&](double candidate_factor) {
        return standin_harness(
            "harness.sh", dir, standin_gpu(),
            {{control, measured_as(gpu::predict(plan.stack, plan.control), 1.0)},
             {candidate, measured_as(gpu::predict(plan.stack, plan.candidates[0]), candidate_factor)}});
    };
    {
        WithHarness with(harness(1.0));
        auto r = run("gpu-check " + cfg + " --reference harness --steps 1 --warmup 1 --seed 77");
        INFO(r.out);
        CHECK(r.code == 0);
        CHECK(r.out.find(" on Stand-in GPU ...") != std::string::npos);
        CHECK(r.out.find("control   (selective [])") != std::string::npos);
        CHECK(r.out.find("selective [core_attn]: saving measured") != std::string::npos);
        CHECK(r.out.find("(error 0.0 %)") != std::string::npos);
        CHECK(r.out.find("PASS (tolerance 10 %)") != std::string::npos);
        // One request per run, control first: the plan's stack and the options given.
        for (int i = 0; i < 2; ++i) {
            const gpu::HarnessRequest q =
                gpu::parse_request(nlohmann::json::parse(slurp(dir + "/request" + std::to_string(i) + ".json")));
            CHECK(q.recompute.describe() == (i == 0 ? control : candidate));
            CHECK(q.options.steps == 1);
            CHECK(q.options.warmup_steps == 1);
            CHECK(q.options.seed == 77);
            CHECK(q.stack.hidden == plan.stack.hidden);
            CHECK(q.stack.query_groups == plan.stack.query_groups);
            CHECK(q.stack.moe == plan.stack.moe);
            CHECK(q.stack.attention == plan.stack.attention);
        }
    }
    {
        WithHarness with(harness(1.5));  // the candidate keeps half as much again: its saving is off
        auto r = run("gpu-check " + cfg + " --reference harness --steps 1 --format json", false);
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK(mbl::test::output_schema_violations("gpu-check", r.out) == "");
        CHECK(nlohmann::json::parse(r.out)["result"] == "fail");
    }
    struct Failing {
        std::string name;
        gpu::DeviceInfo device;
        std::string answer, expect;
    };
    for (const auto& f :
         std::vector<Failing>{{"no GPU", standin_gpu("no CUDA GPU found on this machine"), "exit 2",
                               "mbridge-lint gpu-check: cannot run here: no GPU: no CUDA GPU found on this machine"},
                              {"out of memory", standin_gpu(),
                               "echo '" + gpu::error_line("out_of_memory", "cudaMalloc of 2 GiB").dump() + "'; exit 2",
                               "the GPU ran out of memory (cudaMalloc of 2 GiB); use fewer --layers"},
                              {"bad request", standin_gpu(),
                               "echo '" + gpu::error_line("bad_request", "\"hidden\" is missing").dump() + "'; exit 2",
                               "mbridge-lint gpu-check: the CUDA harness failed (bad_request): \"hidden\" is missing"},
                              {"dies", standin_gpu(), "echo 'Segmentation fault in attention.cu' >&2; exit 139",
                               "stopped (exit 139) without a result: Segmentation fault in attention.cu"}}) {
        INFO(f.name);
        WithHarness with(standin_harness("failing.sh", dir, f.device, {{control, f.answer}}));
        auto r = run("gpu-check " + cfg + " --reference harness --steps 1");
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(r.out.find(f.expect) != std::string::npos);
    }
}

TEST_CASE("auto falls back to the CUDA harness when the machine lacks PyTorch, Megatron Core or a GPU",
          "[cli][gpu_check][mcore]") {
    const std::string cfg = write_temp("auto.yaml", kSmall);
    const std::string python =
        standin("no_torch.sh", error_reply_line("missing_torch", "PyTorch is not importable by the stand-in"));
    const std::string dir = (test_dir() / "harness-requests").string();
    {
        WithHarness with(standin_harness("no_gpu.sh", dir, standin_gpu("no CUDA GPU found on this machine"), {}));
        auto r = run("gpu-check " + cfg + " --steps 1 --python " + python);
        INFO(r.out);
        CHECK(r.out.find("the Megatron Core reference cannot run here; using the CUDA harness") != std::string::npos);
        CHECK(r.code == 2);
        CHECK(r.out.find("cannot run here: the Megatron Core reference: PyTorch is not importable by the stand-in; "
                         "the CUDA harness: no GPU: no CUDA GPU found on this machine") != std::string::npos);
    }
    {
        const Effective e = effective_of(cfg, kSmall);
        const gpu::Plan plan = gpu::make_plan(e.model, gpu::PlanOptions{});
        REQUIRE(plan.candidates.size() == 1);
        WithHarness with(standin_harness(
            "gpu.sh", dir, standin_gpu(),
            {{plan.control.describe(), measured_as(gpu::predict(plan.stack, plan.control), 1.0)},
             {plan.candidates[0].describe(), measured_as(gpu::predict(plan.stack, plan.candidates[0]), 1.0)}}));
        auto r = run("gpu-check " + cfg + " --steps 1 --python " + python);
        INFO(r.out);
        CHECK(r.code == 0);
        CHECK(r.out.find("note: the Megatron Core reference cannot run here: PyTorch") != std::string::npos);
    }
    // A config Megatron Core rejects is no reason to fall back: auto reports it.
    auto r = run("gpu-check " + cfg + " --python " +
                 standin("rejects.sh", error_reply_line("cannot_build", "Megatron Core rejects the config")));
    CHECK(r.code == 2);
    CHECK(r.out.find("using the CUDA harness") == std::string::npos);
    CHECK(r.out.find("the Megatron Core reference failed: Megatron Core rejects the config") != std::string::npos);
}

TEST_CASE("H200 runs of Megatron Core's layers, replayed: totals, savings and the report", "[cli][gpu_check][mcore]") {
    for (const auto& c : recorded_cases()) {
        INFO(c.transcript);
        const std::string python = standin("replay-" + c.transcript + ".sh", "cat '" + recorded(c.transcript) + "'");
        auto r = run("gpu-check " + c.config + " --reference mcore --python " + python + c.options() + " --format json",
                     false);
        INFO(r.out);
        CHECK(r.code == 0);
        const auto doc = nlohmann::json::parse(r.out);
        CHECK(mbl::test::output_schema_violations("gpu-check", r.out) == "");
        CHECK(doc["mode"] == "reference");
        CHECK(doc["result"] == "pass");
        CHECK(doc["reference"]["kind"] == "mcore");
        CHECK(doc["reference"]["megatron_core"] == "0.20.0");
        CHECK(doc["reference"]["spec"] == "local");
        CHECK(doc["reference"]["transformer_engine"].is_null());
        CHECK(doc["reference"]["transformer_config"]["tensor_model_parallel_size"] == 1);
        CHECK(doc["device"]["name"] == "NVIDIA H200");
        // Every run carries measured and predicted totals; on Megatron Core's dense layers they agree to 0.1 %.
        for (const auto& run : doc["runs"]) {
            const double measured = run["measured"]["retained_bytes"], predicted = run["predicted"]["retained_bytes"];
            CHECK(run["predicted"]["backward_peak_bytes"].get<double>() > 0);
            if (c.transcript != "moe16.jsonl" && c.transcript != "moe.jsonl")
                CHECK(std::abs(measured - predicted) <= 0.001 * measured);
        }
        for (const auto& cmp : doc["comparisons"]) CHECK(cmp["retained_saving"]["error"].get<double>() < 0.02);
    }
    // The text report: the reference line, each run's measured and predicted totals, the verdicts.
    const auto& dense = recorded_cases().front();
    auto t = run("gpu-check " + dense.config + " --reference mcore --python " +
                 standin("replay-text.sh", "cat '" + recorded(dense.transcript) + "'") + dense.options());
    INFO(t.out);
    CHECK(t.code == 0);
    CHECK(
        t.out.find(
            "reference: Megatron Core 0.20.0 (local spec; Transformer Engine not installed), PyTorch 2.11.0+cu130, NVIDIA H200") !=
        std::string::npos);
    CHECK(
        t.out.find(
            "control   (none)            retained  15.2 GiB (predicted 15.2 GiB)  peak  19.6 GiB (predicted 19.6 GiB)") !=
        std::string::npos);
    CHECK(t.out.find("selective [core_attn]: saving measured 12.1 GiB, predicted 12.1 GiB (error 0.0 %)") !=
          std::string::npos);
    CHECK(t.out.find("note: Transformer Engine is not installed: built Megatron Core's local spec") !=
          std::string::npos);
}

// gpu-check --reference mcore over a fake process group on an H100 (2026-12-07, gpu_check/DEVICE_RUNS.md; raw output
// and the command in tests/data/gpu/device-runs/2026-12-07-fake-group/): one rank of TP 2 + SP, TP 4 + SP on a middle
// stage of PP 4, EP 8 and TP 2 + SP + EP 4 built by Megatron Core's own parallel layers, stages run by Megatron Core's own
// schedule. The request gpu-check writes today is the one that ran.
struct RecordedRun {
    std::string name, config, options;
    std::string folder = "2026-12-07-fake-group";
};

// The model config sent is the one that ran, but for what Bridge's mixed-precision setup copies onto the model since
// the linter runs that setup compiled from Bridge's source (every MixedPrecisionConfig field that differs from the
// model's, training/mixed_precision.py 148-155 at 067f987): fp8_recipe and the bf16 layer counts, which Megatron Core
// reads only in fp8 or fp4 training (fp8_utils.py 848-850 and 714-724, fp4_utils.py 250-262 at d98e8a64), and
// fp16/fp4/fp8 stated or left at their defaults (False, None, None); and fp8_param_gather, a field of one Bridge
// provider (exaone_moe_provider.py 218 at 067f987) and of Megatron Core's DDP config (distributed_data_parallel_config.py
// 78 at d98e8a64), not of its TransformerConfig, whose fields alone the reference keeps (mcore_reference.prepare_config).
// A field one side states at Megatron Core's default and the other leaves out is the same config.
void check_same_config(const nlohmann::json& sent, const nlohmann::json& ran) {
    const mbl::Revision& main = *mbl::Schema::instance().revision("main");
    const auto at_default = [&](const nlohmann::json& side, const std::string& key) {
        if (!side.contains(key)) return false;
        for (const auto& [name, value] : main.defaults)
            if (name == key) {
                const nlohmann::json& v = side.at(key);
                if (value.is_bool()) return v.is_boolean() && v.get<bool>() == value.as_bool();
                if (value.is_int()) return v.is_number_integer() && v.get<std::int64_t>() == value.as_int();
                if (value.is_string()) return v.is_string() && v.get<std::string>() == value.as_string();
                if (value.is_null()) return v.is_null();
                return false;
            }
        return false;
    };
    const std::set<std::string> precision_only{"fp8_recipe",
                                               "num_layers_at_start_in_bf16",
                                               "num_layers_at_end_in_bf16",
                                               "first_last_layers_bf16",
                                               "fp16",
                                               "fp4",
                                               "fp8",
                                               "fp8_param_gather"};
    std::set<std::string> keys;
    for (const auto& [k, v] : sent.items()) keys.insert(k);
    for (const auto& [k, v] : ran.items()) keys.insert(k);
    for (const auto& k : keys) {
        if (sent.value(k, nlohmann::json()) == ran.value(k, nlohmann::json())) continue;
        if ((!ran.contains(k) && at_default(sent, k)) || (!sent.contains(k) && at_default(ran, k))) continue;
        INFO(k);
        CHECK(precision_only.count(k) == 1);
    }
    for (const char* off : {"fp8", "fp4"}) {
        CHECK(sent.value(off, nlohmann::json()).is_null());
        CHECK(ran.value(off, nlohmann::json()).is_null());
    }
    CHECK_FALSE(sent.value("fp16", false));
    CHECK_FALSE(ran.value("fp16", false));
}

nlohmann::json replay_recorded(const RecordedRun& c, int expected_exit) {
    const std::string runs = std::string(MBRIDGE_LINT_TEST_DATA) + "/data/gpu/device-runs/" + c.folder + "/";
    const std::string sent = write_temp(c.name + "-request.json", "");
    const std::string python =
        standin("replay-" + c.name + ".sh", "cp \"$2\" '" + sent + "'; cat '" + runs + c.name + "/helper.jsonl'");
    auto r = run("gpu-check " + example(c.config) + " --reference mcore --mcore main --python " + python +
                     " --format json" + c.options,
                 false);
    INFO(r.out);
    CHECK(r.code == expected_exit);
    const auto request = nlohmann::json::parse(slurp(sent));
    const auto recorded_request = nlohmann::json::parse(slurp(runs + c.name + "/request.json"));
    for (const char* key : {"parallel", "schedule", "runs", "seq_length", "micro_batch"})
        CHECK(request.value(key, nlohmann::json()) == recorded_request.value(key, nlohmann::json()));
    check_same_config(request.at("transformer_config"), recorded_request.at("transformer_config"));
    CHECK(mbl::test::output_schema_violations("gpu-check", r.out) == "");
    return nlohmann::json::parse(r.out);
}

TEST_CASE(
    "H100 runs of one rank of TP, SP, EP and PP jobs over a fake process group, replayed: totals within 3 % / 5 %",
    "[cli][gpu_check][mcore]") {
    for (const RecordedRun& c : std::vector<RecordedRun>{
             {"tp2-sp", "dense_gqa_swiglu.yaml",
              " --stage -1 --recompute none --recompute 'selective [core_attn]' --recompute 'selective [mlp]' "
              "--recompute 'full uniform 1' -- model.tensor_model_parallel_size=2 model.sequence_parallel=true"},
             {"tp4-sp-pp4-stage1", "dense_gqa_swiglu.yaml",
              " --stage 1 --recompute none --recompute 'selective [core_attn]' -- "
              "model.tensor_model_parallel_size=4 model.sequence_parallel=true"},
             {"moe-ep8", "moe_shared_expert.yaml",
              " --stage -1 --recompute none --recompute 'selective [moe]' --recompute 'selective [core_attn, moe]' "
              "--recompute 'full uniform 1'"},
             {"moe-tp2-sp-ep4", "moe_shared_expert.yaml",
              " --stage -1 --recompute none --recompute 'selective [moe]' -- model.tensor_model_parallel_size=2 "
              "model.sequence_parallel=true model.expert_model_parallel_size=4"}}) {
        INFO(c.name);
        const auto doc = replay_recorded(c, 0);
        CHECK(doc["result"] == "pass");
        for (const auto& run : doc["runs"]) {
            INFO(run["recompute"]);
            CHECK(run["retained_error"].get<double>() <= 0.03);
            CHECK(run["peak_error"].get<double>() <= 0.05);
        }
    }
}

// The stages under Megatron Core's own schedule, beside the in-flight micro-batches: the output gradient received
// before the first backward, each receiving chunk's last input and its gradient kept from the previous step, the
// previous backward's input gradient and autograd's sum beside a gradient the schedule holds at the peak
// (memory::stage_figures, from the 2026-12-07 stage trace). Dense rows to the MiB; MoE rows within 1 % (the routed
// tensors' allocator rounding, as in the sweep). `retained_above` and `peak_above` are what a harness gap of that
// call added, in whole activation tensors (s x b x h in bf16: 16 MiB here).
constexpr double kActivation = 4096.0 * 1 * 2048 * 2;

void check_stage_rows(const nlohmann::json& doc, bool moe, double retained_above = 0, double peak_above = 0) {
    for (const auto& run : doc["runs"]) {
        INFO(run["recompute"]);
        const auto& m = run["measured"];
        const auto& p = run["predicted"];
        const double retained = m["retained_bytes"].get<double>(), peak = m["backward_peak_bytes"].get<double>();
        const double off_retained = retained - p["retained_bytes"].get<double>() - retained_above * kActivation;
        const double off_peak = peak - p["backward_peak_bytes"].get<double>() - peak_above * kActivation;
        CHECK(std::abs(off_retained) <= (moe ? 0.01 * retained : 1024.0 * 1024));
        CHECK(std::abs(off_peak) <= (moe ? 0.01 * peak : 1024.0 * 1024));
    }
}

// The stage trace's second call (tests/data/gpu/device-runs/2026-12-07-stage-trace/second-call), with the helper's
// two harness gaps of the first call closed: first, middle and last stages of 1F1B, both stages of an interleaved
// job, deallocated outputs and a MoE stage. Every dense row to the MiB with nothing taken out.
TEST_CASE("H100 stage trace, second call, replayed: every dense stage to the MiB, MoE within 1 %",
          "[cli][gpu_check][mcore]") {
    const std::string p = " --recompute none --recompute 'selective [core_attn]' --recompute 'full uniform 1'";
    const std::string v = " --recompute none --recompute 'selective [mlp]'";
    const std::string folder = "2026-12-07-stage-trace/second-call";
    for (const RecordedRun& r : std::vector<RecordedRun>{
             {"stage-1f1b", "pipeline_1f1b.yaml", p, folder},
             {"stage-1f1b-middle", "pipeline_1f1b.yaml", " --stage 1" + p, folder},
             {"stage-1f1b-last", "pipeline_1f1b.yaml", " --stage 3" + p, folder},
             {"stage-vpp2", "pipeline_interleaved.yaml", v, folder},
             {"stage-vpp2-last", "pipeline_interleaved.yaml", " --stage 1" + v, folder},
             {"stage-1f1b-middle-dealloc", "pipeline_1f1b.yaml",
              " --stage 1 --recompute none --recompute 'full uniform 1' -- model.deallocate_pipeline_outputs=true",
              folder},
             {"stage-moe-dealloc", "moe_shared_expert.yaml",
              " --recompute none --recompute 'selective [moe]' --recompute 'full uniform 1' -- "
              "model.deallocate_pipeline_outputs=true",
              folder}}) {
        INFO(r.name);
        const auto doc = replay_recorded(r, 0);
        CHECK(doc["result"] == "pass");
        check_stage_rows(doc, r.name == "stage-moe-dealloc");
    }
}

// The earlier runs, each with its harness gap taken out by whole tensors: the fake-group call built the last stage
// without its final norm, so its units kept nothing of their output (one tensor below in retained; the peak is the
// same with and without the norm, as the probe measured); the first call also kept the previous step's last input and
// gradient alive through the step (two tensors above on every receiving stage).
TEST_CASE("H100 pipeline stages of the earlier calls, replayed: dense to the MiB after their harness gaps",
          "[cli][gpu_check][mcore]") {
    struct Row {
        RecordedRun run;
        double retained_above, peak_above;
    };
    const std::string p = " --recompute none --recompute 'selective [core_attn]' --recompute 'full uniform 1'";
    const std::string v = " --recompute none --recompute 'selective [mlp]'";
    const std::string first = "2026-12-07-stage-trace/first-call";
    for (const Row& r : std::vector<Row>{
             {{"stage-1f1b", "pipeline_1f1b.yaml",
               " --recompute none --recompute 'selective [core_attn]' --recompute 'full uniform 1'"},
              0,
              0},
             {{"stage-1f1b-last", "pipeline_1f1b.yaml",
               " --stage 3 --recompute none --recompute 'selective [core_attn]'"},
              -1,
              0},
             {{"stage-vpp2", "pipeline_interleaved.yaml", " --recompute none --recompute 'selective [mlp]'"}, 0, 0},
             {{"tp4-sp-pp4-stage1", "dense_gqa_swiglu.yaml",
               " --stage 1 --recompute none --recompute 'selective [core_attn]' -- "
               "model.tensor_model_parallel_size=4 model.sequence_parallel=true"},
              0,
              0},
             {{"stage-moe-dealloc", "moe_shared_expert.yaml",
               " --recompute none --recompute 'selective [moe]' --recompute 'full uniform 1' -- "
               "model.deallocate_pipeline_outputs=true"},
              0,
              0},
             {{"stage-1f1b", "pipeline_1f1b.yaml", p, first}, 0, 0},
             {{"stage-1f1b-middle", "pipeline_1f1b.yaml", " --stage 1" + p, first}, 2, 2},
             {{"stage-1f1b-last", "pipeline_1f1b.yaml", " --stage 3" + p, first}, 1, 2},
             {{"stage-vpp2", "pipeline_interleaved.yaml", v, first}, 2, 2},
             // One in-flight unit of the last chunk at the first backward; none at the peak (chunk 0's backwards).
             {{"stage-vpp2-last", "pipeline_interleaved.yaml", " --stage 1" + v, first}, 1, 2},
             {{"stage-1f1b-middle-dealloc", "pipeline_1f1b.yaml",
               " --stage 1 --recompute none --recompute 'full uniform 1' -- model.deallocate_pipeline_outputs=true",
               first},
              2,
              2},
             {{"stage-moe-dealloc", "moe_shared_expert.yaml",
               " --recompute none --recompute 'selective [moe]' --recompute 'full uniform 1' -- "
               "model.deallocate_pipeline_outputs=true",
               first},
              0,
              0}}) {
        INFO(r.run.folder << "/" << r.run.name);
        // gpu-check's own verdict fails where those tensors are over 3 % of a full-recompute stage's figure.
        const bool full = r.run.options.find("full uniform 1") != std::string::npos;
        const auto doc = replay_recorded(r.run, full && r.retained_above > 0 ? 1 : 0);
        check_stage_rows(doc, r.run.name == "stage-moe-dealloc", r.retained_above, r.peak_above);
    }
}

TEST_CASE("a wrong estimator term fails against the H200 runs of Megatron Core", "[cli][gpu_check][mcore]") {
    const gpu::LayerPredictor real = [](const auto& s, const auto& k, const auto& rc) {
        return gpu::predict_layers(s, k, rc);
    };
    for (const auto& c : recorded_cases()) {
        INFO(c.transcript);
        CHECK(compare_with(replay(c), real).pass);
    }
    // Forgetting the fp32 copy of the attention probabilities (unfused softmax): core_attn's saving is off.
    const Replayed gpt = replay(recorded_cases()[2]);
    const auto no_fp32 = compare_with(gpt, [](memory::LayerShape s, const auto& k, const auto& rc) {
        s.softmax_fp32 = false;
        return gpu::predict_layers(s, k, rc);
    });
    CHECK_FALSE(no_fp32.pass);
    CHECK(no_fp32.comparisons[1].candidate == "selective [core_attn]");
    CHECK_FALSE(no_fp32.comparisons[1].pass);
    // The estimator before this check: moe_act freeing the expert activations of SequentialMLP experts, which
    // Megatron Core's local spec does not checkpoint (measured saving about 0, predicted 792 MiB).
    const Replayed moe = replay(recorded_cases()[1]);
    const auto old_moe_act = compare_with(moe, [](memory::LayerShape s, const auto& k, const auto& rc) {
        s.expert_act_checkpoint = true;
        return gpu::predict_layers(s, k, rc);
    });
    CHECK(old_moe_act.comparisons[1].candidate == "selective [moe_act]");
    CHECK_FALSE(old_moe_act.comparisons[1].pass);
    CHECK(old_moe_act.comparisons[1].retained.predicted == Approx(792.0 * 1024 * 1024));
    CHECK(std::abs(old_moe_act.comparisons[1].retained.measured) < 2.0 * 1024 * 1024);
}

TEST_CASE("the helper's own exit paths, with stand-in PyTorch and Megatron Core packages", "[cli][gpu_check][mcore]") {
    REQUIRE(std::system("python3 -c 'import sys' 2>/dev/null") == 0);
    namespace fs = std::filesystem;
    const fs::path root = test_dir() / "fake-python";
    fs::remove_all(root);
    auto put = [&](const std::string& rel, const std::string& text) {
        fs::create_directories((root / rel).parent_path());
        std::ofstream(root / rel) << text;
    };
    const std::string cfg = write_temp("helper.yaml", kSmall);
    auto helper_run = [&](const char* label) {
        setenv("PYTHONPATH", root.string().c_str(), 1);
        auto r = run("gpu-check " + cfg + " --reference mcore --python python3");
        unsetenv("PYTHONPATH");
        INFO(label << ": " << r.out);
        CHECK(r.code == 2);
        return r.out;
    };
    // 1. PyTorch's import fails.
    put("torch/__init__.py", "raise ImportError('no module named torch (stand-in)')\n");
    put("megatron/__init__.py", "raise ImportError('no megatron (stand-in)')\n");
    std::string out = helper_run("no torch");
    CHECK(out.find("PyTorch is not importable") != std::string::npos);
    CHECK(out.find("no module named torch (stand-in)") != std::string::npos);
    CHECK(out.find("Megatron Core is not importable either") != std::string::npos);
    // 2. PyTorch imports, Megatron Core does not.
    put("torch/__init__.py", R"PY(import os
__version__ = "2.11.0+stand-in"
class dtype: pass
bfloat16 = dtype()
class version:
    cuda = "13.0"
class cuda:
    @staticmethod
    def is_available(): return os.environ.get("FAKE_CUDA") == "1"
    @staticmethod
    def device_count(): return 1 if os.environ.get("FAKE_CUDA") == "1" else 0
    @staticmethod
    def mem_get_info(): return (100, 200)
    @staticmethod
    def get_device_name(i): return "Stand-in GPU"
    @staticmethod
    def set_device(i): pass
class distributed:
    @staticmethod
    def is_initialized(): return True
)PY");
    out = helper_run("no megatron");
    CHECK(out.find("Megatron Core is not importable by") != std::string::npos);
    CHECK(out.find("no megatron (stand-in)") != std::string::npos);
    // 3. Both import; no GPU.
    put("megatron/__init__.py", "");
    put("megatron/core/__init__.py", "__version__ = '0.20.0-stand-in'\n");
    out = helper_run("no GPU");
    CHECK(out.find("here: PyTorch 2.11.0+stand-in sees no CUDA GPU (built for CUDA 13.0)") != std::string::npos);
    // 4. A GPU; Megatron Core rejects the config.
    put("megatron/core/parallel_state.py", "def model_parallel_is_initialized(): return True\n");
    put("megatron/core/tensor_parallel.py", "def model_parallel_cuda_manual_seed(seed): pass\n");
    put("megatron/core/transformer/__init__.py", "");
    put("megatron/core/transformer/transformer_config.py", R"PY(import dataclasses
@dataclasses.dataclass
class TransformerConfig:
    num_layers: int = 0
    num_attention_heads: int = 0
    num_query_groups: int = 0
    recompute_granularity: str = None
    recompute_method: str = None
    recompute_num_layers: int = None
    recompute_modules: list = None
    def __post_init__(self):
        raise ValueError("num_attention_heads ({}) must be a multiple of num_query_groups ({})".format(
            self.num_attention_heads, self.num_query_groups))
)PY");
    setenv("FAKE_CUDA", "1", 1);
    out = helper_run("rejected config");
    unsetenv("FAKE_CUDA");
    CHECK(out.find("the Megatron Core reference failed: Megatron Core 0.20.0-stand-in rejects the config: ValueError: "
                   "num_attention_heads (4) must be a multiple of num_query_groups (2)") != std::string::npos);
    fs::remove_all(root);
}

// Megatron Core's local CUDA graphs on an H100 (tests/data/gpu/device-runs/2026-12-07-cuda-graphs): two layers of
// dense_gqa_swiglu.yaml at s 1024 and 4096, captured after one eager step, beside the same runs without graphs.
namespace cuda_graphs_run {

nlohmann::json graphed_runs(const std::string& name) {
    const std::string path =
        std::string(MBRIDGE_LINT_TEST_DATA) + "/data/gpu/device-runs/2026-12-07-cuda-graphs/" + name + "/helper.jsonl";
    nlohmann::json runs = nlohmann::json::array();
    std::istringstream lines(slurp(path));
    for (std::string line; std::getline(lines, line);) {
        auto e = nlohmann::json::parse(line);
        if (e["event"] == "run") runs.push_back(e);
    }
    return runs;
}

double estimate_activation_peak(const std::string& overrides, const std::string& recompute) {
    auto r = run("estimate " + example("dense_gqa_swiglu.yaml") + " --mcore main --format json -- " + overrides + " " +
                     recompute,
                 false);
    INFO(r.out);
    REQUIRE(r.code == 0);
    const auto doc = nlohmann::json::parse(r.out);
    for (const auto& o : doc["options"])
        if (o.value("current", false)) return o["activations"]["bytes"].get<double>();
    FAIL("no current option");
    return 0;
}

}  // namespace cuda_graphs_run

TEST_CASE("H100 local CUDA graphs, replayed: recompute skipped in capture, static buffers exact, pool above the peak",
          "[cli][gpu_check][mcore]") {
    using namespace cuda_graphs_run;
    constexpr double MiB = 1024.0 * 1024;
    struct Case {
        std::string name;
        std::int64_t seq;
        double eager_peak_mib;  // measured without graphs, no recompute: memory::predict_stack gives it to the MiB
    };
    for (const Case& c : std::vector<Case>{{"graphs-small", 1024, 964.01}, {"graphs-l2", 4096, 12304.05}}) {
        INFO(c.name);
        const auto runs = graphed_runs(c.name);
        REQUIRE(runs.size() == 3);  // control none, candidates none and selective [core_attn]
        const auto& none = runs[1]["cuda_graphs"]["capture"];
        const auto& core_attn = runs[2]["cuda_graphs"]["capture"];
        // tensor_parallel/random.py checkpoint (line 685): no checkpoint while capturing, so the graphed layers keep
        // exactly what no recompute keeps, graph by graph.
        CHECK(core_attn["pool_reserved_bytes"] == none["pool_reserved_bytes"]);
        CHECK(core_attn["trace"] == none["trace"]);
        // Without Transformer Engine make_weakref keeps every static buffer (cuda_graphs.py line 464): the first
        // input, each layer's output, the last output's gradient and each layer's input gradient (s x b x h in
        // bf16 each, 2 (L + 1) of them), and the causal mask the layers share (s x s bytes).
        const double hidden = static_cast<double>(c.seq) * 4096 * 2, layers = 2;
        const double statics = 2 * (layers + 1) * hidden + static_cast<double>(c.seq) * c.seq;
        CHECK(none["pool_allocated_bytes"].get<double>() == statics);
        // Device-wide the capture adds them and a small allocation of its own (4 KiB here).
        CHECK(std::abs(none["megatron_allocated_bytes"].get<double>() - statics) <= MiB);
        // The pool holds the same allocations as the eager step in the same order, so the eager peak is its floor;
        // the rest is the pool's fragmentation (forward transients in segments later graphs do not fit), not modelled.
        const double pool = none["pool_reserved_bytes"].get<double>() / MiB;
        CHECK(pool >= c.eager_peak_mib);
        CHECK(runs[1]["stable"] == true);
        for (const auto& r : runs)
            CHECK(r["cuda_graphs"]["replayed_pool_reserved_bytes"][0] == none["pool_reserved_bytes"]);
    }
    // The estimate with cuda_graph_impl local: selective [core_attn] keeps what none keeps (it did save 2976 MiB of
    // the peak without graphs in the same runs).
    const std::string shape = "model.pipeline_model_parallel_size=1 model.num_layers=2";
    const double graphs_none =
        estimate_activation_peak(shape + " model.cuda_graph_impl=local", "model.recompute_granularity=null");
    const double graphs_core_attn =
        estimate_activation_peak(shape + " model.cuda_graph_impl=local",
                                 "model.recompute_granularity=selective model.recompute_modules=[core_attn]");
    const double eager_core_attn =
        estimate_activation_peak(shape, "model.recompute_granularity=selective model.recompute_modules=[core_attn]");
    CHECK(graphs_core_attn == graphs_none);
    CHECK(eager_core_attn < graphs_none);
}
