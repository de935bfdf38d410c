#pragma once
// Read-only access to the data under schemas/ (embedded in the binary): revisions, fields, precision recipes.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/revision_keys.hpp"
#include "core/value.hpp"

namespace mbl {

enum class FieldType { Bool, Int, Float, Str, List, Dict, Dtype, Callable, Any };
const char* field_type_name(FieldType t);
// Whether a value fits a schema field type (None and unknown values fit every type).
bool type_matches(const Value& v, FieldType t);

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
    int order = 0;  // position in index.json's order (releases, then commits by date)
    // What the name stands for: a release (its tag and the tags of its patch releases, each with its commit), or one
    // Megatron-LM commit (with its date, branch and who pins it).
    std::string release;                                    // "core_v0.19.0"; empty for a commit
    std::vector<std::pair<std::string, std::string>> tags;  // release tag -> commit
    std::string commit, date, branch, pinned_by;            // for a commit
    // The recompute vocabulary (core/recompute.hpp): accepted recompute_modules labels, what an unset
    // recompute_modules becomes under selective recompute, and the labels whose checkpoint discards its output and
    // rematerialises it before the consumer's backward (the others keep their inputs and drop what is inside).
    std::vector<std::string> labels;
    std::vector<std::string> default_modules;
    std::vector<std::string> output_discarding;
    std::set<std::string, std::less<>> rejections;        // codes of the error rules Megatron Core enforces here
    std::set<std::string, std::less<>> known_crashes;     // ids of configurations known to crash at run time here
    std::vector<std::pair<std::string, Value>> defaults;  // field defaults the rules rely on
    std::map<std::string, std::vector<std::string>, std::less<>> enums;  // accepted values of enum-like fields
    // Deprecated spellings __post_init__ rewrites before its checks: field -> (alias -> canonical value).
    std::map<std::string, std::map<std::string, std::string>> value_aliases;

    // A key's values; empty where this revision's file (and those it extends) does not state the key.
    const std::vector<std::string>& enum_values(RevisionEnum key) const;

    bool rejects(std::string_view code) const { return rejections.contains(code); }
    bool has_label(std::string_view label) const;
    bool discards_output(std::string_view label) const;
    bool crashes(KnownCrash id) const { return known_crashes.contains(id.str()); }

    // One line for --help: "release core_v0.19.0" / "commit 2a75ac12c54b (2026-08-13, main branch), Megatron
    // Bridge's main pin (...)".
    std::string what() const;
    // The commit that `sha` matches (either is a prefix of the other, 7 hex digits at least), with the tag naming it
    // for a release; nullopt when none does.
    std::optional<std::string> matches_commit(std::string_view sha) const;
};

// Why a --mcore / mcore value names no single revision.
struct RevisionLookup {
    const Revision* revision = nullptr;
    std::string ambiguity;  // set when the name could mean several revisions: what it could mean
};

struct PrecisionRecipe {
    std::string name;
    std::vector<std::pair<std::string, Value>> fields;
};

class Schema {
public:
    // Parsed once, on first use; thread-safe.
    static const Schema& instance();

    // A revision by name, alias ("bridge-dev"), release tag ("core_v0.19.0", "0.15.2") or commit (7 hex digits or
    // more); nullptr when unknown or ambiguous.
    const Revision* revision(std::string_view name) const;
    RevisionLookup lookup_revision(std::string_view name) const;
    // The sentence saying why `name` (given as `setting`, e.g. "--mcore") is not usable: unknown (with "did you
    // mean" and the known names) or ambiguous (with what it could mean).
    std::string revision_error(std::string_view name, std::string_view setting) const;
    std::vector<std::string> revision_names() const;
    const std::map<std::string, std::string>& revision_aliases() const { return aliases_; }
    const std::map<std::string, std::string>& ambiguous_revision_names() const { return ambiguous_; }  // name -> why
    // The revision whose recorded commit `sha` matches (see Revision::matches_commit), or nullptr.
    const Revision* revision_for_commit(std::string_view sha) const;
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
    std::map<std::string, std::string> ambiguous_;  // name -> what it could mean
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
