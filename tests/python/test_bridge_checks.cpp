// Megatron Bridge's comm-overlap start-up checks, compiled from Bridge's source (parser/bridge/mcore_checks.cpp,
// compile_bridge_section_setup): the bundled program (schemas/bridge/checks.json, Bridge 067f987) and a small Bridge
// tree written here, run by the executor (core/post_init.hpp run_steps) over configs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/effective_model.hpp"
#include "core/post_init.hpp"
#include "core/schema.hpp"
#include "engine/validate.hpp"
#include "parser/bridge/mcore_tree.hpp"
#include "parser/yaml_loader.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

using mbl::post_init::Event;
using mbl::post_init::Outcome;
using mbl::post_init::Program;
using mbl::post_init::Site;

const Site* site_at(const Program& p, int line) {
    for (const auto& s : p.sites)
        if (s.line == line && s.file == "src/megatron/bridge/training/comm_overlap.py") return &s;
    return nullptr;
}

// The statements a function compiles to at one line of its file, in its body and every nested block.
void statements_at(const std::vector<mbl::post_init::Stmt>& block, int line,
                   std::vector<const mbl::post_init::Stmt*>& out) {
    for (const auto& st : block) {
        if (st.line == line) out.push_back(&st);
        statements_at(st.body, line, out);
        statements_at(st.orelse, line, out);
    }
}

constexpr const char* kCommOverlapPy = "src/megatron/bridge/training/comm_overlap.py";
constexpr const char* kConfigPy = "src/megatron/bridge/training/config.py";

// The raise events of an outcome at a line of comm_overlap.py (or another file).
std::vector<const Event*> raised_at(const Outcome& o, int line, const std::string& file = kCommOverlapPy) {
    std::vector<const Event*> out;
    for (const auto& e : o.events)
        if (e.site->kind == Site::Kind::Raise && e.site->line == line && e.site->file == file) out.push_back(&e);
    return out;
}

// Whether any event comes from comm_overlap.py (CommOverlapConfig's setup ran).
bool comm_overlap_ran(const Outcome& o) {
    return std::any_of(o.events.begin(), o.events.end(), [](const Event& e) { return e.site->file == kCommOverlapPy; });
}

mbl::EffectiveModel effective(const std::string& yaml, const std::string& rev = "0.20.dev") {
    auto loaded = mbl::load_yaml("cfg.yaml", yaml);
    REQUIRE(loaded.ok());
    auto fin =
        mbl::finalize(loaded.root, *mbl::Schema::instance().revision(rev), mbl::SourceRange::point("cfg.yaml", 1, 1));
    return std::move(fin.model);
}

// A dataset section naming a class that is not Energon's: Bridge's start-up turns the expert-parallel overlap off
// before its setup for Energon's native packing (config.py:2024, _disable_native_energon_packing_moe_overlap).
constexpr const char* kGptDataset = "dataset:\n  _target_: megatron.bridge.training.config.GPTDatasetConfig\n";

constexpr const char* kMoe = R"(model:
  num_moe_experts: 8
  expert_model_parallel_size: 4
  moe_token_dispatcher_type: alltoall
  bf16: true
)";

// The package files of a Bridge tree written in a test (src/megatron/bridge/training/).
void write_bridge_packages(const mbl::test::TempDir& dir) {
    for (const char* package : {"src/megatron", "src/megatron/bridge", "src/megatron/bridge/training"})
        dir.write(std::string(package) + "/__init__.py", "");
}

// The start-up steps over a config given as {model: {...}, <section>: {...}}: the model's fields by name, a section's
// as "section.name", a section itself through post_init::kSectionLookup.
std::optional<Outcome> run_over(const Program& program, const mbl::Value& root) {
    auto lookup = [&](std::string_view name) -> const mbl::Value* {
        const auto dot = name.find('.');
        if (name.rfind(mbl::post_init::kSectionLookup, 0) == 0)
            return root.find(std::string(name.substr(mbl::post_init::kSectionLookup.size())));
        if (dot == std::string_view::npos) return root.find("model")->find(std::string(name));
        const mbl::Value* section = root.find(std::string(name.substr(0, dot)));
        return section ? section->find(std::string(name.substr(dot + 1))) : nullptr;
    };
    return mbl::post_init::run_steps(program, lookup, {});
}

}  // namespace

