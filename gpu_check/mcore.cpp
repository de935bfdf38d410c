#include "gpu_check/mcore.hpp"

#include <fmt/format.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "gpu_check/report.hpp"
#include "gpu_check/runner.hpp"
#include "memory/estimate.hpp"
#include "memory/rank.hpp"

namespace mbl::gpu {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json to_json(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Bool: return v.as_bool();
        case Value::Kind::Int: return v.as_int();
        case Value::Kind::Float: return v.as_number();
        case Value::Kind::String: return v.as_string();
        case Value::Kind::List: {
            json a = json::array();
            for (const auto& item : v.items()) a.push_back(to_json(item));
            return a;
        }
        case Value::Kind::Map: {
            json o = json::object();
            for (const auto& e : v.entries()) o[e.key] = to_json(e.value);
            return o;
        }
        case Value::Kind::Null:
        case Value::Kind::Unknown: break;
    }
    return nullptr;
}

// Fields the reference sets itself: the recompute fields differ per run, and the stack is one stage's chunk.
constexpr FieldName kPerRunFields[] = {field::recompute_granularity, field::recompute_method,
                                       field::recompute_num_layers, field::recompute_modules};
constexpr FieldName kStageFields[] = {
    field::num_layers_in_first_pipeline_stage, field::num_layers_in_last_pipeline_stage,
    field::pipeline_model_parallel_layout,     field::account_for_embedding_in_pipeline_split,
    field::account_for_loss_in_pipeline_split, field::mtp_num_layers,
    field::microbatch_group_size_per_vp_stage, field::deallocate_pipeline_outputs,
    field::overlap_moe_expert_parallel_comm};

std::string shape_summary(const memory::LayerShape& s, const std::vector<memory::LayerKind>& kinds, const char* where) {
    const auto moe =
        static_cast<int>(std::count_if(kinds.begin(), kinds.end(), [](auto k) { return memory::has_moe(k); }));
    const int dense = static_cast<int>(kinds.size()) - moe;
    std::string attention =
        s.mla ? fmt::format("MLA ({} heads, q rank {}, kv rank {})", s.heads, s.q_lora_rank, s.kv_lora_rank)
              : fmt::format("{} heads, {} query groups, head size {}", s.heads, s.query_groups, s.head_dim);
    std::string mlp = dense ? fmt::format(", {} {}", s.gated ? "gated MLP" : "MLP", s.ffn_hidden) : "";
    std::string experts = moe ? fmt::format(", {} experts top-{} (FFN {}{})", s.experts, s.topk, s.expert_ffn,
                                            s.shared_expert_ffn ? fmt::format(", shared {}", s.shared_expert_ffn) : "")
                              : "";
    return fmt::format("{} layers {}{} (h={}, {}{}{}, {}, s={}, b={})", kinds.size(), where,
                       moe && dense ? fmt::format(" ({} dense, {} MoE)", dense, moe) : "", s.hidden, attention, mlp,
                       experts, s.layernorm ? "LayerNorm" : "RMSNorm", s.seq_length, s.micro_batch);
}

json recompute_fields(const Recompute& rc) {
    switch (rc.granularity) {
        case Recompute::Granularity::None:
            return {
                {"recompute_granularity", nullptr}, {"recompute_method", nullptr}, {"recompute_num_layers", nullptr}};
        case Recompute::Granularity::Selective:
            return {{"recompute_granularity", "selective"},
                    {"recompute_method", nullptr},
                    {"recompute_num_layers", nullptr},
                    {"recompute_modules", rc.modules}};
        case Recompute::Granularity::Full:
            return {{"recompute_granularity", "full"},
                    {"recompute_method", rc.method == Recompute::Method::Uniform ? "uniform" : "block"},
                    {"recompute_num_layers", rc.num_layers}};
    }
    return json::object();
}

