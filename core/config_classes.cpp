#include "core/config_classes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/schema.hpp"

namespace mbl {

using nlohmann::json;

const char* field_type_name(FieldType t) {
    switch (t) {
        case FieldType::Bool: return "bool";
        case FieldType::Int: return "int";
        case FieldType::Float: return "float";
        case FieldType::Str: return "str";
        case FieldType::List: return "list";
        case FieldType::Dict: return "dict";
        case FieldType::Dtype: return "dtype";
        case FieldType::Callable: return "callable";
        case FieldType::Any: return "any";
    }
    return "any";
}

FieldType parse_field_type(std::string_view s) {
    if (s == "bool") return FieldType::Bool;
    if (s == "int") return FieldType::Int;
    if (s == "float") return FieldType::Float;
    if (s == "str") return FieldType::Str;
    if (s == "list") return FieldType::List;
    if (s == "dict") return FieldType::Dict;
    if (s == "dtype") return FieldType::Dtype;
    if (s == "callable") return FieldType::Callable;
    return FieldType::Any;
}

bool type_matches(const Value& v, FieldType t) {
    if (v.is_null() || v.is_unknown()) return true;  // None is accepted by every dataclass field at construction
    switch (t) {
        case FieldType::Bool: return v.is_bool();
        case FieldType::Int: return v.is_int();
        case FieldType::Float: return v.is_number();
        case FieldType::Str: return v.is_string();
        case FieldType::List: return v.is_list();
        case FieldType::Dict: return v.is_map();
        case FieldType::Dtype:
        case FieldType::Callable: return v.is_string() || v.is_map();
        case FieldType::Any: return true;
    }
    return true;
}

const ClassField* ConfigClass::field(std::string_view n) const {
    for (const auto& f : fields)
        if (f.name == n) return &f;
    return nullptr;
}

namespace {

ClassField field_from_json(const std::string& name, const json& spec) {
    ClassField f;
    f.name = name;
    f.type = parse_field_type(spec.value("type", "any"));
    f.nullable = spec.value("nullable", false);
    if (spec.contains("values"))
        for (const auto& v : spec.at("values"))
            if (v.is_string()) f.values.push_back(v.get<std::string>());
    if (spec.contains("default")) f.default_value = value_from_json(spec.at("default"), {});
    f.expr = spec.value("expr", "");
    f.required = spec.value("required", false);
    f.init = spec.value("init", true);
    f.line = spec.value("line", 0);
    return f;
}

}  // namespace

ClassFacts ClassFacts::from_json(const json& j) {
    ClassFacts facts;
    facts.commit = j.value("commit", "");
    if (j.contains("package_version") && j.at("package_version").is_string())
        facts.package_version = j.at("package_version").get<std::string>();
    facts.origin = fmt::format("Megatron-LM {} (bundled; scripts/mcore_facts.py)", facts.commit.substr(0, 12));
    for (auto it = j.at("classes").begin(); it != j.at("classes").end(); ++it) {
        ConfigClass c;
        c.name = it.key();
        c.module = it->value("module", "");
        c.file = it->value("file", "");
        c.line = it->value("line", 0);
        c.bases = it->value("bases", std::vector<std::string>{});
        for (auto f = it->at("fields").begin(); f != it->at("fields").end(); ++f)
            c.fields.push_back(field_from_json(f.key(), f.value()));
        facts.classes.push_back(std::move(c));
    }
    if (j.contains("recompute") && j.at("recompute").is_object()) {
        const json& r = j.at("recompute");
        facts.labels = r.value("labels", std::vector<std::string>{});
        facts.default_modules = r.value("default_modules", std::vector<std::string>{});
        facts.labels_line = r.value("labels_line", 0);
        facts.default_modules_line = r.value("default_modules_line", 0);
        facts.recompute_file = r.value("file", "");
    }
    facts.index();
    return facts;
}

const ConfigClass* ClassFacts::find(std::string_view name) const {
    for (const auto& c : classes)
        if (c.name == name) return &c;
    return nullptr;
}

std::vector<const ConfigClass*> ClassFacts::mro(std::string_view name) const {
    // C3: the class, then the merge of its bases' linearizations and the list of its bases.
    std::function<std::optional<std::vector<const ConfigClass*>>(const ConfigClass*, int)> linearize =
        [&](const ConfigClass* c, int depth) -> std::optional<std::vector<const ConfigClass*>> {
        if (depth > 32) return std::nullopt;
        std::vector<std::vector<const ConfigClass*>> seqs;
        std::vector<const ConfigClass*> direct;
        for (const auto& b : c->bases)
            if (const ConfigClass* base = find(b)) {
                auto l = linearize(base, depth + 1);
                if (!l) return std::nullopt;
                seqs.push_back(std::move(*l));
                direct.push_back(base);
            }
        seqs.push_back(direct);
        std::vector<const ConfigClass*> out{c};
        for (;;) {
            std::erase_if(seqs, [](const auto& s) { return s.empty(); });
            if (seqs.empty()) return out;
            const ConfigClass* next = nullptr;
            for (const auto& s : seqs) {
                const ConfigClass* head = s.front();
                const bool in_tail = std::any_of(seqs.begin(), seqs.end(), [&](const auto& t) {
                    return std::find(t.begin() + 1, t.end(), head) != t.end();
                });
                if (!in_tail) {
                    next = head;
                    break;
                }
            }
            if (!next) return std::nullopt;
            out.push_back(next);
            for (auto& s : seqs)
                if (s.front() == next) s.erase(s.begin());
        }
    };
    const ConfigClass* start = find(name);
    if (!start) return {};
    if (auto l = linearize(start, 0)) return *l;
    std::vector<const ConfigClass*> out;  // inconsistent bases: depth-first, each class once
    std::function<void(const ConfigClass*, int)> visit = [&](const ConfigClass* c, int depth) {
        if (depth > 32 || std::find(out.begin(), out.end(), c) != out.end()) return;
        out.push_back(c);
        for (const auto& b : c->bases)
            if (const ConfigClass* base = find(b)) visit(base, depth + 1);
    };
    visit(start, 0);
    return out;
}

ResolvedField ClassFacts::lookup(std::string_view class_name, std::string_view field) const {
    for (const ConfigClass* c : mro(class_name))
        if (const ClassField* f = c->field(field)) return {c, f};
    return {};
}

std::vector<ResolvedField> ClassFacts::fields_of(std::string_view class_name) const {
    const auto order = mro(class_name);
    std::vector<ResolvedField> out;
    std::map<std::string_view, std::size_t> position;
    for (auto it = order.rbegin(); it != order.rend(); ++it)
        for (const auto& f : (*it)->fields) {
            auto [at, added] = position.try_emplace(f.name, out.size());
            if (added) out.push_back({*it, &f});
            else out[at->second] = {*it, &f};  // a redefinition keeps its base's position
        }
    return out;
}

bool ClassFacts::in_transformer_config_chain(const ConfigClass& c) const {
    const auto i = static_cast<std::size_t>(&c - classes.data());
    return i < classes.size() && std::find(root_chain_.begin(), root_chain_.end(), i) != root_chain_.end();
}

void ClassFacts::index() {
    index_.clear();
    root_chain_.clear();
    for (const ConfigClass* c : mro("TransformerConfig"))
        root_chain_.push_back(static_cast<std::size_t>(c - classes.data()));
    auto add = [&](const ConfigClass& c) {
        const auto ci = static_cast<std::size_t>(&c - classes.data());
        for (std::size_t fi = 0; fi < c.fields.size(); ++fi) index_.try_emplace(c.fields[fi].name, ci, fi);
    };
    for (const ConfigClass* c : mro("TransformerConfig")) add(*c);
    for (const auto& c : classes) add(c);
}

ResolvedField ClassFacts::any(std::string_view field) const {
    auto it = index_.find(field);
    if (it == index_.end()) return {};
    const ConfigClass& c = classes[it->second.first];
    return {&c, &c.fields[it->second.second]};
}

std::string ClassFacts::where(const ConfigClass& c, int line) const {
    const std::string file = root.empty() ? c.file : fmt::format("{}/{}", root, c.file);
    return line > 0 ? fmt::format("{}:{}", file, line) : file;
}

const ConfigClass* config_class_for_path(const ClassFacts& facts, std::string_view dotted) {
    if (!dotted.starts_with("megatron.core.") && !dotted.starts_with("megatron.training.")) return nullptr;
    const auto dot = dotted.rfind('.');
    return facts.find(dotted.substr(dot + 1));
}

}  // namespace mbl
