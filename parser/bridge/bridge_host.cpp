// Megatron Bridge as the evaluator's host: the parts of Bridge's run-time behaviour that the evaluator models at its
// boundary, because they read files or registries at run time: how a mixed_precision name (or a call of a recipe of
// Bridge's mixed_precision module) becomes a config, and how AutoBridge turns a Hugging Face model into a provider or
// a model config. Where the linted tree defines them (its precision registry, the model bridges it registers for each
// Hugging Face architecture), the tree's own code is followed, with its lines as provenance; the bundled catalog and
// mapping (schemas/) are the fallback. Also the classes whose unset fields take Megatron Core's defaults (providers,
// TransformerConfig-like classes), and Megatron Core's config classes as the dataclasses a provider builds on.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "core/did_you_mean.hpp"
#include "core/file_text.hpp"
#include "core/input_errors.hpp"
#include "core/schema.hpp"
#include "core/shared_once.hpp"
#include "core/source_manager.hpp"
#include "parser/bridge/bridge_host.hpp"
#include "pyeval/builtins.hpp"
#include "pyeval/interpreter.hpp"

namespace mbl::py {

// AutoBridge.from_hf_pretrained("org/name"), AutoBridge.from_hf_config(config): the model a bridge stands for.
struct HfBridgeObj : HostObj {
    void clear_refs() override {
        model_id = Val();
        config = Val();
        chain.reset();
    }
    Val model_id;  // the Hugging Face model id, when known
    Val config;    // the Hugging Face config object it was made from (from_hf_config), else None
    Loc loc;
    Chain chain;
};

namespace {

// The functions of Bridge's API the host makes (BuiltinObj::host_op).
enum class BridgeFn : std::uint16_t {
    FromPretrained = 1,
    FromConfig,
    AutoConfig,
    ToProvider,
    GetModelConfig,
    ToTextProvider,
};

const HfBridgeObj* as_bridge(const Val& v) {
    return v.is_obj(ObjKind::Host) ? dynamic_cast<const HfBridgeObj*>(v.o.get()) : nullptr;
}

// Class names of TransformerConfig-like objects: their unset fields take Megatron Core's defaults.
bool model_class_name(std::string_view name) {
    return name.ends_with("Provider") || name.find("TransformerConfig") != std::string_view::npos ||
           name.ends_with("ModelConfig");
}

// The names a module's registries hold: the string keys of its module-level dicts whose values are all functions
// (Bridge's MIXED_PRECISION_RECIPES, filled by a @register decorator). Empty when any such dict is not fully known.
std::optional<std::vector<std::string>> registry_names(const Module& m) {
    std::vector<std::string> names;
    bool found = false;
    for (const auto& [_, v] : m.globals->vars) {
        if (!v.is_obj(ObjKind::Dict)) continue;
        auto* d = v.as<DictObj>();
        if (d->items.empty()) continue;
        const bool functions = std::all_of(d->items.begin(), d->items.end(), [](const auto& kv) {
            return kv.first.is_str() && kv.second.is_obj(ObjKind::Function);
        });
        if (!functions) continue;
        if (!d->unknown.empty()) return std::nullopt;
        found = true;
        for (const auto& [k, _v] : d->items) names.push_back(k.s);
    }
    if (!found) return std::nullopt;
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

}  // namespace

// The function that turns a mixed_precision name into a config in this tree: get_mixed_precision_config where its
// ConfigContainer is defined (Bridge calls it there since late 2025: training/config.py), else beside the
// MixedPrecisionConfig class that module imports for the field's annotation (Bridge of August 2025 resolves names in
// training/setup.py with the function of training/mixed_precision.py). Null when the tree defines neither.
static std::shared_ptr<FunctionObj> precision_resolver(Interp& in, Module* config_module) {
    Val fn = in.module_global(config_module, "get_mixed_precision_config");
    if (!fn.is_obj(ObjKind::Function)) {
        const Val cls = in.module_global(config_module, "MixedPrecisionConfig");
        if (cls.is_obj(ObjKind::Class) && cls.as<ClassObj>()->module)
            fn = in.module_global(cls.as<ClassObj>()->module, "get_mixed_precision_config");
    }
    return fn.is_obj(ObjKind::Function) ? std::static_pointer_cast<FunctionObj>(fn.o) : nullptr;
}

PrecisionResolution resolve_precision_name(Interp& in, Module* config_module, const std::string& name) {
    PrecisionResolution r;
    const std::shared_ptr<FunctionObj> fn = precision_resolver(in, config_module);
    if (!fn) return r;
    r.resolver = fn->module->loc(fn->def).range();
    r.resolver_note = fmt::format("{}() looks recipes up in the registry of {}", fn->name, fn->module->path);
    Frame caller;
    caller.module = fn->module;
    caller.stmt = fn->module->loc(fn->def);
    CallArgs args;
    args.pos.push_back(Val::str(name, caller.stmt));
    Val out = in.call(caller, Val::obj(fn), std::move(args), caller.stmt);
    if (out.is_obj(ObjKind::Instance)) {
        r.kind = PrecisionResolution::Kind::Config;
        r.config = std::move(out);
        return r;
    }
    // The call raised (a branch that raises is dropped) or could not be followed: the registry says which.
    auto names = registry_names(*fn->module);
    std::string underscored = name;
    std::replace(underscored.begin(), underscored.end(), '-', '_');
    if (names && !std::binary_search(names->begin(), names->end(), name) &&
        !std::binary_search(names->begin(), names->end(), underscored)) {
        r.kind = PrecisionResolution::Kind::NotRegistered;
        r.names = std::move(*names);
        return r;
    }
    r.kind = PrecisionResolution::Kind::Unknown;
    r.config = out.is_unknown() ? out : Val::unknown(fmt::format("{}(\"{}\") is not a config", fn->name, name), {});
    return r;
}

// --- the host's answers ------------------------------------------------------------------------------------------

BridgeHost::BridgeHost(const Revision& revision, const HfResolver& hf) : revision_(revision), hf_(hf) {
    const Schema& schema = Schema::instance();
    for (const auto& name : schema.field_names())
        if (const FieldSpec* spec = schema.field(name); spec && schema.field_exists_at(*spec, revision_))
            model_field_names_.push_back(name);
    for (std::size_t i = 0; i < revision_.defaults.size(); ++i) default_index_.emplace(revision_.defaults[i].first, i);
}

std::optional<Val> BridgeHost::intercept_call(Interp&, Frame& f, const Val& callee, CallArgs& args, Loc site) {
    if (callee.is_obj(ObjKind::Class)) {
        if (callee.as<ClassObj>()->name != "AutoBridge") return std::nullopt;
        return auto_bridge_from_config(f, args.pos.empty() ? Val() : args.pos[0], site);
    }
    const std::string& path = callee.as<ExternalObj>()->path;
    return intercept_precision(f, path, last_component(path), args, site);
}

std::optional<Val> BridgeHost::attr(Interp&, const Val& obj, const std::string& name, Loc at) {
    Val m;
    switch (obj.o->kind) {
        case ObjKind::Class:
            if (obj.as<ClassObj>()->name == "AutoBridge") m = auto_bridge_method(obj, name, at);
            break;
        case ObjKind::External: {
            const std::string& path = obj.as<ExternalObj>()->path;
            if (path.ends_with("AutoBridge") || path.ends_with("AutoConfig")) m = auto_bridge_method(obj, name, at);
            break;
        }
        case ObjKind::Host:
            m = auto_bridge_method(obj, name, at);
            if (!m.is_obj()) return Val::unknown(fmt::format("AutoBridge.{} is not modelled", name), at);
            break;
        case ObjKind::Instance: {
            // A provider the linter made from a config.json.
            const auto* inst = obj.as<InstanceObj>();
            if (name == "to_text_provider" && inst->takes_defaults && !inst->cls) m = auto_bridge_method(obj, name, at);
            break;
        }
        default: break;
    }
    return m.is_obj() ? std::optional<Val>(m) : std::nullopt;
}

void BridgeHost::attr_stored(const std::string& name, Val& value) {
    // Whatever its class, the object stored as a config's `model` is the model config.
    if (name == "model" && value.is_obj(ObjKind::Instance)) value.as<InstanceObj>()->takes_defaults = true;
}

bool BridgeHost::defaults_class(std::string_view class_name) const { return model_class_name(class_name); }

// Default of a model field at the selected revision: TransformerConfig's (with its bases'), from Megatron Core's
// config classes; nullopt when it has none the linter knows.
std::optional<Val> BridgeHost::attr_default(const std::string& field) const {
    if (auto it = default_index_.find(field); it != default_index_.end())
        return from_value(revision_.defaults[it->second].second, {});
    // A default the source names (`params_dtype = torch.float32`) is that name, as an outside object.
    if (revision_.classes)
        if (ResolvedField d = revision_.classes->lookup("TransformerConfig", field); d.field && !d.field->expr.empty())
            return Val::obj(std::make_shared<ExternalObj>(d.field->expr), Loc{});
    return std::nullopt;
}

// Megatron Core's config classes (from the revision's class facts, core/config_classes.hpp): a provider built on
// MLATransformerConfig gets that class's defaults (multi_latent_attention = True) as Python gives them.
const ConfigClass* BridgeHost::described_class(std::string_view dotted) const {
    const ClassFacts* facts = revision_.classes.get();
    return facts ? config_class_for_path(*facts, dotted) : nullptr;
}

const ConfigClass* BridgeHost::described_base(std::string_view name) const {
    const ClassFacts* facts = revision_.classes.get();
    return facts ? facts->find(name) : nullptr;
}

bool BridgeHost::revision_supplies(const ConfigClass& owner) const {
    // TransformerConfig's own defaults (and its bases') are the revision's defaults, which the effective model and
    // attr_default() supply for every model: an object need not carry them.
    const ClassFacts* facts = revision_.classes.get();
    return facts && facts->in_transformer_config_chain(owner);
}

std::optional<Attr> BridgeHost::described_default(const ConfigClass& owner, const ClassField& cf,
                                                  const SetInfo& made) const {
    if (revision_supplies(owner)) return std::nullopt;
    const ClassFacts& facts = *revision_.classes;
    auto detail = std::make_shared<const std::string>(
        fmt::format("default of {}, Megatron Core {} ({})", owner.name, revision_.name, facts.where(owner, cf.line)));
    SetInfo info{made.loc, made.chain, Origin::Default, std::move(detail)};
    if (cf.default_value) return Attr{cf.name, from_value(*cf.default_value, made.loc), std::move(info)};
    if (!cf.expr.empty()) return Attr{cf.name, Val::obj(std::make_shared<ExternalObj>(cf.expr), made.loc), info};
    return std::nullopt;
}

// The defaults an object of Megatron Core's class `cls` has beyond the revision's (an outside class called).
void BridgeHost::add_described_defaults(InstanceObj& inst, const ConfigClass& cls) const {
    const ClassFacts& facts = *revision_.classes;
    for (const ResolvedField& r : facts.fields_of(cls.name)) {
        if (inst.find(r.field->name)) continue;
        if (auto a = described_default(*r.owner, *r.field, inst.created)) inst.attrs.push_back(std::move(*a));
    }
}

// Calls into Bridge's mixed_precision module from outside the source root: its recipes (bf16_mixed, ...) and
// get_mixed_precision_config, answered from the bundled catalog.
std::optional<Val> BridgeHost::intercept_precision(Frame& f, const std::string& qualname, const std::string& short_name,
                                                   CallArgs& args, Loc site) {
    const Schema& schema = Schema::instance();
    const bool precision_module = qualname.find("mixed_precision") != std::string::npos;
    if (precision_module && schema.precision_recipe(short_name)) return precision_recipe(f, short_name, site);
    if (short_name == "get_mixed_precision_config" && precision_module) {
        const Val* name = !args.pos.empty() ? &args.pos[0] : nullptr;
        if (name && name->is_str() && schema.precision_recipe(name->s)) return precision_recipe(f, name->s, site);
        if (name && name->is_obj(ObjKind::Instance)) return *name;
        return Val::unknown("get_mixed_precision_config of a name the linter does not know", site);
    }
    return std::nullopt;
}

Val BridgeHost::precision_recipe(Frame& f, const std::string& name, Loc site) {
    const PrecisionRecipe* recipe = Schema::instance().precision_recipe(name);
    auto inst = std::make_shared<InstanceObj>();
    inst->class_path = "megatron.bridge.training.mixed_precision.MixedPrecisionConfig";
    inst->created = SetInfo{site, f.chain, Origin::Derived, nullptr};
    if (recipe)
        for (const auto& [field, value] : recipe->fields) {
            SetInfo info{site, f.chain, Origin::Derived,
                         std::make_shared<const std::string>(fmt::format(
                             "{} = {} comes from mixed_precision recipe {}()", field, value.display(), name))};
            inst->attrs.push_back(Attr{field, from_value(value, site), info});
        }
    return Val::obj(inst, site);
}

// --- AutoBridge -------------------------------------------------------------------------------------------------

namespace {

Val bridge_builtin(BridgeFn fn, const char* name, const Val& self, Loc at) {
    auto b = std::make_shared<BuiltinObj>(Builtin::Host, name);
    b->host_op = static_cast<std::uint16_t>(fn);
    b->self = self;
    return Val::obj(b, at);
}

// The model id a Hugging Face config object was read for (Hugging Face keeps it as `_name_or_path`).
std::string config_model_id(const Val& config) {
    if (!config.is_obj(ObjKind::Instance)) return {};
    const Attr* a = config.as<InstanceObj>()->find("_name_or_path");
    return a && a->value.is_str() ? a->value.s : std::string();
}

}  // namespace

Val BridgeHost::auto_bridge_method(const Val& self, const std::string& name, Loc at) {
    if (as_bridge(self)) {
        if (name == "to_megatron_provider")
            return bridge_builtin(BridgeFn::ToProvider, "to_megatron_provider", self, at);
        if (name == "get_model_config") return bridge_builtin(BridgeFn::GetModelConfig, "get_model_config", self, at);
        return Val();
    }
    if (self.is_obj(ObjKind::Instance)) {
        // A vision-language provider made from the bundled mapping already holds the language model's fields.
        if (name == "to_text_provider") return bridge_builtin(BridgeFn::ToTextProvider, "to_text_provider", self, at);
        return Val();
    }
    const bool auto_config = self.is_obj(ObjKind::External) && self.as<ExternalObj>()->path.ends_with("AutoConfig");
    if (auto_config)
        return name == "from_pretrained" ? bridge_builtin(BridgeFn::AutoConfig, "from_pretrained", Val(), at) : Val();
    if (name == "from_hf_pretrained") return bridge_builtin(BridgeFn::FromPretrained, "from_hf_pretrained", Val(), at);
    if (name == "from_hf_config") return bridge_builtin(BridgeFn::FromConfig, "from_hf_config", Val(), at);
    return Val();
}

Val BridgeHost::auto_bridge_from_config(Frame& f, const Val& config, Loc site) {
    auto bridge = std::make_shared<HfBridgeObj>();
    bridge->loc = site;
    bridge->chain = f.chain;
    if (as_bridge(config)) return config;
    if (config.is_obj(ObjKind::Instance)) {
        bridge->config = config;
        // A wrapper (PreTrainedCausalLM) holds its config as `.config`.
        if (const Attr* inner = config.as<InstanceObj>()->find("config");
            inner && inner->value.is_obj(ObjKind::Instance))
            bridge->config = inner->value;
        std::string id = config_model_id(bridge->config);
        bridge->model_id = id.empty() ? Val::unknown("the Hugging Face config was not read from a known model", site)
                                      : Val::str(id, site);
    } else {
        bridge->model_id = Val::unknown(config.is_unknown() ? config.reason() : "no Hugging Face config given", site);
    }
    return Val::obj(bridge, site);
}

Val BridgeHost::call_host_function(Interp& in, Frame& f, BuiltinObj& b, CallArgs& args, Loc site) {
    switch (static_cast<BridgeFn>(b.host_op)) {
        case BridgeFn::FromPretrained: {
            auto bridge = std::make_shared<HfBridgeObj>();
            const Val* id = call_arg(args, 0, {"path", "pretrained_model_name_or_path", "hf_path"});
            bridge->model_id = id ? *id : Val::unknown("no model id given", site);
            bridge->loc = site;
            bridge->chain = f.chain;
            return Val::obj(bridge, site);
        }
        case BridgeFn::FromConfig: {
            const Val* config = call_arg(args, 0, {"config", "hf_config"});
            return auto_bridge_from_config(f, config ? *config : Val(), site);
        }
        case BridgeFn::AutoConfig: {
            const Val* id = call_arg(args, 0, {"pretrained_model_name_or_path"});
            if (!id || !id->is_str())
                return Val::unknown("AutoConfig.from_pretrained() of a model id computed at run time", site);
            return hf_config_object(in, f, id->s, site);
        }
        case BridgeFn::ToProvider:
        case BridgeFn::GetModelConfig:
            if (!as_bridge(b.self)) return Val::unknown(fmt::format("{}() of an unknown bridge", b.name), site);
            return hf_model(in, f, *as_bridge(b.self), static_cast<BridgeFn>(b.host_op) == BridgeFn::GetModelConfig,
                            site);
        case BridgeFn::ToTextProvider: return b.self;
        default: return Val::unknown(fmt::format("{}() is not modelled", b.name), site);
    }
}

Val BridgeHost::hf_config_object(Interp& in, Frame& f, const std::string& model_id, Loc site) {
    auto config = hf_.config(model_id);
    if (!config) {
        report_unknown_model(in, model_id, site);
        return Val::unknown(fmt::format("the architecture of {} is not known (no config.json found)", model_id), site);
    }
    const std::string from = fmt::format("the config.json of {} ({})", model_id, config->source);
    // Objects under keys ending in _config (text_config, vision_config) are configs of their own.
    std::function<Val(const nlohmann::json&, bool, int)> convert = [&](const nlohmann::json& j, bool as_config,
                                                                       int depth) -> Val {
        if (depth > 8) return Val::unknown("nested too deeply", site);
        if (j.is_null()) return Val::none(site);
        if (j.is_boolean()) return Val::boolean(j.get<bool>(), site);
        if (j.is_number_integer()) return Val::integer(j.get<std::int64_t>(), site);
        if (j.is_number()) return Val::floating(j.get<double>(), site);
        if (j.is_string()) return Val::str(j.get<std::string>(), site);
        if (j.is_array()) {
            std::vector<Val> items;
            for (const auto& item : j) items.push_back(convert(item, false, depth + 1));
            return in.make_list(std::move(items), ObjKind::List, site);
        }
        if (!as_config) {
            auto d = std::make_shared<DictObj>();
            for (auto it = j.begin(); it != j.end(); ++it)
                d->items.emplace_back(Val::str(it.key(), site), convert(it.value(), false, depth + 1));
            return Val::obj(d, site);
        }
        auto inst = std::make_shared<InstanceObj>();
        inst->class_path = "transformers.PretrainedConfig";
        // Closed: what config.json and the config class defaults Bridge reads do not have is absent.
        inst->closed = true;
        inst->created = SetInfo{site, f.chain, Origin::Derived, nullptr};
        auto detail = std::make_shared<const std::string>(from);
        for (auto it = j.begin(); it != j.end(); ++it)
            inst->attrs.push_back(Attr{it.key(), convert(it.value(), it.key().ends_with("_config"), depth + 1),
                                       SetInfo{site, f.chain, Origin::Derived, detail}});
        for (auto it = hf_class_defaults().begin(); it != hf_class_defaults().end(); ++it)
            if (!j.contains(it.key()))
                inst->attrs.push_back(Attr{it.key(), convert(it.value(), false, depth + 1),
                                           SetInfo{site, f.chain, Origin::Default, detail}});
        if (!inst->find("_name_or_path"))
            inst->attrs.push_back(
                Attr{"_name_or_path", Val::str(model_id, site), SetInfo{site, f.chain, Origin::Derived, detail}});
        return Val::obj(inst, site);
    };
    return convert(config->raw, true, 0);
}

Val BridgeHost::hf_model(Interp& in, Frame& f, const HfBridgeObj& bridge, bool model_config, Loc site) {
    std::string id = bridge.model_id.is_str() ? bridge.model_id.s : config_model_id(bridge.config);
    std::optional<Val> made;
    if (bridge.config.is_obj(ObjKind::Instance)) {
        made = tree_model_bridge(in, f, bridge.config, id, model_config, site);
    } else if (!id.empty() && hf_.lookup(id)) {
        // A model id's bridge is the same for every recipe that names it (hundreds name a few dozen models): its
        // evaluation is copied into each (pyeval/call_memo.hpp). An unknown model is reported once, by the mapping
        // fallback below.
        made = tree_bridges_.call(in, f, site, fmt::format("{}\n{}", id, model_config),
                                  [&](Interp& at, Frame& from, Loc call_site) -> std::optional<Val> {
                                      Val config = hf_config_object(at, from, id, call_site);
                                      if (!config.is_obj(ObjKind::Instance)) return std::nullopt;
                                      return tree_model_bridge(at, from, config, id, model_config, call_site);
                                  });
    }
    if (made) {
        // What the tree's bridge leaves unknown, the bundled mapping may know.
        if (auto arch = id.empty() ? nullptr : hf_.lookup(id)) {
            auto* inst = made->as<InstanceObj>();
            for (const auto& field : arch->fields) {
                Attr* a = inst->find(field.field);
                if (!a || !a->value.is_unknown() || field.value.is_unknown()) continue;
                a->value = from_value(field.value, site);
                a->info = SetInfo{site, f.chain, Origin::Derived, std::make_shared<const std::string>(field.detail)};
            }
        }
        return *made;
    }
    HfBridgeObj by_id = bridge;
    if (!id.empty()) by_id.model_id = Val::str(id, bridge.loc);
    Val out = hf_provider(in, f, by_id, site);
    if (model_config && out.is_obj(ObjKind::Instance))
        out.as<InstanceObj>()->class_path = "megatron.bridge.models.gpt.model_config.BridgeGPTModelConfig";
    return out;
}

void BridgeHost::report_unknown_model(Interp& in, const std::string& id, Loc at) {
    Diagnostic d = input_error(InputError::UnknownModel, at.range(),
                               fmt::format("the architecture of \"{}\" is not known, so the checks that need it "
                                           "(layers, experts, attention type) are skipped",
                                           id));
    d.notes.push_back(Note{SourceRange{},
                           "its config.json is not given with --hf-config, not in the Hugging Face cache "
                           "and not in the bundled catalog"});
    d.notes.push_back(Note{SourceRange{}, fmt::format("download it with `huggingface-cli download {} config.json`, or "
                                                      "pass --hf-config {}=PATH/TO/config.json",
                                                      id, id)});
    in.report(std::move(d));
}

std::vector<std::string> BridgeHost::architecture_fields() const {
    // Only the fields the revision has: a made-up field would read as set on the model, and one the revision lacks
    // as an error the recipe never made.
    const Schema& schema = Schema::instance();
    std::vector<std::string> out;
    for (const auto& name : HfResolver::architecture_fields())
        if (const FieldSpec* spec = schema.field(name); spec && schema.field_exists_at(*spec, revision_))
            out.push_back(name);
    return out;
}

Val BridgeHost::hf_provider(Interp& in, Frame& f, const HfBridgeObj& bridge, Loc site) {
    auto inst = std::make_shared<InstanceObj>();
    inst->takes_defaults = true;
    inst->created = SetInfo{site, f.chain, Origin::Recipe, nullptr};
    inst->class_path = "megatron.bridge.models.GPTModelProvider";
    if (!bridge.model_id.is_str()) {
        const std::string reason = bridge.model_id.is_unknown() ? bridge.model_id.reason()
                                                                : "the Hugging Face model id is computed at run time";
        for (const auto& field : architecture_fields())
            inst->attrs.push_back(
                Attr{field, Val::unknown(reason, bridge.loc), SetInfo{site, f.chain, Origin::Derived}});
        return Val::obj(inst, site);
    }
    const std::string& id = bridge.model_id.s;
    auto arch = hf_.lookup(id);
    if (!arch) {
        const std::string reason = fmt::format("the architecture of {} is not known (no config.json found)", id);
        for (const auto& field : architecture_fields())
            inst->attrs.push_back(
                Attr{field, Val::unknown(reason, bridge.loc), SetInfo{site, f.chain, Origin::Derived}});
        report_unknown_model(in, id, bridge.loc);
        return Val::obj(inst, site);
    }
    for (const auto& field : arch->fields) {
        SetInfo info{site, f.chain, Origin::Derived, std::make_shared<const std::string>(field.detail)};
        // config.json facts are scalars and integer lists (moe_layer_freq); anything else is not modelled.
        Val v = field.value.is_map() ? Val::unknown("a value the linter does not model", site)
                                     : from_value(field.value, site);
        inst->attrs.push_back(Attr{field.field, std::move(v), std::move(info)});
    }
    return Val::obj(inst, site);
}

// --- model bridges registered by the tree ---------------------------------------------------------------------------

namespace {

// `@X.register_bridge(source=..., ...)` on a class: the `source` argument's node, else kNoNode.
NodeId registered_source(const Ast& a, NodeId decorator) {
    NodeId call = a.first_named(decorator);
    if (a.kind(call) != Kind::Call || !a.source(a.field(call, Field::Function)).ends_with("register_bridge"))
        return kNoNode;
    for (NodeId arg : a.named_kids(a.field(call, Field::Arguments)))
        if (a.kind(arg) == Kind::KeywordArgument && a.source(a.field(arg, Field::Name)) == "source")
            return a.field(arg, Field::Value);
    return kNoNode;
}

// The text of a plain string literal ("x", 'x', """x""").
std::string literal_text(std::string_view quoted) {
    auto open = quoted.find_first_of("\"'");
    auto close = quoted.find_last_of("\"'");
    if (open == std::string_view::npos || close <= open) return {};
    std::string_view body = quoted.substr(open, close - open + 1);
    const bool triple = body.size() >= 6 && body[0] == body[1] && body[1] == body[2];
    const size_t q = triple ? 3 : 1;
    return std::string(body.substr(q, body.size() - 2 * q));
}

// A string literal with no prefix, escape or interpolation: its text is its value.
bool plain_string(const Ast& a, NodeId n) {
    if (a.kind(n) != Kind::String) return false;
    const std::string_view text = a.source(n);
    if (text.empty() || (text.front() != '"' && text.front() != '\'')) return false;
    const auto kids = a.named_kids(n);
    return std::none_of(kids.begin(), kids.end(), [&](NodeId k) {
        return a.kind(k) == Kind::EscapeSequence || a.kind(k) == Kind::Interpolation;
    });
}

// The name `from M import X as alias` (or `from M import X`) binds when it binds `name`: X; else empty.
std::string imported_as(const Ast& a, NodeId k, std::string_view name) {
    std::string_view imported, alias;
    if (a.kind(k) == Kind::DottedName) {
        imported = alias = a.source(k);
    } else if (a.kind(k) == Kind::AliasedImport) {
        imported = a.source(a.field(k, Field::Name));
        alias = a.source(a.field(k, Field::Alias));
    }
    return alias == name ? std::string(imported) : std::string();
}

// What the module-level `name` of `m` is, when the module's one binding of it says so by itself: an import from a
// module outside the tree (`from transformers import X as NAME`: the interpreter binds an external object named X)
// or a plain string (`NAME = "X"`). That is the value the module's initialization would give it, read without
// initializing the module and every module its top level imports (what a registration's `source=NAME` stands for is
// asked of every bridge file of the tree). Any other binding, or more than one, or one the text cannot rule out
// (a compound statement, `global`, a star import): nullopt, and the caller evaluates the module.
std::optional<std::string> plainly_bound(ModuleIndex& index, Module& m, const std::string& name) {
    index.ensure_parsed(&m);
    const Ast* a = m.ast.get();
    if (!a || m.syntax_error || a->text.find("global") != std::string::npos) return std::nullopt;
    std::optional<std::string> value;
    int bindings = 0;
    for (NodeId st : a->named_kids(a->root)) {
        const Kind kind = a->kind(st);
        if (kind == Kind::ImportFromStatement) {
            const NodeId from = a->field(st, Field::ModuleName);
            for (NodeId k : a->named_kids(st)) {
                if (k == from) continue;
                if (a->kind(k) == Kind::WildcardImport) return std::nullopt;
                std::string imported = imported_as(*a, k, name);
                if (imported.empty()) continue;
                ++bindings;
                // Inside the tree the interpreter imports it (lazily): its value is that module's to say.
                if (from == kNoNode || a->kind(from) != Kind::DottedName) return std::nullopt;
                std::string dotted(a->source(from));
                if (dotted.find_first_of(" \t\\") != std::string::npos || dotted == "typing" ||
                    index.find_from(dotted, &m))
                    return std::nullopt;
                value = std::move(imported);
            }
            continue;
        }
        if (kind == Kind::ExpressionStatement) {
            const NodeId e = a->first_named(st);
            if (a->kind(e) == Kind::String || a->kind(e) == Kind::ConcatenatedString) continue;  // a docstring
            const NodeId left = a->kind(e) == Kind::Assignment ? a->field(e, Field::Left) : kNoNode;
            // Any other expression (a call, a walrus in brackets) falls to the text test below.
            if (left != kNoNode && a->kind(left) == Kind::Identifier && a->source(left) == name) {
                ++bindings;
                const NodeId right = a->field(e, Field::Right);
                if (right == kNoNode || !plain_string(*a, right)) return std::nullopt;
                value = literal_text(a->source(right));
                continue;
            }
        }
        if (kind == Kind::Comment) continue;
        if (kind == Kind::ClassDefinition || kind == Kind::FunctionDefinition || kind == Kind::DecoratedDefinition) {
            // Binds its own name; what its body assigns is its own (`global` was ruled out above).
            const NodeId def = kind == Kind::DecoratedDefinition ? a->field(st, Field::Definition) : st;
            if (a->source(a->field(def, Field::Name)) == name) return std::nullopt;
            continue;
        }
        // Everything else (an import, a compound statement, another assignment) may bind the name if its text
        // holds it.
        if (a->source(st).find(name) != std::string_view::npos) return std::nullopt;
    }
    return bindings == 1 ? value : std::nullopt;
}

// Parses the modules on every core: the bridge files of a tree are asked for together, and each is parsed once.
void parse_in_parallel(ModuleIndex& index, const std::vector<Module*>& modules) {
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < modules.size();) index.ensure_parsed(modules[i]);
    };
    const std::size_t threads =
        std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), modules.size());
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
}

}  // namespace

