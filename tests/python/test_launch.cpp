// What a launch applies: imports found where the launching script puts them on sys.path, performance workloads a
// launcher picks by name at run time, and calls the evaluator cannot follow, which leave unknown what they may write.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <string_view>

#include "py_test_support.hpp"
#include "pyeval/shell_launch.hpp"
#include "pyeval/values.hpp"

using pytest::TempTree;

namespace {

int line_of(std::string_view text, std::string_view needle) {
    const auto at = text.find(needle);
    REQUIRE(at != std::string_view::npos);
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

// A launcher folder laid out as Bridge's performance scripts are: the entry script imports `helpers` as a top-level
// package (its own folder is first on sys.path), the workload tables live in a package the helpers import by a
// name built at run time, and the recipes apply the table their name, GPU and precision select.
const char* kLaunch = R"(import argparse

from helpers.tuning import pick_workload


def main():
    parser = argparse.ArgumentParser()
    parser.parse_args()


if __name__ == "__main__":
    main()
)";

const char* kTuning = R"(import importlib
from dataclasses import dataclass
from typing import List, Optional


@dataclass
class Workload:
    global_batch_size: int = 256
    micro_batch_size: int = 1
    tensor_model_parallel_size: int = 1
    recompute_modules: Optional[List[str]] = None
    cuda_graph_impl: Optional[str] = None
    cuda_graph_scope: Optional[List[str]] = None


def pick_workload(family, model, gpu, dtype):
    tables = importlib.import_module(f"workloads.{family}")
    return getattr(tables, f"{model}_{gpu}_{dtype}".upper(), None)


def apply_workload(cfg, w):
    cfg.train.global_batch_size = w.global_batch_size
    cfg.train.micro_batch_size = w.micro_batch_size
    cfg.model.tensor_model_parallel_size = w.tensor_model_parallel_size
    if w.cuda_graph_impl is not None:
        cfg.model.cuda_graph_impl = w.cuda_graph_impl
    if w.cuda_graph_scope is not None:
        cfg.model.cuda_graph_scope = w.cuda_graph_scope
    if w.recompute_modules is not None:
        cfg.model.recompute_granularity = "selective"
        cfg.model.recompute_modules = w.recompute_modules
    return cfg
)";

const char* kTables = R"(from dataclasses import replace

from helpers.tuning import Workload

HYBRID_NANO_BASE = Workload(global_batch_size=3072, tensor_model_parallel_size=4)

NANO_H100_BF16 = replace(
    HYBRID_NANO_BASE,
    global_batch_size=1024,
    cuda_graph_impl="transformer_engine",
    cuda_graph_scope=["attn", "mamba"],
    recompute_modules=["moe", "layernorm"],
)
)";

const char* kRecipes = R"(from helpers.tuning import apply_workload, pick_workload

from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer, TrainingConfig


def nano_pretrain_config_h100(precision: str = "bf16") -> ConfigContainer:
    w = pick_workload("hybrid", "nano", "h100", precision)
    cfg = ConfigContainer(
        model=GPTModelProvider(num_layers=52, num_moe_experts=128, tensor_model_parallel_size=2),
        train=TrainingConfig(global_batch_size=3072, micro_batch_size=2),
    )
    apply_workload(cfg, w)
    return cfg
)";

}  // namespace

