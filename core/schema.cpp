#include "core/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/did_you_mean.hpp"
#include "core/embedded_data.hpp"

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

static FieldType parse_field_type(const std::string& s) {
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

std::optional<std::string_view> schema_file(std::string_view path) {
    for (const auto& [name, text] : embedded_schema_files())
        if (name == path) return text;
    return std::nullopt;
}

static json parse_schema_file(std::string_view path) {
    auto text = schema_file(path);
    if (!text) throw std::runtime_error(fmt::format("schema file schemas/{} is missing from the build", path));
    try {
        return json::parse(*text);
    } catch (const json::parse_error& e) {
        throw std::runtime_error(fmt::format("schemas/{} is not valid JSON: {}", path, e.what()));
    }
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

Value value_from_json(const json& j, const Provenance& prov) {
    switch (j.type()) {
        case json::value_t::null: return Value::null(prov);
        case json::value_t::boolean: return Value::boolean(j.get<bool>(), prov);
        case json::value_t::number_integer:
        case json::value_t::number_unsigned: return Value::integer(j.get<std::int64_t>(), prov);
        case json::value_t::number_float: return Value::floating(j.get<double>(), prov);
        case json::value_t::string: return Value::string(j.get<std::string>(), prov);
        case json::value_t::array: {
            std::vector<Value> items;
            for (const auto& e : j) items.push_back(value_from_json(e, prov));
            return Value::list(std::move(items), prov);
        }
        case json::value_t::object: {
            Value m = Value::map(prov);
            for (auto it = j.begin(); it != j.end(); ++it) m.set(it.key(), value_from_json(it.value(), prov));
            return m;
        }
        default: return Value::null(prov);
    }
}

static std::vector<std::string> string_list(const json& j, const char* key) {
    std::vector<std::string> out;
    if (j.contains(key))
        for (const auto& e : j.at(key)) out.push_back(e.get<std::string>());
    return out;
}

const std::vector<std::string>& Revision::enum_values(RevisionEnum key) const {
    static const std::vector<std::string> none;
    auto it = enums.find(key.str());
    return it == enums.end() ? none : it->second;
}

// A list a revision file states in full (`key`) or as changes to the one it extends (`key_add`, `key_remove`).
static void layered_list(const json& j, const std::string& key, std::vector<std::string>& list) {
    if (j.contains(key)) list = string_list(j, key.c_str());
    for (auto& l : string_list(j, (key + "_add").c_str())) list.push_back(l);
    for (auto& l : string_list(j, (key + "_remove").c_str())) std::erase(list, l);
}

bool Revision::discards_output(std::string_view label) const {
    return std::find(output_discarding.begin(), output_discarding.end(), label) != output_discarding.end();
}

bool Revision::has_label(std::string_view label) const {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
}

Schema::Schema() {
    const json index = parse_schema_file("mcore/index.json");
    default_revision_ = index.at("default").get<std::string>();
    const json aliases = index.value("aliases", json::object());
    for (auto it = aliases.begin(); it != aliases.end(); ++it) aliases_[it.key()] = it.value().get<std::string>();
    const json ambiguous = index.value("ambiguous", json::object());
    for (auto it = ambiguous.begin(); it != ambiguous.end(); ++it) ambiguous_[it.key()] = it.value().get<std::string>();

    int order = 0;
    for (const auto& name_json : index.at("order")) {
        const std::string name = name_json.get<std::string>();
        const json j = parse_schema_file(fmt::format("mcore/{}.json", name));
        Revision rev;
        if (j.contains("extends")) {
            const std::string base = j.at("extends").get<std::string>();
            auto it =
                std::find_if(revisions_.begin(), revisions_.end(), [&](const Revision& r) { return r.name == base; });
            if (it == revisions_.end())
                throw std::runtime_error(
                    fmt::format("schemas/mcore/{}.json extends unknown or later revision {}", name, base));
            rev = *it;
        }
        rev.name = name;
        rev.order = order++;
        rev.description = j.value("description", "");
        // What the name stands for is the revision's own, never inherited.
        rev.release = j.value("release", "");
        rev.tags.clear();
        if (j.contains("tags"))
            for (auto it = j.at("tags").begin(); it != j.at("tags").end(); ++it)
                rev.tags.emplace_back(it.key(), it.value().get<std::string>());
        rev.commit = j.value("commit", "");
        rev.date = j.value("date", "");
        rev.branch = j.value("branch", "");
        rev.pinned_by = j.value("pinned_by", "");
        if (rev.release.empty() == rev.commit.empty())
            throw std::runtime_error(fmt::format("schemas/mcore/{}.json must name either a release or a commit", name));
        layered_list(j, "recompute_modules", rev.labels);
        layered_list(j, "default_recompute_modules", rev.default_modules);
        layered_list(j, "output_discarding_recompute_modules", rev.output_discarding);
        if (j.contains("rejections")) {
            auto v = string_list(j, "rejections");
            rev.rejections = {v.begin(), v.end()};
        }
        for (auto& c : string_list(j, "rejections_add")) rev.rejections.insert(c);
        for (auto& c : string_list(j, "rejections_remove")) rev.rejections.erase(c);
        if (j.contains("enums"))
            for (auto it = j.at("enums").begin(); it != j.at("enums").end(); ++it)
                rev.enums[it.key()] = it.value().get<std::vector<std::string>>();
        if (j.contains("value_aliases")) rev.value_aliases.clear();  // replaced, not merged
        if (j.contains("value_aliases"))
            for (auto it = j.at("value_aliases").begin(); it != j.at("value_aliases").end(); ++it)
                rev.value_aliases[it.key()] = it.value().get<std::map<std::string, std::string>>();
        if (j.contains("known_crashes")) {
            auto v = string_list(j, "known_crashes");
            rev.known_crashes = {v.begin(), v.end()};
        }
        if (j.contains("defaults")) {
            const Provenance prov = Provenance::default_of(fmt::format("default of Megatron Core {}", name));
            for (auto it = j.at("defaults").begin(); it != j.at("defaults").end(); ++it) {
                auto existing = std::find_if(rev.defaults.begin(), rev.defaults.end(),
                                             [&](const auto& kv) { return kv.first == it.key(); });
                Value v = value_from_json(it.value(), prov);
                if (existing != rev.defaults.end()) existing->second = std::move(v);
                else rev.defaults.emplace_back(it.key(), std::move(v));
            }
        }
        // Inherited defaults name the revision they now belong to.
        for (auto& [field, v] : rev.defaults) v.prov().detail = fmt::format("default of Megatron Core {}", name);
        revisions_.push_back(std::move(rev));
    }
    for (const auto& [alias, target] : aliases_)
        if (!revision(target) || ambiguous_.count(alias))
            throw std::runtime_error(fmt::format("schemas/mcore/index.json: alias {} must name one revision", alias));

    if (schema_file("fields/model.json")) {
        const json fields = parse_schema_file("fields/model.json");
        for (auto it = fields.at("fields").begin(); it != fields.at("fields").end(); ++it) {
            FieldSpec f;
            f.name = it.key();
            const json& spec = it.value();
            f.type = parse_field_type(spec.value("type", "any"));
            f.nullable = spec.value("nullable", true);
            f.enum_values = string_list(spec, "enum");
            f.owner = spec.value("owner", "");
            f.since = spec.value("since", "");
            f.until = spec.value("until", "");
            fields_.emplace(f.name, std::move(f));
        }
    }
    // Every field a revision gives a default for is a known field, even if fields/model.json lacks it.
    for (const auto& rev : revisions_)
        for (const auto& [name, v] : rev.defaults)
            if (!fields_.count(name)) fields_.emplace(name, FieldSpec{name, FieldType::Any, true, {}, "", "", ""});
    for (const auto& [name, f] : fields_) field_names_.push_back(name);

    const json precision = parse_schema_file("precision.json");
    precision_fields_ = string_list(precision, "copied_fields");
    const Provenance none;
    for (auto it = precision.at("recipes").begin(); it != precision.at("recipes").end(); ++it) {
        PrecisionRecipe r;
        r.name = it.key();
        for (auto f = it.value().begin(); f != it.value().end(); ++f)
            r.fields.emplace_back(f.key(), value_from_json(f.value(), none));
        precision_.push_back(std::move(r));
    }
    sections_ = string_list(parse_schema_file("config_container.json"), "sections");
}

const Schema& Schema::instance() {
    static const Schema schema;
    return schema;
}

static bool is_commit_prefix(std::string_view s) {
    return s.size() >= 7 && s.size() <= 40 &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

static std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string Revision::what() const {
    if (!release.empty()) {
        std::string out = fmt::format("release {}", release);
        if (tags.size() > 1) {
            std::vector<std::string> patches;
            for (const auto& [tag, sha] : tags)
                if (tag != release) patches.push_back(tag.substr(tag.rfind('.') + 1));
            out += fmt::format(" (patch releases .{} too)", fmt::join(patches, ", ."));
        }
        return out;
    }
    std::string out = fmt::format("commit {} ({}{})", commit.substr(0, 12), date,
                                  branch.empty() ? "" : fmt::format(", {} branch", branch));
    if (!pinned_by.empty()) out += ", " + pinned_by;
    return out;
}

std::optional<std::string> Revision::matches_commit(std::string_view sha) const {
    if (!is_commit_prefix(sha)) return std::nullopt;
    const std::string wanted = lower(sha);
    auto same = [&](const std::string& recorded) {
        const std::size_t n = std::min(recorded.size(), wanted.size());
        return recorded.compare(0, n, wanted, 0, n) == 0;
    };
    if (!commit.empty() && same(commit)) return commit;
    for (const auto& [tag, recorded] : tags)
        if (same(recorded)) return tag;
    return std::nullopt;
}

RevisionLookup Schema::lookup_revision(std::string_view name) const {
    std::string key(name);
    if (auto it = ambiguous_.find(key); it != ambiguous_.end()) return {nullptr, it->second};
    if (auto it = aliases_.find(key); it != aliases_.end()) key = it->second;
    const std::string bare = key.rfind("core_v", 0) == 0 ? key.substr(6) : key;  // "core_v0.19" -> "0.19"
    for (const auto& r : revisions_)
        if (r.name == key || (!r.release.empty() && r.name == bare)) return {&r, {}};
    // A release tag, with or without the "core_v" prefix: "core_v0.19.0", "0.15.2".
    for (const auto& r : revisions_)
        for (const auto& [tag, sha] : r.tags)
            if (key == tag || (tag.rfind("core_v", 0) == 0 && key == tag.substr(6))) return {&r, {}};
    if (const Revision* r = revision_for_commit(key)) return {r, {}};
    return {};
}

const Revision* Schema::revision(std::string_view name) const { return lookup_revision(name).revision; }

const Revision* Schema::revision_for_commit(std::string_view sha) const {
    for (const auto& r : revisions_)
        if (r.matches_commit(sha)) return &r;
    return nullptr;
}

std::string Schema::revision_error(std::string_view name, std::string_view setting) const {
    const RevisionLookup found = lookup_revision(name);
    if (found.revision) return {};
    const std::vector<std::string> names = revision_names();
    if (!found.ambiguity.empty())
        return fmt::format("Megatron Core revision \"{}\" for {} is ambiguous: {}; pass one of {}", name, setting,
                           found.ambiguity, fmt::join(names, ", "));
    return fmt::format("unknown Megatron Core revision \"{}\" for {}{}; known revisions: {} (default {})", name,
                       setting, did_you_mean_suffix(std::string(name), names), fmt::join(names, ", "),
                       default_revision_);
}

std::vector<std::string> Schema::revision_names() const {
    std::vector<std::string> out;
    for (const auto& r : revisions_) out.push_back(r.name);
    return out;
}

const FieldSpec* Schema::field(std::string_view name) const {
    auto it = fields_.find(name);
    return it == fields_.end() ? nullptr : &it->second;
}

bool Schema::field_exists_at(const FieldSpec& f, const Revision& rev) const {
    if (!f.since.empty()) {
        const Revision* since = revision(f.since);
        if (since && rev.order < since->order) return false;
    }
    if (!f.until.empty()) {
        const Revision* until = revision(f.until);
        if (until && rev.order > until->order) return false;
    }
    return true;
}

const PrecisionRecipe* Schema::precision_recipe(std::string_view name) const {
    for (const auto& r : precision_)
        if (r.name == name) return &r;
    return nullptr;
}

std::vector<std::string> Schema::precision_recipe_names() const {
    std::vector<std::string> out;
    for (const auto& r : precision_) out.push_back(r.name);
    return out;
}

const json& Schema::model_catalog() const {
    static const json catalog = parse_schema_file("models/hf-architectures.json");
    return catalog;
}

}  // namespace mbl