TEST_CASE("the bundled Bridge program: CommOverlapConfig's checks with their file, line and the fields they read",
          "[bridge-checks]") {
    const Program& p = mbl::Schema::instance().bridge_checks();
    CHECK(p.commit == "067f987df03b8355b03192d88d70f1709fedf51a");
    // runtime_config_update's calls, in order: the mixed_precision section's under `if cfg.mixed_precision is not
    // None:` (config.py 2015-2016), the whole config's own methods given no argument (2019, 2024), the comm_overlap
    // section's with what each is given, then `cfg.validate()`.
    REQUIRE(p.steps.size() == 7);
    CHECK(p.steps[0].function == "MixedPrecisionConfig.finalize");
    CHECK(p.steps[0].when == "mixed_precision");
    CHECK(p.steps[1].function == "MixedPrecisionConfig.setup");
    CHECK(p.steps[1].args == std::vector<std::string>{"mixed_precision", "", "optimizer", "ddp"});
    CHECK(p.steps[1].line == 2016);
    CHECK(p.steps[2].function == "ConfigContainer.set_data_parallel_size");
    CHECK(p.steps[3].function == "ConfigContainer._disable_native_energon_packing_moe_overlap");
    CHECK(p.steps[3].line == 2024);
    CHECK(p.steps[3].when.empty());
    const auto& finalize = p.steps[4];
    const auto& setup = p.steps[5];
    const auto& validate = p.steps[6];
    // Each section's class fields in declaration order, with the defaults the source states (mixed_precision.py
    // 40-76 at 067f987): what dataclasses.fields() lists and what a field the config leaves out holds.
    REQUIRE(p.section_fields.count("mixed_precision") == 1);
    const auto& mp = p.section_fields.at("mixed_precision");
    CHECK(mp.cls == "megatron.bridge.training.mixed_precision.MixedPrecisionConfig");
    REQUIRE(mp.names.size() >= 3);
    CHECK(std::vector<std::string>(mp.names.begin(), mp.names.begin() + 3) ==
          std::vector<std::string>{"fp32", "fp16", "bf16"});
    const auto recipe = std::find(mp.names.begin(), mp.names.end(), "fp8_recipe");
    REQUIRE(recipe != mp.names.end());
    const auto& dflt = mp.defaults[static_cast<std::size_t>(recipe - mp.names.begin())];
    REQUIRE(dflt.value);
    CHECK(dflt.value->as_string() == "tensorwise");
    REQUIRE(p.section_fields.count("comm_overlap") == 1);
    // What changes no config object is not compiled as changing all of them: `torch.use_deterministic_algorithms(True)`
    // (config.py 1063, a function outside the tree given a literal);
    // `config.ddp.use_distributed_optimizer = True` (config.py 2122) sets that section's field.
    auto writes_all = [&](const char* function, int line) {
        std::vector<const mbl::post_init::Stmt*> found;
        statements_at(p.functions.at(function).body, line, found);
        REQUIRE_FALSE(found.empty());
        return std::any_of(found.begin(), found.end(), [](const auto* st) {
            return std::find(st->names.begin(), st->names.end(), mbl::post_init::kWritesAll) != st->names.end();
        });
    };
    CHECK_FALSE(writes_all("ConfigContainer._validate_and_apply_deterministic_mode", 1063));
    std::vector<const mbl::post_init::Stmt*> sync;
    statements_at(
        p.functions.at("megatron.bridge.training.config._validate_and_sync_distributed_optimizer_settings").body, 2122,
        sync);
    REQUIRE(sync.size() == 1);
    CHECK(sync[0]->kind == mbl::post_init::St::Set);
    CHECK(finalize.function == "CommOverlapConfig.finalize");
    CHECK(finalize.when == "comm_overlap");
    CHECK(setup.when == "comm_overlap");
    CHECK(finalize.args == std::vector<std::string>{"comm_overlap"});
    CHECK(setup.function == "CommOverlapConfig.setup");
    CHECK(setup.args == std::vector<std::string>{"comm_overlap", "", "optimizer", "ddp"});
    CHECK(setup.file == "src/megatron/bridge/training/config.py");
    CHECK(setup.line == 2029);
    // Over the whole config: ConfigContainer's fields are its sections.
    CHECK(validate.function == "ConfigContainer.validate");
    CHECK(validate.args == std::vector<std::string>{std::string(mbl::post_init::kContainer)});
    CHECK(validate.when.empty());
    CHECK(validate.line == 2032);
    for (const char* section : {"model", "train", "dataset", "ddp", "checkpoint", "comm_overlap"})
        CHECK(std::find(p.sections.begin(), p.sections.end(), section) != p.sections.end());
    const Site* specs = nullptr;
    for (const auto& s : p.sites)
        if (s.file == kConfigPy && s.line == 1279) specs = &s;
    REQUIRE(specs != nullptr);
    CHECK(specs->function == "ConfigContainer.validate");
    CHECK(specs->text == "offline_packing_specs must be set when enable_offline_packing=True.");
    // Read through getattr(self.dataset, "...") into locals, and still named as the section's attributes.
    CHECK(specs->reads == std::vector<std::string>{"dataset.enable_offline_packing", "dataset.offline_packing_specs"});

    const Site* full = site_at(p, 499);
    REQUIRE(full != nullptr);
    CHECK(full->exception == "AssertionError");
    CHECK(full->text == "disable full recomputation when enabling overlap_moe_expert_parallel_comm");
    CHECK(full->function == "CommOverlapConfig._get_model_comm_overlap_cfgs");
    // The guard reads the section's own switch (as finalize copied it) and the model's field.
    CHECK(full->reads == std::vector<std::string>{"comm_overlap.user_comm_overlap_cfg.overlap_moe_expert_parallel_comm",
                                                  "recompute_granularity"});
    const Site* modules = site_at(p, 510);
    REQUIRE(modules != nullptr);
    CHECK(modules->text == "disable moe in recompute_modules when enabling overlap_moe_expert_parallel_comm");
    CHECK(modules->reads.back() == "recompute_modules");
    REQUIRE(site_at(p, 502) != nullptr);
    REQUIRE(site_at(p, 505) != nullptr);
    // A guard in another module Bridge calls with the model (utils/cuda_graph.py has_cuda_graph_module) is followed.
    CHECK(p.functions.count("megatron.bridge.utils.cuda_graph.has_cuda_graph_module") == 1);

    SECTION("the program survives its own JSON form") {
        CHECK(Program::from_json(p.to_json()).to_json() == p.to_json());
    }
}

