#pragma once
// Architecture of models loaded with AutoBridge.from_hf_pretrained("org/name"): their config.json, looked up in
// this order: --hf-config, the local Hugging Face cache, the catalog bundled in schemas/models/. The HF keys are
// mapped onto Megatron fields as Bridge does (schemas/models/hf-mapping.json).
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/value.hpp"

namespace mbl::py {

struct HfField {
    std::string field;   // Megatron field name
    Value value;         // may be unknown (a family fact the bundled mapping does not know)
    std::string detail;  // where it comes from, for notes and `show`
};

struct HfArchitecture {
    std::string model_id;
    std::string source;  // "the bundled catalog", "the Hugging Face cache (...)", "--hf-config ..."
    std::string family;  // model_type
    std::string provider_class;
    std::vector<HfField> fields;
    std::shared_ptr<const nlohmann::json> config;  // the config.json it was read from
};

class HfResolver {
public:
    // `hf_config_args`: --hf-config values. "ORG/NAME=PATH" binds one model; a bare PATH to a config.json applies
    // to every model; a bare directory is searched like a hub cache (models--ORG--NAME/...) or as ORG/NAME/.
    // `cache_dirs` empty: $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub.
    explicit HfResolver(std::vector<std::string> hf_config_args = {}, std::vector<std::string> cache_dirs = {});

    // The mapped architecture, or null when no config.json is found. Thread-safe; results are cached.
    std::shared_ptr<const HfArchitecture> lookup(const std::string& model_id) const;

    // Problems with --hf-config arguments (missing file, unparsable JSON), in words.
    const std::vector<std::string>& errors() const { return errors_; }

    // The fields left unknown when a model's architecture cannot be found.
    static const std::vector<std::string>& architecture_fields();

private:
    std::shared_ptr<const HfArchitecture> resolve(const std::string& model_id) const;

    std::map<std::string, std::string> bound_;  // model id -> config.json path
    std::vector<std::string> generic_files_;
    std::vector<std::string> search_dirs_;
    std::vector<std::string> cache_dirs_;
    std::vector<std::string> errors_;
    mutable std::mutex mutex_;
    mutable std::map<std::string, std::shared_ptr<const HfArchitecture>> cache_;
};

}  // namespace mbl::py