std::vector<BridgeHost::BridgeRegistration> BridgeHost::model_bridges(ModuleIndex& index, std::string_view text) {
    // The files are read by every thread that asks while they are being read: the first recipes of each thread ask
    // at once.
    bridge_listing_.run(
        [this, &index] {
            namespace fs = std::filesystem;
            std::error_code ec;
            fs::path base = fs::path(index.root()) / "src";
            if (!fs::is_directory(base, ec)) base = index.root();
            for (fs::recursive_directory_iterator it(base, fs::directory_options::skip_permission_denied, ec), end;
                 !ec && it != end; it.increment(ec)) {
                const std::string name = it->path().filename().string();
                if (it->is_directory(ec)) {
                    if (name.empty() || name[0] == '.' || name == "__pycache__" || name == "node_modules")
                        it.disable_recursion_pending();
                    continue;
                }
                if (it->path().extension() == ".py") python_files_.push_back(it->path().string());
            }
            registering_.resize(python_files_.size());
            return python_files_.size();
        },
        [this](std::size_t i) {
            // A file the module index would refuse (too large, not a regular file) registers nothing it can read.
            std::optional<std::string> content = read_file_text(python_files_[i], SourceManager::max_file_bytes()).text;
            if (content && content->find("register_bridge") != std::string::npos) registering_[i] = std::move(content);
        },
        [this] {
            for (std::size_t i = 0; i < python_files_.size(); ++i)
                if (registering_[i]) bridge_files_.emplace_back(python_files_[i], std::move(*registering_[i]));
            std::sort(bridge_files_.begin(), bridge_files_.end());
            python_files_.clear();
            registering_.clear();
        });
    {
        std::lock_guard<std::mutex> lock(bridges_mutex_);
        if (auto it = bridges_by_text_.find(text); it != bridges_by_text_.end()) return it->second;
    }
    // The files naming `text`, in order, each with its registrations read before or its module; the modules not
    // parsed yet are parsed on every core first.
    struct Named {
        const std::string* file;
        const std::vector<BridgeRegistration>* read;  // null: not read yet
        Module* module;
    };
    std::vector<Named> named;
    std::vector<Module*> unparsed;
    for (const auto& [file, content] : bridge_files_) {
        if (!text.empty() && content.find(text) == std::string::npos) continue;
        {
            std::lock_guard<std::mutex> lock(bridges_mutex_);
            if (auto it = bridges_by_file_.find(file); it != bridges_by_file_.end()) {
                named.push_back({&file, &it->second, nullptr});  // a map's elements stay where they are
                continue;
            }
        }
        std::vector<Diagnostic> ignored;
        Module* m = index.module_for_file(file, ignored);
        if (m && !m->parse_started.load(std::memory_order_acquire)) unparsed.push_back(m);
        named.push_back({&file, nullptr, m});
    }
    parse_in_parallel(index, unparsed);
    std::vector<BridgeRegistration> out;
    for (const auto& [file, read, m] : named) {
        if (read) {
            out.insert(out.end(), read->begin(), read->end());
            continue;
        }
        std::vector<BridgeRegistration> found;
        if (m) {
            index.ensure_parsed(m);
            const Ast* a = m->ast.get();
            for (NodeId st : a ? a->named_kids(a->root) : std::vector<NodeId>{}) {
                if (a->kind(st) != Kind::DecoratedDefinition) continue;
                NodeId def = a->field(st, Field::Definition);
                if (a->kind(def) != Kind::ClassDefinition) continue;
                for (NodeId dec : a->named_kids(st)) {
                    NodeId source = a->kind(dec) == Kind::Decorator ? registered_source(*a, dec) : kNoNode;
                    if (source == kNoNode) continue;
                    BridgeRegistration r{m->name, std::string(a->source(a->field(def, Field::Name))), {}, false};
                    if (a->kind(source) == Kind::String) {
                        r.source = literal_text(a->source(source));
                        r.source_is_literal = true;
                    } else if (a->kind(source) == Kind::Identifier || a->kind(source) == Kind::Attribute) {
                        r.source = std::string(a->source(source));
                    } else {
                        continue;
                    }
                    found.push_back(std::move(r));
                }
            }
        }
        out.insert(out.end(), found.begin(), found.end());
        std::lock_guard<std::mutex> lock(bridges_mutex_);
        bridges_by_file_.emplace(*file, std::move(found));
    }
    std::lock_guard<std::mutex> lock(bridges_mutex_);
    bridges_by_text_.emplace(std::string(text), out);
    return out;
}