TEST_CASE("Bridge's checks run only with a comm_overlap section, over what the section switches on",
          "[bridge-checks]") {
    SECTION("the overlap switched on in comm_overlap and full recompute: Bridge's assert certainly fires") {
        auto m = effective(std::string(kGptDataset) +
                           std::string("comm_overlap:\n  overlap_moe_expert_parallel_comm: true\n") + kMoe +
                           "  recompute_granularity: full\n");
        REQUIRE(m.bridge_setup != nullptr);
        auto r = raised_at(*m.bridge_setup, 499);
        REQUIRE(r.size() == 1);
        CHECK(r[0]->certain);
        CHECK(r[0]->message == "disable full recomputation when enabling overlap_moe_expert_parallel_comm");
        CHECK(raised_at(*m.bridge_setup, 502).empty());
    }
    SECTION("TP overlap switched off on one path only (HAVE_TE unknown) leaves the EP switch known") {
        // comm_overlap.py:449 turns user_comm_overlap_cfg.tp_comm_overlap off where Transformer Engine is missing: the
        // two paths differ in that attribute alone, so the EP overlap's asserts stay certain.
        auto m = effective(std::string(kGptDataset) +
                           std::string("comm_overlap:\n  overlap_moe_expert_parallel_comm: true\n"
                                       "  tp_comm_overlap: true\n") +
                           kMoe + "  tensor_model_parallel_size: 2\n  sequence_parallel: true\n" +
                           "  recompute_granularity: full\n");
        REQUIRE(m.bridge_setup != nullptr);
        auto r = raised_at(*m.bridge_setup, 499);
        REQUIRE(r.size() == 1);
        CHECK(r[0]->certain);
    }
    SECTION("Bridge reads recompute_modules as written, before Megatron Core fills it in") {
        auto m = effective(std::string(kGptDataset) +
                           std::string("comm_overlap:\n  overlap_moe_expert_parallel_comm: true\n") + kMoe +
                           "  recompute_granularity: selective\n  recompute_modules: [moe]\n");
        REQUIRE(m.bridge_setup != nullptr);
        CHECK(raised_at(*m.bridge_setup, 510).size() == 1);
        CHECK(raised_at(*m.bridge_setup, 499).empty());
    }
    SECTION("Energon's native packing, or a dataset the config does not state: the overlap may be off, no certainty") {
        // config.py:2024 turns the overlap off before the setup for Energon's native packing (VLM schedule plans).
        const std::string overlap = std::string("comm_overlap:\n  overlap_moe_expert_parallel_comm: true\n") + kMoe +
                                    "  recompute_granularity: full\n";
        auto energon = effective("dataset:\n  _target_: megatron.bridge.data.builders.energon.EnergonDatasetConfig\n"
                                 "  packing_buffer_size: 8\n" +
                                 overlap);
        REQUIRE(energon.bridge_setup != nullptr);
        CHECK(raised_at(*energon.bridge_setup, 499).empty());
        auto unstated = effective(overlap);
        REQUIRE(unstated.bridge_setup != nullptr);
        for (const auto* e : raised_at(*unstated.bridge_setup, 499)) CHECK_FALSE(e->certain);
    }
    SECTION("a comm_overlap section that leaves the overlap off: no assert") {
        auto m = effective(std::string(kGptDataset) + std::string("comm_overlap:\n  tp_comm_overlap: false\n") + kMoe +
                           "  recompute_granularity: full\n");
        REQUIRE(m.bridge_setup != nullptr);
        for (const auto& e : m.bridge_setup->events)
            CHECK((e.site->kind != Site::Kind::Raise || e.site->file != kCommOverlapPy));
    }
    SECTION("no comm_overlap section: Bridge runs no comm-overlap setup, even with the overlap set on the model") {
        auto m = effective(std::string(kMoe) + "  overlap_moe_expert_parallel_comm: true\n" +
                           "  recompute_granularity: full\n");
        REQUIRE(m.bridge_setup != nullptr);  // ConfigContainer.validate runs all the same
        CHECK_FALSE(comm_overlap_ran(*m.bridge_setup));
    }
    SECTION("at a revision without the model field Bridge asserts on, the provider may declare it: no raise") {
        // Bridge 067f987 asserts hasattr(model_cfg, "overlap_moe_expert_parallel_comm") (comm_overlap.py:466);
        // Megatron Core declares the field from 0.14 on, but a provider of an older Bridge is no class the linter
        // knows field by field.
        auto m = effective("comm_overlap:\n  tp_comm_overlap: false\nmodel:\n  num_layers: 4\n", "0.13");
        REQUIRE(m.bridge_setup != nullptr);
        for (const auto& e : m.bridge_setup->events) CHECK_FALSE((e.site->kind == Site::Kind::Raise && e.certain));
    }
    SECTION("a Transformer Engine or PyTorch version guard is unknown, unless the version is stated") {
        auto m = effective(std::string(kGptDataset) +
                           std::string("comm_overlap:\n  overlap_moe_expert_parallel_comm: true\n"
                                       "  delay_wgrad_compute: true\n") +
                           kMoe + "  gradient_accumulation_fusion: true\n");
        REQUIRE(m.bridge_setup != nullptr);
        auto te = raised_at(*m.bridge_setup, 527);  // assert is_te_min_version("2.7.0")
        REQUIRE(te.size() == 1);
        CHECK_FALSE(te[0]->certain);
        CHECK(te[0]->why_uncertain.find("Transformer Engine") != std::string::npos);
        auto torch = raised_at(*m.bridge_setup, 493);  // assert is_torch_min_version("2.6.0")
        REQUIRE(torch.size() == 1);
        CHECK_FALSE(torch[0]->certain);
        REQUIRE(m.rerun_bridge_setup);
        mbl::post_init::JobFacts old_te;
        old_te.te_version = "2.6.0";
        auto with_old = m.rerun_bridge_setup(old_te);
        REQUIRE(with_old.has_value());
        REQUIRE(raised_at(*with_old, 527).size() == 1);
        CHECK(raised_at(*with_old, 527)[0]->certain);
        mbl::post_init::JobFacts new_te;
        new_te.te_version = "2.8.0";
        CHECK(raised_at(*m.rerun_bridge_setup(new_te), 527).empty());
    }
}