TEST_CASE("a performance workload is a recipe: its values come from the workload file, each with its line",
          "[python][launch]") {
    TempTree tree({{"scripts/perf/launch.py", kLaunch},
                   {"scripts/perf/helpers/__init__.py", ""},
                   {"scripts/perf/helpers/tuning.py", kTuning},
                   {"scripts/perf/workloads/__init__.py", ""},
                   {"scripts/perf/workloads/hybrid/__init__.py",
                    "from .tables import NANO_H100_BF16\nfrom .recipes import nano_pretrain_config_h100\n"},
                   {"scripts/perf/workloads/hybrid/tables.py", kTables},
                   {"scripts/perf/workloads/hybrid/recipes.py", kRecipes},
                   // No script launches this one: `helpers` is not on its sys.path, so the call is not followed.
                   {"tools/standalone.py", R"(from helpers.tuning import apply_workload

from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer


def standalone_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8, recompute_granularity="selective"))
    apply_workload(cfg, None)
    return cfg
)"}});
    auto e = pytest::evaluate(tree, "scripts/perf/workloads/hybrid/recipes.py");
    REQUIRE(e.recipes.count("nano_pretrain_config_h100"));
    const std::string recipe = "nano_pretrain_config_h100";
    auto written_at = [&](const char* dotted, const char* needle) {
        const mbl::Value* v = e.get(recipe, dotted);
        REQUIRE(v);
        INFO(dotted << ": " << v->prov().detail);
        CHECK(v->prov().detail.rfind("the value is written at ", 0) == 0);
        CHECK(v->prov().detail.ends_with(fmt::format("workloads/hybrid/tables.py:{}", line_of(kTables, needle))));
    };
    CHECK(e.get(recipe, "train.global_batch_size")->display() == "1024");
    written_at("train.global_batch_size", "global_batch_size=1024");
    CHECK(e.get(recipe, "train.micro_batch_size")->display() == "1");  // the Workload default, not the recipe's 2
    CHECK(e.get(recipe, "model.tensor_model_parallel_size")->display() == "4");
    written_at("model.tensor_model_parallel_size", "tensor_model_parallel_size=4");
    CHECK(e.get(recipe, "model.recompute_granularity")->display() == "\"selective\"");
    CHECK(e.get(recipe, "model.recompute_modules")->display() == "[\"moe\", \"layernorm\"]");
    written_at("model.recompute_modules", "recompute_modules=[");
    CHECK(e.get(recipe, "model.cuda_graph_impl")->display() == "\"transformer_engine\"");
    written_at("model.cuda_graph_impl", "cuda_graph_impl=");
    CHECK(e.get(recipe, "model.cuda_graph_scope")->display() == "[\"attn\", \"mamba\"]");
    // The statement that set it is the helper's, reached from the recipe.
    const mbl::Value* gbs = e.get(recipe, "train.global_batch_size");
    CHECK(gbs->prov().range.file.ends_with("scripts/perf/helpers/tuning.py"));
    CHECK(gbs->prov().range.line == line_of(kTuning, "cfg.train.global_batch_size ="));

    auto r = pytest::lint(tree, "scripts/perf/workloads/hybrid/recipes.py");
    CHECK(r.recipes == 1);
    CHECK(r.resolved == 1);

    // Outside the launcher's folder `helpers` cannot be found: the call is not followed and what it may write is
    // unknown; the recipe is not resolved even though it set granularity itself.
    auto s = pytest::evaluate(tree, "tools/standalone.py");
    const mbl::Value* g = s.get("standalone_config", "model.recompute_granularity");
    REQUIRE(g);
    CHECK(g->is_unknown());
    CHECK(g->unknown_reason().rfind(mbl::py::kUnfollowedCall, 0) == 0);
    CHECK(g->unknown_reason().find("helpers.tuning.apply_workload()") != std::string::npos);
    CHECK(pytest::lint(tree, "tools/standalone.py").resolved == 0);
}

TEST_CASE("a call the evaluator cannot follow that receives the config leaves what it may write unknown",
          "[python][launch]") {
    const std::string text = R"(from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.recipes.elsewhere import tune


def tuned_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8, recompute_granularity="full", recompute_method="uniform",
                                                 recompute_num_layers=1))
    tune(cfg)
    return cfg


def set_after_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8))
    tune(cfg.model)
    cfg.model.recompute_granularity = "full"
    cfg.model.recompute_method = "uniform"
    cfg.model.recompute_num_layers = 1
    cfg.model.recompute_modules = None
    cfg.model.distribute_saved_activations = False
    return cfg


def maybe_tuned_config(flag: bool = True) -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8, recompute_granularity="selective"))
    if flag:
        tune(cfg)
    return cfg


