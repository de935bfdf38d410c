#include "parser/python/hf_models.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/schema.hpp"

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

std::optional<json> read_json(const std::string& path, std::string& error) {
    std::ifstream in(path);
    if (!in) {
        error = fmt::format("cannot read {}", path);
        return std::nullopt;
    }
    std::stringstream buf;
    buf << in.rdbuf();
    json j = json::parse(buf.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        error = fmt::format("{} is not a JSON object", path);
        return std::nullopt;
    }
    return j;
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

std::shared_ptr<HfArchitecture> map_config(const std::string& id, const json& raw, const std::string& source) {
    auto arch = std::make_shared<HfArchitecture>();
    arch->model_id = id;
    arch->source = source;
    // Multimodal models keep the language model's keys under text_config.
    json cfg = raw;
    if (raw.contains("text_config") && raw["text_config"].is_object()) {
        cfg = raw["text_config"];
        for (const char* k : {"model_type", "architectures"})
            if (!cfg.contains(k) && raw.contains(k)) cfg[k] = raw[k];
    }
    // Keys config.json may omit take the transformers config class defaults.
    const json& hf_defaults = mapping().value("hf_defaults", json::object());
    for (auto it = hf_defaults.begin(); it != hf_defaults.end(); ++it)
        if (!cfg.contains(it.key())) cfg[it.key()] = it.value();
    arch->family = cfg.value("model_type", std::string());
    const json& m = mapping();
    const json* family = nullptr;
    std::string family_name = arch->family;
    if (m.contains("families") && m["families"].contains(family_name)) family = &m["families"][family_name];
    if (!family && cfg.contains("architectures") && cfg["architectures"].is_array() && !cfg["architectures"].empty() &&
        cfg["architectures"][0].is_string() && m.contains("by_architecture")) {
        auto a = cfg["architectures"][0].get<std::string>();
        if (m["by_architecture"].contains(a)) {
            family_name = m["by_architecture"][a].get<std::string>();
            family = &m["families"][family_name];
        }
    }
    if (family && family->contains("same_as")) {
        family_name = (*family)["same_as"].get<std::string>();
        family = &m["families"][family_name];
    }

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
    const std::string from = fmt::format("the config.json of {} ({})", id, source);

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
        if (family->contains("keys")) apply_keys((*family)["keys"]);
        const std::string bridge = family->value("bridge", family_name);
        if (family->contains("set")) {
            const json& set = (*family)["set"];
            for (auto it = set.begin(); it != set.end(); ++it)
                put(it.key(), value_from_json(it.value(), {}),
                    fmt::format("{} = {} is set by Megatron Bridge's {}", it.key(), format_value(it.value()), bridge));
        }
        // Dense-first layer pattern: the first k layers are dense, the rest MoE.
        if (family->contains("dense_first")) {
            const std::string key = (*family)["dense_first"].get<std::string>();
            if (cfg.contains(key) && cfg[key].is_number_integer() && cfg.contains("num_hidden_layers") &&
                cfg["num_hidden_layers"].is_number_integer()) {
                std::int64_t k = cfg[key].get<std::int64_t>(), n = cfg["num_hidden_layers"].get<std::int64_t>();
                if (k >= 0 && n >= k && n < 100000) {
                    std::vector<Value> pattern;
                    for (std::int64_t i = 0; i < n; ++i) pattern.push_back(Value::integer(i < k ? 0 : 1));
                    put("moe_layer_freq", Value::list(std::move(pattern)),
                        fmt::format("moe_layer_freq = [0] * {} + [1] * {} from {} = {} in {}", k, n - k, key, k, from));
                }
            }
        }
        if (family->contains("shared_experts")) {
            const std::string key = (*family)["shared_experts"].get<std::string>();
            if (cfg.contains(key) && cfg[key].is_number_integer() && cfg.contains("moe_intermediate_size") &&
                cfg["moe_intermediate_size"].is_number_integer()) {
                std::int64_t v = cfg[key].get<std::int64_t>() * cfg["moe_intermediate_size"].get<std::int64_t>();
                put("moe_shared_expert_intermediate_size", v > 0 ? Value::integer(v) : Value::null(),
                    fmt::format("moe_shared_expert_intermediate_size = {} = {} x moe_intermediate_size in {}", v, key,
                                from));
            }
        }
    }
    // Models without experts are dense whatever the mapping says about MoE facts.
    bool has_experts = false;
    for (const auto& f : arch->fields)
        if (f.field == "num_moe_experts" && f.value.is_int() && f.value.as_int() > 0) has_experts = true;
    if (!has_experts) {
        put("num_moe_experts", Value::null(), fmt::format("num_moe_experts = None: no experts in {}", from));
        static const std::vector<std::string> moe_only = {"moe_layer_freq", "moe_grouped_gemm",
                                                          "moe_shared_expert_intermediate_size",
                                                          "moe_shared_expert_overlap"};
        arch->fields.erase(std::remove_if(arch->fields.begin(), arch->fields.end(),
                                          [](const HfField& f) {
                                              return f.value.is_unknown() &&
                                                     std::find(moe_only.begin(), moe_only.end(), f.field) !=
                                                         moe_only.end();
                                          }),
                           arch->fields.end());
    }
    return arch;
}

}  // namespace