TEST_CASE("a Bridge tree's own comm-overlap setup is compiled from the calls its start-up makes", "[bridge-checks]") {
    mbl::test::TempDir dir;
    write_bridge_packages(dir);
    dir.write("src/megatron/bridge/training/config.py", R"py(from dataclasses import dataclass
from typing import Optional

from megatron.bridge.training.comm_overlap import OverlapSetup


@dataclass
class ConfigContainer:
    comm_overlap: Optional[OverlapSetup] = None


def runtime_config_update(cfg: ConfigContainer) -> None:
    if cfg.comm_overlap is not None:
        cfg.comm_overlap.finalize()
        cfg.comm_overlap.setup(cfg.model, cfg.ddp)
)py");
    dir.write("src/megatron/bridge/training/comm_overlap.py", R"py(from dataclasses import dataclass
from typing import Optional


@dataclass
class _Resolved:
    overlap: bool = None
    limit: int = 2


@dataclass
class OverlapSetup:
    overlap: Optional[bool] = None

    def finalize(self):
        self.resolved = _Resolved(overlap=self.overlap)

    def setup(self, model_config, ddp_config):
        self._check(model_config)

    def _check(self, model_cfg):
        if self.resolved.overlap is True:
            assert model_cfg.recompute_granularity != "full", "no full recompute with the overlap"
            assert model_cfg.num_layers <= self.resolved.limit * 4, "too many layers for the overlap"
)py");
    mbl::py::TreeReader tree(dir.path() / "src");
    std::string why;
    auto program = mbl::py::compile_bridge_startup(tree, "", why);
    REQUIRE(program != nullptr);
    REQUIRE(program->steps.size() == 2);
    CHECK(program->steps[1].args == std::vector<std::string>{"comm_overlap", "", "ddp"});
    const Site* full = nullptr;
    for (const auto& s : program->sites)
        if (s.text == "no full recompute with the overlap") full = &s;
    REQUIRE(full != nullptr);
    CHECK(full->file == "src/megatron/bridge/training/comm_overlap.py");
    CHECK(full->line == 23);
    CHECK(full->reads == std::vector<std::string>{"comm_overlap.resolved.overlap", "recompute_granularity"});

    auto run = [&](mbl::Value root) {
        auto o = run_over(*program, root);
        REQUIRE(o.has_value());
        std::vector<std::string> certain;
        for (const auto& e : o->events)
            if (e.certain && e.site->kind == Site::Kind::Raise) certain.push_back(e.message);
        return certain;
    };
    auto config = [](bool overlap, const char* granularity, int layers) {
        mbl::Value model = mbl::Value::map();
        model.set("recompute_granularity", mbl::Value::string(granularity));
        model.set("num_layers", mbl::Value::integer(layers));
        mbl::Value section = mbl::Value::map();
        section.set("overlap", mbl::Value::boolean(overlap));
        mbl::Value root = mbl::Value::map();
        root.set("model", std::move(model));
        root.set("comm_overlap", std::move(section));
        return root;
    };
    // The section's switch reaches the check through finalize's dataclass; its declared default (limit) too.
    CHECK(run(config(true, "full", 4)) == std::vector<std::string>{"no full recompute with the overlap"});
    CHECK(run(config(true, "selective", 9)) == std::vector<std::string>{"too many layers for the overlap"});
    CHECK(run(config(false, "full", 9)).empty());

    SECTION("a start-up that calls nothing on the section under its guard compiles to nothing") {
        dir.write("src/megatron/bridge/training/config.py", R"py(def runtime_config_update(cfg) -> None:
    cfg.comm_overlap.setup(cfg.model)
)py");
        mbl::py::TreeReader other(dir.path() / "src");
        CHECK(mbl::py::compile_bridge_startup(other, "", why) == nullptr);
        CHECK(why.find("runtime_config_update") != std::string::npos);
    }
}