def untouched_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8, recompute_granularity="selective"))
    tune("a string is no part of the config")
    return cfg
)";
    TempTree tree({{"r.py", text}});
    auto e = pytest::evaluate(tree, "r.py");
    // Not the value before the call: whatever tune() left.
    const mbl::Value* g = e.get("tuned_config", "model.recompute_granularity");
    REQUIRE(g);
    CHECK(g->is_unknown());
    CHECK(g->unknown_reason() == std::string(mbl::py::kUnfollowedCall) + "megatron.bridge.recipes.elsewhere.tune()");
    CHECK(e.get("tuned_config", "model.num_layers")->is_unknown());        // a default it may have changed
    CHECK(e.get("tuned_config", "model.recompute_method")->is_unknown());  // set before the call
    // Written again after the call: known, while what it did not write stays unknown.
    CHECK(e.get("set_after_config", "model.recompute_granularity")->display() == "\"full\"");
    CHECK(e.get("set_after_config", "model.num_layers")->is_unknown());
    // `flag` is True by default, so the branch runs.
    CHECK(e.get("maybe_tuned_config", "model.recompute_granularity")->is_unknown());
    CHECK(e.get("untouched_config", "model.recompute_granularity")->display() == "\"selective\"");

    pytest::RecipeOptions options;
    options.show_unknowns = true;
    auto r = pytest::lint(tree, "r.py", options);
    CHECK(r.recipes == 4);
    CHECK(r.resolved == 1);  // untouched_config; set_after_config still holds fields tune() may have written
    // --show-unknowns names each call, at its line, with the fields it leaves unknown.
    int named = 0;
    for (const auto& d : r.diagnostics)
        if (d.code == "IN012" && d.message.find("elsewhere.tune()") != std::string::npos) {
            ++named;
            CHECK((d.range.line == line_of(text, "tune(cfg)\n") || d.range.line == line_of(text, "tune(cfg.model)") ||
                   d.range.line == line_of(text, "        tune(cfg)")));
            CHECK(d.message.find("model.") != std::string::npos);
        }
    CHECK(named >= 3);
}

TEST_CASE("an overlay in a Bridge checkout does not stand for the model: advice rests only on what it sets",
          "[python][launch]") {
    // Full recompute under Megatron Core's default dropout: the recipe the overlay is applied to may set dropout 0.
    const char* full = R"(model:
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
)";
    // "moe" recompute with expert parallelism 4 but no experts written: the base recipe has them.
    const char* selective = R"(model:
  expert_model_parallel_size: 4
  recompute_granularity: selective
  recompute_method: uniform
  recompute_modules: [moe]
)";
    // Megatron Core rejects this whatever the base: full recompute needs a method.
    const char* broken = "model:\n  recompute_granularity: full\n  recompute_num_layers: 1\n";
    TempTree checkout({{"src/megatron/bridge/__init__.py", ""},
                       {"examples/conf/full.yaml", full},
                       {"examples/conf/selective.yaml", selective},
                       {"examples/conf/broken.yaml", broken}});
    TempTree loose({{"full.yaml", full}, {"selective.yaml", selective}});
    auto codes = [](const pytest::RunResult& r) {
        std::multiset<std::string> out;
        for (const auto& d : r.diagnostics) out.insert(d.code);
        return out;
    };
    // Outside a checkout the mapping is the model as written.
    CHECK(codes(pytest::lint(loose, "full.yaml")).count("RC115") == 1);
    const auto loose_selective = codes(pytest::lint(loose, "selective.yaml"));
    CHECK(loose_selective.count("RC103") == 1);
    CHECK(loose_selective.count("RC108") == 1);
    // In a checkout: no advice from a default, advice on what the overlay itself sets, and Megatron Core's
    // rejections as before.
    CHECK(codes(pytest::lint(checkout, "examples/conf/full.yaml")).count("RC115") == 0);
    const auto in_tree = codes(pytest::lint(checkout, "examples/conf/selective.yaml"));
    CHECK(in_tree.count("RC103") == 0);
    CHECK(in_tree.count("RC108") == 1);
    CHECK(codes(pytest::lint(checkout, "examples/conf/broken.yaml")).count("RC004") == 1);
}