const std::vector<std::string>& HfResolver::architecture_fields() {
    static const std::vector<std::string> fields = {
        "enable_hyper_connections", "enable_mhc_connections",  // bridges switch hyper-connections on per family
        "num_layers", "hidden_size", "num_attention_heads", "num_query_groups", "ffn_hidden_size", "kv_channels",
        "num_moe_experts", "moe_ffn_hidden_size", "moe_router_topk", "moe_layer_freq",
        "moe_shared_expert_intermediate_size", "moe_shared_expert_overlap", "moe_grouped_gemm",
        "multi_latent_attention", "experimental_attention_variant", "hidden_dropout", "attention_dropout",
        "vocab_size"};
    return fields;
}

HfResolver::HfResolver(std::vector<std::string> hf_config_args, std::vector<std::string> cache_dirs) {
    std::error_code ec;
    for (const auto& arg : hf_config_args) {
        auto eq = arg.find('=');
        if (eq != std::string::npos && eq > 0 && arg.find('/') < eq) {
            std::string id = arg.substr(0, eq), path = arg.substr(eq + 1);
            if (fs::is_directory(path, ec)) path = (fs::path(path) / "config.json").string();
            if (!fs::is_regular_file(path, ec)) errors_.push_back(fmt::format("--hf-config {}: no such file {}", arg, path));
            bound_[id] = path;
            continue;
        }
        if (fs::is_regular_file(arg, ec)) {
            generic_files_.push_back(arg);
        } else if (fs::is_directory(arg, ec)) {
            if (fs::is_regular_file(fs::path(arg) / "config.json", ec))
                generic_files_.push_back((fs::path(arg) / "config.json").string());
            else
                search_dirs_.push_back(arg);
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
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = cache_.find(model_id); it != cache_.end()) return it->second;
    }
    auto arch = resolve(model_id);
    std::lock_guard<std::mutex> lock(mutex_);
    return cache_.emplace(model_id, std::move(arch)).first->second;
}

std::shared_ptr<const HfArchitecture> HfResolver::resolve(const std::string& id) const {
    std::string error;
    auto from_file = [&](const std::string& path, const std::string& source) -> std::shared_ptr<const HfArchitecture> {
        auto j = read_json(path, error);
        if (!j) return nullptr;
        return map_config(id, *j, source);
    };
    if (auto it = bound_.find(id); it != bound_.end())
        if (auto a = from_file(it->second, fmt::format("--hf-config {}", it->second))) return a;
    for (const auto& f : generic_files_)
        if (auto a = from_file(f, fmt::format("--hf-config {}", f))) return a;
    std::error_code ec;
    for (const auto& d : search_dirs_) {
        if (auto p = find_in_cache(d, id))
            if (auto a = from_file(*p, fmt::format("--hf-config {}", *p))) return a;
        fs::path nested = fs::path(d) / id / "config.json";
        if (fs::is_regular_file(nested, ec))
            if (auto a = from_file(nested.string(), fmt::format("--hf-config {}", nested.string()))) return a;
    }
    for (const auto& d : cache_dirs_)
        if (auto p = find_in_cache(d, id))
            if (auto a = from_file(*p, fmt::format("the Hugging Face cache, {}", *p))) return a;
    const json& catalog = Schema::instance().model_catalog();
    if (catalog.contains("models") && catalog["models"].contains(id))
        return map_config(id, catalog["models"][id], "the bundled catalog");
    return nullptr;
}

}  // namespace mbl::py
