#pragma once
// Read-only access to the data under schemas/ (embedded in the binary): revisions, fields, precision recipes.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/value.hpp"

namespace mbl {

enum class FieldType { Bool, Int, Float, Str, List, Dict, Dtype, Callable, Any };
const char* field_type_name(FieldType t);

struct FieldSpec {
    std::string name;
    FieldType type = FieldType::Any;
    bool nullable = true;
    std::vector<std::string> enum_values;
    std::string owner;
    std::string since;  // first revision having it, "" when always there
    std::string until;  // last revision having it, "" when still there
};

struct Revision {
    std::string name;
    std::string description;
    int order = 0;                               // position in release order
    std::vector<std::string> labels;             // accepted recompute_modules labels
    std::set<std::string> rejections;            // codes of the error rules Megatron Core enforces here
    std::set<std::string> known_crashes;         // ids of configurations known to crash at run time here
    std::vector<std::pair<std::string, Value>> defaults;  // field defaults the rules rely on
    std::map<std::string, std::vector<std::string>> enums;  // accepted values of enum-like fields

    const std::vector<std::string>& enum_values(const std::string& key) const;

    bool rejects(std::string_view code) const { return rejections.count(std::string(code)) > 0; }
    bool has_label(std::string_view label) const;
    bool crashes(std::string_view id) const { return known_crashes.count(std::string(id)) > 0; }
};

struct PrecisionRecipe {
    std::string name;
    std::vector<std::pair<std::string, Value>> fields;
};

class Schema {
public:
    // Parsed once, on first use; thread-safe.
    static const Schema& instance();

    const Revision* revision(std::string_view name) const;  // accepts aliases ("0.20" -> "0.20.dev")
    std::vector<std::string> revision_names() const;
    const std::string& default_revision() const { return default_revision_; }

    const FieldSpec* field(std::string_view name) const;
    bool field_exists_at(const FieldSpec& f, const Revision& rev) const;
    const std::vector<std::string>& field_names() const { return field_names_; }

    const PrecisionRecipe* precision_recipe(std::string_view name) const;
    std::vector<std::string> precision_recipe_names() const;
    const std::vector<std::string>& precision_fields() const { return precision_fields_; }

    const std::vector<std::string>& config_sections() const { return sections_; }

    // The bundled Hugging Face architecture catalog (schemas/models/hf-architectures.json), parsed on demand.
    const nlohmann::json& model_catalog() const;

private:
    Schema();
    std::vector<Revision> revisions_;
    std::map<std::string, std::string> aliases_;
    std::string default_revision_;
    std::map<std::string, FieldSpec, std::less<>> fields_;
    std::vector<std::string> field_names_;
    std::vector<PrecisionRecipe> precision_;
    std::vector<std::string> precision_fields_;
    std::vector<std::string> sections_;
};

// JSON -> config Value (all with the given provenance).
Value value_from_json(const nlohmann::json& j, const Provenance& prov);

// The text of an embedded schema file, or nullopt.
std::optional<std::string_view> schema_file(std::string_view path);

}  // namespace mbl