std::optional<Val> BridgeHost::tree_model_bridge(Interp& in, Frame& f, const Val& hf_config,
                                                 const std::string& model_id, bool model_config, Loc site) {
    auto* config = hf_config.as<InstanceObj>();
    const Attr* archs = config->find("architectures");
    if (!archs || !archs->value.is_obj(ObjKind::List) || archs->value.as<SeqObj>()->items.empty()) return std::nullopt;
    const Val& first = archs->value.as<SeqObj>()->items.front();
    if (!first.is_str()) return std::nullopt;
    const std::string& architecture = first.s;

    // The registered class for this architecture: a literal, a same-named import or a name bound to the literal in a
    // file that names it first, then the names other files register under, evaluated in their module (a constant
    // built or imported from elsewhere, a class imported under another name).
    ModuleIndex& index = in.project().index();
    std::optional<BridgeRegistration> found;
    for (const auto& r : model_bridges(index, architecture)) {
        // A name bound plainly to the architecture's string in its own file (`NAME = "Arch"`) counts here too: the
        // files naming the architecture are few, every bridge file of the tree is many.
        std::optional<std::string> plain;
        if (!r.source_is_literal && r.source.find('.') == std::string::npos)
            if (Module* m = index.find(r.module)) plain = plainly_bound(index, *m, r.source);
        if ((r.source_is_literal ? r.source : last_component(r.source)) == architecture || plain == architecture) {
            found = r;
            break;
        }
    }
    if (!found)
        for (const auto& r : model_bridges(index, {})) {
            if (r.source_is_literal || r.source.find('.') != std::string::npos) continue;
            Module* m = index.find(r.module);
            if (!m) continue;
            std::string name;
            if (std::optional<std::string> plain = plainly_bound(index, *m, r.source)) {
                name = std::move(*plain);
            } else {
                Val v = in.module_global(m, r.source);
                name = v.is_str()                    ? v.s
                       : v.is_obj(ObjKind::External) ? last_component(v.as<ExternalObj>()->path)
                       : v.is_obj(ObjKind::Class)    ? v.as<ClassObj>()->name
                                                     : std::string();
            }
            if (name == architecture) {
                found = r;
                break;
            }
        }
    if (!found) return std::nullopt;
    Module* m = index.find(found->module);
    if (!m) return std::nullopt;
    Val cls = in.module_global(m, found->class_name);
    if (!cls.is_obj(ObjKind::Class)) return std::nullopt;

    // As AutoBridge does: a bridge instance that knows the config, and a pretrained wrapper holding it.
    Val bridge = in.call(f, cls, {}, site);
    if (!bridge.is_obj(ObjKind::Instance)) return std::nullopt;
    SetInfo info{site, f.chain, Origin::Derived, nullptr};
    auto wrapper = std::make_shared<InstanceObj>();
    wrapper->class_path = "megatron.bridge.models.hf_pretrained.causal_lm.PreTrainedCausalLM";
    wrapper->closed = true;
    wrapper->attrs.push_back(Attr{"config", hf_config, info});
    wrapper->attrs.push_back(
        Attr{"model_name_or_path", model_id.empty() ? Val::none(site) : Val::str(model_id, site), info});
    Val pretrained = Val::obj(wrapper, site);
    in.set_attr(f, bridge, "hf_config", hf_config, info);
    in.set_attr(f, bridge, "hf_pretrained", pretrained, info);

    Val method = in.get_attr(f, bridge, model_config ? "hf_config_to_model_config" : "provider_bridge", site);
    CallArgs args;
    args.pos.push_back(model_config ? hf_config : pretrained);
    Val made = in.call(f, method, std::move(args), site);
    if (!made.is_obj(ObjKind::Instance) || !made.as<InstanceObj>()->poisoned.empty()) return std::nullopt;
    made.as<InstanceObj>()->takes_defaults = true;
    return made;
}

