#pragma once
// Read-only access to the data under schemas/ (embedded in the binary): revisions, fields, precision recipes.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/config_classes.hpp"
#include "core/revision_keys.hpp"
#include "core/value.hpp"

namespace mbl {

// A name that may appear under `model:`: a field of Megatron Core's config classes at some known revision
// (schemas/mcore/classes/), or of a model class of Megatron Bridge (schemas/bridge/model_fields.json).
struct FieldSpec {
    std::string name;
    FieldType type = FieldType::Any;  // as the newest revision declaring it declares it, else as Bridge does
    bool nullable = true;
    std::vector<std::string> enum_values;
    std::string owner;  // the class declaring it
    // Megatron Core: the first and last revision (index order) whose classes declare it, and the revisions between
    // them that lack it ("" when no Megatron Core class declares it).
    std::string first, last;
    std::vector<std::string> not_in;
    // Megatron Bridge: where a model class of Bridge declares it ("" when none does), and its type there.
    std::string bridge_source;
    FieldType bridge_type = FieldType::Any;
};

// A field's type at a revision without a copy of its FieldSpec (Schema::field_type_at): what a check of a value against
// the field reads.
struct FieldTypeAt {
    FieldType type = FieldType::Any;
    bool nullable = true;
    const std::vector<std::string>* enum_values = nullptr;  // never null once made by field_type_at
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
    std::set<std::string, std::less<>> known_crashes;  // ids of configurations known to crash at run time here
    // Megatron Core's config classes here, from which the labels, default_modules and defaults come.
    std::shared_ptr<const ClassFacts> classes;
    // The facts stand in for a Megatron Core they were not read from (a commit no revision records, mapped to the
    // nearest one): what they say is absent is not proven absent there.
    bool approximate = false;
    // For approximate facts: the revision on the pinned commit's other side (schemas/mcore/commits.json). A check of
    // these facts that its source does not state too may not be in the commit's source: no promise there.
    const Revision* confirm = nullptr;
    std::string facts_note;  // why these facts, when they are not the bundled ones of this revision: one sentence
    // TransformerConfig's defaults (with its bases'), those the source states as literals, in constructor order.
    std::vector<std::pair<std::string, Value>> defaults;
    std::shared_ptr<const Value> defaults_map;  // the same as one map, shared by the effective models of the revision
    std::map<std::string, std::vector<std::string>, std::less<>> enums;  // accepted values of enum-like fields

    // A key's values; empty where this revision's file (and those it extends) does not state the key.
    const std::vector<std::string>& enum_values(RevisionEnum key) const;

    bool has_label(std::string_view label) const;
    bool discards_output(std::string_view label) const;
    bool crashes(KnownCrash id) const { return known_crashes.contains(id.str()); }
    // Whether a config class of Megatron Core declares the field here.
    bool has_field(std::string_view field) const { return classes && classes->declares(field); }
    // Where the facts come from: "Megatron-LM 2a75ac12c54b (bundled; scripts/mcore_facts.py)", or the tree read.
    std::string facts_source() const;

    // One line for --help: "release core_v0.19.0" / "commit 2a75ac12c54b (2026-08-13, main branch), Megatron
    // Bridge's main pin (...)".
    std::string what() const;
    // The commit that `sha` matches (either is a prefix of the other, 7 hex digits at least), with the tag naming it
    // for a release; nullopt when none does.
    std::optional<std::string> matches_commit(std::string_view sha) const;
};

// Where a Megatron-LM commit lies among the revisions with facts (schemas/mcore/commits.json, written by
// scripts/mcore_commits.py from Megatron-LM's history).
struct CommitPlace {
    std::string hash;                   // the table's prefix (12 hex digits)
    std::string date;                   // its commit date, "2026-06-13"
    std::string where;                  // "main", "dev", a core_v tag, or "pinned by Megatron Bridge"
    const Revision* nearest = nullptr;  // the revision fewest commits away: its facts stand in
    const Revision* other = nullptr;    // the nearest on the commit's other side; nullptr where there is none
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
    // more): a named one (schemas/mcore/index.json), else a commit of the fact store; nullptr when unknown or
    // ambiguous.
    const Revision* revision(std::string_view name) const;
    // What a revision of revision_names() stands for (Revision::what()), without reading its config classes: the help
    // text lists every revision, and reading all their classes is most of a start-up.
    std::string revision_what(std::string_view name) const;
    RevisionLookup lookup_revision(std::string_view name) const;
    // The sentence saying why `name` (given as `setting`, e.g. "--mcore") is not usable: unknown (with "did you
    // mean" and the known names) or ambiguous (with what it could mean).
    std::string revision_error(std::string_view name, std::string_view setting) const;
    std::vector<std::string> revision_names() const;
    const std::map<std::string, std::string>& revision_aliases() const { return aliases_; }
    const std::map<std::string, std::string>& ambiguous_revision_names() const { return ambiguous_; }  // name -> why
    // The revision with facts of `sha`'s own: a named revision's commit or release tag, else a commit of the fact
    // store, else a patch release a named revision stands for (see Revision::matches_commit); nullptr when none.
    const Revision* revision_for_commit(std::string_view sha) const;
    // Where `sha` (7 hex digits or more) lies in the bundled table of Megatron-LM commits; nullopt when the table does
    // not list it (a commit after the table's newest, or one no public branch has).
    std::optional<CommitPlace> locate_commit(std::string_view sha) const;
    // For a commit the table does not list, taken as newer than it: the newest commit of main the table lists, whose
    // revision stands in (`place.where` is "main"); and the date the table ends.
    CommitPlace newest_main_commit() const;
    // The known revision nearest to a Megatron Core that reports `version` ("0.20.0rc1", from package_info.py or a
    // core_v tag) by release order, and in `why` how it was chosen; nullptr when the version is not one or is older
    // than every known revision.
    const Revision* nearest_revision(std::string_view version, std::string& why) const;
    const std::string& default_revision() const { return default_revision_; }

