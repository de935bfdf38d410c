// Hugging Face config.json files found (--hf-config, the local cache, the bundled catalog) and mapped onto Megatron
// fields as Bridge maps them (see hf_models.hpp).
#include "parser/bridge/hf_models.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>

#include "core/file_text.hpp"
#include "core/schema.hpp"
#include "core/source_manager.hpp"

namespace mbl::py {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const json& mapping() {
    static const json m = [] {
        auto text = schema_file("models/hf-mapping.json");
        return text ? json::parse(*text) : json::object();
    }();
    return m;
}

std::optional<json> read_json(const std::string& path) {
    std::optional<std::string> text = read_file_text(path, SourceManager::max_file_bytes()).text;
    if (!text) return std::nullopt;
    return parse_config_json(*text);
}

// config.json of `id` under a hub cache directory: models--ORG--NAME/snapshots/<rev>/config.json, preferring the
// revision refs/main points at.
std::optional<std::string> find_in_cache(const std::string& dir, const std::string& id) {
    std::string folder = "models--" + id;
    for (size_t p = 0; (p = folder.find('/', p)) != std::string::npos;) folder.replace(p, 1, "--");
    std::error_code ec;
    fs::path base = fs::path(dir) / folder;
    if (!fs::is_directory(base / "snapshots", ec)) return std::nullopt;
    std::ifstream ref(base / "refs" / "main");
    std::string main_rev;
    if (ref) std::getline(ref, main_rev);
    if (!main_rev.empty() && fs::is_regular_file(base / "snapshots" / main_rev / "config.json", ec))
        return (base / "snapshots" / main_rev / "config.json").string();
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(base / "snapshots", ec))
        if (fs::is_regular_file(e.path() / "config.json", ec)) found.push_back((e.path() / "config.json").string());
    if (found.empty()) return std::nullopt;
    std::sort(found.begin(), found.end());
    return found.front();
}

std::string format_value(const json& j) {
    if (j.is_string()) return fmt::format("\"{}\"", j.get<std::string>());
    if (j.is_boolean()) return j.get<bool>() ? "True" : "False";
    if (j.is_null()) return "None";
    return j.dump();
}

// The object at a dotted path ("thinker_config.text_config"), or null.
const json* object_at(const json& j, const std::string& dotted) {
    const json* at = &j;
    for (size_t start = 0; start <= dotted.size();) {
        size_t dot = dotted.find('.', start);
        if (dot == std::string::npos) dot = dotted.size();
        const std::string key = dotted.substr(start, dot - start);
        if (!at->is_object() || !at->contains(key)) return nullptr;
        at = &(*at)[key];
        start = dot + 1;
    }
    return at->is_object() ? at : nullptr;
}

std::string first_architecture(const json& j) {
    if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
        j["architectures"][0].is_string())
        return j["architectures"][0].get<std::string>();
    return {};
}

// The family entry of hf-mapping.json that describes how Bridge configures this model: by model_type, then by
// architecture, of the top level first (that is what AutoBridge dispatches on), then of the language model.
const json* find_family(const json& raw, const json& cfg, std::string& name) {
    static const json kNone = json::object();
    const json& m = mapping();
    // References into the mapping itself: the family returned points into it.
    const json& families = m.contains("families") ? m["families"] : kNone;
    const json& by_arch = m.contains("by_architecture") ? m["by_architecture"] : kNone;
    const json* family = nullptr;
    for (const json* level : {&raw, &cfg}) {
        const std::string type = level->value("model_type", std::string());
        if (!type.empty() && families.contains(type)) {
            name = type;
            family = &families[type];
            break;
        }
    }
    for (const json* level : {&raw, &cfg}) {
        if (family) break;
        const std::string arch = first_architecture(*level);
        if (!arch.empty() && by_arch.contains(arch) && by_arch[arch].is_string() &&
            families.contains(by_arch[arch].get<std::string>())) {
            name = by_arch[arch].get<std::string>();
            family = &families[name];
        }
    }
    for (int hops = 0; family && family->contains("same_as") && hops < 8; ++hops) {
        name = (*family)["same_as"].get<std::string>();
        family = families.contains(name) ? &families[name] : nullptr;
    }
    return family;
}