Measurement measurement_of(const json& e) {
    Measurement m;
    m.retained_bytes = e.at("retained_bytes").get<double>();
    m.forward_peak_bytes = e.at("forward_peak_bytes").get<double>();
    m.backward_peak_bytes = e.at("backward_peak_bytes").get<double>();
    m.step_ms = e.at("step_ms").get<double>();
    m.steps_ms = e.value("steps_ms", std::vector<double>{});
    m.param_bytes = e.value("param_bytes", 0.0);
    m.grad_bytes = e.value("grad_bytes", 0.0);
    m.input_bytes = e.value("input_bytes", 0.0);
    m.leaked_bytes = e.value("leaked_bytes", 0.0);
    m.stable = e.value("stable", true);
    return m;
}

std::string text_of(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_null()) return "None";
    return v.dump();
}

McoreEnvironment environment_of(const json& e) {
    McoreEnvironment env;
    env.raw = e;
    auto str = [&](const char* key) {
        return e.contains(key) && e[key].is_string() ? e[key].get<std::string>() : std::string();
    };
    env.python = str("python");
    env.torch = str("torch");
    env.cuda = str("cuda");
    env.device = str("device");
    env.megatron_core = e.at("megatron_core").get<std::string>();
    env.megatron_core_path = str("megatron_core_path");
    env.spec = e.at("spec").get<std::string>();
    if (env.spec != "local" && env.spec != "transformer_engine")
        throw std::runtime_error(fmt::format("unknown spec \"{}\"", env.spec));
    if (e.contains("transformer_engine") && e["transformer_engine"].is_string())
        env.transformer_engine = e["transformer_engine"].get<std::string>();
    env.total_bytes = e.value("total_bytes", 0.0);
    env.free_bytes = e.value("free_bytes", 0.0);
    const json facts = e.value("facts", json::object());
    env.softmax_kernel = facts.value("softmax_kernel", false);
    env.permute_fusion = facts.value("moe_permute_fusion", false);
    if (facts.contains("experts_module") && facts["experts_module"].is_string())
        env.experts_module = facts["experts_module"];
    for (const auto& c : e.value("changes", json::array()))
        env.changes.push_back(fmt::format("{} {} -> {}: {}", c.at("field").get<std::string>(),
                                          text_of(c.value("from", json())), text_of(c.value("to", json())),
                                          c.value("why", std::string())));
    for (const auto& d : e.value("dropped", json::array()))
        env.dropped.push_back(fmt::format("{}: {}", d.at("field").get<std::string>(), d.value("why", std::string())));
    return env;
}

std::string tail_of(const std::string& path, std::size_t lines) {
    std::ifstream in(path);
    std::deque<std::string> last;
    for (std::string line; std::getline(in, line);) {
        last.push_back(line);
        if (last.size() > lines) last.pop_front();
    }
    std::string out;
    for (const auto& l : last) out += "\n  " + l;
    return out;
}

}  // namespace

bool HelperFailure::environment_missing() const {
    return kind == "missing_python" || kind == "missing_torch" || kind == "missing_megatron" || kind == "no_gpu";
}

namespace {

// --stage: which pipeline stage, its model chunks' layers and the schedule's micro-batches on one GPU (at least the
// pipeline size, which the interleaved schedule's micro-batch groups need, and at most twice it: the first backward
// comes after at most 2(p - 1) + (v - 1)p + 1 forwards, so more adds run time, not memory).
std::string plan_stage(const PlanOptions& o, McorePlan& p) {
    const memory::Schedule& job = p.job.schedule;
    const int stage = o.stage.value_or(0);
    if (stage < 0 || stage >= job.pp)
        return fmt::format("--stage {} is not a pipeline stage of this config (0 to {})", stage, job.pp - 1);
    StageRun run;
    run.stage = stage;
    run.schedule = job;
    const std::int64_t wanted = o.micro_batches.value_or(2 * job.pp);
    run.schedule.micro_batches = std::max<std::int64_t>(job.pp, std::min(wanted, job.micro_batches.value_or(wanted)));
    if (job.interleaved() && run.schedule.group > *run.schedule.micro_batches)
        return fmt::format("microbatch_group_size_per_vp_stage {} is more than the {} micro-batches run",
                           run.schedule.group, *run.schedule.micro_batches);
    run.in_flight = run.schedule.in_flight(stage);
    int offset = 0;
    for (int r = 0; r < stage; ++r) offset += p.job.per_stage[static_cast<size_t>(r)];
    const int chunk_layers = std::max(1, p.job.per_stage[static_cast<size_t>(stage)] / job.vpp);
    const int n = std::min(o.layers, chunk_layers);
    if (n < chunk_layers)
        p.notes.push_back(
            fmt::format("each model chunk of stage {} has {} layers; building {}", stage, chunk_layers, n));
    p.kinds.assign(p.job.kinds.begin() + offset, p.job.kinds.begin() + offset + n);
    p.notes.push_back(fmt::format(
        "pipeline stage {} of {}{} under Megatron Core's own schedule: {} micro-batches, {} model chunks in flight at "
        "the first backward; point-to-point moves no data (received tensors are allocated, not filled)",
        stage, job.pp, job.interleaved() ? fmt::format(", {} model chunks", job.vpp) : "", *run.schedule.micro_batches,
        run.in_flight));
    p.stage = run;
    return "";
}

}  // namespace

