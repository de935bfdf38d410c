#pragma once
// The effective model config: what Megatron Core's TransformerConfig sees after Bridge has applied
// mixed_precision and comm_overlap, with the selected revision's defaults filled in and __post_init__'s
// rewrites (recompute_modules default, moe_layer_recompute) modelled. Every field keeps its provenance.
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/model_fields.hpp"
#include "core/post_init.hpp"
#include "core/run_facts.hpp"
#include "core/schema.hpp"
#include "core/value.hpp"

namespace mbl {

struct ModuleList {
    bool known = true;
    bool defaulted = false;  // None in the config, filled in by Megatron Core (Revision::default_modules)
    std::vector<std::string> labels;
    bool contains(std::string_view label) const;
};

class EffectiveModel {
public:
    // What the config sets over the revision's defaults: field name -> value (with provenance). The defaults are the
    // revision's own map, shared by every model made for it (a whole tree would otherwise copy ~400 per recipe).
    Value set_fields = Value::map();
    std::shared_ptr<const Value> defaults;
    SourceRange anchor;  // where to point for a fact with no line of its own (the `model:` section)
    const Revision* revision = nullptr;
    RunFacts run;  // what lives outside `model:` (core/run_facts.hpp)

    // A field's value; None when the revision has no such field and the config does not set it. Fields are named
    // with the mbl::field constants (core/model_fields.hpp), so a misspelt name does not compile; a name from user
    // text or the linter's data becomes one through FieldName::find, the one lookup by string.
    const Value& operator[](FieldName name) const;
    bool has(FieldName name) const { return find(name) != nullptr; }
    const Value* find(FieldName name) const;
    void set(FieldName name, Value value) { set_key(std::string(name.str()), std::move(value)); }
    // A key as the config writes it, which may be no field at all (Megatron Core rejects those; the rules say so).
    void set_key(std::string key, Value value, SourceRange key_range = {});
    // Every field: the defaults in the revision's order (one the config sets in its place), then the others in the
    // order they were set.
    void for_each_field(const std::function<void(const Value::Entry&)>& visit) const;
    Value all_fields() const;  // the same, as one map
    // All the named fields are known (no unknown value anywhere inside them).
    bool known(std::initializer_list<FieldName> names) const;

    // Typed reads of known values.
    bool flag(FieldName name) const { return (*this)[name].truthy(); }
    std::optional<std::string> str(FieldName name) const { return str_of((*this)[name]); }
    std::optional<std::int64_t> integer(FieldName name) const { return integer_of((*this)[name]); }
    std::optional<double> number(FieldName name) const { return number_of((*this)[name]); }
    static std::optional<std::string> str_of(const Value& v);  // nullopt for None / non-strings
    static std::optional<std::int64_t> integer_of(const Value& v);
    static std::optional<double> number_of(const Value& v);

    // Megatron Core's __post_init__ view, set by finalize. "pre" is what the selective checks see (the granularity as
    // written, recompute_modules defaulted); "post" is after moe_layer_recompute turned into selective + "moe", what
    // later checks see.
    std::optional<std::string> granularity_pre;
    ModuleList modules_pre;
    std::optional<std::string> granularity_post;
    ModuleList modules_post;
    bool moe_layer_converted = false;
    // What Megatron Core's compiled __post_init__ does with the config as written (core/post_init.hpp): its raises,
    // warnings and rewrites. Null when the revision has no compiled checks or the config class is unknown.
    std::shared_ptr<const post_init::Outcome> post_init;
    // What Megatron Bridge's comm-overlap setup (compiled from Bridge's source, post_init::run_steps) does with the
    // config before Megatron Core sees it: Bridge runs it only when the config has a comm_overlap section. Null
    // without one. `bridge_program` is the program run (its commit, its sites).
    std::shared_ptr<const post_init::Outcome> bridge_setup;
    std::shared_ptr<const post_init::Program> bridge_program;
    // The MixedPrecisionConfig the start-up resolves a `mixed_precision` name to (a mapping of its fields, with the
    // recipe's lines), or unknown; null where the config gives no name (its section is then read as written).
    std::shared_ptr<const Value> mixed_precision;
    // The config's sections as Bridge's start-up read them, kept where it raised for certain: the raise points at the
    // section attribute its guard reads ("dataset.enable_offline_packing").
    std::shared_ptr<const Value> bridge_sections;
    // The same run with other facts of the job (--te-version): over the model and sections as the setup saw them.
    std::function<std::optional<post_init::Outcome>(const post_init::JobFacts&)> rerun_bridge_setup;
    // The config is a whole ConfigContainer Bridge wrote out (run_config.yaml): its values are the ones Megatron Core's
    // __post_init__ saw, after Bridge's own start-up (TransformerConfig.finalize) had run.
    bool full_dump = false;