std::optional<std::int64_t> integer_key(const json& cfg, const std::string& key) {
    if (cfg.contains(key) && cfg[key].is_number_integer()) return cfg[key].get<std::int64_t>();
    return std::nullopt;
}

// moe_layer_freq as a 0/1 list from a per-layer schedule in config.json, with words for the note; nullopt when the
// spec does not apply. Specs: {"flags": key} (0/1 or booleans), {"kinds": key, "values": {kind: 0|1}},
// {"indices": key} (MoE layer numbers, a list or a comma-separated string; needs num_hidden_layers).
std::optional<std::pair<std::vector<Value>, std::string>> moe_layer_pattern(const json& cfg, const json& spec) {
    if (!spec.is_object()) return std::nullopt;
    constexpr size_t kMaxLayers = 100000;
    std::vector<Value> pattern;
    if (spec.contains("flags")) {
        const std::string key = spec["flags"].get<std::string>();
        if (!cfg.contains(key) || !cfg[key].is_array() || cfg[key].empty() || cfg[key].size() > kMaxLayers)
            return std::nullopt;
        for (const auto& v : cfg[key]) {
            if (v.is_boolean()) pattern.push_back(Value::integer(v.get<bool>() ? 1 : 0));
            else if (v.is_number_integer()) pattern.push_back(Value::integer(v.get<std::int64_t>() != 0 ? 1 : 0));
            else return std::nullopt;
        }
        return std::make_pair(std::move(pattern), fmt::format("the {}-entry list {}", cfg[key].size(), key));
    }
    if (spec.contains("kinds")) {
        const std::string key = spec["kinds"].get<std::string>();
        const json values = spec.value("values", json::object());
        if (!cfg.contains(key) || !cfg[key].is_array() || cfg[key].empty() || cfg[key].size() > kMaxLayers)
            return std::nullopt;
        for (const auto& v : cfg[key]) {
            if (!v.is_string() || !values.contains(v.get<std::string>()) ||
                !values[v.get<std::string>()].is_number_integer())
                return std::nullopt;
            pattern.push_back(Value::integer(values[v.get<std::string>()].get<std::int64_t>()));
        }
        return std::make_pair(std::move(pattern), fmt::format("the {}-entry list {}", cfg[key].size(), key));
    }
    if (spec.contains("indices")) {
        const std::string key = spec["indices"].get<std::string>();
        auto n = integer_key(cfg, "num_hidden_layers");
        if (!n || *n <= 0 || *n > static_cast<std::int64_t>(kMaxLayers) || !cfg.contains(key)) return std::nullopt;
        std::vector<std::int64_t> indices;
        if (cfg[key].is_array()) {
            for (const auto& v : cfg[key]) {
                if (!v.is_number_integer()) return std::nullopt;
                indices.push_back(v.get<std::int64_t>());
            }
        } else if (cfg[key].is_string()) {
            std::stringstream in(cfg[key].get<std::string>());
            for (std::string item; std::getline(in, item, ',');) {
                if (item.empty()) continue;
                char* end = nullptr;
                const long long v = std::strtoll(item.c_str(), &end, 10);
                if (end == item.c_str() || *end != '\0') return std::nullopt;
                indices.push_back(v);
            }
        } else {
            return std::nullopt;
        }
        pattern.assign(static_cast<size_t>(*n), Value::integer(0));
        for (auto i : indices)
            if (i >= 0 && i < *n) pattern[static_cast<size_t>(i)] = Value::integer(1);
        return std::make_pair(std::move(pattern), fmt::format("MoE at the layers listed in {}", key));
    }
    return std::nullopt;
}

