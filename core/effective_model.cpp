#include "core/effective_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/did_you_mean.hpp"
#include "core/input_errors.hpp"

namespace mbl {

bool ModuleList::contains(std::string_view label) const {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
}

static const Value& not_set() {
    static const Value none = Value::null(Provenance::default_of("not set"));
    return none;
}

const Value* EffectiveModel::find(FieldName name) const {
    if (const Value* v = set_fields.find(name.str())) return v;
    return defaults ? defaults->find(name.str()) : nullptr;
}

void EffectiveModel::set_key(std::string key, Value value, SourceRange key_range) {
    set_fields.set(std::move(key), std::move(value), std::move(key_range));
}

void EffectiveModel::for_each_field(const std::function<void(const Value::Entry&)>& visit) const {
    if (defaults)
        for (const auto& d : defaults->entries()) {
            const Value::Entry* over = set_fields.find_entry(d.key);
            visit(over ? *over : d);
        }
    for (const auto& e : set_fields.entries())
        if (!defaults || !defaults->find(e.key)) visit(e);
}

Value EffectiveModel::all_fields() const {
    Value out = Value::map();
    for_each_field([&](const Value::Entry& e) { out.set(e.key, e.value, e.key_range); });
    return out;
}

const Value& EffectiveModel::operator[](FieldName name) const {
    const Value* v = find(name);
    return v ? *v : not_set();
}

bool EffectiveModel::known(std::initializer_list<FieldName> names) const {
    for (auto n : names)
        if ((*this)[n].contains_unknown()) return false;
    return true;
}

std::optional<std::string> EffectiveModel::str_of(const Value& v) {
    if (v.is_string()) return v.as_string();
    return std::nullopt;
}

std::optional<std::int64_t> EffectiveModel::integer_of(const Value& v) {
    if (v.is_int()) return v.as_int();
    if (v.is_float() && v.as_number() == static_cast<double>(static_cast<std::int64_t>(v.as_number())))
        return static_cast<std::int64_t>(v.as_number());
    return std::nullopt;
}

std::optional<double> EffectiveModel::number_of(const Value& v) {
    if (v.is_number()) return v.as_number();
    return std::nullopt;
}

bool EffectiveModel::is_moe() const {
    auto n = integer(field::num_moe_experts);
    return n && *n > 0;
}

// Which layers are MoE: moe_layer_freq is an int k (every k-th layer, starting with layer 0) or a 0/1 list.
static std::optional<std::pair<int, int>> moe_dense_split(const EffectiveModel& m) {
    if (!m.known({field::num_moe_experts, field::moe_layer_freq, field::num_layers})) return std::nullopt;
    auto layers = m.integer(field::num_layers);
    if (!layers || *layers <= 0) return std::nullopt;
    if (!m.is_moe()) return std::make_pair(0, static_cast<int>(*layers));
    const Value& freq = m[field::moe_layer_freq];
    int moe = 0;
    if (freq.is_int() && freq.as_int() > 0) {
        for (int i = 0; i < *layers; ++i)
            if (i % freq.as_int() == 0) ++moe;
    } else if (freq.is_list()) {
        for (const auto& item : freq.items())
            if (item.truthy()) ++moe;
        if (static_cast<std::int64_t>(freq.items().size()) != *layers) return std::nullopt;
    } else if (freq.is_null()) {
        moe = static_cast<int>(*layers);
    } else {
        return std::nullopt;
    }
    return std::make_pair(moe, static_cast<int>(*layers) - moe);
}

std::optional<int> EffectiveModel::moe_layer_count() const {
    auto s = moe_dense_split(*this);
    return s ? std::optional<int>(s->first) : std::nullopt;
}
std::optional<int> EffectiveModel::dense_layer_count() const {
    auto s = moe_dense_split(*this);
    return s ? std::optional<int>(s->second) : std::nullopt;
}

std::optional<int> EffectiveModel::layers_per_stage() const {
    if (!known({field::num_layers, field::pipeline_model_parallel_size})) return std::nullopt;
    auto layers = integer(field::num_layers);
    auto pp = integer(field::pipeline_model_parallel_size);
    if (!layers || !pp || *pp <= 0 || *layers <= 0) return std::nullopt;
    return static_cast<int>(*layers / *pp);
}

std::optional<int> EffectiveModel::layers_per_virtual_stage() const {
    auto per_stage = layers_per_stage();
    if (!per_stage || !known({field::virtual_pipeline_model_parallel_size})) return std::nullopt;
    auto vpp = integer(field::virtual_pipeline_model_parallel_size);
    if (!vpp) return per_stage;
    if (*vpp <= 0) return std::nullopt;
    return static_cast<int>(*per_stage / *vpp);
}

static std::optional<std::string> backend_name(const Value& v) {
    if (v.is_string()) {
        std::string s = v.as_string();
        auto dot = s.rfind('.');
        if (dot != std::string::npos) s = s.substr(dot + 1);  // "AttnBackend.flash" -> "flash"
        return s;
    }
    if (v.is_int() || v.is_map()) {
        // Enum written by value: AttnBackend(flash=1, fused=2, unfused=3, local=4, auto=5).
        std::int64_t n = -1;
        if (v.is_int()) n = v.as_int();
        else if (const Value* args = v.find("_args_");
                 args && args->is_list() && !args->items().empty() && args->items()[0].is_int())
            n = args->items()[0].as_int();
        static const char* names[] = {"", "flash", "fused", "unfused", "local", "auto"};
        if (n >= 1 && n <= 5) return std::string(names[n]);
    }
    return std::nullopt;
}

std::optional<bool> EffectiveModel::attention_is_fused() const {
    if (!known({field::transformer_impl, field::attention_backend})) return std::nullopt;
    auto impl = str(field::transformer_impl);
    if (impl && *impl == "local") return false;
    auto backend = backend_name((*this)[field::attention_backend]);
    if (!backend) return (*this)[field::attention_backend].is_null() ? std::optional<bool>(true) : std::nullopt;
    if (*backend == "unfused" || *backend == "local") return false;
    return true;  // flash, fused, auto (which picks fused/flash when available)
}

std::vector<const Value::Entry*> model_entries(const Value& root) {
    std::vector<const Value::Entry*> out;
    const Value* model = root.find("model");
    if (!model || !model->is_map()) return out;
    for (const auto& e : model->entries()) {
        if (e.key == "transformer" && e.value.is_map()) {
            for (const auto& inner : e.value.entries()) out.push_back(&inner);
            continue;
        }
        out.push_back(&e);
    }
    return out;
}

static ModuleList read_modules(const Value& v, const Revision& revision) {
    ModuleList list;
    if (v.contains_unknown()) {
        list.known = false;
        return list;
    }
    if (v.is_null()) {
        list.defaulted = true;
        list.labels = revision.default_modules;
        return list;
    }
    if (!v.is_list()) {
        list.known = false;
        return list;
    }
    for (const auto& item : v.items()) {
        if (!item.is_string()) {
            list.known = false;
            return list;
        }
        list.labels.push_back(item.as_string());
    }
    return list;
}

static void precision_unknown(const std::string& reason, const Provenance& at, EffectiveModel& m) {
    for (const FieldName f : {field::fp8, field::fp8_recipe, field::fp4, field::bf16, field::fp16})
        m.set(f, Value::unknown(fmt::format("mixed_precision is unknown: {}", reason), at));
}

// The MixedPrecisionConfig a `mixed_precision` value names, as Bridge's start-up resolves it before it calls the
// config's finalize() and setup() (`get_mixed_precision_config`, training/config.py runtime_config_update): the
// tree's own lookup where the linted file is in a Bridge tree, else the bundled catalog of Bridge's recipes; a mapping
// (a config object, a YAML section) is the config itself. What the setup then copies onto the model is Bridge's
// compiled start-up's doing (run_bridge_setup). Null for None; unknown where the name cannot be resolved.
static Value resolve_precision(const Value& mp, const PrecisionLookup* tree, std::vector<Diagnostic>& errors) {
    if (mp.is_null() || mp.is_unknown() || mp.is_map()) return mp;
    const auto unknown = [&](const std::string& why) {
        return Value::unknown(fmt::format("mixed_precision is unknown: {}", why), mp.prov());
    };
    if (!mp.is_string()) return unknown(fmt::format("{} is no recipe name or config", mp.display()));
    if (tree)
        if (PrecisionLookup::Answer answer = tree->find(mp.as_string()); answer.applies) {
            if (!answer.config) {
                Diagnostic d = input_error(InputError::UnknownValue, mp.prov().range,
                                           fmt::format("unknown mixed_precision recipe \"{}\"{}", mp.as_string(),
                                                       did_you_mean_suffix(mp.as_string(), answer.names)));
                for (auto& n : answer.notes) d.notes.push_back(std::move(n));
                errors.push_back(std::move(d));
                return unknown(fmt::format("the recipe \"{}\" is not registered", mp.as_string()));
            }
            Value config = std::move(*answer.config);
            if (config.is_unknown()) return config;
            // Each field keeps the tree's line, with a note for where the name was written.
            ChainStep named{mp.prov().range, fmt::format("mixed_precision \"{}\" is chosen here", mp.as_string())};
            for (auto& e : config.entries()) {
                Provenance& p = e.value.prov();
                p.chain.prepend(named);
                p.chain.prepend(mp.prov().chain);
                if (p.detail.empty())
                    p.detail = fmt::format("{} = {} comes from mixed_precision recipe \"{}\"", e.key, e.value.display(),
                                           mp.as_string());
            }
            return config;
        }
    const Schema& schema = Schema::instance();
    const PrecisionRecipe* recipe = schema.precision_recipe(mp.as_string());
    if (!recipe) {
        // The catalog is the linter's knowledge of one Bridge revision, not the registry the job runs with: a name it
        // lacks may well be registered there (Bridge adds recipes), so this is no error.
        Diagnostic d =
            input_error(InputError::UnknownValue, mp.prov().range,
                        fmt::format("mixed_precision recipe \"{}\" is not in the bundled catalog{}", mp.as_string(),
                                    did_you_mean_suffix(mp.as_string(), schema.precision_recipe_names())));
        d.severity = Severity::Warning;
        d.notes.push_back(Note{SourceRange{},
                               "the file is in no Megatron Bridge tree, so the registry the job looks names up in "
                               "is not here to ask; lint it inside the checkout (or pass --root) to check the name"});
        errors.push_back(std::move(d));
        return unknown(fmt::format("the recipe \"{}\" is not known here", mp.as_string()));
    }
    Value config = Value::map(mp.prov());
    for (const auto& [field, value] : recipe->fields) {
        Value v = value;
        Provenance p = mp.prov();
        p.detail =
            fmt::format("{} = {} comes from mixed_precision recipe \"{}\"", field, value.display(), recipe->name);
        v.set_prov(std::move(p));
        config.set(field, std::move(v));
    }
    return config;
}

// A config section as Bridge's start-up sees it: `mixed_precision` resolved from its name (EffectiveModel::
// mixed_precision), any other as the config writes it; null where the config has none.
static const Value* startup_section(const EffectiveModel& m, const Value& root, std::string_view section) {
    if (section == "mixed_precision" && m.mixed_precision) return m.mixed_precision.get();
    return root.find(section);
}

// What Megatron Bridge's start-up writes on the model before its whole-config validation (its mixed-precision setup
// copies every field of the MixedPrecisionConfig the model has, `update_config_with_precision_overrides`; its
// comm-overlap setup copies the overlap settings it works out, `_apply_cfgs`), compiled from Bridge's source like
// Megatron Core's checks: the model as Megatron Core's __post_init__ then sees it. What ConfigContainer.validate writes
// on the model before the model's finalize is not applied yet. Made after a rejection of the setup's own too: what the
// user asked the setup for is what the rules and Megatron Core's checks judge, so that every mistake shows at once
// (the rejection is reported by itself). A field the linter's model does not have (one only a provider may declare) is
// left out.
static void apply_bridge_setup_rewrites(EffectiveModel& m, const Value& root) {
    if (!m.bridge_setup) return;
    const auto& setup = m.bridge_setup->rewrites_before_validation;
    for (const auto& r : setup ? *setup : m.bridge_setup->rewrites) {
        if (r.field.find('.') != std::string::npos) continue;
        if (post_init::is_executor_spelling(r.after)) continue;
        const std::optional<FieldName> found = FieldName::find(r.field);
        if (!found) continue;
        const Value& written = m[*found];
        if (written.same_as(r.after) && !r.after.is_unknown()) continue;
        Value after = r.after;
        // The checks carry values without their lines: a value the writing step's section gives a field of that name
        // (what `update_config_with_precision_overrides` and `_apply_cfgs` copy) points at that field's line; one
        // Bridge works out, or a section's default, at the section.
        const Value* section = r.step_section.empty() ? nullptr : startup_section(m, root, r.step_section);
        const Value* given = section && section->is_map() ? section->find(r.field) : nullptr;
        std::string given_detail;
        if (given && given->same_as(after)) {
            after.prov() = given->prov();
            given_detail = given->prov().detail;
        } else if (after.is_unknown() && section && section->is_unknown()) {
            after.prov() = section->prov();
        } else if (!after.prov().range.valid()) {
            after.prov() = section ? section->prov() : written.prov();
            after.prov().origin = Origin::Derived;
        }
        // What the config wrote there, when it wrote something, is shown beside what Bridge runs with.
        const Provenance& was = written.prov();
        const bool config_wrote = was.range.valid() && (was.origin == Origin::File || was.origin == Origin::Recipe ||
                                                        was.origin == Origin::Override);
        if (config_wrote)
            after.prov().detail = fmt::format("Megatron Bridge's start-up rewrites {} ({}:{}) to this ({}:{}){}{}",
                                              written.display(), was.range.file, was.range.line, r.file, r.line,
                                              given_detail.empty() ? "" : ": ", given_detail);
        else
            after.prov().detail =
                !given_detail.empty()
                    ? given_detail
                    : fmt::format("Megatron Bridge's start-up sets {} on the model ({}:{})", r.field, r.file, r.line);
        m.set(*found, std::move(after));
    }
}

// A whole ConfigContainer written out by Bridge (its run_config.yaml): every field is there, the defaults and what
// Megatron Core's __post_init__ wrote included.
static bool is_full_dump(const Value& root) {
    const std::string target = root.target();
    return target == "ConfigContainer" || target.ends_with(".ConfigContainer");
}

// In a dump, recompute_modules equal to what __post_init__ writes for None (["core_attn"]:
// megatron/core/transformer/transformer_config.py:865 at core_v0.14.0, :1822 at 2a75ac12c54b) is not the user's
// choice: the dump holds it whether or not the user set it. It is read as the default it most likely is, so the
// rules about what the user set (RC109) stay quiet; Megatron Core's own checks see the same list either way.
static bool mark_post_init_modules(EffectiveModel& m, const Revision& revision) {
    const Value& modules = m[field::recompute_modules];
    if (!modules.is_list() || modules.items().size() != revision.default_modules.size()) return false;
    for (std::size_t i = 0; i < modules.items().size(); ++i)
        if (!modules.items()[i].is_string() || modules.items()[i].as_string() != revision.default_modules[i])
            return false;
    Value written = modules;
    written.prov().origin = Origin::Derived;
    written.prov().detail =
        "recompute_modules is what Megatron Core's __post_init__ writes when it is None, so this dump holds it "
        "whether or not it was set";
    m.set(field::recompute_modules, std::move(written));
    return true;
}

namespace {

// The model's fields as a compiled check reads them: what the config sets, else the class's default (one the source
// computes, `torch.float32` or a function, is unknown unless it is a dtype; `computed` keeps those made).
const Value* model_field(const EffectiveModel& m, const ClassFacts& classes, const std::string& cls,
                         std::string_view name, std::map<std::string, Value, std::less<>>& computed) {
    if (const auto f = FieldName::find(name))
        if (const Value* v = m.find(*f)) return v;
    if (auto it = computed.find(name); it != computed.end()) return &it->second;
    const ResolvedField r = classes.lookup(cls, name);
    if (!r.field) return nullptr;
    Value v = Value::null();
    if (!r.field->expr.empty()) {
        const std::string& e = r.field->expr;
        v = e.rfind("torch.", 0) == 0 && e.find('(') == std::string::npos && e.find(".nn.") == std::string::npos
                ? Value::string(e)
                : Value::unknown(fmt::format("{}'s default is computed ({})", name, e));
    } else if (r.field->required) {
        v = Value::unknown(fmt::format("{} is required and not set", name));
    }
    return &computed.emplace(std::string(name), std::move(v)).first->second;
}

// The config class whose __post_init__ runs: MLATransformerConfig's when multi_latent_attention is set; "" when that
// is itself unknown.
std::string model_class(const EffectiveModel& m) {
    const Value& mla = m[field::multi_latent_attention];
    if (mla.is_unknown()) return {};
    return mla.truthy() ? "MLATransformerConfig" : "TransformerConfig";
}

}  // namespace

std::optional<post_init::Outcome> run_post_init(const EffectiveModel& m, const post_init::JobFacts& facts) {
    if (!m.revision || !m.revision->classes || !m.revision->classes->check_program()) return std::nullopt;
    const ClassFacts& classes = *m.revision->classes;
    const std::string cls = model_class(m);
    if (cls.empty()) return std::nullopt;  // which class runs is itself unknown
    std::map<std::string, Value, std::less<>> computed;
    auto lookup = [&](std::string_view name) { return model_field(m, classes, cls, name, computed); };
    return post_init::run(*classes.check_program(), cls, lookup, facts);
}

std::string rejection_after(const EffectiveModel& m, const std::function<void(EffectiveModel&)>& edit) {
    if (!m.post_init) return {};
    EffectiveModel written = m;
    for (const auto& r : m.post_init->rewrites)
        if (const auto name = FieldName::find(r.field)) written.set(*name, r.before);
    edit(written);
    const auto outcome = run_post_init(written, {});
    if (!outcome) return {};
    auto certain_raise = [](const post_init::Event& e) {
        return e.certain && e.site->kind == post_init::Site::Kind::Raise;
    };
    for (const auto& e : outcome->events)
        if (certain_raise(e) &&
            std::none_of(m.post_init->events.begin(), m.post_init->events.end(),
                         [&](const post_init::Event& o) { return certain_raise(o) && o.site == e.site; }))
            return fmt::format("{} ({}:{})", e.message.empty() ? e.site->text : e.message, e.site->file, e.site->line);
    return {};
}

// Megatron Core's rewrite of a field in its __post_init__ (compiled from its source), if it makes one.
static const post_init::Rewrite* rewrite_of(const EffectiveModel& m, FieldName name) {
    if (!m.post_init) return nullptr;
    for (const auto& r : m.post_init->rewrites)
        if (r.field == name.str()) return &r;
    return nullptr;
}

// The config Megatron Core runs with: every rewrite its __post_init__ makes for certain (deprecated spellings
// normalised, deprecated switches migrated, computed defaults filled), each value keeping the line that wrote the
// field and saying which line of Megatron Core rewrote it. A rewrite that depends on an unknown leaves the field as
// written (the executor's verdicts already say what depends on it); an enum member stays Megatron Core's own.
static void apply_post_init_rewrites(EffectiveModel& m) {
    if (!m.post_init) return;
    const std::string rev = m.revision ? m.revision->name : "";
    for (const auto& r : m.post_init->rewrites) {
        if (r.after_rejection || r.after.contains_unknown() || r.after.is_null()) continue;
        if (post_init::is_executor_spelling(r.after)) continue;
        const std::optional<FieldName> found = FieldName::find(r.field);
        if (!found) continue;
        const FieldName name = *found;
        const Value& written = m[name];
        if (written.same_as(r.after)) continue;
        Value after = r.after;
        after.prov() = written.prov();
        // A list item the config wrote keeps its own line; one Megatron Core added points at the field.
        if (after.is_list())
            for (Value& item : after.items()) {
                const Value* same = nullptr;
                if (written.is_list())
                    for (const Value& w : written.items())
                        if (w.same_as(item)) same = &w;
                item.prov() = same ? same->prov() : written.prov();
            }
        after.prov().detail =
            fmt::format("Megatron Core {} rewrites {} to this ({}:{})", rev, written.display(), r.file, r.line);
        m.set(name, std::move(after));
    }
}

// Before 0.15 Megatron Core has no cuda_graph_impl: its legacy switches are the only ones, and the rules read them
// through the field later revisions migrate them into (from 0.15 on, __post_init__'s own rewrite does that).
static void read_legacy_cuda_graph_switches(EffectiveModel& m, const Revision& revision) {
    if (revision.has_field("cuda_graph_impl") || m.str(field::cuda_graph_impl).value_or("none") != "none" ||
        !m.known({field::enable_cuda_graph, field::external_cuda_graph}))
        return;
    const bool local = m.flag(field::enable_cuda_graph);
    if (!local && !m.flag(field::external_cuda_graph)) return;
    const FieldName legacy = local ? field::enable_cuda_graph : field::external_cuda_graph;
    Value v = Value::string(local ? "local" : "transformer_engine", m[legacy].prov());
    v.prov().detail =
        fmt::format("Megatron Core {} has no cuda_graph_impl: {}=True is its graph switch", revision.name, legacy);
    m.set(field::cuda_graph_impl, std::move(v));
}

std::optional<post_init::Outcome> run_bridge_setup(const EffectiveModel& m, const Value& root,
                                                   const post_init::Program& program,
                                                   const post_init::JobFacts& facts) {
    if (program.steps.empty() || !m.revision || !m.revision->classes) return std::nullopt;
    const ClassFacts& classes = *m.revision->classes;
    std::string cls = model_class(m);
    if (cls.empty()) cls = "TransformerConfig";
    std::map<std::string, Value, std::less<>> computed;
    auto section_value = [&](std::string_view section) { return startup_section(m, root, section); };
    // A section's attribute ("comm_overlap.overlap_moe_expert_parallel_comm"): the value the config gives it; where it
    // gives none, the default its class declares (Program::section_fields, a literal; unknown where computed), or
    // unknown for a section whose class the program does not describe; unknown where the section is.
    auto lookup = [&](std::string_view name) -> const Value* {
        if (name.rfind(post_init::kSectionLookup, 0) == 0)
            return section_value(name.substr(post_init::kSectionLookup.size()));
        // What an earlier read worked out (the checks read the same names many times).
        if (auto it = computed.find(name); it != computed.end()) return &it->second;
        const auto dot = name.find('.');
        if (dot == std::string_view::npos) {
            if (const Value* v = model_field(m, classes, cls, name, computed)) return v;
            // No field of Megatron Core's classes here: the model provider Bridge builds may still declare it.
            return &computed
                        .emplace(std::string(name),
                                 Value::unknown(fmt::format("{} is no field of Megatron Core {}'s config classes; the "
                                                            "model provider may declare it",
                                                            name, m.revision->name)))
                        .first->second;
        }
        const std::string section(name.substr(0, dot));
        const std::string attribute(name.substr(dot + 1));
        const Value* part = section_value(section);
        if (part && part->is_unknown()) return part;
        if (const Value* given = part && part->is_map() ? part->find(attribute) : nullptr) return given;
        if (auto it = program.section_fields.find(section); it != program.section_fields.end()) {
            const auto& f = it->second;
            const auto at = std::find(f.names.begin(), f.names.end(), attribute);
            if (at == f.names.end() && f.complete) return nullptr;  // no such attribute: hasattr is False
            // A section another's setup is given (optimizer, ddp): what the config does not state may be anything a
            // recipe set (this may be an overlay), unless the config constructed the section itself (a recipe's or a
            // dump's object, named by its `_target_`); a section the start-up configures is constructed here.
            const bool configured = std::any_of(program.steps.begin(), program.steps.end(),
                                                [&](const post_init::Step& st) { return st.when == section; });
            const bool constructed = part && part->is_map() && !part->target().empty();
            if (!configured && !constructed && at != f.names.end())
                return &computed
                            .emplace(std::string(name), Value::unknown(fmt::format("the config does not set {}", name)))
                            .first->second;
            if (at == f.names.end())
                return &computed
                            .emplace(std::string(name),
                                     Value::unknown(
                                         fmt::format("whether {} has {} (its bases were not read)", f.cls, attribute)))
                            .first->second;
            const post_init::Expr& d = f.defaults[static_cast<std::size_t>(at - f.names.begin())];
            Value dflt = d.op == post_init::Op::Const && d.value
                             ? *d.value
                             : Value::unknown(fmt::format("{}'s default of {} is computed", f.cls, attribute));
            return &computed.emplace(std::string(name), std::move(dflt)).first->second;
        }
        return &computed.emplace(std::string(name), Value::unknown(fmt::format("the config does not set {}", name)))
                    .first->second;
    };
    return post_init::run_steps(program, lookup, facts);
}

// A field of a section as Bridge's start-up leaves it before its validation (the mixed-precision setup copies every
// MixedPrecisionConfig field the optimizer's and ddp's classes declare onto them, mixed_precision.py 129-135 at
// 067f987): the start-up's write where it makes one, pointing at the mixed_precision field it copied where that is
// the same value; else what the config says.
static Value section_after_setup(const EffectiveModel& m, const Value& root, const std::string& section,
                                 const std::string& name, const Value& own) {
    if (!m.bridge_setup) return own;
    const auto& setup = m.bridge_setup->rewrites_before_validation;
    for (const auto& r : setup ? *setup : m.bridge_setup->rewrites) {
        if (r.field != section + "." + name) continue;
        Value v = r.after;
        const Value* from = r.step_section.empty() ? nullptr : startup_section(m, root, r.step_section);
        const Value* given = from && from->is_map() ? from->find(name) : nullptr;
        if (given && given->same_as(v)) {
            v.prov() = given->prov();
        } else {
            v.prov() = from ? from->prov() : own.prov();
            v.prov().origin = Origin::Derived;
            v.prov().detail =
                fmt::format("Megatron Bridge's start-up sets {}.{} ({}:{})", section, name, r.file, r.line);
        }
        return v;
    }
    return own;
}

FinalizeResult finalize(const Value& root, const Revision& revision, const SourceRange& anchor,
                        const PrecisionLookup* precision, std::string_view recipe, const post_init::JobFacts& job,
                        std::shared_ptr<const post_init::Program> bridge) {
    FinalizeResult result;
    EffectiveModel& m = result.model;
    m.anchor = anchor;
    m.revision = &revision;
    m.full_dump = is_full_dump(root);
    m.defaults = revision.defaults_map;
    if (!m.defaults) m.defaults = std::make_shared<const Value>(map_of_defaults(revision.defaults));
    const std::vector<const Value::Entry*> given = model_entries(root);
    m.set_fields.entries().reserve(given.size());
    for (const Value::Entry* e : given) {
        if (e->key == "_target_") continue;
        m.set_key(e->key, e->value, e->key_range);
    }
    const Value* mp = root.find("mixed_precision");
    if (mp && !mp->is_map())
        m.mixed_precision = std::make_shared<const Value>(resolve_precision(*mp, precision, result.errors));
    // Bridge's comm-overlap setup checks the model as mixed_precision left it, then copies the overlap onto it.
    if (!bridge)  // the bundled program lives as long as the schema
        bridge =
            std::shared_ptr<const post_init::Program>(std::shared_ptr<void>(), &Schema::instance().bridge_checks());
    if (auto outcome = run_bridge_setup(m, root, *bridge, job)) {
        // A rerun with the Transformer Engine stated (--te-version) can decide only what depends on it: kept (with a
        // copy of the model as the setup saw it) only where something does.
        const bool te_dependent = std::any_of(outcome->events.begin(), outcome->events.end(), [](const auto& e) {
            return !e.certain && e.why_uncertain.find("Transformer Engine") != std::string::npos;
        });
        if (te_dependent) {
            m.rerun_bridge_setup = [seen = m, sections = root, bridge](const post_init::JobFacts& facts) {
                return run_bridge_setup(seen, sections, *bridge, facts);
            };
        }
        if (std::any_of(outcome->events.begin(), outcome->events.end(), [](const auto& e) { return e.certain; }))
            m.bridge_sections = std::make_shared<const Value>(root);
        m.bridge_setup = std::make_shared<const post_init::Outcome>(std::move(*outcome));
        m.bridge_program = std::move(bridge);
    }
    apply_bridge_setup_rewrites(m, root);
    // A start-up the linter does not follow for mixed_precision (none found in the tree, or one it could not compile):
    // what the section sets on the model is unknown.
    const bool precision_followed =
        m.bridge_setup && std::any_of(m.bridge_program->steps.begin(), m.bridge_program->steps.end(),
                                      [](const post_init::Step& st) { return st.when == "mixed_precision"; });
    // A field the MixedPrecisionConfig states with the value the model already has by default: the setup leaves it
    // (it writes only what differs, mixed_precision.py 154-155 at 067f987), and the config's line explains the value
    // better than the default does (None, which Megatron Core may fill in, stays the default's).
    if (const Value* config = startup_section(m, root, "mixed_precision");
        precision_followed && config && config->is_map())
        for (const auto& e : config->entries())
            if (const auto f = FieldName::find(e.key))
                if (const Value* now = m.find(*f); now && now->prov().origin == Origin::Default && !e.value.is_null() &&
                                                   now->same_as(e.value) && e.value.prov().range.valid())
                    m.set(*f, e.value);
    if (mp && !mp->is_null() && !precision_followed)
        precision_unknown(m.mixed_precision && m.mixed_precision->is_unknown()
                              ? m.mixed_precision->unknown_reason()
                              : "this Megatron Bridge's start-up, which applies it, is not followed",
                          mp->prov(), m);

    // Megatron Core's own __post_init__, compiled from its source, over the fields as the config writes them.
    if (auto outcome = run_post_init(m, job))
        m.post_init = std::make_shared<const post_init::Outcome>(std::move(*outcome));

    m.run = read_run_facts(root, m[field::seq_length], recipe, anchor);
    m.run.optimizer.fp8_recipe = section_after_setup(m, root, "optimizer", "fp8_recipe", m.run.optimizer.fp8_recipe);
    m.run.ddp.grad_reduce_in_fp32 =
        section_after_setup(m, root, "ddp", "grad_reduce_in_fp32", m.run.ddp.grad_reduce_in_fp32);
    const bool post_init_list = is_full_dump(root) && mark_post_init_modules(m, revision);
    m.modules_pre = read_modules(m[field::recompute_modules], revision);
    if (post_init_list) m.modules_pre.defaulted = true;
    m.granularity_pre = m.str(field::recompute_granularity);
    apply_post_init_rewrites(m);
    read_legacy_cuda_graph_switches(m, revision);
    m.granularity_post = m.str(field::recompute_granularity);
    m.modules_post = m.modules_pre;
    if (const post_init::Rewrite* r = rewrite_of(m, field::recompute_modules); r && !r->after_rejection) {
        const ModuleList after = read_modules(m[field::recompute_modules], revision);
        m.modules_post.known = !r->after.is_unknown() && after.known;
        m.modules_post.labels = after.labels;
    }
    if (const post_init::Rewrite* r = rewrite_of(m, field::recompute_granularity);
        r && !r->after_rejection && r->after.is_unknown())
        m.granularity_post.reset();
    m.moe_layer_converted = m.flag(field::moe_layer_recompute) &&
                            (m.granularity_post != m.granularity_pre || m.modules_post.labels != m.modules_pre.labels);
    return result;
}

}  // namespace mbl
