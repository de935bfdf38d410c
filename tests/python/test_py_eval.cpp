// The abstract evaluator: what it computes for the shapes recipes use, where each value is said to come from, what
// it leaves unknown, and that no recipe code ever runs.
#include <catch2/catch.hpp>

#include "py_test_support.hpp"

using pytest::TempTree;

namespace {

const char* kHeader = R"(from megatron.bridge.training.config import ConfigContainer, TrainingConfig
from megatron.bridge.models import GPTModelProvider
)";

std::string recipe_file(const std::string& body) { return std::string(kHeader) + body; }

}  // namespace

TEST_CASE("literals, arithmetic, containers and comprehensions", "[python][eval]") {
    TempTree tree({{"r.py", recipe_file(R"(
BASE = ["core_attn"]
SIZES = {"small": 8, "large": 80}


def calc_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=SIZES["large"] // 2), train=TrainingConfig())
    t = cfg.train
    t.int_ops = [7 // 2, -7 // 2, 7 % 3, -7 % 3, 2 ** 10, 1_000 + 0x10, 3 * 4 - 5]
    t.float_ops = 7 / 2
    t.strings = "a" + "b" * 3 + f"-{SIZES['small']}-" + "{}x{}".format(2, 3) + "_".join(["p", "q"])
    t.compare = [1 < 2 <= 2, "mlp" in BASE, "core_attn" in BASE, 3 not in [1, 2], None is None]
    t.comp = [x * 2 for x in range(4) if x != 2]
    t.dict_comp = {k: v for k, v in SIZES.items() if v > 10}
    t.unpacked = {**SIZES, "tiny": 1}
    t.star = [*BASE, *("mlp",)]
    t.sliced = [10, 20, 30, 40][1:3] + [10, 20, 30, 40][::-2]
    t.builtins = [len(BASE), max(3, 9, 4), min([5, 2]), sum([1, 2, 3]), sorted([3, 1, 2]), int("12"), abs(-3)]
    t.cond = "yes" if SIZES["small"] > 4 else "no"
    items = list(BASE)
    items.append("mlp")
    items.extend(["moe"])
    items += ["layernorm"]
    items.remove("moe")
    t.items = items
    cfg.model.recompute_modules = items
    a = b = 5
    t.multi = a + b
    first, *rest = [1, 2, 3]
    t.unpack = [first, rest]
    return cfg
)")}});
    auto e = pytest::evaluate(tree, "r.py");
    REQUIRE(e.recipes.count("calc_config"));
    auto display = [&](const std::string& path) {
        const mbl::Value* v = e.get("calc_config", path);
        return v ? v->display() : std::string("<missing>");
    };
    CHECK(display("train.int_ops") == "[3, -4, 1, 2, 1024, 1016, 7]");
    CHECK(display("train.float_ops") == "3.5");
    CHECK(display("train.strings") == "\"abbb-8-2x3p_q\"");
    CHECK(display("train.compare") == "[True, False, True, True, True]");
    CHECK(display("train.comp") == "[0, 2, 6]");
    CHECK(display("train.builtins") == "[1, 9, 2, 6, [1, 2, 3], 12, 3]");
    CHECK(display("train.cond") == "\"yes\"");
    CHECK(display("train.star") == "[\"core_attn\", \"mlp\"]");
    CHECK(display("train.sliced") == "[20, 30, 40, 20]");
    CHECK(display("train.items") == "[\"core_attn\", \"mlp\", \"layernorm\"]");
    CHECK(display("model.recompute_modules") == "[\"core_attn\", \"mlp\", \"layernorm\"]");
    CHECK(display("model.num_layers") == "40");
    CHECK(display("train.multi") == "10");
    CHECK(display("train.unpack") == "[1, [2, 3]]");
    const mbl::Value* dc = e.get("calc_config", "train.dict_comp");
    REQUIRE(dc);
    CHECK(dc->find("large"));
    CHECK_FALSE(dc->find("small"));
    const mbl::Value* un = e.get("calc_config", "train.unpacked");
    REQUIRE(un);
    CHECK(un->entries().size() == 3);
}

TEST_CASE("helpers in other modules, defaults, keyword arguments, returns and aliases", "[python][eval]") {
    TempTree tree({{"pkg/__init__.py", ""},
                   {"pkg/helpers.py", R"(
def set_recompute(cfg, granularity, method=None, *, layers=None, **extra):
    model = cfg.model
    model.recompute_granularity = granularity
    model.recompute_method = method
    model.recompute_num_layers = layers
    for key, value in extra.items():
        setattr(model, key, value)
    return granularity == "full"


def parallelism(gpus):
    return gpus // 8, 8
)"},
                   {"pkg/alias.py", "from .helpers import set_recompute as apply_recompute\n"},
                   {"pkg/r.py", recipe_file(R"(
from .alias import apply_recompute
from . import helpers as h


def base_config() -> ConfigContainer:
    return ConfigContainer(model=GPTModelProvider(num_layers=32))


def derived_config() -> ConfigContainer:
    cfg = base_config()
    is_full = apply_recompute(cfg, "full", "uniform", layers=2, distribute_saved_activations=True)
    cfg.model.tensor_model_parallel_size, cfg.model.pipeline_model_parallel_size = h.parallelism(16)
    cfg.train = TrainingConfig(flag=is_full)
    return cfg


def replaced_config() -> ConfigContainer:
    cfg = derived_config()
    cfg.model = GPTModelProvider(num_layers=8)  # whole-object replacement drops everything set before
    return cfg
)")}});
    auto e = pytest::evaluate(tree, "pkg/r.py");
    REQUIRE(e.recipes.count("derived_config"));
    CHECK(e.get("derived_config", "model.recompute_granularity")->display() == "\"full\"");
    CHECK(e.get("derived_config", "model.recompute_method")->display() == "\"uniform\"");
    CHECK(e.get("derived_config", "model.recompute_num_layers")->display() == "2");
    CHECK(e.get("derived_config", "model.distribute_saved_activations")->display() == "True");
    CHECK(e.get("derived_config", "model.tensor_model_parallel_size")->display() == "2");
    CHECK(e.get("derived_config", "model.pipeline_model_parallel_size")->display() == "8");
    CHECK(e.get("derived_config", "train.flag")->display() == "True");
    CHECK(e.get("replaced_config", "model.recompute_granularity") == nullptr);
    CHECK(e.get("replaced_config", "model.num_layers")->display() == "8");

    // The value set in the helper points at the helper's line, with the call chain as steps.
    const mbl::Value* g = e.get("derived_config", "model.recompute_granularity");
    CHECK(g->prov().range.file.find("helpers.py") != std::string::npos);
    CHECK(g->prov().range.line == 4);
    REQUIRE(g->prov().chain.size() == 1);
    CHECK(g->prov().chain[0].range.file.find("r.py") != std::string::npos);
    CHECK(g->prov().chain[0].message == "set_recompute() is called here");
    // A keyword argument of a constructor points at the keyword argument.
    const mbl::Value* layers = e.get("base_config", "model.num_layers");
    CHECK(layers->prov().range.column > 20);
}

TEST_CASE("a name a module of the tree does not define is unknown, never an object that fails a check",
          "[python][eval]") {
    // presets.py was renamed to LARGE_V2; the recipe still reads LARGE (Python raises AttributeError there).
    TempTree tree({{"pkg/__init__.py", ""},
                   {"pkg/presets.py", R"(from dataclasses import dataclass
from typing import Optional


@dataclass
class Preset:
    cuda_graph_impl: Optional[str] = None
    offload_layers: Optional[int] = None


LARGE_V2 = Preset(cuda_graph_impl="none")
)"},
                   {"pkg/r.py", recipe_file(R"(
from . import presets


def guarded_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8))
    p = presets.LARGE
    if p.offload_layers is not None:
        cfg.model.cpu_offloading = True
        cfg.model.recompute_granularity = "selective"
    return cfg


def direct_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8))
    cfg.model.cuda_graph_impl = presets.LARGE.cuda_graph_impl
    cfg.model.cuda_graph_scope = [presets.LARGE.cuda_graph_impl]
    return cfg


def present_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8))
    cfg.model.cuda_graph_impl = presets.LARGE_V2.cuda_graph_impl
    return cfg


def moved_module_config() -> ConfigContainer:
    from . import old_presets  # the module itself was renamed: the package pkg holds no such name
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8))
    cfg.model.cuda_graph_impl = old_presets.LARGE.cuda_graph_impl
    return cfg
)")}});
    auto e = pytest::evaluate(tree, "pkg/r.py");
    REQUIRE(e.recipes.count("direct_config"));
    const mbl::Value* impl = e.get("direct_config", "model.cuda_graph_impl");
    REQUIRE(impl);
    CHECK(impl->is_unknown());
    CHECK(impl->unknown_reason().find("pkg.presets defines no name \"LARGE\"") != std::string::npos);
    // `is not None` of it is unknown: both outcomes of the branch stay possible.
    CHECK(e.get("guarded_config", "model.cpu_offloading")->is_unknown());
    CHECK(e.get("guarded_config", "model.recompute_granularity")->is_unknown());
    CHECK(e.get("present_config", "model.cuda_graph_impl")->display() == "\"none\"");
    const mbl::Value* moved = e.get("moved_module_config", "model.cuda_graph_impl");
    REQUIRE(moved);
    CHECK(moved->is_unknown());
    CHECK(moved->unknown_reason().find("pkg defines no name \"old_presets\"") != std::string::npos);
    // No check runs on a value nobody can know: no RC001 (offloading with recompute), no RC035 (cuda graphs).
    for (const auto& d : pytest::lint(tree, "pkg/r.py").diagnostics) {
        INFO(d.code << ": " << d.message);
        CHECK(d.severity != mbl::Severity::Error);
    }
}

TEST_CASE("dataclass defaults of provider classes in the source root, with inheritance and field()", "[python][eval]") {
    TempTree tree({{"prov.py", R"(
from dataclasses import dataclass, field
from megatron.core.transformer.transformer_config import TransformerConfig


@dataclass
class BaseProvider(TransformerConfig):
    hidden_dropout: float = 0.0
    recompute_modules: list = field(default_factory=lambda: ["core_attn", "mlp"])


@dataclass
class ChildProvider(BaseProvider):
    num_layers: int = 12
    recompute_granularity: str = field(default="selective")
)"},
                   {"r.py", R"(
from megatron.bridge.training.config import ConfigContainer
from prov import ChildProvider


def child_config() -> ConfigContainer:
    cfg = ConfigContainer(model=ChildProvider(num_layers=24))
    if cfg.model.attention_dropout > 0.05:  # a Megatron Core default (0.1): known
        cfg.model.hidden_dropout = 0.2
    return cfg
)"}});
    auto e = pytest::evaluate(tree, "r.py");
    REQUIRE(e.recipes.count("child_config"));
    CHECK(e.get("child_config", "model.num_layers")->display() == "24");
    CHECK(e.get("child_config", "model.recompute_granularity")->display() == "\"selective\"");
    CHECK(e.get("child_config", "model.recompute_modules")->display() == "[\"core_attn\", \"mlp\"]");
    CHECK(e.get("child_config", "model.hidden_dropout")->display() == "0.2");
    const mbl::Value* g = e.get("child_config", "model.recompute_granularity");
    CHECK(g->prov().origin == mbl::Origin::Default);
    CHECK(g->prov().detail == "default of ChildProvider");
    CHECK(g->prov().range.file.find("prov.py") != std::string::npos);
    CHECK(g->prov().range.line == 15);
}

TEST_CASE("unknown conditions merge both branches, equal outcomes stay known, raising paths drop out",
          "[python][eval]") {
    TempTree tree({{"r.py", recipe_file(R"(
import os


def guard(cfg, value):
    if value is None:
        raise ValueError("needed")
    cfg.model.recompute_method = "block"


def early_return(cfg, flag):
    if flag:
        return "early"
    cfg.model.recompute_num_layers = 3
    return "late"


def branches_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(), train=TrainingConfig())
    flag = os.environ.get("FLAG")
    if flag:
        cfg.model.recompute_granularity = "full"
    else:
        cfg.model.recompute_granularity = "selective"
    if flag == "x":
        cfg.model.sequence_parallel = True
        cfg.train.note = "same"
    else:
        cfg.model.sequence_parallel = True
    guard(cfg, flag)
    cfg.train.outcome = early_return(cfg, flag)
    for item in os.listdir("."):
        cfg.train.looped = item
    return cfg
)")}});
    auto e = pytest::evaluate(tree, "r.py");
    REQUIRE(e.recipes.count("branches_config"));
    CHECK(e.get("branches_config", "model.recompute_granularity")->is_unknown());
    CHECK(e.get("branches_config", "model.recompute_granularity")->unknown_reason().find("condition at") !=
          std::string::npos);
    CHECK(e.get("branches_config", "model.sequence_parallel")->display() == "True");
    CHECK(e.get("branches_config", "train.note")->is_unknown());  // set on one path only
    CHECK(e.get("branches_config", "model.recompute_method")->display() == "\"block\"");
    CHECK(e.get("branches_config", "model.recompute_num_layers")->is_unknown());
    CHECK(e.get("branches_config", "train.outcome")->is_unknown());
    CHECK(e.get("branches_config", "train.looped")->is_unknown());
}

TEST_CASE("nothing in a recipe is ever run: no files deleted, written or sockets opened", "[python][eval][safety]") {
    TempTree tree(pytest::Files{});
    const std::string sentinel = tree.path("sentinel.txt");
    const std::string created = tree.path("created-by-recipe.txt");
    tree.write("sentinel.txt", "keep me\n");
    tree.write("r.py", recipe_file(R"(
import os
import shutil
import socket
import subprocess

SENTINEL = ")" + sentinel + R"("
CREATED = ")" + created + R"("


def _wipe():
    os.remove(SENTINEL)
    shutil.rmtree(os.path.dirname(SENTINEL))
    subprocess.run(["rm", "-f", SENTINEL], check=True)
    os.system("touch " + CREATED)
    with open(CREATED, "w") as f:
        f.write("owned")
    socket.create_connection(("example.com", 80)).sendall(b"data")
    exec('open(CREATED, "w")')
    eval('__import__("os").remove(SENTINEL)')
    __import__("os").remove(SENTINEL)


def hostile_config() -> ConfigContainer:
    _wipe()
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4))
    cfg.model.recompute_granularity = "selective"
    return cfg
)"));
    auto result = pytest::lint(tree, "r.py");
    CHECK(result.recipes == 1);
    CHECK(result.resolved == 1);
    CHECK(std::filesystem::exists(sentinel));
    CHECK_FALSE(std::filesystem::exists(created));
}

TEST_CASE("limits end in unknowns, never a crash or a hang", "[python][eval][limits]") {
    std::string deep_expr = "1";
    // Python refuses brackets nested past 200 (an IN002 before parsing); a unary chain nests as deep as it is long.
    for (int i = 0; i < 3000; ++i) deep_expr = "-" + deep_expr;
    std::string long_sum = "0";
    for (int i = 0; i < 20000; ++i) long_sum += " + 1";
    TempTree tree({{"r.py", recipe_file(R"(
def recurse(cfg, n):
    cfg.model.recompute_method = "uniform"
    return recurse(cfg, n + 1)


def recursive_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider())
    recurse(cfg, 0)
    return cfg


def spin_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider())
    n = 0
    while True:
        n += 1
    return cfg


def huge_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(), train=TrainingConfig())
    cfg.train.big = [0] * 10 ** 12
    cfg.train.text = "x" * 10 ** 12
    cfg.train.power = 2 ** 200
    cfg.train.deep = )" + deep_expr + R"(
    cfg.train.wide = )" + long_sum + R"(
    cfg.model.recompute_granularity = "selective"
    return cfg
)")}});
    auto e = pytest::evaluate(tree, "r.py");
    REQUIRE(e.recipes.count("recursive_config"));
    // The recursive helper got the model: it is poisoned, so every model field is unknown.
    const mbl::Value* g = e.get("recursive_config", "model.recompute_granularity");
    REQUIRE(g);
    CHECK(g->is_unknown());
    CHECK(g->unknown_reason().find("deeper than") != std::string::npos);
    REQUIRE(e.recipes.count("spin_config"));
    CHECK(e.get("spin_config", "model.recompute_granularity")->is_unknown());
    bool budget_warning = false;
    for (const auto& d : e.recipes.at("spin_config").diagnostics) budget_warning |= d.code == "IN008";
    CHECK(budget_warning);
    REQUIRE(e.recipes.count("huge_config"));
    CHECK(e.get("huge_config", "train.big")->is_unknown());
    CHECK(e.get("huge_config", "train.text")->is_unknown());
    CHECK(e.get("huge_config", "train.power")->is_unknown());
    CHECK(e.get("huge_config", "train.deep")->is_unknown());
    CHECK(e.get("huge_config", "model.recompute_granularity")->display() == "\"selective\"");
}

TEST_CASE("a syntax error in a recipe file is IN002 at its line", "[python][eval]") {
    TempTree tree(pytest::Files{{"r.py", "def broken_config() -> ConfigContainer:\n    x = [1, 2\n    return x\n"}});
    auto e = pytest::evaluate(tree, "r.py");
    REQUIRE(e.errors.size() == 1);
    CHECK(e.errors[0].code == "IN002");
    CHECK(e.errors[0].range.line >= 2);
    CHECK(e.recipes.empty());
}

TEST_CASE("Hugging Face architectures: --hf-config, the cache, the catalog, and unknown models", "[python][hf]") {
    TempTree tree(
        {{"r.py", R"(
from megatron.bridge import AutoBridge
from megatron.bridge.training.config import ConfigContainer


def ds_config() -> ConfigContainer:
    return ConfigContainer(model=AutoBridge.from_hf_pretrained("deepseek-ai/DeepSeek-V3").to_megatron_provider())


def local_config() -> ConfigContainer:
    return ConfigContainer(model=AutoBridge.from_hf_pretrained("me/local-llama").to_megatron_provider())


def cached_config() -> ConfigContainer:
    return ConfigContainer(model=AutoBridge.from_hf_pretrained("me/cached").to_megatron_provider())
)"},
         {"local/config.json",
          R"({"model_type": "llama", "num_hidden_layers": 6, "hidden_size": 64, "num_attention_heads": 4})"},
         {"hub/models--me--cached/snapshots/abc/config.json",
          R"({"model_type": "qwen3_moe", "num_hidden_layers": 4, "num_experts": 8, "moe_intermediate_size": 32})"},
         {"hub/models--me--cached/refs/main", "abc"}});
    pytest::RecipeOptions opts;
    opts.hf_configs = {"me/local-llama=" + tree.path("local"), tree.path("hub")};
    auto e = pytest::evaluate(tree, "r.py", opts);
    // DeepSeek-V3 from the bundled catalog, with the family facts: MLA, grouped GEMM, three dense layers first.
    CHECK(e.get("ds_config", "model.num_layers")->display() == "61");
    CHECK(e.get("ds_config", "model.multi_latent_attention")->display() == "True");
    CHECK(e.get("ds_config", "model.moe_grouped_gemm")->display() == "True");
    CHECK(e.get("ds_config", "model.num_moe_experts")->display() == "256");
    CHECK(e.get("ds_config", "model.moe_shared_expert_intermediate_size")->display() == "2048");
    const mbl::Value* freq = e.get("ds_config", "model.moe_layer_freq");
    REQUIRE(freq);
    REQUIRE(freq->items().size() == 61);
    CHECK(freq->items()[2].as_int() == 0);
    CHECK(freq->items()[3].as_int() == 1);
    CHECK(e.get("ds_config", "model.num_layers")->prov().detail.find("bundled catalog") != std::string::npos);
    // A config.json given with --hf-config.
    CHECK(e.get("local_config", "model.num_layers")->display() == "6");
    CHECK(e.get("local_config", "model.hidden_dropout")->display() == "0.0");
    CHECK(e.get("local_config", "model.num_layers")->prov().detail.find("--hf-config") != std::string::npos);
    // The Hugging Face cache layout.
    CHECK(e.get("cached_config", "model.num_moe_experts")->display() == "8");
    CHECK(e.get("cached_config", "model.moe_ffn_hidden_size")->display() == "32");

    // An unknown model: architecture fields unknown, and a warning that says how to supply config.json.
    TempTree unknown(pytest::Files{{"r.py", R"(
from megatron.bridge import AutoBridge
from megatron.bridge.training.config import ConfigContainer


def mystery_config() -> ConfigContainer:
    return ConfigContainer(model=AutoBridge.from_hf_pretrained("nobody/nothing").to_megatron_provider())
)"}});
    auto u = pytest::evaluate(unknown, "r.py");
    CHECK(u.get("mystery_config", "model.num_layers")->is_unknown());
    const auto& diags = u.recipes.at("mystery_config").diagnostics;
    REQUIRE(diags.size() == 1);
    CHECK(diags[0].code == "IN010");
    CHECK(diags[0].severity == mbl::Severity::Warning);
    CHECK(diags[0].range.line == 7);
    bool how = false;
    for (const auto& n : diags[0].notes) how |= n.message.find("--hf-config nobody/nothing=") != std::string::npos;
    CHECK(how);
}

TEST_CASE("results do not depend on the number of threads", "[python][eval]") {
    std::string body;
    for (int i = 0; i < 40; ++i)
        body += "\n\ndef r" + std::to_string(i) +
                "_config() -> ConfigContainer:\n    cfg = ConfigContainer(model="
                "GPTModelProvider(num_layers=8))\n    cfg.model.recompute_granularity = \"" +
                (i % 2 ? "full" : "selective") +
                "\"\n    cfg.model.recompute_modules = [\"core_attn\"]\n    return cfg\n";
    TempTree tree(pytest::Files{{"r.py", recipe_file(body)}});
    pytest::RecipeOptions one, four;
    one.jobs = 1;
    four.jobs = 4;
    auto a = pytest::lint(tree, "r.py", one);
    auto b = pytest::lint(tree, "r.py", four);
    REQUIRE(a.diagnostics.size() == b.diagnostics.size());
    for (size_t i = 0; i < a.diagnostics.size(); ++i) {
        CHECK(a.diagnostics[i].code == b.diagnostics[i].code);
        CHECK(a.diagnostics[i].range.line == b.diagnostics[i].range.line);
        CHECK(a.diagnostics[i].notes.size() == b.diagnostics[i].notes.size());
    }
    CHECK(a.recipes == 40);
}

TEST_CASE("identical diagnostics inherited from one shared line are reported once", "[python][eval]") {
    TempTree tree({{"r.py", recipe_file(R"(
def _shared(cfg):
    cfg.model.recompute_granularity = "full"


def one_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8))
    _shared(cfg)
    return cfg


def two_config() -> ConfigContainer:
    cfg = one_config()
    return cfg


def three_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8))
    _shared(cfg)
    return cfg
)")}});
    auto r = pytest::lint(tree, "r.py");
    int rc004 = 0;
    for (const auto& d : r.diagnostics) {
        if (d.code != "RC004") continue;
        ++rc004;
        CHECK(d.range.line == 5);
        REQUIRE_FALSE(d.notes.empty());
        CHECK(d.notes.front().message == "in recipe one_config");
        bool others = false;
        for (const auto& n : d.notes)
            others |= n.message.find("2 other recipes: two_config, three_config") != std::string::npos;
        CHECK(others);
    }
    CHECK(rc004 == 1);
}

TEST_CASE("writes into a config from an unknown base are kept, writes through a possible alias spoil it",
          "[python][eval]") {
    TempTree tree({{"r.py", recipe_file(R"(
from megatron.bridge.recipes.elsewhere import base_recipe, get_model


def all_five_config() -> ConfigContainer:
    cfg = base_recipe()  # outside the root: unknown, and it received nothing it could return
    cfg.model.recompute_granularity = "full"
    cfg.model.recompute_method = "uniform"
    cfg.model.recompute_num_layers = 1
    cfg.model.recompute_modules = None
    cfg.model.distribute_saved_activations = False
    return cfg


def some_config() -> ConfigContainer:
    cfg = base_recipe()
    cfg.model.recompute_granularity = "selective"
    return cfg


def alias_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8))
    cfg.model.recompute_granularity = "selective"
    model = get_model(cfg)  # may be cfg.model itself
    model.recompute_granularity = "full"
    return cfg
)")}});
    auto e = pytest::evaluate(tree, "r.py");
    CHECK(e.get("all_five_config", "model.recompute_granularity")->display() == "\"full\"");
    CHECK(e.get("all_five_config", "model.recompute_num_layers")->display() == "1");
    CHECK(e.get("all_five_config", "model.num_layers")->is_unknown());  // not written: unknown, not a default
    CHECK(e.get("all_five_config", "mixed_precision")->is_unknown());
    CHECK(e.get("some_config", "model.recompute_granularity")->display() == "\"selective\"");
    CHECK(e.get("some_config", "model.recompute_method")->is_unknown());
    CHECK(e.get("alias_config", "model.recompute_granularity")->is_unknown());

    auto r = pytest::lint(tree, "r.py");
    CHECK(r.recipes == 3);
    CHECK(r.resolved == 1);
}

TEST_CASE("names from outside the root stored in model fields never get a wrong type", "[python][eval]") {
    TempTree tree({{"r.py", recipe_file(R"(
import torch
from megatron.core.transformer.enums import AttnBackend, RecomputeKind
from megatron.core.defaults import DEFAULT_LABELS, DEFAULT_LAYERS
from megatron.bridge.models.gpt.model_config import GPTModelConfig
from megatron.core.transformer.transformer_config import TransformerConfig


def externals_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8))
    cfg.model.attention_backend = AttnBackend.unfused
    cfg.model.params_dtype = torch.bfloat16
    cfg.model.recompute_granularity = RecomputeKind.SELECTIVE
    cfg.model.recompute_modules = DEFAULT_LABELS
    cfg.model.num_layers = DEFAULT_LAYERS
    return cfg


def builder_config() -> ConfigContainer:
    """A builder config nests the TransformerConfig fields under model.transformer."""
    transformer = TransformerConfig(num_layers=4, recompute_granularity="full", recompute_num_layers=1)
    return ConfigContainer(model=GPTModelConfig(transformer=transformer, vocab_size=32000))
)")}});
    auto e = pytest::evaluate(tree, "r.py");
    CHECK(e.get("externals_config", "model.attention_backend")->display() ==
          "\"megatron.core.transformer.enums.AttnBackend.unfused\"");
    CHECK(e.get("externals_config", "model.params_dtype")->display() == "\"torch.bfloat16\"");
    CHECK(e.get("externals_config", "model.recompute_granularity")->display() == "\"selective\"");
    CHECK(e.get("externals_config", "model.recompute_modules")->is_unknown());
    CHECK(e.get("externals_config", "model.num_layers")->is_unknown());
    CHECK(e.get("builder_config", "model.transformer.recompute_granularity")->display() == "\"full\"");

    auto r = pytest::lint(tree, "r.py");
    std::multiset<std::string> codes;
    for (const auto& d : r.diagnostics) codes.insert(d.code);
    CHECK(codes.count("IN005") == 0);
    CHECK(codes.count("RC004") == 1);  // in the builder config
    CHECK(codes.count("RC101") == 0);  // unfused attention: core_attn would pay off (and the labels are unknown)
}

TEST_CASE("imports only for type checkers do not make names unknown", "[python][eval]") {
    TempTree tree(pytest::Files{{"r.py", R"(
import typing
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from megatron.bridge.training.config import ConfigContainer
else:
    from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.models import GPTModelProvider

if typing.TYPE_CHECKING:
    MODE = "checking"
else:
    MODE = "selective"


def typed_config() -> "ConfigContainer":
    cfg = ConfigContainer(model=GPTModelProvider())
    cfg.model.recompute_granularity = MODE
    return cfg
)"}});
    auto e = pytest::evaluate(tree, "r.py");
    CHECK(e.get("typed_config", "model.recompute_granularity")->display() == "\"selective\"");
}

TEST_CASE("pathological shapes stay bounded: nested unknowns, branches in long loops, growing containers",
          "[python][eval][limits]") {
    TempTree tree(pytest::Files{{"r.py", recipe_file(R"(
import os
from somewhere_else import transform


def c3_like_merge(seqs):
    result = []
    while True:
        seqs = [s for s in seqs if s]
        if not seqs:
            return result
        for s1 in seqs:
            candidate = s1[0]
            for s2 in seqs:
                if candidate in s2[1:]:
                    candidate = None
                    break
            else:
                break
        if candidate is None:
            raise RuntimeError("inconsistent")
        result.append(candidate)
        for seq in seqs:
            if seq[0] == candidate:
                del seq[0]


def pathological_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8), train=TrainingConfig())
    x = transform()
    grown = []
    table = {}
    for i in range(20000):
        x = transform(x)
        if os.environ.get(str(i)):
            grown.append(i)
            table[i] = x
    cfg.train.x = x
    cfg.train.grown = grown
    cfg.train.merged = c3_like_merge([[os.environ.get("A"), "b"], ["b", os.environ.get("C")]])
    cfg.model.recompute_granularity = "selective"
    return cfg
)")}});
    auto e = pytest::evaluate(tree, "r.py");
    REQUIRE(e.recipes.count("pathological_config"));
    const mbl::Value* x = e.get("pathological_config", "train.x");
    // Either evaluated to an unknown with a short reason, or the recipe ran out of budget; never a huge text.
    if (x) {
        CHECK(x->is_unknown());
        CHECK(x->unknown_reason().size() < 260);
    }
    const mbl::Value* g = e.get("pathological_config", "model.recompute_granularity");
    REQUIRE(g);
    CHECK((g->is_unknown() || g->display() == "\"selective\""));
}