std::shared_ptr<HfArchitecture> map_config(const std::shared_ptr<const HfConfig>& config) {
    const std::string& id = config->model_id;
    const json& raw = config->raw;
    auto arch = std::make_shared<HfArchitecture>();
    arch->model_id = id;
    arch->source = config->source;
    arch->config = config;
    json cfg = language_model_config(raw);
    // Keys config.json may omit take the transformers config class defaults.
    const json& hf_defaults = hf_class_defaults();
    for (auto it = hf_defaults.begin(); it != hf_defaults.end(); ++it)
        if (!cfg.contains(it.key())) cfg[it.key()] = it.value();
    // Keys the transformers config class derives from others (a layer list spelled as a pattern string).
    for (const auto& rule : mapping().value("hf_derived", json::array())) {
        const std::string key = rule.value("key", std::string());
        if (key.empty() || cfg.contains(key)) continue;
        const std::string list_key =
            rule.value(rule.contains("pattern_of") ? "pattern_of" : "length_of", std::string());
        if (!cfg.contains(list_key) || !cfg[list_key].is_array() || cfg[list_key].empty()) continue;
        if (rule.contains("length_of")) {
            cfg[key] = cfg[list_key].size();
            continue;
        }
        const json chars = rule.value("chars", json::object());
        std::string pattern;
        for (const auto& kind : cfg[list_key]) {
            if (!kind.is_string() || !chars.contains(kind.get<std::string>()) ||
                !chars[kind.get<std::string>()].is_string()) {
                pattern.clear();
                break;
            }
            pattern += chars[kind.get<std::string>()].get<std::string>();
        }
        if (!pattern.empty()) cfg[key] = pattern;
    }
    arch->family = raw.value("model_type", cfg.value("model_type", std::string()));
    const json& m = mapping();
    std::string family_name;
    const json* family = find_family(raw, cfg, family_name);

    std::map<std::string, size_t> index;
    auto put = [&](const std::string& field, Value v, std::string detail) {
        if (!Schema::instance().field(field)) return;  // a field this Megatron Core does not have
        if (auto it = index.find(field); it != index.end()) {
            arch->fields[it->second] = HfField{field, std::move(v), std::move(detail)};
            return;
        }
        index[field] = arch->fields.size();
        arch->fields.push_back(HfField{field, std::move(v), std::move(detail)});
    };
    const std::string from = fmt::format("the config.json of {} ({})", id, config->source);

    if (!family) {
        for (const auto& f : m.value("family_fields", json::array()))
            put(f.get<std::string>(),
                Value::unknown(fmt::format("the bundled mapping does not know how Megatron Bridge configures "
                                           "model_type \"{}\"",
                                           arch->family)),
                fmt::format("model_type \"{}\" is not in schemas/models/hf-mapping.json", arch->family));
    }
    auto apply_keys = [&](const json& keys) {
        for (auto it = keys.begin(); it != keys.end(); ++it) {
            if (!cfg.contains(it.key())) continue;
            const std::string field = it.value().get<std::string>();
            put(field, value_from_json(cfg[it.key()], {}),
                fmt::format("{} = {} from {} in {}", field, format_value(cfg[it.key()]), it.key(), from));
        }
    };
    apply_keys(m.value("keys", json::object()));
    if (family) {
        const std::string bridge = family->value("bridge", family_name);
        if (family->contains("set")) {
            const json& set = (*family)["set"];
            for (auto it = set.begin(); it != set.end(); ++it)
                put(it.key(), value_from_json(it.value(), {}),
                    fmt::format("{} = {} is set by Megatron Bridge's {}", it.key(), format_value(it.value()), bridge));
        }
        // What config.json says wins over the bridge's constants (a key the bridge copies when present).
        if (family->contains("keys")) apply_keys((*family)["keys"]);
        for (const auto& f : family->value("unknown", json::array()))
            if (f.is_string())
                put(f.get<std::string>(),
                    Value::unknown(fmt::format("Megatron Bridge's {} computes {} in a way the bundled mapping does not "
                                               "follow",
                                               bridge, f.get<std::string>())),
                    fmt::format("{} is computed by Megatron Bridge's {}", f.get<std::string>(), bridge));
        // A per-layer MoE schedule in config.json, else the dense-first pattern.
        bool moe_layers_done = false;
        if (family->contains("moe_layers")) {
            const json& specs = (*family)["moe_layers"];
            for (const auto& spec : specs.is_array() ? specs : json::array({specs})) {
                if (auto pattern = moe_layer_pattern(cfg, spec)) {
                    put("moe_layer_freq", Value::list(std::move(pattern->first)),
                        fmt::format("moe_layer_freq = {} in {}", pattern->second, from));
                    moe_layers_done = true;
                    break;
                }
            }
        }
        // Dense-first layer pattern: the first k layers are dense, the rest MoE.
        if (!moe_layers_done && family->contains("dense_first")) {
            const std::string key = (*family)["dense_first"].get<std::string>();
            auto k = integer_key(cfg, key), n = integer_key(cfg, "num_hidden_layers");
            if (k && n && *k >= 0 && *n >= *k && *n < 100000) {
                std::vector<Value> pattern;
                for (std::int64_t i = 0; i < *n; ++i) pattern.push_back(Value::integer(i < *k ? 0 : 1));
                put("moe_layer_freq", Value::list(std::move(pattern)),
                    fmt::format("moe_layer_freq = [0] * {} + [1] * {} from {} = {} in {}", *k, *n - *k, key, *k, from));
            }
        }
        // Shared experts: count x width ("shared_experts": "n_shared_experts" counts experts of
        // moe_intermediate_size; an object names the width key, and a flag key that must be true).
        if (family->contains("shared_experts")) {
            const json& spec = (*family)["shared_experts"];
            std::string count_key = spec.is_string() ? spec.get<std::string>() : spec.value("count", std::string());
            std::string width_key = spec.is_object() ? spec.value("width", std::string("moe_intermediate_size"))
                                                     : std::string("moe_intermediate_size");
            std::string flag_key = spec.is_object() ? spec.value("if", std::string()) : std::string();
            auto count = count_key.empty() ? std::optional<std::int64_t>(1) : integer_key(cfg, count_key);
            auto width = integer_key(cfg, width_key);
            const bool enabled =
                flag_key.empty() || (cfg.contains(flag_key) && cfg[flag_key].is_boolean() && cfg[flag_key].get<bool>());
            if (enabled && count && width) {
                std::int64_t v = *count * *width;
                put("moe_shared_expert_intermediate_size", v > 0 ? Value::integer(v) : Value::null(),
                    count_key.empty()
                        ? fmt::format("moe_shared_expert_intermediate_size = {} = {} in {}", v, width_key, from)
                        : fmt::format("moe_shared_expert_intermediate_size = {} = {} x {} in {}", v, count_key,
                                      width_key, from));
            }
        }
        // Which layers use linear attention: a per-layer list of kinds, else an interval (every n-th layer is
        // full attention), as Bridge's full_attention_interval_from_hf reads them.
        if (family->contains("layer_kinds")) {
            const json& spec = (*family)["layer_kinds"];
            const std::string field = spec.value("field", std::string());
            const std::string list_key = spec.value("list", std::string());
            const std::string interval_key = spec.value("interval", std::string());
            const json values = spec.value("values", json::object());
            bool done = false;
            if (!list_key.empty() && cfg.contains(list_key) && cfg[list_key].is_array() && !cfg[list_key].empty()) {
                std::vector<Value> pattern;
                for (const auto& kind : cfg[list_key])
                    if (kind.is_string() && values.contains(kind.get<std::string>()) &&
                        values[kind.get<std::string>()].is_number_integer())
                        pattern.push_back(Value::integer(values[kind.get<std::string>()].get<std::int64_t>()));
                if (pattern.size() == cfg[list_key].size()) {
                    put(field, Value::list(std::move(pattern)),
                        fmt::format("{} = the {}-entry list {} in {} (1 = linear attention, 0 = full attention)", field,
                                    cfg[list_key].size(), list_key, from));
                } else {
                    put(field,
                        Value::unknown(
                            fmt::format("{} in {} names a layer kind the mapping does not know", list_key, from)),
                        fmt::format("{} in {}", list_key, from));
                }
                done = true;
            }
            if (!done && !interval_key.empty()) {
                if (auto n = integer_key(cfg, interval_key))
                    put(field, Value::integer(*n), fmt::format("{} = {} from {} in {}", field, *n, interval_key, from));
            }
        }
    }
    // Models without experts are dense whatever the mapping says about MoE facts.
    bool has_experts = false;
    for (const auto& f : arch->fields)
        if (f.field == "num_moe_experts" && f.value.is_int() && f.value.as_int() > 0) has_experts = true;
    if (!has_experts) {
        put("num_moe_experts", Value::null(), fmt::format("num_moe_experts = None: no experts in {}", from));
        static const std::vector<std::string> moe_only = {
            "moe_layer_freq", "moe_grouped_gemm", "moe_shared_expert_intermediate_size", "moe_shared_expert_overlap"};
        arch->fields.erase(std::remove_if(arch->fields.begin(), arch->fields.end(),
                                          [](const HfField& f) {
                                              return f.value.is_unknown() && std::find(moe_only.begin(), moe_only.end(),
                                                                                       f.field) != moe_only.end();
                                          }),
                           arch->fields.end());
    }
    return arch;
}