TEST_CASE("folders a launching script puts on sys.path itself are searched, computed from its own location",
          "[python][launch]") {
    TempTree tree(
        {{"tools/launch/run.py", R"(import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "extra"))
# sys.path.insert(0, str(Path(__file__).parent / "hidden"))
sys.path.insert(0, "relative/to/the/working/directory")

if __name__ == "__main__":
    pass
)"},
         {"tools/shared/knobs.py", "def set_gbs(cfg):\n    cfg.train.global_batch_size = 512\n"},
         {"tools/launch/extra/more.py", "def set_mbs(cfg):\n    cfg.train.micro_batch_size = 4\n"},
         {"tools/launch/hidden/secret.py", "def set_tp(cfg):\n    cfg.model.tensor_model_parallel_size = 8\n"},
         {"tools/launch/recipes/r.py", R"(from knobs import set_gbs
from more import set_mbs
from secret import set_tp

from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer, TrainingConfig


def launched_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8), train=TrainingConfig(global_batch_size=8))
    set_gbs(cfg)
    set_mbs(cfg)
    return cfg


def commented_out_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8))
    set_tp(cfg)  # `hidden` is only named in a comment: not on sys.path, not followed
    return cfg
)"}});
    auto e = pytest::evaluate(tree, "tools/launch/recipes/r.py");
    REQUIRE(e.get("launched_config", "train.global_batch_size"));
    CHECK(e.get("launched_config", "train.global_batch_size")->display() == "512");
    CHECK(e.get("launched_config", "train.micro_batch_size")->display() == "4");
    const mbl::Value* tp = e.get("commented_out_config", "model.tensor_model_parallel_size");
    REQUIRE(tp);
    CHECK(tp->is_unknown());
    CHECK(tp->unknown_reason().find("secret.set_tp()") != std::string::npos);
}

TEST_CASE("importlib.import_module: absolute, relative to a package, and names it cannot know", "[python][launch]") {
    TempTree tree({{"pkg/__init__.py", ""}, {"pkg/tables/__init__.py", "GBS = 96\n"}, {"pkg/r.py", R"(import importlib
import os

from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer, TrainingConfig


def imported_config(which: str = "tables") -> ConfigContainer:
    absolute = importlib.import_module("pkg." + which)
    relative = importlib.import_module("." + which, package="pkg")
    dots_only = importlib.import_module("..", package="pkg")
    unknown = importlib.import_module(".tables", package=os.environ.get("TABLES_PACKAGE"))
    return ConfigContainer(model=GPTModelProvider(num_layers=8),
                           train=TrainingConfig(global_batch_size=absolute.GBS, micro_batch_size=relative.GBS,
                                                eval_iters=unknown.GBS))
)"}});
    auto e = pytest::evaluate(tree, "pkg/r.py");
    REQUIRE(e.get("imported_config", "train.global_batch_size"));
    CHECK(e.get("imported_config", "train.global_batch_size")->display() == "96");
    CHECK(e.get("imported_config", "train.micro_batch_size")->display() == "96");
    CHECK(e.get("imported_config", "train.eval_iters")->is_unknown());
}

namespace {

// A copy of a layout under tests/data/launchers, so that it is the whole source root (the repository around it is
// not).
void copy_layout(const TempTree& tree, const std::string& name) {
    std::filesystem::copy(std::string(MBRIDGE_LINT_TEST_DATA) + "/data/" + name, tree.path(),
                          std::filesystem::copy_options::recursive);
}

std::vector<std::string> pythonpath_of(const std::vector<mbl::py::LaunchedScript>& runs, const std::string& script) {
    for (const auto& r : runs)
        if (r.script == script) return r.pythonpath;
    FAIL("no run of " << script);
    return {};
}

}  // namespace

TEST_CASE("shell launchers: the scripts they run and the PYTHONPATH each gets, from what the text says for certain",
          "[python][launch]") {
    using mbl::py::scripts_launched_by;
    // Folders computed from the launcher's own location, a `cd` to one, then a run relative to it.
    auto runs = scripts_launched_by("/t/examples/x/launch.sh", R"SH(
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd -- "${SCRIPT_DIR}/../.." && pwd)
LIBS="${LIBS:-$ROOT/libs}"
export PYTHONPATH="$ROOT/src:${LIBS}:${PYTHONPATH:-}"
cd "$ROOT" && python scripts/a.py
PYTHON=${PYTHON:-python3}
"${PYTHON}" -u tools/b.py  # a comment: python c.py
uv run examples/c.py
python -m some.module d.py
PYTHONPATH=$(dirname "$(readlink -f "$0")")/only_here:$HOME/x torchrun --nproc_per_node 8 e.py
)SH");
    REQUIRE(runs.size() == 4);
    CHECK(runs[0].script == "/t/scripts/a.py");
    CHECK(runs[0].line == 6);
    CHECK(runs[0].pythonpath == std::vector<std::string>{"/t/src", "/t/libs"});  // the inherited value is unknown
    CHECK(runs[1].script == "/t/tools/b.py");
    CHECK(runs[2].script == "/t/examples/c.py");
    CHECK(runs[3].script == "/t/e.py");  // relative to the working directory the `cd` set
    CHECK(runs[3].pythonpath == std::vector<std::string>{"/t/examples/x/only_here"});

    // Without a known working directory a relative script or entry is unknown; so is a folder from the environment.
    runs = scripts_launched_by("/t/run.sh", R"SH(export PYTHONPATH=lib:$WORKDIR/src:/abs
python train.py
python "$(dirname "$0")/train.py"
cd "$SOMEWHERE"
python /t/other.py
)SH");
    REQUIRE(runs.size() == 2);
    CHECK(pythonpath_of(runs, "/t/train.py") == std::vector<std::string>{"/abs"});
    CHECK(pythonpath_of(runs, "/t/other.py") == std::vector<std::string>{"/abs"});

    // A PYTHONPATH assigned but never exported does not reach Python; a here-document's lines are no commands.
    runs = scripts_launched_by("/t/run.sh", "PYTHONPATH=/a\npython /t/x.py\ncat <<'EOF'\npython /t/y.py\nEOF\n"
                                            "export PYTHONPATH\npython /t/z.py\n");
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].pythonpath.empty());
    CHECK(runs[1].script == "/t/z.py");
    CHECK(runs[1].pythonpath == std::vector<std::string>{"/a"});

    // The interpreter by any of its names, with or without a folder; a word that only starts like one is not it.
    runs = scripts_launched_by("/t/run.sh", "/usr/bin/python3.11 /t/a.py\npythonic /t/b.py\n./venv/bin/python "
                                            "/t/c.py\ntorchrun /t/d.py\nmytorchrun /t/e.py\npython3x /t/f.py\n");
    REQUIRE(runs.size() == 3);
    CHECK(runs[0].script == "/t/a.py");
    CHECK(runs[1].script == "/t/c.py");
    CHECK(runs[2].script == "/t/d.py");
}