// What Megatron Bridge's `@...register_bridge(source=, provider=, model_type=)` stores on the class it decorates.
void BridgeHost::class_decorated(Interp& in, Frame& f, ClassObj& cls, NodeId decorated) {
    const Ast& a = *f.module->ast;
    for (NodeId dec : a.named_kids(decorated)) {
        if (a.kind(dec) != Kind::Decorator || registered_source(a, dec) == kNoNode) continue;
        NodeId call = a.first_named(dec);
        for (NodeId arg : a.named_kids(a.field(call, Field::Arguments))) {
            if (a.kind(arg) != Kind::KeywordArgument) continue;
            const std::string_view key = a.source(a.field(arg, Field::Name));
            Val v = in.eval(f, a.field(arg, Field::Value));
            if (key == "provider" && !v.is_none()) {
                cls.attrs.emplace_back("PROVIDER_CLASS", v);
            } else if (key == "model_type" && !v.is_none()) {
                cls.attrs.emplace_back("MODEL_TYPE", v);
            } else if (key == "source") {
                if (v.is_obj(ObjKind::External)) v = Val::str(last_component(v.as<ExternalObj>()->path), v.at);
                else if (v.is_obj(ObjKind::Class)) v = Val::str(v.as<ClassObj>()->name, v.at);
                cls.attrs.emplace_back("SOURCE_NAME", v);
            }
        }
    }
}

}  // namespace mbl::py