McorePlan make_mcore_plan(const EffectiveModel& m, const PlanOptions& o) {
    McorePlan p;
    auto fail = [&](std::string why) {
        p.error = std::move(why);
        return p;
    };
    if (m.str(field::experimental_attention_variant))
        return fail("experimental attention variants are built by Megatron Core's own block specs, which the reference "
                    "does not select yet (it builds GPT layers)");
    p.runs = choose_runs(m, o, [](const std::string&) { return true; });  // Megatron Core validates the labels
    if (!p.runs.error.empty()) return fail(p.runs.error);
    // The estimate's translation at the sequence and micro-batch built (--seq-length and --micro-batch included).
    EffectiveModel sized = m;
    sized.run.seq_length = Value::integer(p.runs.seq_length);
    sized.run.micro_batch_size = Value::integer(p.runs.micro_batch);
    p.job = memory::make_job(sized, {});
    if (!p.job.ok) return fail(fmt::format("no memory estimate for this config: {}", p.job.why_not));
    const bool staged = o.stage ? *o.stage >= 0 : p.job.schedule.pp > 1;
    if (staged) {
        if (auto why = plan_stage(o, p); !why.empty()) return fail(why);
    } else {
        const int n = std::min<int>(p.runs.layers, static_cast<int>(p.job.kinds.size()));
        p.kinds.assign(p.job.kinds.begin(), p.job.kinds.begin() + n);
    }
    for (auto k : p.kinds)
        if (k != memory::LayerKind::Dense && k != memory::LayerKind::Moe)
            return fail(
                fmt::format("the layers built include a {} layer (hybrid_layer_pattern): the reference builds GPT "
                            "layers (attention with a dense MLP or experts) only",
                            memory::kind_name(k)));
    const int n = static_cast<int>(p.kinds.size());
    memory::LayerShape s = p.job.shape;
    if (s.fp8) p.notes.push_back("fp8 is not measured: the layers run in bf16");
    s.fp8 = false;
    s.fp8_scale_bytes = 0;
    p.shape = s;
    // One rank of the job's world, over a fake process group: the pipeline sizes only when a stage is run.
    const int pp = p.stage ? p.job.schedule.pp : 1;
    const int vpp = p.stage ? p.job.schedule.vpp : 1;
    p.parallel = {{"tp", s.tp},
                  {"sp", s.sequence_parallel},
                  {"cp", s.cp},
                  {"ep", s.ep},
                  {"etp", s.etp},
                  {"pp", pp},
                  {"vpp", vpp > 1 ? json(vpp) : json(nullptr)},
                  {"stage", p.stage ? p.stage->stage : 0}};
    if (s.tp * s.cp * s.ep * pp > 1)
        p.notes.push_back(fmt::format(
            "one rank of a {}-rank job (tensor {}{}, context {}{}, pipeline {}) run on one GPU over a fake process "
            "group: collectives move no data and allocate no communication buffers{}",
            std::lcm(s.tp * s.cp, s.ep * s.etp) * pp, s.tp, s.sequence_parallel ? " with sequence parallelism" : "",
            s.cp, s.experts > 0 ? fmt::format(", expert {} with expert-tensor {}", s.ep, s.etp) : std::string(), pp,
            s.experts > 0 ? "; routing balanced, every peer routing as this rank" : ""));
    p.transformer_impl = m.str(field::transformer_impl).value_or("transformer_engine");
    p.notes.insert(p.notes.end(), p.runs.notes.begin(), p.runs.notes.end());

    // The config's own values (Megatron Core's defaults stand for the rest), with the layers built and the rank run.
    json c = json::object();
    m.for_each_field([&](const Value::Entry& e) {
        if (e.value.prov().origin == Origin::Default) return;
        if (e.value.contains_unknown()) {
            p.notes.push_back(fmt::format("{} is unknown ({}): Megatron Core's default is built", e.key,
                                          e.value.is_unknown() ? e.value.unknown_reason() : "part of it"));
            return;
        }
        c[e.key] = to_json(e.value);
    });
    for (const FieldName f : kPerRunFields) c.erase(std::string(f.str()));
    for (const FieldName f : kStageFields) c.erase(std::string(f.str()));
    auto set = [&](FieldName f) -> json& { return c[std::string(f.str())]; };
    set(field::num_layers) = n * pp * vpp;  // n per model chunk
    set(field::hidden_size) = s.hidden;
    set(field::num_attention_heads) = s.heads;
    set(field::num_query_groups) = s.query_groups;
    if (!s.mla) set(field::kv_channels) = s.head_dim;
    set(field::ffn_hidden_size) = s.ffn_hidden;
    if (m.is_moe()) {
        set(field::num_moe_experts) = s.experts;
        set(field::moe_ffn_hidden_size) = s.expert_ffn;
        if (s.shared_expert_ffn > 0) set(field::moe_shared_expert_intermediate_size) = s.shared_expert_ffn;
        json pattern = json::array();
        for (int chunk = 0; chunk < pp * vpp; ++chunk)
            for (auto k : p.kinds) pattern.push_back(memory::has_moe(k) ? 1 : 0);
        set(field::moe_layer_freq) = pattern;
    }
    set(field::tensor_model_parallel_size) = s.tp;
    set(field::pipeline_model_parallel_size) = pp;
    set(field::virtual_pipeline_model_parallel_size) = p.parallel["vpp"];
    set(field::context_parallel_size) = s.cp;
    set(field::expert_model_parallel_size) = s.ep;
    set(field::expert_tensor_parallel_size) = s.etp;
    set(field::sequence_parallel) = s.sequence_parallel;
    p.transformer_config = std::move(c);
    p.summary = shape_summary(s, p.kinds, p.stage ? "per model chunk" : "of the first pipeline stage");
    if (p.stage)
        p.summary = fmt::format("pipeline stage {} of {} ({} model chunk{}): {}", p.stage->stage, p.job.schedule.pp,
                                p.job.schedule.vpp, p.job.schedule.vpp > 1 ? "s" : "", p.summary);
    return p;
}