TEST_CASE("PYTHONPATH set by the tree's shell launchers is searched for the scripts they run, and what it cannot name "
          "stays unknown",
          "[python][launch]") {
    TempTree tree({});
    copy_layout(tree, "launchers");

    // examples/train/launch.sh: `${REPO_ROOT}/shared` from the launcher's location; the script has no __main__ guard,
    // only the launcher says it runs by its path.
    auto e = pytest::evaluate(tree, "examples/train/pretrain.py");
    REQUIRE(e.get("tuned_config", "train.global_batch_size"));
    CHECK(e.get("tuned_config", "train.global_batch_size")->display() == "1024");
    CHECK(e.get("tuned_config", "model.recompute_granularity")->display() == "\"selective\"");
    CHECK(e.get("tuned_config", "model.recompute_modules")->display() == "[\"moe\", \"layernorm\"]");
    // The vendored 3rdparty/Megatron-LM it also names is never read: the call stays unfollowed.
    const mbl::Value* tp = e.get("vendored_config", "model.tensor_model_parallel_size");
    REQUIRE(tp);
    CHECK(tp->is_unknown());
    CHECK(tp->unknown_reason().find("vendored_knobs.set_tp()") != std::string::npos);

    // examples/finetune/run.sh: one command's PYTHONPATH, from $(dirname "$0"); its $HOME entry is unknown.
    e = pytest::evaluate(tree, "examples/finetune/finetune.py");
    REQUIRE(e.get("finetune_config", "train.micro_batch_size"));
    CHECK(e.get("finetune_config", "train.micro_batch_size")->display() == "4");
    CHECK(e.get("private_config", "model.recompute_granularity")->is_unknown());

    // tools/container.sh roots its PYTHONPATH at a container path: the import stays unknown here.
    e = pytest::evaluate(tree, "tools/standalone.py");
    REQUIRE(e.get("container_config", "train.global_batch_size"));
    CHECK(e.get("container_config", "train.global_batch_size")->is_unknown());

    // --show-unknowns names the module nobody can find at the one call into it, and nowhere else.
    pytest::RecipeOptions options;
    options.show_unknowns = true;
    auto r = pytest::lint(tree, "examples/finetune/finetune.py", options);
    CHECK(r.recipes == 2);
    CHECK(r.resolved == 1);
    std::set<int> lines;
    for (const auto& d : r.diagnostics)
        if (d.message.find("private_knobs") != std::string::npos) {
            CHECK(d.code == "IN012");
            lines.insert(d.range.line);
        }
    CHECK(lines == std::set<int>{16});
}