TEST_CASE("ConfigContainer.validate runs over the whole config: nothing is certain after a call it does not follow",
          "[bridge-checks]") {
    const std::string dump = "_target_: megatron.bridge.training.config.ConfigContainer\n"
                             "model:\n  num_layers: 4\n"
                             "train:\n  micro_batch_size: 1\n  global_batch_size: 8\n"
                             "checkpoint:\n  async_save: true\n  ckpt_format: torch\n";
    const std::string sft = "dataset:\n  _target_: megatron.bridge.data.builders.gpt_sft.GPTSFTDatasetConfig\n"
                            "  enable_offline_packing: true\n";
    SECTION("offline packing without its specs: validate's ValueError (config.py:1279) certainly fires") {
        auto m = effective(dump + sft + "  offline_packing_specs: null\n");
        REQUIRE(m.bridge_setup != nullptr);
        auto r = raised_at(*m.bridge_setup, 1279, kConfigPy);
        REQUIRE(r.size() == 1);
        CHECK(r[0]->certain);
        CHECK(r[0]->message == "offline_packing_specs must be set when enable_offline_packing=True.");
        for (const auto* e : raised_at(*m.bridge_setup, 1277, kConfigPy))
            CHECK_FALSE(e->certain);  // in-batch packing unset
    }
    SECTION("with the specs: that check passes") {
        auto m = effective(dump + sft + "  offline_packing_specs:\n    packed_sequence_size: 4096\n");
        REQUIRE(m.bridge_setup != nullptr);
        CHECK(raised_at(*m.bridge_setup, 1279, kConfigPy).empty());
        CHECK(raised_at(*m.bridge_setup, 1281, kConfigPy).empty());
    }
    SECTION("epochs (config.py:1262): decided by the dataset's class where Bridge's source describes it") {
        // isinstance(self.dataset, GPTSFTDatasetConfig) over the class the section's _target_ names (Program::classes).
        auto epochs = [&](const std::string& target) {
            return effective("_target_: megatron.bridge.training.config.ConfigContainer\nmodel:\n  num_layers: 4\n"
                             "train:\n  num_epochs: 1\n"
                             "dataset:\n  _target_: " +
                             target + "\n  dataloader_type: batch\n");
        };
        auto finetuning = epochs("megatron.bridge.data.builders.gpt_sft.GPTSFTDatasetConfig");
        REQUIRE(finetuning.bridge_setup != nullptr);
        CHECK(raised_at(*finetuning.bridge_setup, 1262, kConfigPy).empty());
        CHECK(raised_at(*finetuning.bridge_setup, 1267, kConfigPy).empty());  // dataloader_type "batch" as written
        auto subclass = epochs("megatron.bridge.data.builders.gpt_sft.FinetuningDatasetConfig");  // derives from it
        CHECK(raised_at(*subclass.bridge_setup, 1262, kConfigPy).empty());
        auto pretraining = epochs("megatron.bridge.training.config.GPTDatasetConfig");
        auto r = raised_at(*pretraining.bridge_setup, 1262, kConfigPy);
        REQUIRE(r.size() == 1);
        CHECK(r[0]->certain);
        // A class Bridge's source does not describe (the user's own) may derive from it: unknown.
        auto own = epochs("my_project.data.MyDatasetConfig");
        r = raised_at(*own.bridge_setup, 1262, kConfigPy);
        REQUIRE(r.size() == 1);
        CHECK_FALSE(r[0]->certain);
    }
    SECTION("Energon's task encoder: its class decides isinstance, and its own validate runs") {
        const std::string energon =
            "_target_: megatron.bridge.training.config.ConfigContainer\nmodel:\n  num_layers: 4\n"
            "train:\n  num_epochs: null\n"
            "dataset:\n  _target_: megatron.bridge.data.builders.energon.EnergonDatasetConfig\n"
            "  path: /data\n  seq_length: 4096\n  micro_batch_size: 1\n  packing_buffer_size: 8\n"
            "  task_encoder:\n    _target_: megatron.bridge.data.builders.energon.";
        auto only_qwen = [&](const std::string& encoder) {
            auto m = effective(energon + encoder + "\n    hf_processor_path: org/name\n");
            REQUIRE(m.bridge_setup != nullptr);
            for (const auto& e : m.bridge_setup->events)
                if (e.site->kind == Site::Kind::Raise &&
                    e.site->text.find("supports only QwenVLEnergonTaskEncoderConfig") != std::string::npos)
                    return std::optional<bool>(e.certain);
            return std::optional<bool>();
        };
        CHECK(only_qwen("HFEnergonTaskEncoderConfig") == std::optional<bool>(true));
        CHECK(only_qwen("QwenVLEnergonTaskEncoderConfig") == std::nullopt);
        CHECK(only_qwen("SomeOtherEncoder") == std::optional<bool>(false));  // a class Bridge does not define
    }
    SECTION("the dataset's own validate (config.py:1317) runs where its class is known") {
        auto m =
            effective("_target_: megatron.bridge.training.config.ConfigContainer\nmodel:\n  num_layers: 4\n"
                      "train:\n  num_epochs: null\n"
                      "dataset:\n  _target_: megatron.bridge.data.builders.direct_hf_sft.DirectHFSFTDatasetConfig\n"
                      "  seq_length: 0\n");
        REQUIRE(m.bridge_setup != nullptr);
        const auto& events = m.bridge_setup->events;
        auto raised = std::find_if(events.begin(), events.end(), [](const Event& e) {
            return e.site->kind == Site::Kind::Raise && e.site->function == "DirectHFSFTDatasetConfig.validate";
        });
        REQUIRE(raised != events.end());
        CHECK(raised->certain);
        CHECK(raised->message == "seq_length must be greater than 0.");
        CHECK(std::none_of(events.begin(), events.end(),
                           [](const Event& e) { return e.site->kind == Site::Kind::Unknown && e.site->line == 1317; }));
    }
    SECTION("a dataset attribute the config does not set is unknown, not None") {
        // num_epochs with a dataloader_type the config leaves to the dataset class's default (config.py:1267).
        auto m = effective("_target_: megatron.bridge.training.config.ConfigContainer\nmodel:\n  num_layers: 4\n"
                           "train:\n  num_epochs: 1\ndataset:\n  seq_length: 4096\n");
        REQUIRE(m.bridge_setup != nullptr);
        for (const auto* e : raised_at(*m.bridge_setup, 1267, kConfigPy)) CHECK_FALSE(e->certain);
    }
    SECTION("async_save with a legacy format (config.py:1537) comes after calls not followed") {
        auto m = effective(dump);
        REQUIRE(m.bridge_setup != nullptr);
        // Where the linter stops knowing: self.dataset.validate() (config.py:1317), on a dataset whose class it does
        // not know; the validation is not run past the model's finalize (1401).
        const auto& events = m.bridge_setup->events;
        CHECK(std::any_of(events.begin(), events.end(), [](const Event& e) {
            return e.site->kind == Site::Kind::Unknown && e.site->file == kConfigPy && e.site->line == 1317;
        }));
        CHECK(raised_at(*m.bridge_setup, 1537, kConfigPy).empty());
    }
}

