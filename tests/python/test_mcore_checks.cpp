// The __post_init__ compiler (parser/bridge/mcore_checks.cpp) and executor (core/post_init.hpp) on a small Megatron
// Core tree written here: the route an unreleased commit takes (--mcore-path, a checked-out 3rdparty/Megatron-LM).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "core/effective_model.hpp"
#include "core/post_init.hpp"
#include "core/schema.hpp"
#include "parser/bridge/mcore_source.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

// A tree whose checks exercise the compiler's routes: a base class reached through super(), a str enum and an int
// enum, a nested helper, a function of another module, a rewrite, a Transformer Engine fact and an unknown call.
void write_tree(const mbl::test::TempDir& dir) {
    dir.write("megatron/__init__.py", "");
    dir.write("megatron/core/__init__.py", "");
    dir.write("megatron/core/package_info.py", "__version__ = '9.9.0'\n");
    dir.write("megatron/core/enums.py", R"py(import enum

class Shade(str, enum.Enum):
    light = "light"
    dark = "dark"

class Place(enum.Enum):
    left = 1
    right = 2
)py");
    dir.write("megatron/core/helpers.py", R"py(def too_many(n, limit=4):
    return n > limit

def is_te_min_version(v):
    raise RuntimeError("not read: the linter asks its own facts")
)py");
    dir.write("megatron/core/model_parallel_config.py", R"py(from dataclasses import dataclass

@dataclass
class ModelParallelConfig:
    tensor_model_parallel_size: int = 1

    def __post_init__(self):
        if self.tensor_model_parallel_size < 1:
            raise ValueError(f"tensor_model_parallel_size is {self.tensor_model_parallel_size}, below one")
)py");
    dir.write("megatron/core/transformer/__init__.py", "");
    dir.write("megatron/core/transformer/transformer_config.py", R"py(from dataclasses import dataclass
from typing import List, Optional

from megatron.core.enums import Place, Shade
from megatron.core.helpers import is_te_min_version, too_many
from megatron.core.model_parallel_config import ModelParallelConfig
import os

@dataclass
class TransformerConfig(ModelParallelConfig):
    num_layers: int = 2
    shade: str = "light"
    place: Optional[str] = None
    recompute_granularity: Optional[str] = None
    recompute_modules: Optional[List[str]] = None
    legacy_recompute: bool = False
    fp8: Optional[str] = None
    tags: Optional[List[str]] = None

    def __post_init__(self):
        super().__post_init__()

        def _shout(s):
            return s.upper()

        if self.legacy_recompute:
            self.recompute_granularity = "selective"
        if self.recompute_modules is None:
            self.recompute_modules = ["core_attn"]
        if too_many(len(self.recompute_modules)):
            raise ValueError(f"too many modules: {_shout('x')}")
        if self.shade == Shade.dark and self.recompute_granularity == "full":
            raise ValueError("dark full recompute is refused")
        if self.place is not None and Place[self.place] == Place.right:
            assert self.num_layers % 2 == 0, f"odd {self.num_layers} on the right"
        if self.fp8 and not is_te_min_version("2.6.0"):
            raise ValueError("fp8 needs a newer Transformer Engine")
        if os.getenv("SOMETHING"):
            raise ValueError("an environment switch refuses it")
        if self.tags is not None:
            names = [t.rsplit(".", 1)[-1] for t in dict.fromkeys(self.tags)]
            if len(names) > 2:
                raise ValueError("too many distinct tags: " + ", ".join(names))
)py");
}

std::vector<const mbl::post_init::Event*> raises(const mbl::post_init::Outcome& o, bool certain) {
    std::vector<const mbl::post_init::Event*> out;
    for (const auto& e : o.events)
        if (e.site->kind == mbl::post_init::Site::Kind::Raise && e.certain == certain) out.push_back(&e);
    return out;
}

}  // namespace