// Catalog entries carry bookkeeping beside the config.json keys; the raw config is the entry without it.
json catalog_config(const json& entry) {
    json raw = entry;
    const json& catalog = Schema::instance().model_catalog();
    for (const auto& key : catalog.value("metadata_keys", json::array()))
        if (key.is_string()) raw.erase(key.get<std::string>());
    return raw;
}

}  // namespace

const std::vector<std::string>& HfResolver::architecture_fields() {
    // Every field the mapping can set from a config.json (its keys, each family's keys, settings and layer kinds):
    // what stays unknown when no config.json is found.
    static const std::vector<std::string> fields = [] {
        const json& m = mapping();
        std::set<std::string> names;
        auto targets = [&](const json& keys) {  // the values of a key mapping
            if (!keys.is_object()) return;
            for (auto it = keys.begin(); it != keys.end(); ++it)
                if (it.value().is_string()) names.insert(it.value().get<std::string>());
        };
        auto set_fields = [&](const json& set) {  // the keys of a family's settings
            if (!set.is_object()) return;
            for (auto it = set.begin(); it != set.end(); ++it) names.insert(it.key());
        };
        targets(m.value("keys", json::object()));
        for (const auto& f : m.value("family_fields", json::array()))
            if (f.is_string()) names.insert(f.get<std::string>());
        const json families = m.value("families", json::object());
        for (auto it = families.begin(); it != families.end(); ++it) {
            const json& family = it.value();
            if (!family.is_object()) continue;
            targets(family.value("keys", json::object()));
            set_fields(family.value("set", json::object()));
            if (family.contains("layer_kinds") && family["layer_kinds"].is_object())
                names.insert(family["layer_kinds"].value("field", std::string()));
        }
        std::vector<std::string> out;
        for (const auto& n : names)
            if (Schema::instance().field(n)) out.push_back(n);
        return out;
    }();
    return fields;
}

