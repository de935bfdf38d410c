#pragma once
// Architecture of models loaded with AutoBridge.from_hf_pretrained("org/name"): their config.json, looked up in
// this order: --hf-config, the local Hugging Face cache, the catalog bundled in schemas/models/. The HF keys are
// mapped onto Megatron fields as Bridge does (schemas/models/hf-mapping.json).
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/value.hpp"

namespace mbl::py {

struct HfField {
    std::string field;   // Megatron field name
    Value value;         // may be unknown (a family fact the bundled mapping does not know)
    std::string detail;  // where it comes from, for notes and `show`
};

// A model's config.json as Hugging Face has it.
struct HfConfig {
    std::string model_id;
    std::string source;  // "the bundled catalog", "the Hugging Face cache (...)", "--hf-config ..."
    // The file's object. A multimodal model keeps its language model nested (text_config, or where
    // language_model_config() finds it), as in the file; catalog bookkeeping (source, confidence, notes) is removed.
    nlohmann::json raw;
};

struct HfArchitecture {
    std::string model_id;
    std::string source;  // as HfConfig::source
    std::string family;  // model_type
    std::string provider_class;
    std::vector<HfField> fields;
    std::shared_ptr<const HfConfig> config;  // what the fields were mapped from
};

// The language model's keys of a config.json: the first nested text config the mapping names (text_config,
// thinker_config.text_config, llm_config) with the keys Bridge reads from the top level (tie_word_embeddings)
// laid over it; the object itself when nothing is nested.
nlohmann::json language_model_config(const nlohmann::json& raw);

// Keys config.json may omit and the transformers config classes default (hf-mapping.json's hf_defaults).
const nlohmann::json& hf_class_defaults();

// Parses config.json text. Python's json module writes NaN and Infinity, which are not JSON; they become null.
// nullopt when the text is not a JSON object.
std::optional<nlohmann::json> parse_config_json(const std::string& text);

class HfResolver {
public:
    // `hf_config_args`: --hf-config values. "ORG/NAME=PATH" binds one model; a bare PATH to a config.json applies
    // to every model; a bare directory is searched like a hub cache (models--ORG--NAME/...) or as ORG/NAME/.
    // `cache_dirs` empty: $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub.
    explicit HfResolver(std::vector<std::string> hf_config_args = {}, std::vector<std::string> cache_dirs = {});

    // The mapped architecture, or null when no config.json is found. Thread-safe; results are cached.
    std::shared_ptr<const HfArchitecture> lookup(const std::string& model_id) const;

    // The config.json itself, from the first source that has it (--hf-config, the cache, the catalog), or null.
    // Thread-safe; cached with lookup().
    std::shared_ptr<const HfConfig> config(const std::string& model_id) const;

    // Problems with --hf-config arguments (missing file, unparsable JSON), in words.
    const std::vector<std::string>& errors() const { return errors_; }

    // The fields left unknown when a model's architecture cannot be found: every field the mapping
    // (schemas/models/hf-mapping.json) can set from a config.json.
    static const std::vector<std::string>& architecture_fields();

private:
    struct Resolved {
        std::shared_ptr<const HfConfig> config;
        std::shared_ptr<const HfArchitecture> architecture;
    };
    const Resolved& resolved(const std::string& model_id) const;
    std::shared_ptr<const HfConfig> find_config(const std::string& model_id) const;

    std::map<std::string, std::string> bound_;  // model id -> config.json path
    std::vector<std::string> generic_files_;
    std::vector<std::string> search_dirs_;
    std::vector<std::string> cache_dirs_;
    std::vector<std::string> errors_;
    mutable std::mutex mutex_;
    mutable std::map<std::string, Resolved> cache_;
};

}  // namespace mbl::py
