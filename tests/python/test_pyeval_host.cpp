// The evaluator without Bridge (pyeval/): with the default Host it is plain Python, where Bridge's names are outside
// names like any other; a Host of its own answers at each point of pyeval/host.hpp.
#include <catch2/catch.hpp>

#include "py_test_support.hpp"
#include "pyeval/host.hpp"
#include "pyeval/interpreter.hpp"
#include "pyeval/object_registry.hpp"

using pytest::TempTree;
namespace py = mbl::py;

namespace {

// A module's globals after its top level ran under `host`.
struct Globals {
    Globals(const TempTree& tree, py::Host& host) : project(tree.path(), host) {
        std::vector<mbl::Diagnostic> errors;
        module = project.index().module_for_file(tree.path("m.py"), errors);
        REQUIRE(module);
        REQUIRE(errors.empty());
    }
    py::Val get(const std::string& name) {
        py::Interp in(project, &diagnostics);
        return in.module_global(module, name);
    }
    py::ObjectRegistry objects;  // outlives the project's values
    py::ObjectRegistry::Use use{objects};
    py::Project project;
    py::Module* module = nullptr;
    std::vector<mbl::Diagnostic> diagnostics;
};

const char* kModule = R"(from megatron.bridge.models import AutoBridge, LlamaModelProvider
from lib import answer, Cfg


bridge = AutoBridge.from_hf_pretrained("meta-llama/Meta-Llama-3-8B")
provider = LlamaModelProvider(num_layers=2)
layers = provider.num_layers
heads = provider.num_attention_heads
intercepted = answer()
cfg = Cfg(width=4)
depth = cfg.depth
has_depth = hasattr(cfg, "depth")


def tag(cls):
    return cls


@tag
class Tagged:
    pass


tagged_name = Tagged.NAME
)";

// A host that knows a little of an imaginary library `lib`.
class LibHost final : public py::Host {
public:
    std::optional<py::Val> intercept_call(py::Interp&, py::Frame&, const py::Val& callee, py::CallArgs&,
                                          py::Loc site) override {
        if (callee.is_obj(py::ObjKind::External) && callee.as<py::ExternalObj>()->path == "lib.answer")
            return py::Val::integer(42, site);
        return std::nullopt;
    }
    bool defaults_class(std::string_view name) const override { return name == "Cfg"; }
    std::optional<py::Val> attr_default(const std::string& name) const override {
        if (name == "depth") return py::Val::integer(12);
        return std::nullopt;
    }
    void class_decorated(py::Interp&, py::Frame&, py::ClassObj& cls, py::NodeId) override {
        cls.attrs.emplace_back("NAME", py::Val::str("tagged " + cls.name));
    }
};

}  // namespace

TEST_CASE("with the default host the evaluator is plain Python: Bridge's names are outside names",
          "[python][eval][host]") {
    TempTree tree(pytest::Files{{"m.py", kModule}});
    py::Host plain;
    Globals g(tree, plain);
    const py::Val bridge = g.get("bridge");
    REQUIRE(bridge.is_unknown());
    CHECK(bridge.reason() ==
          "the result of megatron.bridge.models.AutoBridge.from_hf_pretrained(), which is outside the source root");
    CHECK(g.get("layers").as_int() == 2);
    // No defaults for a provider's unset fields: only the host knows Megatron Core's.
    const py::Val heads = g.get("heads");
    REQUIRE(heads.is_unknown());
    CHECK(heads.reason() == "an instance of LlamaModelProvider has no known attribute \"num_attention_heads\"");
    CHECK(g.get("intercepted").is_unknown());
    CHECK(g.get("depth").is_unknown());
    CHECK(g.get("tagged_name").is_unknown());
}

TEST_CASE("a host answers calls, defaults and decorated classes where the evaluator asks it", "[python][eval][host]") {
    TempTree tree(pytest::Files{{"m.py", kModule}});
    LibHost host;
    Globals g(tree, host);
    CHECK(g.get("intercepted").as_int() == 42);
    const py::Val cfg = g.get("cfg");
    REQUIRE(cfg.is_obj(py::ObjKind::Instance));
    CHECK(cfg.as<py::InstanceObj>()->takes_defaults);
    CHECK(g.get("depth").as_int() == 12);
    const py::Val has_depth = g.get("has_depth");
    CHECK((has_depth.is_bool() && has_depth.b));
    CHECK(g.get("tagged_name").s == "tagged Tagged");
    // What it does not answer stays as plain Python has it.
    CHECK(g.get("heads").is_unknown());
}