// What the start-up writes on objects it is given, and how far its whole-config validation gets past what the linter
// does not follow: a section's method changes that section only; the model's own finalize (where Bridge's providers
// run Megatron Core's __post_init__) ends what the validation can claim.
TEST_CASE("Bridge's setup writes on the model it is given, and validate goes on past a section's own method",
          "[bridge-checks]") {
    mbl::test::TempDir dir;
    write_bridge_packages(dir);
    dir.write("src/megatron/bridge/training/config.py", R"py(from dataclasses import dataclass
from typing import Optional

from megatron.bridge.training.comm_overlap import OverlapSetup


@dataclass
class ConfigContainer:
    model: object = None
    train: object = None
    dataset: object = None
    ddp: object = None
    comm_overlap: Optional[OverlapSetup] = None

    def validate(self) -> None:
        self.dataset.prepare()
        if self.train.micro_batch_size != 1:
            raise ValueError("micro-batch must be 1")
        if self.dataset.packed:
            raise ValueError("no packing")
        self.model.tp_comm_overlap = False
        self.model.finalize()
        if self.train.global_batch_size != 8:
            raise ValueError("after the model's finalize")


def runtime_config_update(cfg: ConfigContainer) -> None:
    if cfg.comm_overlap is not None:
        cfg.comm_overlap.finalize()
        cfg.comm_overlap.setup(cfg.model, cfg.ddp)
    cfg.validate()
)py");
    dir.write("src/megatron/bridge/training/comm_overlap.py", R"py(from dataclasses import dataclass, fields
from typing import Optional

try:
    import transformer_engine  # noqa: F401

    HAVE_TE = True
except ImportError:
    HAVE_TE = False


@dataclass
class _Resolved:
    tp_comm_overlap: bool = True
    batch_p2p_comm: bool = False


@dataclass
class OverlapSetup:
    overlap: Optional[bool] = None

    def finalize(self):
        self.done = True

    def setup(self, model_config, ddp_config):
        cfg = _Resolved()
        if not HAVE_TE:
            cfg.tp_comm_overlap = False
        if isinstance(cfg, _Resolved):
            cfg.batch_p2p_comm = model_config.pipeline_model_parallel_size > 1
        for field in fields(cfg):
            if hasattr(model_config, field.name):
                setattr(model_config, field.name, getattr(cfg, field.name))
        model_config.overlap_p2p_comm = not cfg.batch_p2p_comm
)py");
    mbl::py::TreeReader tree(dir.path() / "src");
    std::string why;
    auto program = mbl::py::compile_bridge_startup(tree, "", why);
    REQUIRE(program != nullptr);
    REQUIRE(program->steps.size() == 3);

    mbl::Value root = mbl::Value::map();
    mbl::Value model = mbl::Value::map();
    model.set("pipeline_model_parallel_size", mbl::Value::integer(2));
    for (const char* f : {"tp_comm_overlap", "batch_p2p_comm", "overlap_p2p_comm"})
        model.set(f, mbl::Value::boolean(false));
    mbl::Value train = mbl::Value::map();
    train.set("micro_batch_size", mbl::Value::integer(2));
    train.set("global_batch_size", mbl::Value::integer(4));
    mbl::Value dataset = mbl::Value::map();
    dataset.set("packed", mbl::Value::boolean(false));
    root.set("model", std::move(model));
    root.set("train", std::move(train));
    root.set("dataset", std::move(dataset));
    root.set("comm_overlap", mbl::Value::map());
    auto o = run_over(*program, root);
    REQUIRE(o.has_value());
    std::map<std::string, std::optional<bool>> raised;  // message -> certain
    for (const auto& e : o->events)
        if (e.site->kind == Site::Kind::Raise) raised[e.site->text] = e.certain;
    // Not the dataset's: certain past dataset.prepare(); the dataset's own attribute: unknown after it.
    CHECK(raised["micro-batch must be 1"] == std::optional<bool>(true));
    CHECK(raised["no packing"] == std::optional<bool>(false));
    CHECK(raised.count("after the model's finalize") == 0);
    // The setup's writes, through setattr over a dataclass it built (isinstance decided on it, even after a path that
    // depends on Transformer Engine) and an attribute set on the model it was given, as they stood when the
    // validation began.
    REQUIRE(o->rewrites_before_validation.has_value());
    std::map<std::string, mbl::Value> setup;
    for (const auto& r : *o->rewrites_before_validation) setup[r.field] = r.after;
    CHECK(setup["tp_comm_overlap"].is_unknown());
    CHECK(setup["batch_p2p_comm"].as_bool());
    REQUIRE(setup["overlap_p2p_comm"].is_bool());
    CHECK_FALSE(setup["overlap_p2p_comm"].as_bool());
    // After the model's finalize nothing is known: validate's own write is not claimed.
    for (const auto& r : o->rewrites)
        if (r.field == "tp_comm_overlap") CHECK(r.after.is_unknown());

    // The start-up with `lines` before its cfg.validate(), compiled; the call at its third step stops what is claimed.
    auto forked_with = [&](const std::string& lines) {
        const std::string startup = dir.path().string() + "/src/megatron/bridge/training/config.py";
        std::ifstream in(startup);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        text.replace(text.find("    cfg.validate()"), 0, lines);
        dir.write("src/megatron/bridge/training/config.py", text);
        mbl::py::TreeReader fork(dir.path() / "src");
        auto forked = mbl::py::compile_bridge_startup(fork, "", why);
        REQUIRE(forked != nullptr);
        REQUIRE(forked->steps.size() == 4);
        auto after = run_over(*forked, root);
        REQUIRE(after.has_value());
        for (const auto& e : after->events) CHECK_FALSE((e.site->kind == Site::Kind::Raise && e.certain));
        return forked->steps[2].function;
    };
    SECTION("a method of the whole config called on some paths only: nothing after it is claimed") {
        const std::string step = forked_with("    if cfg.comm_overlap is None:\n        cfg.validate()\n");
        CHECK(step.rfind(mbl::post_init::kUnfollowedStep, 0) == 0);
    }
    SECTION("a method of the whole config the linter cannot find: nothing after it is claimed") {
        CHECK(forked_with("    cfg.apply_fork_defaults()\n").find("ConfigContainer.apply_fork_defaults") !=
              std::string::npos);
    }
}