json mcore_request(const McorePlan& p, int warmup, int steps, std::uint64_t seed) {
    json runs = json::array();
    auto add = [&](const std::string& role, const Recompute& rc) {
        runs.push_back({{"role", role}, {"describe", rc.describe()}, {"recompute", recompute_fields(rc)}});
    };
    add("control", p.runs.control);
    for (const auto& c : p.runs.candidates) add("candidate", c);
    json request = {{"protocol", 2},
                    {"transformer_config", p.transformer_config},
                    {"transformer_impl", p.transformer_impl},
                    {"seq_length", p.shape.seq_length},
                    {"micro_batch", p.shape.micro_batch},
                    {"parallel", p.parallel},
                    {"runs", runs},
                    {"warmup", warmup},
                    {"steps", steps},
                    {"seed", seed}};
    if (p.stage) {
        const memory::Schedule& s = p.stage->schedule;
        request["schedule"] = {{"pipeline", s.pp},
                               {"stage", p.stage->stage},
                               {"virtual", s.vpp},
                               {"micro_batches", s.micro_batches.value_or(s.pp)},
                               {"group", s.group},
                               {"extra_warmup", s.extra_warmup},
                               {"deallocate_outputs", s.deallocate_outputs},
                               {"chunk_layers", p.kinds.size()}};
    }
    return request;
}