TEST_CASE("a tree's __post_init__ is compiled and decides, three-valued", "[mcore-source][post-init]") {
    mbl::test::TempDir dir;
    write_tree(dir);
    const mbl::Revision* like = mbl::Schema::instance().revision("main");
    REQUIRE(like != nullptr);
    std::string why;
    auto facts = mbl::py::read_mcore_classes(dir.path(), *like->classes, why);
    REQUIRE(facts.has_value());
    REQUIRE(facts->check_program() != nullptr);
    const auto& program = *facts->check_program();
    CHECK(program.entries.at("TransformerConfig") == "TransformerConfig.__post_init__");
    CHECK(program.functions.count("ModelParallelConfig.__post_init__") == 1);
    CHECK(program.functions.count("megatron.core.helpers.too_many") == 1);

    auto run = [&](mbl::Value fields, mbl::post_init::JobFacts job = {}) {
        auto lookup = [&](std::string_view name) -> const mbl::Value* { return fields.find(name); };
        auto o = mbl::post_init::run(program, "TransformerConfig", lookup, job);
        REQUIRE(o.has_value());
        return *o;
    };
    auto fields = [](std::initializer_list<std::pair<const char*, mbl::Value>> kv) {
        mbl::Value m = mbl::Value::map();
        m.set("tensor_model_parallel_size", mbl::Value::integer(1));
        m.set("num_layers", mbl::Value::integer(2));
        m.set("shade", mbl::Value::string("light"));
        m.set("place", mbl::Value::null());
        m.set("recompute_granularity", mbl::Value::null());
        m.set("recompute_modules", mbl::Value::null());
        m.set("legacy_recompute", mbl::Value::boolean(false));
        m.set("fp8", mbl::Value::null());
        m.set("tags", mbl::Value::null());
        for (const auto& [k, v] : kv) m.set(k, v);
        return m;
    };

    SECTION("a valid config: no raise, and the rewrites are what __post_init__ writes") {
        auto o = run(fields({{"legacy_recompute", mbl::Value::boolean(true)}}));
        CHECK(raises(o, true).empty());
        bool granularity = false, modules = false;
        for (const auto& r : o.rewrites) {
            if (r.field == "recompute_granularity")
                granularity = r.after.is_string() && r.after.as_string() == "selective";
            if (r.field == "recompute_modules") modules = r.after.is_list() && r.after.items().size() == 1;
        }
        CHECK(granularity);
        CHECK(modules);
    }
    SECTION("the base class's check through super(), with its f-string message") {
        auto o = run(fields({{"tensor_model_parallel_size", mbl::Value::integer(0)}}));
        auto r = raises(o, true);
        REQUIRE(r.size() == 1);
        CHECK(r[0]->message == "tensor_model_parallel_size is 0, below one");
        CHECK(r[0]->site->file == "megatron/core/model_parallel_config.py");
        CHECK(r[0]->site->line == 9);
    }
    SECTION("a function of another module, a nested helper, a str enum, an int enum by name") {
        std::vector<mbl::Value> five(5, mbl::Value::string("mlp"));
        auto o = run(fields({{"recompute_modules", mbl::Value::list(five)},
                             {"shade", mbl::Value::string("dark")},
                             {"recompute_granularity", mbl::Value::string("full")},
                             {"place", mbl::Value::string("right")},
                             {"num_layers", mbl::Value::integer(3)}}));
        auto r = raises(o, true);
        REQUIRE(r.size() == 3);
        CHECK(r[0]->message == "too many modules: X");
        CHECK(r[1]->message == "dark full recompute is refused");
        CHECK(r[2]->message == "odd 3 on the right");
        CHECK(r[2]->site->exception == "AssertionError");
    }
    SECTION("what the linter cannot know is possible, never certain, unless the user states it") {
        auto o = run(fields({{"fp8", mbl::Value::string("e4m3")}}));
        CHECK(raises(o, true).empty());
        auto possible = raises(o, false);
        REQUIRE(possible.size() == 2);  // the Transformer Engine version, and the environment variable
        CHECK(possible[0]->why_uncertain.find("Transformer Engine") != std::string::npos);
        mbl::post_init::JobFacts old_te;
        old_te.te_version = "2.4.0";
        CHECK(raises(run(fields({{"fp8", mbl::Value::string("e4m3")}}), old_te), true).size() == 1);
        mbl::post_init::JobFacts new_te;
        new_te.te_version = "2.8.0";
        CHECK(raises(run(fields({{"fp8", mbl::Value::string("e4m3")}}), new_te), true).empty());
    }
    SECTION("an unknown field makes the checks that read it possible") {
        auto o = run(fields({{"shade", mbl::Value::unknown("computed by the recipe")},
                             {"recompute_granularity", mbl::Value::string("full")}}));
        CHECK(raises(o, true).empty());
        CHECK(!raises(o, false).empty());
    }
    SECTION("dict.fromkeys keeps the first of repeated items in order; rsplit splits from the right") {
        auto tags = [](std::initializer_list<const char*> items) {
            std::vector<mbl::Value> v;
            for (const char* t : items) v.push_back(mbl::Value::string(t));
            return mbl::Value::list(std::move(v));
        };
        auto repeated = run(fields({{"tags", tags({"a.b.x", "y", "a.b.x", "c.z"})}}));
        auto r = raises(repeated, true);
        REQUIRE(r.size() == 1);
        CHECK(r[0]->message == "too many distinct tags: x, y, z");
        auto o = run(fields({{"tags", tags({"a.x", "q.y", "a.x"})}}));
        CHECK(raises(o, true).empty());
        CHECK(raises(o, false).size() == 1);  // the environment variable's, as in every run
    }
    SECTION("the program survives its own JSON form") {
        auto again = mbl::post_init::Program::from_json(program.to_json());
        CHECK(again.to_json() == program.to_json());
    }
}