TEST_CASE("a precision section's setup copies what differs onto the model and the other sections, from the source",
          "[bridge-checks]") {
    mbl::test::TempDir dir;
    write_bridge_packages(dir);
    dir.write("src/megatron/bridge/training/config.py", R"py(import os
from dataclasses import dataclass, field, fields
from typing import Optional, Union


@dataclass
class Precision:
    bf16: bool = False
    grad_reduce_in_fp32: bool = True

    def setup(self, model_config, ddp_config):
        _copy(self, model_config)
        _copy(self, ddp_config)


def _copy(precision, config):
    for f in fields(precision):
        if not hasattr(config, f.name):
            continue
        old_val = getattr(config, f.name)
        new_val = getattr(precision, f.name)
        if old_val != new_val:
            setattr(config, f.name, new_val)


@dataclass
class DataParallel:
    grad_reduce_in_fp32: bool = False
    bucket_size: Optional[int] = None


@dataclass
class Overlap:
    def setup(self, model_config):
        os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"
        if "NCCL_DEBUG" in os.environ:
            os.environ.pop("NCCL_DEBUG")
        if model_config.bf16:
            raise ValueError("reached past the environment")


@dataclass
class ConfigContainer:
    model: object = None
    ddp: DataParallel = field(default_factory=DataParallel)
    mixed_precision: Optional[Union[Precision, str]] = None
    comm_overlap: Optional[Overlap] = None


def runtime_config_update(cfg: ConfigContainer) -> None:
    if cfg.mixed_precision is not None:
        cfg.mixed_precision.setup(cfg.model, cfg.ddp)
    if cfg.comm_overlap is not None:
        cfg.comm_overlap.setup(cfg.model)
)py");
    mbl::py::TreeReader tree(dir.path() / "src");
    std::string why;
    auto program = mbl::py::compile_bridge_startup(tree, "", why);
    REQUIRE(program != nullptr);
    REQUIRE(program->steps.size() == 2);
    CHECK(program->steps[0].when == "mixed_precision");
    // The classes of the sections a setup is given are described too, each field with its default.
    REQUIRE(program->section_fields.count("ddp") == 1);
    CHECK(program->section_fields.at("ddp").names == std::vector<std::string>{"grad_reduce_in_fp32", "bucket_size"});
    CHECK(program->section_fields.at("ddp").complete);

    mbl::Value root = mbl::Value::map();
    mbl::Value model = mbl::Value::map();
    model.set("num_layers", mbl::Value::integer(2));
    // What the recipe left unknown: the setup writes the precision's value wherever it differs, so it is known after.
    model.set("bf16", mbl::Value::unknown("returned by a helper the linter could not follow"));
    mbl::Value precision = mbl::Value::map();
    precision.set("bf16", mbl::Value::boolean(true));
    root.set("model", std::move(model));
    root.set("mixed_precision", std::move(precision));
    root.set("comm_overlap", mbl::Value::map());
    const auto& revision = *mbl::Schema::instance().revision("0.20.dev");
    auto found = mbl::finalize(root, revision, {}, nullptr, {}, {}, program);
    const auto& m = found.model;
    REQUIRE(m[mbl::field::bf16].is_bool());
    CHECK(m[mbl::field::bf16].as_bool());
    // The ddp section the config does not set takes the class's default (False), and the setup copies the precision
    // config's default (True) over it.
    REQUIRE(m.run.ddp.grad_reduce_in_fp32.is_bool());
    CHECK(m.run.ddp.grad_reduce_in_fp32.as_bool());
    // Setting the process environment changes no config object: the raise after it is certain.
    REQUIRE(m.bridge_setup);
    bool certain = false;
    for (const auto& e : m.bridge_setup->events)
        if (e.site->kind == Site::Kind::Raise && e.site->text == "reached past the environment") certain = e.certain;
    CHECK(certain);
}