bool read_helper_line(const std::string& line, McoreOutcome& out, const McoreCallbacks& cb) {
    if (line.empty() || line.front() != '{') return true;  // a library's own print: not part of the contract
    const json e = json::parse(line, nullptr, false);
    if (e.is_discarded() || !e.is_object() || !e.contains("event")) return true;
    const std::string event = e["event"].is_string() ? e["event"].get<std::string>() : "";
    try {
        if (event == "environment") {
            out.environment = environment_of(e);
            if (cb.environment) cb.environment(*out.environment);
        } else if (event == "step") {
            if (cb.step) cb.step(e.at("index").get<int>(), e.at("done").get<int>(), e.at("total").get<int>());
        } else if (event == "run") {
            if (!out.environment) throw std::runtime_error("a run came before the environment");
            const int index = e.at("index").get<int>();
            if (index != static_cast<int>(out.runs.size()))
                throw std::runtime_error(fmt::format("run {} came where run {} was expected", index, out.runs.size()));
            out.runs.push_back(measurement_of(e));
            if (cb.run) cb.run(index, out.runs.back());
        } else if (event == "error") {
            HelperFailure f{e.value("kind", std::string("crash")), e.value("message", std::string("no message"))};
            if (f.kind == "crash" && e.contains("traceback") && e["traceback"].is_string()) {
                // Where it broke: the traceback's last lines (the whole of it is in the helper's output file).
                const std::string tb = e["traceback"].get<std::string>();
                std::size_t cut = tb.size();
                for (int lines = 0; lines < 7 && cut > 0; ++lines) {
                    const std::size_t nl = tb.rfind('\n', cut - 1);
                    cut = nl == std::string::npos ? 0 : nl;
                }
                f.message += "\n" + tb.substr(cut == 0 ? 0 : cut + 1);
            }
            out.failure = f;
            return false;
        } else if (event == "done") {
            return false;
        }
    } catch (const std::exception& ex) {
        out.failure =
            HelperFailure{"bad_output", fmt::format("the helper's \"{}\" line is not what this mbridge-lint reads "
                                                    "({}): {}",
                                                    event, ex.what(), line.substr(0, 300))};
        return false;
    }
    return true;
}

std::string default_mcore_helper() { return MBRIDGE_LINT_MCORE_HELPER; }

McoreOutcome run_mcore_helper(const std::string& python, const std::string& helper, const json& request,
                              const std::string& work_dir, const McoreCallbacks& cb) {
    McoreOutcome out;
    std::error_code ec;
    if (!fs::exists(helper, ec)) {
        out.failure =
            HelperFailure{"bad_request", fmt::format("the Megatron Core helper is not at {} (this mbridge-lint was "
                                                     "built from another tree)",
                                                     helper)};
        return out;
    }
    std::string dir = work_dir;
    if (dir.empty()) {
        dir = (fs::temp_directory_path() / "mbridge-lint-mcore-XXXXXX").string();
        if (!mkdtemp(dir.data())) dir.clear();
    } else {
        fs::create_directories(dir, ec);
    }
    if (dir.empty() || !fs::is_directory(dir, ec)) {
        out.failure =
            HelperFailure{"bad_request", fmt::format("cannot create the folder {} for the helper's request", dir)};
        return out;
    }
    const std::string request_path = dir + "/request.json";
    out.log_path = dir + "/helper.log";
    std::ofstream(request_path) << request.dump(2) << '\n';
    std::ofstream transcript(dir + "/helper.jsonl");  // the helper's output as read, for a later look
    const std::string cmd = fmt::format("{} {} {} 2> {}", shell_quote(python), shell_quote(helper),
                                        shell_quote(request_path), shell_quote(out.log_path));
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) {
        out.failure = HelperFailure{"missing_python", fmt::format("cannot start {}", python)};
        return out;
    }
    std::string line;
    bool ended = false;
    auto take = [&] {
        transcript << line << '\n' << std::flush;
        if (!ended) ended = !read_helper_line(line, out, cb);
        line.clear();
    };
    for (int c; (c = std::fgetc(pipe)) != EOF;) {
        if (c == '\n') take();
        else line += static_cast<char>(c);
    }
    if (!line.empty()) take();
    const int status = pclose(pipe);
    const int code = status == -1 ? -1 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    if (out.failure) {
        if (out.failure->kind == "crash" || out.failure->kind == "bad_output")
            out.failure->message += fmt::format("\n(the helper's log: {})", out.log_path);
    } else if (code == 127 && !out.environment) {
        out.failure =
            HelperFailure{"missing_python", fmt::format("cannot start the Python interpreter {} (not found): pass "
                                                        "--python with one that has PyTorch and Megatron Core",
                                                        python)};
    } else if (!ended || code != 0) {
        out.failure =
            HelperFailure{"no_result", fmt::format("the Megatron Core helper stopped (exit {}) without a result; the "
                                                   "end of its log ({}):{}",
                                                   code, out.log_path, tail_of(out.log_path, 12))};
    } else if (out.runs.size() != request.at("runs").size()) {
        out.failure = HelperFailure{
            "bad_output", fmt::format("the helper reported {} runs of {}", out.runs.size(), request.at("runs").size())};
    }
    const bool log_named = out.failure && out.failure->message.find(out.log_path) != std::string::npos;
    if (work_dir.empty() && !log_named) {  // a temporary folder nobody will look at
        fs::remove_all(dir, ec);
        out.log_path.clear();
    }
    return out;
}