TEST_CASE("a job script named on its own is checked through the config its __main__ block hands to pretrain()",
          "[python][launch]") {
    const std::string script = R"(from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.training.pretrain import pretrain


def forward_step(state, data_iterator, model):
    return None


def make_base():
    return ConfigContainer(model=GPTModelProvider(num_layers=8))


if __name__ == "__main__":
    cfg = make_base()
    cfg.model.cpu_offloading = True
    cfg.model.recompute_granularity = "selective"
    pretrain(cfg, forward_step)
    cfg.model.cpu_offloading = False  # after the job started: not the config it ran with
)";
    TempTree tree({{"train.py", script},
                   {"finetune_kw.py", R"(from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.training.finetune import finetune

if __name__ == '__main__':
    c = ConfigContainer(model=GPTModelProvider(num_layers=4, recompute_granularity="full", recompute_method="block",
                                               recompute_num_layers=2))
    finetune(forward_step_func=None, config=c)
)"},
                   {"no_entry.py", R"(if __name__ == "__main__":
    print("nothing to train")
)"}});
    auto r = pytest::lint(tree, "train.py");
    CHECK(r.recipes == 1);
    int rc001 = 0;
    for (const auto& d : r.diagnostics)
        if (d.code == "RC001") {
            ++rc001;
            CHECK(d.severity == mbl::Severity::Error);
            CHECK(d.range.line == line_of(script, "recompute_granularity = \"selective\""));
        }
    CHECK(rc001 == 1);

    // The config passed by keyword, to finetune().
    auto kw = pytest::evaluate(tree, "finetune_kw.py");
    REQUIRE(kw.recipes.count("__main__"));
    CHECK(kw.get("__main__", "model.recompute_granularity")->display() == "\"full\"");
    auto k = pytest::lint(tree, "finetune_kw.py");
    CHECK(k.recipes == 1);
    CHECK(k.resolved == 1);

    // Nothing handed to an entry point: still IN009, and it says why the block did not count.
    auto n = pytest::lint(tree, "no_entry.py");
    CHECK(n.recipes == 0);
    REQUIRE(n.diagnostics.size() == 1);
    CHECK(n.diagnostics[0].code == "IN009");
    CHECK(n.diagnostics[0].message.find("__main__") != std::string::npos);
}

// A launcher's YAML that names the recipe it is applied to (`recipe: {_target_: ...}`; the launcher calls it, then
// merges the file's sections over the config it returns) is an overlay wherever it lies: a field it leaves alone is
// the recipe's. Here the recipe's provider may turn moe_grouped_gemm on, so "moe_act" recompute is not certainly
// refused, and nothing rests on the experts the overlay does not write. A value OmegaConf interpolates (a resolver the
// launcher registers) is unknown, whatever type its text has.
TEST_CASE("a YAML naming its recipe is an overlay, and an OmegaConf interpolation is unknown", "[python][launch]") {
    const std::string overlay = R"(recipe:
  _target_: megatron.bridge.recipes.acme.acme_moe_pretrain_config
  seq_length: 4096
model:
  seq_length: ${art:data,pack_size}
  recompute_granularity: selective
  recompute_modules: [moe, moe_act]
)";
    const std::string plain = R"(model:
  recompute_granularity: selective
  recompute_modules: [moe, moe_act]
)";
    // The recipe by its name in Bridge's recipe package, as run_recipe.py's --recipe takes it.
    const std::string by_name = "recipe:\n  name: acme_moe_pretrain_config\n" + plain;
    TempTree tree({{"conf/overlay.yaml", overlay}, {"conf/plain.yaml", plain}, {"conf/by_name.yaml", by_name}});
    for (const auto& d : pytest::lint(tree, "conf/by_name.yaml").diagnostics) {
        INFO(d.code << " " << d.message);
        CHECK(d.severity != mbl::Severity::Error);
        CHECK(d.code != "IN004");  // the launcher's section, not one Bridge skips
    }
    pytest::RecipeOptions unknowns;
    unknowns.show_unknowns = true;
    auto r = pytest::lint(tree, "conf/overlay.yaml", unknowns);
    bool rc009 = false, seq_unknown = false;
    for (const auto& d : r.diagnostics) {
        INFO(d.code << " " << d.message);
        CHECK(d.severity != mbl::Severity::Error);
        CHECK(d.code != "RC103");  // "no MoE layers" would rest on the default num_moe_experts
        CHECK(d.code != "IN005");  // "${...}" is no string to the job
        if (d.code == "RC009") {
            rc009 = true;
            CHECK(d.message.find("moe_grouped_gemm") != std::string::npos);
        }
        if (d.code == "IN012" && d.message.find("model.seq_length") != std::string::npos)
            seq_unknown = d.message.find("interpolation") != std::string::npos;
    }
    CHECK(rc009);  // a warning: possible, depending on what the recipe sets
    CHECK(seq_unknown);

    // The same settings in a file that names no recipe are the model as written: Megatron Core refuses them.
    auto p = pytest::lint(tree, "conf/plain.yaml");
    CHECK(std::any_of(p.diagnostics.begin(), p.diagnostics.end(), [](const mbl::Diagnostic& d) {
        return d.code == "RC009" && d.severity == mbl::Severity::Error;
    }));
}