std::optional<json> parse_config_json(const std::string& text) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) {
        // NaN, Infinity and -Infinity outside strings become null; nothing else changes.
        std::string cleaned;
        cleaned.reserve(text.size());
        bool in_string = false;
        for (size_t i = 0; i < text.size(); ++i) {
            const char c = text[i];
            if (in_string) {
                cleaned += c;
                if (c == '\\' && i + 1 < text.size()) cleaned += text[++i];
                else if (c == '"') in_string = false;
                continue;
            }
            if (c == '"') in_string = true;
            bool replaced = false;
            for (std::string_view token : {"-Infinity", "Infinity", "NaN"}) {
                if (text.compare(i, token.size(), token) == 0) {
                    cleaned += "null";
                    i += token.size() - 1;
                    replaced = true;
                    break;
                }
            }
            if (!replaced) cleaned += c;
        }
        j = json::parse(cleaned, nullptr, false);
    }
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    return j;
}

const json& hf_class_defaults() {
    static const json empty = json::object();
    const json& m = mapping();
    return m.contains("hf_defaults") ? m["hf_defaults"] : empty;
}

json language_model_config(const json& raw) {
    const json& m = mapping();
    for (const auto& path : m.value("text_config", json::array())) {
        if (!path.is_string()) continue;
        const json* nested = object_at(raw, path.get<std::string>());
        if (!nested) continue;
        json cfg = *nested;
        for (const char* k : {"model_type", "architectures"})
            if (!cfg.contains(k) && raw.contains(k)) cfg[k] = raw[k];
        for (const auto& key : m.value("top_level_keys", json::array()))
            if (key.is_string() && raw.contains(key.get<std::string>()))
                cfg[key.get<std::string>()] = raw[key.get<std::string>()];
        return cfg;
    }
    return raw;
}