TEST_CASE("the bundled precision catalog is Bridge's registry as the front end resolves it", "[bridge-checks]") {
    // Generated (scripts/mcore_facts.py --bridge-precision): the subchannel recipe sets fp8 "hybrid" at 067f987
    // (mixed_precision.py 382); the hand-written catalog it replaces said "e4m3".
    auto loaded = mbl::load_yaml("cfg.yaml", "mixed_precision: bf16_with_fp8_subchannel_scaling_mixed\n");
    auto fin = mbl::finalize(loaded.root, *mbl::Schema::instance().revision("0.20.dev"), {});
    REQUIRE(fin.errors.empty());
    CHECK(fin.model[mbl::field::fp8].as_string() == "hybrid");
    CHECK(fin.model[mbl::field::fp8_recipe].as_string() == "blockwise");
    // The hyphenated spelling Bridge's register() adds is a name of its own in the registry.
    auto hyphen = mbl::load_yaml("cfg.yaml", "mixed_precision: bf16-mixed\n");
    auto fin2 = mbl::finalize(hyphen.root, *mbl::Schema::instance().revision("0.20.dev"), {});
    CHECK(fin2.errors.empty());
    CHECK(fin2.model[mbl::field::bf16].truthy());
    // A field the recipe does not state is MixedPrecisionConfig's default, copied over Megatron Core's.
    auto plain = mbl::load_yaml("cfg.yaml", "mixed_precision: {bf16: true}\n");
    auto fin3 = mbl::finalize(plain.root, *mbl::Schema::instance().revision("0.20.dev"), {});
    CHECK(fin3.model[mbl::field::fp8_recipe].as_string() == "tensorwise");
    REQUIRE(fin3.model.run.ddp.grad_reduce_in_fp32.is_bool());
    CHECK(fin3.model.run.ddp.grad_reduce_in_fp32.as_bool());
}

TEST_CASE("every ConfigContainer field Bridge's source declares is a known top-level section of a YAML config",
          "[bridge-checks]") {
    // schemas/config_container.json is written by hand; bridge/checks.json's `sections` are read from
    // ConfigContainer in Bridge's config.py. A field the hand-written list lacks made a dump's `tensor_inspect: null`
    // an IN004 warning saying Bridge skips the key, while Bridge declares it (config.py:1009 at 067f987).
    const auto& known = mbl::Schema::instance().config_sections();
    const auto& declared = mbl::Schema::instance().bridge_checks().sections;
    REQUIRE(declared.size() > 10);
    for (const auto& name : declared) {
        if (name.starts_with("_")) continue;  // init=False fields (_checkpoint_load_required): no config sets them
        INFO(name);
        CHECK(std::find(known.begin(), known.end(), name) != known.end());
    }
    auto loaded = mbl::load_yaml("dump.yaml", "model:\n  num_layers: 2\ntensor_inspect: null\ntensr_inspect: null\n");
    REQUIRE(loaded.ok());
    const auto found = mbl::validate_config(loaded.root, *mbl::Schema::instance().revision("0.20.dev"));
    REQUIRE(found.size() == 1);  // the misspelt one only
    CHECK(found[0].code == "IN004");
    CHECK(found[0].message.find("\"tensr_inspect\"") != std::string::npos);
}