// Most launchers keep their work in a function: `if __name__ == "__main__": main()`, main() parsing arguments and
// calling train(args), which calls pretrain(cfg, ...); or `main(args)` inside a `try`. The block runs into the
// functions it calls, up to the first statement that hands a config to an entry point, distill(cfg) included.
TEST_CASE("a job script's __main__ block is followed into the functions it calls", "[python][launch]") {
    const std::string nested = R"(from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.training.pretrain import pretrain


def build(layers):
    return ConfigContainer(model=GPTModelProvider(num_layers=layers))


def train(layers):
    cfg = build(layers)
    cfg.model.cpu_offloading = True
    if layers > 2:
        cfg.model.recompute_granularity = "selective"
    pretrain(config=cfg, forward_step_func=None)
    cfg.model.cpu_offloading = False


def main():
    train(8)
    print("done")


if __name__ == "__main__":
    main()
)";
    const std::string wrapped = R"(import sys

from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.training.distill import distill


def main(argv):
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4, recompute_granularity="full",
                                                 recompute_method="block", recompute_num_layers=2))
    distill(cfg)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except BaseException:
        raise
)";
    // A config built from what the command line says, then written to: the block reaches pretrain(), so the file is
    // a job whose values are unknown, not a file without a recipe.
    const std::string opaque = R"(import argparse

from megatron.bridge.training.pretrain import pretrain


def main():
    args = argparse.ArgumentParser().parse_args()
    cfg = args.make_config()
    cfg.logger.log_interval = 1
    pretrain(cfg, None)


if __name__ == "__main__":
    main()
)";
    // The entry point after a branch that ends the run on one path: its statements run as a branch of their own, whose
    // writes the unwinding undoes; the config handed over keeps them.
    const std::string after_branch = R"(import argparse

from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.training.pretrain import pretrain


def main():
    args = argparse.ArgumentParser().parse_args()
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4))
    if args.dry_run:
        return
    cfg.model.recompute_granularity = "full"
    cfg.model.recompute_method = "uniform"
    cfg.model.recompute_num_layers = 1
    pretrain(cfg, None)


if __name__ == "__main__":
    main()
)";
    TempTree tree(
        {{"nested.py", nested}, {"wrapped.py", wrapped}, {"opaque.py", opaque}, {"after_branch.py", after_branch}});
    auto b = pytest::evaluate(tree, "after_branch.py");
    REQUIRE(b.recipes.count("__main__"));
    CHECK(b.get("__main__", "model.recompute_method")->display() == "\"uniform\"");
    for (const auto& d : pytest::lint(tree, "after_branch.py").diagnostics) CHECK(d.severity != mbl::Severity::Error);
    auto n = pytest::lint(tree, "nested.py");
    CHECK(n.recipes == 1);
    int rc001 = 0;
    for (const auto& d : n.diagnostics)
        if (d.code == "RC001") {
            ++rc001;
            CHECK(d.severity == mbl::Severity::Error);
            CHECK(d.range.line == line_of(nested, "recompute_granularity = \"selective\""));
        }
    CHECK(rc001 == 1);

    auto w = pytest::evaluate(tree, "wrapped.py");
    REQUIRE(w.recipes.count("__main__"));
    CHECK(w.get("__main__", "model.recompute_method")->display() == "\"block\"");

    auto o = pytest::lint(tree, "opaque.py");
    CHECK(o.recipes == 1);
    CHECK(o.resolved == 0);
    for (const auto& d : o.diagnostics) CHECK(d.code != "IN009");
}