memory::LayerShape built_shape(const McorePlan& p, const McoreEnvironment& env) {
    memory::LayerShape s = p.shape;
    if (env.spec == "local") {  // Megatron Core's own modules: separate norms, DotProductAttention, no TE fusions
        s.input_norm_separate = true;
        s.pre_mlp_norm_separate = true;
        s.attention = memory::AttentionKernel::Unfused;
        s.mla_latent_norm_fused = false;
    }
    s.softmax_kernel = s.attention == memory::AttentionKernel::Unfused && env.softmax_kernel;
    s.permute_fusion = s.permute_fusion && env.permute_fusion;
    if (!env.experts_module.empty()) s.expert_act_checkpoint = env.experts_module != "SequentialMLP";
    return s;
}

std::optional<Prediction> predict_layers(const memory::LayerShape& shape, const std::vector<memory::LayerKind>& kinds,
                                         const Recompute& rc, bool final_norm) {
    memory::StackOptions options;
    options.final_norm = final_norm;
    const memory::StackPrediction p = memory::predict_stack(shape, kinds, rc, options);
    return Prediction{p.retained_bytes, p.backward_peak_bytes};
}

std::optional<Prediction> predict_stage(const McorePlan& plan, const memory::LayerShape& shape, const Recompute& rc) {
    if (!plan.stage) return std::nullopt;
    memory::Job job = plan.job;
    job.shape = shape;
    job.schedule = plan.stage->schedule;
    job.peft = {};
    const memory::UnitPrediction unit = memory::predict_unit(job, plan.stage->stage, plan.kinds, rc);
    // The measurement's base holds the leftovers of every chunk (the MoE dispatchers', the last received input),
    // which their first forwards free: the rank model's own figures (RankEstimate::activations).
    const memory::StageFigures f = memory::stage_figures(job.schedule, plan.stage->stage, unit);
    return Prediction{f.retained, f.peak};
}

std::string describe_environment(const McoreEnvironment& env) {
    return fmt::format("Megatron Core {} ({} spec; Transformer Engine {}), PyTorch {}, {}", env.megatron_core,
                       env.spec == "local" ? "local" : "Transformer Engine",
                       env.transformer_engine ? *env.transformer_engine : std::string("not installed"), env.torch,
                       env.device);
}

json reference_json(const McorePlan& p, const McoreEnvironment& env) {
    return {{"kind", "mcore"},
            {"megatron_core", env.megatron_core},
            {"megatron_core_path", env.megatron_core_path},
            {"spec", env.spec},
            {"transformer_engine", env.transformer_engine ? json(*env.transformer_engine) : json(nullptr)},
            {"torch", env.torch},
            {"cuda", env.cuda},
            {"python", env.python},
            {"transformer_impl", p.transformer_impl},
            {"transformer_config", p.transformer_config},
            {"facts", env.raw.value("facts", json::object())},
            {"changes", env.changes},
            {"dropped", env.dropped}};
}

}  // namespace mbl::gpu