HfResolver::HfResolver(std::vector<std::string> hf_config_args, std::vector<std::string> cache_dirs) {
    std::error_code ec;
    for (const auto& arg : hf_config_args) {
        auto eq = arg.find('=');
        if (eq != std::string::npos && eq > 0 && arg.find('/') < eq) {
            std::string id = arg.substr(0, eq), path = arg.substr(eq + 1);
            if (fs::is_directory(path, ec)) path = (fs::path(path) / "config.json").string();
            if (!fs::is_regular_file(path, ec))
                errors_.push_back(fmt::format("--hf-config {}: no such file {}", arg, path));
            bound_[id] = path;
            continue;
        }
        if (fs::is_regular_file(arg, ec)) {
            generic_files_.push_back(arg);
        } else if (fs::is_directory(arg, ec)) {
            if (fs::is_regular_file(fs::path(arg) / "config.json", ec))
                generic_files_.push_back((fs::path(arg) / "config.json").string());
            else search_dirs_.push_back(arg);
        } else {
            errors_.push_back(fmt::format("--hf-config {}: no such file or directory", arg));
        }
    }
    if (cache_dirs.empty()) {
        if (const char* v = std::getenv("HF_HUB_CACHE"); v && *v) cache_dirs.emplace_back(v);
        if (const char* v = std::getenv("HF_HOME"); v && *v) cache_dirs.push_back((fs::path(v) / "hub").string());
        if (const char* v = std::getenv("HOME"); v && *v)
            cache_dirs.push_back((fs::path(v) / ".cache" / "huggingface" / "hub").string());
    }
    cache_dirs_ = std::move(cache_dirs);
}

std::shared_ptr<const HfArchitecture> HfResolver::lookup(const std::string& model_id) const {
    return resolved(model_id).architecture;
}

std::shared_ptr<const HfConfig> HfResolver::config(const std::string& model_id) const {
    return resolved(model_id).config;
}

const HfResolver::Resolved& HfResolver::resolved(const std::string& model_id) const {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = cache_.find(model_id); it != cache_.end()) return it->second;
    }
    Resolved r;
    r.config = find_config(model_id);
    if (r.config) r.architecture = map_config(r.config);
    std::lock_guard<std::mutex> lock(mutex_);
    // std::map never moves its elements: the reference stays valid while the resolver lives.
    return cache_.emplace(model_id, std::move(r)).first->second;
}

std::shared_ptr<const HfConfig> HfResolver::find_config(const std::string& id) const {
    auto make = [&](json raw, std::string source) {
        auto c = std::make_shared<HfConfig>();
        c->model_id = id;
        c->source = std::move(source);
        c->raw = std::move(raw);
        return std::shared_ptr<const HfConfig>(std::move(c));
    };
    auto from_file = [&](const std::string& path, const std::string& source) -> std::shared_ptr<const HfConfig> {
        auto j = read_json(path);
        return j ? make(std::move(*j), source) : nullptr;
    };
    if (auto it = bound_.find(id); it != bound_.end())
        if (auto c = from_file(it->second, fmt::format("--hf-config {}", it->second))) return c;
    for (const auto& f : generic_files_)
        if (auto c = from_file(f, fmt::format("--hf-config {}", f))) return c;
    std::error_code ec;
    for (const auto& d : search_dirs_) {
        if (auto p = find_in_cache(d, id))
            if (auto c = from_file(*p, fmt::format("--hf-config {}", *p))) return c;
        fs::path nested = fs::path(d) / id / "config.json";
        if (fs::is_regular_file(nested, ec))
            if (auto c = from_file(nested.string(), fmt::format("--hf-config {}", nested.string()))) return c;
    }
    for (const auto& d : cache_dirs_)
        if (auto p = find_in_cache(d, id))
            if (auto c = from_file(*p, fmt::format("the Hugging Face cache, {}", *p))) return c;
    const json& catalog = Schema::instance().model_catalog();
    if (catalog.contains("models") && catalog["models"].contains(id))
        return make(catalog_config(catalog["models"][id]), "the bundled catalog");
    return nullptr;
}

}  // namespace mbl::py
