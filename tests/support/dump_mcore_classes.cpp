// A development tool, not a test: prints the config classes the Python front end reads from a Megatron Core tree,
// in the layout of schemas/mcore/classes/<revision>.json, so that scripts/mcore_facts.py --check-reader can hold the
// run-time reader to the generator on whole Megatron-LM trees (every known revision).
//   dump_mcore_classes TREE REVISION   (REVISION: the bundled revision whose class list is read)
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/schema.hpp"
#include "parser/bridge/mcore_source.hpp"

namespace {

nlohmann::ordered_json to_json(const mbl::Value& v) {
    switch (v.kind()) {
        case mbl::Value::Kind::Bool: return v.as_bool();
        case mbl::Value::Kind::Int: return v.as_int();
        case mbl::Value::Kind::Float: return v.as_number();
        case mbl::Value::Kind::String: return v.as_string();
        case mbl::Value::Kind::List: {
            auto a = nlohmann::ordered_json::array();
            for (const auto& item : v.items()) a.push_back(to_json(item));
            return a;
        }
        case mbl::Value::Kind::Map: {
            auto o = nlohmann::ordered_json::object();
            for (const auto& e : v.entries()) o[e.key] = to_json(e.value);
            return o;
        }
        default: return nullptr;
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: dump_mcore_classes TREE REVISION\n";
        return 2;
    }
    const mbl::Revision* rev = mbl::Schema::instance().revision(argv[2]);
    if (!rev) {
        std::cerr << "unknown revision " << argv[2] << '\n';
        return 2;
    }
    std::string why;
    auto facts = mbl::py::read_mcore_classes(argv[1], *rev->classes, why);
    if (!facts) {
        std::cerr << why << '\n';
        return 1;
    }
    nlohmann::ordered_json out;
    out["recompute"] = {{"default_modules", facts->default_modules},
                        {"default_modules_line", facts->default_modules_line},
                        {"labels", facts->labels},
                        {"labels_line", facts->labels_line}};
    for (const auto& c : facts->classes) {
        nlohmann::ordered_json cls = {{"module", c.module}, {"file", c.file}, {"line", c.line}, {"bases", c.bases}};
        nlohmann::ordered_json fields = nlohmann::ordered_json::object();
        for (const auto& f : c.fields) {
            nlohmann::ordered_json j = {{"line", f.line}, {"type", mbl::field_type_name(f.type)}};
            if (f.nullable) j["nullable"] = true;
            if (!f.values.empty()) j["values"] = f.values;
            if (f.default_value) j["default"] = to_json(*f.default_value);
            if (!f.expr.empty()) j["expr"] = f.expr;
            if (f.required) j["required"] = true;
            if (!f.init) j["init"] = false;
            fields[f.name] = std::move(j);
        }
        cls["fields"] = std::move(fields);
        out["classes"][c.name] = std::move(cls);
    }
    std::cout << out.dump(1) << '\n';
    return 0;
}