    // Architecture facts derived from the fields; nullopt when unknown.
    bool is_moe() const;  // num_moe_experts set and > 0
    std::optional<int> moe_layer_count() const;
    std::optional<int> dense_layer_count() const;
    std::optional<int> layers_per_stage() const;          // per pipeline stage
    std::optional<int> layers_per_virtual_stage() const;  // per model chunk with VPP
    // Whether attention runs as Transformer Engine fused/flash attention (no s x s tensors kept).
    std::optional<bool> attention_is_fused() const;
};

// How a `mixed_precision` name becomes a MixedPrecisionConfig where the linted tree defines it: Bridge looks the name
// up at run time in its own registry (training/mixed_precision.py), so the tree's lookup, followed by the Python front
// end, decides for recipes, YAML files, --config-file overlays and overrides alike. Without one (a file in no Bridge
// tree), the bundled catalog (schemas/precision.json) decides.
class PrecisionLookup {
public:
    virtual ~PrecisionLookup() = default;
    struct Answer {
        bool applies = false;            // false: the tree has no lookup of its own
        std::optional<Value> config;     // the config's fields as a mapping (with the tree's lines), or an unknown
        std::vector<std::string> names;  // when `config` is empty: the names the tree registers
        std::vector<Note> notes;         // when `config` is empty: where the tree looks names up
    };
    virtual Answer find(const std::string& name) const = 0;
};

struct FinalizeResult {
    EffectiveModel model;
    std::vector<Diagnostic> errors;  // input errors found while assembling (bad mixed_precision name, ...)
};

// Runs the revision's compiled __post_init__ (core/post_init.hpp) over the model: MLATransformerConfig's when
// multi_latent_attention is set, else TransformerConfig's. nullopt when the revision has no compiled checks.
std::optional<post_init::Outcome> run_post_init(const EffectiveModel& m, const post_init::JobFacts& facts);

// Where Megatron Core's compiled __post_init__ certainly rejects the config as `edit` changes it and not as written:
// "message (file:line)" of the first such raise, or "". `edit` is given the fields as the config writes them (the
// model's own are as Megatron Core rewrote them, and running __post_init__ again on those would not be its run).
std::string rejection_after(const EffectiveModel& m, const std::function<void(EffectiveModel&)>& edit);

// Runs Megatron Bridge's comm-overlap setup (`program`) over the model as written and the config's sections;
// nullopt when the config has no comm_overlap section (Bridge then runs no setup).
std::optional<post_init::Outcome> run_bridge_setup(const EffectiveModel& m, const Value& root,
                                                   const post_init::Program& program, const post_init::JobFacts& facts);

// `root` is the whole config tree (sections model, mixed_precision, comm_overlap, ...). `precision`: the linted
// tree's lookup of mixed_precision names, or null (the bundled catalog). `recipe`: the recipe function's name ("" for
// YAML), which may state the job's GPU count. `bridge`: the linted tree's own Bridge start-up checks, or null (the
// bundled ones, Schema::bridge_checks).
FinalizeResult finalize(const Value& root, const Revision& revision, const SourceRange& anchor,
                        const PrecisionLookup* precision = nullptr, std::string_view recipe = {},
                        const post_init::JobFacts& job = {},
                        std::shared_ptr<const post_init::Program> bridge = nullptr);

// The model section of a config tree, flattened: builder configs nest TransformerConfig fields under
// model.transformer; those are merged in. Returns the entries with their key ranges.
std::vector<const Value::Entry*> model_entries(const Value& root);

}  // namespace mbl
