// A development tool, not a test: Megatron Bridge's mixed-precision recipes as the linter's own Python front end
// resolves them in a Bridge tree (the route a file inside a checkout takes at lint time: the tree's
// get_mixed_precision_config and its registry), printed in the layout of schemas/precision.json, the catalog used for
// files in no Bridge tree. scripts/mcore_facts.py --bridge-precision writes the bundled file with it.
//   dump_bridge_precision SRC COMMIT   (SRC: the tree's src/ folder, holding megatron/bridge)
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/schema.hpp"
#include "parser/bridge/bridge_host.hpp"
#include "parser/bridge/hf_models.hpp"
#include "parser/bridge/recipes.hpp"
#include "pyeval/project.hpp"

namespace {

// A resolved field's value as the catalog stores it; nullopt for one the front end could not resolve.
std::optional<nlohmann::json> to_json(const mbl::Value& v) {
    using K = mbl::Value::Kind;
    switch (v.kind()) {
        case K::Null: return nlohmann::json();
        case K::Bool: return nlohmann::json(v.as_bool());
        case K::Int: return nlohmann::json(v.as_int());
        case K::Float: return nlohmann::json(v.as_number());
        case K::String: return nlohmann::json(v.as_string());
        case K::List: {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& x : v.items()) {
                auto j = to_json(x);
                if (!j) return std::nullopt;
                out.push_back(std::move(*j));
            }
            return out;
        }
        case K::Map:
        case K::Unknown: return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: dump_bridge_precision SRC COMMIT\n";
        return 2;
    }
    const mbl::Schema& schema = mbl::Schema::instance();
    const mbl::Revision* revision = schema.revision(schema.default_revision());
    mbl::py::HfResolver hf;
    mbl::py::BridgeHost host(*revision, hf);
    mbl::py::Project project(argv[1], host);
    auto lookup = mbl::py::make_precision_lookup(project, "megatron.bridge.training.config");
    // A name no registry holds: the answer lists the names the tree registers.
    const auto registered = lookup->find("\x01 no recipe");
    if (!registered.applies || registered.names.empty()) {
        std::cerr << "no mixed-precision registry found under " << argv[1] << '\n';
        return 1;
    }
    nlohmann::json recipes = nlohmann::json::object();
    for (const auto& name : registered.names) {
        const auto answer = lookup->find(name);
        if (!answer.config || !answer.config->is_map()) {
            std::cerr << "recipe " << name << " did not resolve to a config\n";
            return 1;
        }
        nlohmann::json fields = nlohmann::json::object();
        for (const auto& e : answer.config->entries()) {
            if (e.key.empty() || e.key[0] == '_') continue;
            auto j = to_json(e.value);
            if (!j) {
                std::cerr << "recipe " << name << ": " << e.key << " is not a plain value\n";
                return 1;
            }
            fields[e.key] = std::move(*j);
        }
        const auto& at = answer.config->prov().range;
        recipes[name] = {{"file", at.file}, {"line", at.line}, {"fields", std::move(fields)}};
    }
    nlohmann::json out = {{"commit", argv[2]}, {"recipes", std::move(recipes)}};
    std::cout << out.dump(1) << '\n';
    return 0;
}