    const FieldSpec* field(std::string_view name) const;
    // Whether `rev` has the field: a Megatron Core class declares it there, or a Bridge model class does.
    bool field_exists_at(const FieldSpec& f, const Revision& rev) const;
    // The field with its type at `rev` (Megatron Core's declaration there; Any where Bridge declares another type).
    FieldSpec field_at(const FieldSpec& f, const Revision& rev) const;
    // The same declaration's type, nullability and enum values only: field_at without copying the spec's strings.
    FieldTypeAt field_type_at(const FieldSpec& f, const Revision& rev) const;
    // Which Megatron Core revisions have the field, for messages: "it is in 0.19 to main", "it is only in dev".
    std::string field_history(const FieldSpec& f) const;
    // Whether a dotted class name (a dump's `_target_`) is a config class whose fields the linter knows at `rev`: one
    // of Megatron Core's classes there, or a model class of Megatron Bridge.
    bool knows_model_class(std::string_view dotted, const Revision& rev) const;
    const std::vector<std::string>& field_names() const { return field_names_; }

    const PrecisionRecipe* precision_recipe(std::string_view name) const;
    std::vector<std::string> precision_recipe_names() const;

    const std::vector<std::string>& config_sections() const { return sections_; }

    // The bundled Hugging Face architecture catalog (schemas/models/hf-architectures.json), parsed on demand.
    const nlohmann::json& model_catalog() const;

    // Megatron Bridge's comm-overlap start-up checks at the Bridge commit the linter bundles (schemas/bridge/checks.json,
    // generated from its source), compiled on first use.
    const post_init::Program& bridge_checks() const;

private:
    Schema();
    void read_field_specs();
    // `r` with its config classes read (once, on first use); every lookup hands revisions out through it.
    const Revision* ready(const Revision* r) const;
    // The revision of a commit of the fact store (schemas/mcore/facts/), made on first use and kept.
    const Revision* stored_revision(std::string_view name) const;
    // The named revision whose own commit (its `commit`, or its release tag's) `sha` matches, or nullptr.
    const Revision* named_revision_for_commit(std::string_view sha) const;
    std::vector<Revision> hand_written_;  // revisions_ as the constructor read them, before ready() completes them
    mutable std::mutex stored_mutex_;
    mutable std::map<std::string, std::unique_ptr<Revision>, std::less<>> stored_;  // by commit
    mutable std::vector<Revision> revisions_;  // filled by the constructor; ready() completes each in place
    struct CommitRow {
        std::string hash, date, where, nearest, other;
    };
    const std::vector<CommitRow>& commit_rows() const;  // commits.json, read on first use
    CommitPlace place_of(const CommitRow& row) const;
    std::unique_ptr<std::once_flag[]> loaded_;
    std::map<std::string, std::string> aliases_;
    std::map<std::string, std::string> ambiguous_;  // name -> what it could mean
    std::string default_revision_;
    std::map<std::string, FieldSpec, std::less<>> fields_;
    std::vector<std::string> field_names_;
    std::map<std::string, std::vector<std::string>, std::less<>> bridge_classes_;  // class -> modules defining it
    std::vector<PrecisionRecipe> precision_;
    std::vector<std::string> sections_;
};

// Puts a revision's config classes in place and derives what comes from them: the recompute labels and default
// modules (where the source states them) and TransformerConfig's defaults.
void apply_class_facts(Revision& rev, std::shared_ptr<const ClassFacts> facts);

// Revision::defaults as one map (field name -> value).
Value map_of_defaults(const std::vector<std::pair<std::string, Value>>& defaults);

// JSON -> config Value (all with the given provenance).
Value value_from_json(const nlohmann::json& j, const Provenance& prov);

// The text of an embedded schema file, or nullopt.
std::optional<std::string_view> schema_file(std::string_view path);

}  // namespace mbl
