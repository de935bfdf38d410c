// Finding recipes in a module (syntax only) and evaluating one: the config object a recipe returns becomes the
// engine's config tree, each value exported with the provenance and call chain of the statement that set it (see
// recipes.hpp).
#include "parser/bridge/recipes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "core/did_you_mean.hpp"
#include "core/input_errors.hpp"
#include "core/limits.hpp"
#include "core/schema.hpp"
#include "parser/bridge/bridge_host.hpp"

namespace mbl::py {

// A call chain's steps as notes, made once per call site: every field one call sets carries the same chain. Keyed by
// address, so the chains are held too (an address is not reused while its site lives).
class ChainSteps {
public:
    CallChain of(const Chain& chain);

private:
    std::unordered_map<const CallSite*, std::pair<Chain, CallChain>> made_;
};

// Provenance for a stored value, naming the line that wrote the value where it is in another file.
Provenance provenance_of(const SetInfo& info, const Val& value, ChainSteps& steps);
Provenance provenance_of(const SetInfo& info, ChainSteps& steps);
constexpr std::string_view kWrittenAt = "the value is written at ";

namespace {

NodeId function_of(const Ast& a, NodeId stmt) {
    if (a.kind(stmt) == Kind::FunctionDefinition) return stmt;
    if (a.kind(stmt) == Kind::DecoratedDefinition) {
        NodeId def = a.field(stmt, Field::Definition);
        if (def != kNoNode && a.kind(def) == Kind::FunctionDefinition) return def;
    }
    return kNoNode;
}

// Bridge's recipe runner calls a recipe with optional keyword arguments only (scripts/training/recipe_runner.py in
// Megatron Bridge 067f987, _load_with_optional_kwargs: `config_builder(**kwargs)`), so a function with a parameter
// that has no default transforms a config it is given (`apply_cli_overrides(config, overrides)`); it builds none.
bool callable_without_arguments(const Ast& a, NodeId def) {
    for (NodeId p : a.named_kids(a.field(def, Field::Parameters))) {
        if (a.kind(p) == Kind::Identifier) return false;
        if (a.kind(p) != Kind::TypedParameter) continue;  // defaults, *args, **kwargs, `*`, `/`
        const auto kids = a.named_kids(p);
        const bool splat = std::any_of(kids.begin(), kids.end(), [&](NodeId k) {
            return a.kind(k) == Kind::ListSplatPattern || a.kind(k) == Kind::DictionarySplatPattern;
        });
        if (!splat) return false;  // `x: int`
    }
    return true;
}

// Whether a function body has a `return <value>` of its own (nested functions, classes and lambdas aside): one
// without returns None, so its *_config name alone does not make it a recipe (a pytest test named test_..._config).
bool returns_a_value(const Ast& a, NodeId node) {
    for (std::uint32_t i = 0; i < a.count(node); ++i) {
        const NodeId k = a.kid(node, i);
        switch (a.kind(k)) {
            case Kind::FunctionDefinition:
            case Kind::DecoratedDefinition:
            case Kind::ClassDefinition:
            case Kind::Lambda: continue;
            case Kind::ReturnStatement:
                if (a.first_named(k) != kNoNode) return true;
                continue;
            default:
                if (returns_a_value(a, k)) return true;
        }
    }
    return false;
}

constexpr int kMaxExportDepth = 40;

// Values one recipe's config may expand to in the config tree (python-export-values). The evaluator shares objects,
// so `l = [l, l]` sixty times is a few bytes there but 2^60 values written out: past the limit the rest is unknown
// and the recipe an IN008 error.

struct Exporter {
    std::unordered_set<const Object*> active;  // cycle guard
    ChainSteps chains;
    std::size_t values = 0;
    SourceRange over_at;  // where the limit was passed; valid once it was

    Value value(const Val& v, const Provenance& prov, int depth) {
        const Provenance& p = prov;
        if (depth > kMaxExportDepth) return Value::unknown("nested too deeply", p);
        if (++values > limit(Limit::PythonExportValues)) {
            if (!over_at.valid()) over_at = p.range.valid() ? p.range : v.at.range();
            return Value::unknown("the config expands to too many values", p);
        }
        switch (v.k) {
            case Val::K::None: return Value::null(p);
            case Val::K::Bool: return Value::boolean(v.b, p);
            case Val::K::Int: return Value::integer(v.i, p);
            case Val::K::Float: return Value::floating(v.d, p);
            case Val::K::Str: return Value::string(v.s, p);
            case Val::K::Unknown: {
                Provenance up = p;
                if (!up.range.valid() && v.at.valid()) up.range = v.at.range();
                return Value::unknown(v.reason(), up);
            }
            case Val::K::Obj: break;
        }
        if (active.count(v.o.get())) return Value::unknown("refers to itself", p);
        active.insert(v.o.get());
        Value out = object(v, p, depth);
        active.erase(v.o.get());
        return out;
    }

    Value object(const Val& v, const Provenance& p, int depth) {
        switch (v.o->kind) {
            case ObjKind::List:
            case ObjKind::Tuple:
            case ObjKind::Set: {
                auto* s = v.as<SeqObj>();
                if (!s->unknown.empty()) return Value::unknown(s->unknown, p);
                std::vector<Value> items;
                for (const auto& item : s->items) {
                    Provenance ip = p;
                    // An element written literally points at itself (`["core_attn", "mlp"]` underlines "mlp").
                    if (item.at.valid() && !item.is_obj()) {
                        ip.range = item.at.range();
                        // Pointed at where it is written: saying so again would be noise.
                        if (ip.detail.rfind(kWrittenAt, 0) == 0) ip.detail.clear();
                    }
                    items.push_back(value(item, ip, depth + 1));
                }
                return Value::list(std::move(items), p);
            }
            case ObjKind::Dict: {
                auto* d = v.as<DictObj>();
                if (!d->unknown.empty()) return Value::unknown(d->unknown, p);
                Value m = Value::map(p);
                for (const auto& [k, item] : d->items) {
                    if (!k.is_str()) return Value::unknown("a dict with keys that are not strings", p);
                    m.set(k.s, value(item, p, depth + 1));
                }
                return m;
            }
            case ObjKind::Instance: {
                auto* inst = v.as<InstanceObj>();
                if (!inst->poisoned.empty()) return Value::unknown(inst->poisoned, p);
                Value m = Value::map(p);
                for (const auto& a : inst->attrs)
                    m.set(a.name, value(a.value, provenance_of(a.info, a.value, chains), depth + 1));
                return m;
            }
            case ObjKind::External: return Value::string(v.as<ExternalObj>()->path, p);
            case ObjKind::Function: return Value::string(v.as<FunctionObj>()->qualname, p);
            case ObjKind::Class: return Value::string(v.as<ClassObj>()->qualname, p);
            case ObjKind::Builtin: return Value::string(v.as<BuiltinObj>()->name, p);
            default: return Value::unknown(fmt::format("{} is not a config value", type_name(v)), p);
        }
    }
};

// Every model field at once, unknown: the model object could not be followed.
Value unknown_model(const std::string& reason, const Provenance& p, const Revision& rev) {
    Value m = Value::map(p);
    const Schema& schema = Schema::instance();
    for (const auto& name : schema.field_names()) {
        const FieldSpec* f = schema.field(name);
        if (!f || !schema.field_exists_at(*f, rev) || name[0] == '_') continue;
        m.set(name, Value::unknown(reason, p));
    }
    return m;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

Provenance provenance_of(const SetInfo& info);

namespace {

// A name from outside the source root stored in a model field: a string where the field takes names (dtypes,
// functions, enum-like strings), the matching enum value for enum fields, else unknown (never a wrong type).
Value external_field_value(const FieldTypeAt& spec, const std::string& path, const Provenance& p) {
    if (!spec.enum_values->empty()) {
        const std::string member = lower(last_component(path));
        for (const auto& allowed : *spec.enum_values)
            if (lower(allowed) == member) return Value::string(allowed, p);
        return Value::unknown(fmt::format("{}, a name from outside the source root", path), p);
    }
    switch (spec.type) {
        case FieldType::Str:
        case FieldType::Any:
        case FieldType::Dtype:
        case FieldType::Callable: return Value::string(path, p);
        default: return Value::unknown(fmt::format("{}, a name from outside the source root", path), p);
    }
}

Value model_field_value(std::string_view name, const FieldTypeAt& spec, const Val& v, const Provenance& p,
                        Exporter& e) {
    if (v.is_obj(ObjKind::External)) return external_field_value(spec, v.as<ExternalObj>()->path, p);
    if (v.is_obj(ObjKind::Instance) || v.is_obj(ObjKind::Function) || v.is_obj(ObjKind::Class) ||
        v.is_obj(ObjKind::Builtin) || v.is_obj(ObjKind::Partial) || v.is_obj(ObjKind::Method)) {
        // How an object is written in the config tree (a mapping, a qualified name) is the linter's choice, so it
        // must not turn into a type error: where it does not fit the field, it is unknown.
        Value out = e.value(v, p, 1);
        if (type_matches(out, spec.type)) return out;
        return Value::unknown(
            fmt::format("{}, which the linter does not model as a {} value", type_name(v), field_type_name(spec.type)),
            p);
    }
    if ((v.is_obj(ObjKind::List) || v.is_obj(ObjKind::Tuple)) && spec.type == FieldType::List) {
        Value out = e.value(v, p, 1);
        if (!out.is_list()) return out;
        // Labels written as enum members from outside the root are not label strings.
        const auto& items = v.as<SeqObj>()->items;
        const bool scope = name == "cuda_graph_scope" || name == "cuda_graph_modules";
        for (size_t i = 0; i < items.size() && i < out.items().size(); ++i)
            if (items[i].is_obj(ObjKind::External)) {
                const std::string& path = items[i].as<ExternalObj>()->path;
                out.items()[i] = scope ? Value::string(last_component(path), out.items()[i].prov())
                                       : Value::unknown(fmt::format("{}, a name from outside the source root", path),
                                                        out.items()[i].prov());
            }
        return out;
    }
    Value out = e.value(v, p, 1);
    // Python does not check dataclass annotations: a value of another type (Bridge passes config.json's list of
    // eos_token_id values to an int field) is what the run holds. Only the recompute fields, which Megatron Core's
    // own checks read, are reported (IN005); elsewhere the value is unknown rather than an error.
    const bool recompute_field =
        name.find("recompute") != std::string_view::npos || name == "distribute_saved_activations";
    if (!recompute_field && !out.is_unknown() && !type_matches(out, spec.type))
        return Value::unknown(
            fmt::format("{}, while the field is declared {}", type_name(v), field_type_name(spec.type)), p);
    return out;
}

}  // namespace

CallChain ChainSteps::of(const Chain& chain) {
    if (!chain) return {};
    auto it = made_.find(chain.get());
    if (it != made_.end()) return it->second.second;
    std::vector<ChainStep> steps;
    for (const CallSite* s = chain.get(); s; s = s->parent.get())
        steps.push_back(ChainStep{s->loc.range(), fmt::format("{}() is called here", s->callee)});
    std::reverse(steps.begin(), steps.end());
    CallChain made(std::move(steps));
    made_.emplace(chain.get(), std::make_pair(chain, made));
    return made;
}

Provenance provenance_of(const SetInfo& info, ChainSteps& steps) {
    Provenance p;
    p.origin = info.origin;
    p.range = info.loc.range();
    if (info.detail) p.detail = *info.detail;
    p.chain = steps.of(info.chain);
    return p;
}

Provenance provenance_of(const SetInfo& info) {
    ChainSteps steps;
    return provenance_of(info, steps);
}

Provenance provenance_of(const SetInfo& info, const Val& value, ChainSteps& steps) {
    Provenance p = provenance_of(info, steps);
    // A value written in a file neither the statement nor its calls are in (a workload table a helper copies
    // onto the config) names the line that wrote it: that is the line to change.
    const Loc& at = value.at;
    if (!p.detail.empty() || info.origin != Origin::Recipe || !at.valid() || value.is_unknown() || !info.loc.valid() ||
        *at.file == *info.loc.file)
        return p;
    for (const CallSite* s = info.chain.get(); s; s = s->parent.get())
        if (s->loc.valid() && *s->loc.file == *at.file) return p;
    p.detail = fmt::format("{}{}:{}", kWrittenAt, *at.file, at.line);
    return p;
}

Value export_value(const Val& v, const SetInfo& info) {
    Exporter e;
    return e.value(v, provenance_of(info, e.chains), 0);
}

std::vector<std::string> function_names(const Module& m) {
    std::vector<std::string> out;
    if (!m.ast) return out;
    const Ast& a = *m.ast;
    for (std::uint32_t i = 0; i < a.count(a.root); ++i) {
        NodeId def = function_of(a, a.kid(a.root, i));
        if (def != kNoNode) out.emplace_back(a.source(a.field(def, Field::Name)));
    }
    return out;
}

std::vector<RecipeInfo> find_recipes(const Module& m, bool include_private) {
    std::vector<RecipeInfo> out;
    if (!m.ast) return out;
    const Ast& a = *m.ast;
    for (std::uint32_t i = 0; i < a.count(a.root); ++i) {
        NodeId def = function_of(a, a.kid(a.root, i));
        if (def == kNoNode) continue;
        NodeId name_node = a.field(def, Field::Name);
        std::string name(a.source(name_node));
        if (!include_private && !name.empty() && name[0] == '_') continue;
        NodeId rt = a.field(def, Field::ReturnType);
        bool annotated = rt != kNoNode && a.source(rt).ends_with("ConfigContainer");
        if (!annotated) {
            std::string_view t = rt == kNoNode ? std::string_view() : a.source(rt);
            annotated = t.find("ConfigContainer") != std::string_view::npos && t.find('|') == std::string_view::npos &&
                        t.find("Optional") == std::string_view::npos;
        }
        if (!annotated && !name.ends_with("_config")) continue;
        // A function named on its own is taken whatever it looks like; found by a search, it must be callable as a
        // recipe and, when only its name says so, return something.
        if (!include_private &&
            (!callable_without_arguments(a, def) || (!annotated && !returns_a_value(a, a.field(def, Field::Body)))))
            continue;
        RecipeInfo r;
        r.module = const_cast<Module*>(&m);
        r.name = name;
        r.def = m.loc(name_node).range();
        r.annotated = annotated;
        out.push_back(std::move(r));
    }
    return out;
}

std::optional<RecipeInfo> find_main_block(const Module& m) {
    if (!m.ast) return std::nullopt;
    const Ast& a = *m.ast;
    for (std::uint32_t i = 0; i < a.count(a.root); ++i) {
        const NodeId s = a.kid(a.root, i);
        if (a.kind(s) != Kind::IfStatement) continue;
        std::string cond;
        for (char c : a.source(a.field(s, Field::Condition)))
            if (!std::isspace(static_cast<unsigned char>(c))) cond += c == '\'' ? '"' : c;
        if (cond != "__name__==\"__main__\"" && cond != "\"__main__\"==__name__") continue;
        RecipeInfo r;
        r.module = const_cast<Module*>(&m);
        r.name = "__main__";
        r.def = m.loc(s).range();
        r.main_block = a.field(s, Field::Consequence);
        return r;
    }
    return std::nullopt;
}

// Whether a class of the source root in `cls`'s hierarchy declares the dataclass field `name`.
static bool declared_in_root(const ClassObj* cls, std::string_view name, int depth = 0) {
    if (!cls || depth > 50) return false;
    for (const auto& f : cls->fields)
        if (f.name == name) return true;
    for (const auto& base : cls->bases)
        if (base.is_obj(ObjKind::Class) && declared_in_root(base.as<ClassObj>(), name, depth + 1)) return true;
    return false;
}

// A field this revision of Megatron Core lacks, held by a model object: whether it goes into the config tree, where
// the engine reports it. Only a constructor's keyword argument does: a dataclass refuses a keyword it does not
// declare, so Python raises TypeError. An assignment (`cfg.model.x = ...`, setattr) is accepted by Python and never
// read by Megatron Core: a warning. A field a class of the root declares is the provider's own, and a default or a
// value the linter derived (a Hugging Face mapping) is nobody's statement: both are left out silently.
static bool keeps_absent_field(const InstanceObj& model, const Attr& attr, const FieldSpec& spec, const Revision& rev,
                               std::vector<Diagnostic>& diagnostics) {
    if (attr.info.origin != Origin::Recipe || declared_in_root(model.cls.get(), attr.name)) return false;
    if (attr.info.keyword) return true;
    const std::string when = Schema::instance().field_history(spec);
    Diagnostic d = input_error(InputError::UnknownKey, attr.info.loc.range(),
                               fmt::format("model field \"{}\" has no effect in Megatron Core {} ({}): Python "
                                           "accepts the assignment and Megatron Core never reads it",
                                           attr.name, rev.name, when));
    d.severity = Severity::Warning;
    for (const auto& step : provenance_of(attr.info).chain) d.notes.push_back(Note{step.range, step.message});
    d.notes.push_back(Note{SourceRange{}, "pass --mcore for the revision the job runs if it is not this one"});
    diagnostics.push_back(std::move(d));
    return false;
}

// The fields of a model object that Megatron Core knows; a builder config's nested `transformer` object keeps its
// nesting (the engine flattens it).
static void export_model_fields(const InstanceObj& model, Value& m, Exporter& e, std::vector<Diagnostic>& diagnostics,
                                int depth, const Revision& rev) {
    const Schema& schema = Schema::instance();
    for (const auto& attr : model.attrs) {
        if (attr.name == "transformer" && depth == 0 && !attr.value.is_obj(ObjKind::Instance) &&
            !attr.value.is_none()) {
            // A builder config whose nested transformer config is not known: none of its fields are.
            const std::string reason =
                attr.value.is_unknown() ? attr.value.reason() : "the transformer config is not an object";
            m.set(attr.name, unknown_model(reason, provenance_of(attr.info, e.chains), rev));
            continue;
        }
        if (attr.name == "transformer" && depth == 0 && attr.value.is_obj(ObjKind::Instance)) {
            Value nested = Value::map(provenance_of(attr.info, e.chains));
            export_model_fields(*attr.value.as<InstanceObj>(), nested, e, diagnostics, depth + 1, rev);
            m.set(attr.name, std::move(nested));
            continue;
        }
        const FieldSpec* spec = schema.field(attr.name);
        if (!spec) {
            // Python accepts any attribute on a dataclass instance; a misspelt recompute field is silently
            // ignored by Megatron Core, so say so.
            if (attr.name.find("recompute") != std::string::npos && attr.info.origin != Origin::Default) {
                auto suffix = did_you_mean_suffix(attr.name, schema.field_names());
                if (!suffix.empty()) {
                    Diagnostic d = input_error(InputError::UnknownKey, attr.info.loc.range(),
                                               fmt::format("\"{}\" is not a model field{}; Python accepts the "
                                                           "assignment and Megatron Core never reads it",
                                                           attr.name, suffix));
                    d.severity = Severity::Warning;
                    for (const auto& step : provenance_of(attr.info).chain)
                        d.notes.push_back(Note{step.range, step.message});
                    diagnostics.push_back(std::move(d));
                }
            }
            continue;
        }
        // Python sets the attribute; Megatron Core's classes at this revision have no such field and never read it, so
        // it is not part of the model Megatron Core sees (a recipe of the dev branch linted for 0.20.dev); a recipe's
        // own assignment of it is a warning.
        if (!schema.field_exists_at(*spec, rev) && !keeps_absent_field(model, attr, *spec, rev, diagnostics)) continue;
        m.set(attr.name, model_field_value(spec->name, schema.field_type_at(*spec, rev), attr.value,
                                           provenance_of(attr.info, attr.value, e.chains), e));
    }
}

RecipeOutcome evaluate_recipe(Project& project, const Revision& revision, const RecipeInfo& recipe) {
    ObjectRegistry objects;  // destroyed last: frees the recipe's objects, cycles included
    ObjectRegistry::Use use(objects);
    RecipeOutcome out;
    Interp in(project, &out.diagnostics);
    // A job script's config is what its __main__ block hands to Bridge's entry points: pretrain(config,
    // forward_step_func, ...), finetune(config, ...) and distill(config) (training/pretrain.py:40,
    // training/finetune.py:23, training/distill.py:23 at 067f987).
    static const std::vector<std::string> kEntryPoints = {"pretrain", "finetune", "distill"};
    Val cfg = recipe.main_block != kNoNode ? in.run_main_block(recipe.module, recipe.main_block, kEntryPoints, "config")
                                           : in.call_recipe(in.module_global(recipe.module, recipe.name));
    out.steps = in.steps();
    Provenance anchor = Provenance::at(Origin::Recipe, recipe.def, {});
    out.root = Value::map(anchor);
    if (in.out_of_budget()) {
        // Over budget is an error: the recipe's values are not known, and a hostile file must not pass a CI gate.
        const std::string reason =
            in.budget_reason().empty()
                ? fmt::format("evaluating recipe {} took more than {} steps (--limit python-steps); its values are "
                              "not known",
                              recipe.name, project.limits().max_steps)
                : fmt::format("evaluating recipe {} stopped: {}; its values are not known", recipe.name,
                              in.budget_reason());
        const SourceRange at = in.budget_site().valid() ? in.budget_site().range() : recipe.def;
        out.diagnostics.push_back(input_error(InputError::LimitExceeded, at, reason));
        out.root.set("model", unknown_model(reason, anchor, revision));
        return out;
    }
    // A job script whose block reaches its entry point is a job, whatever it hands over: what the linter cannot follow
    // of that config is unknown, not "no recipe".
    const bool job = recipe.main_block != kNoNode && in.reached_entry_point();
    if (!cfg.is_obj(ObjKind::Instance)) {
        if (!recipe.annotated && !job) {
            out.is_recipe = false;
            return out;
        }
        const std::string reason =
            cfg.is_unknown() ? cfg.reason() : fmt::format("{} returns {}, not a config", recipe.name, type_name(cfg));
        Provenance p = anchor;
        if (cfg.at.valid()) p.range = cfg.at.range();
        out.root.set("model", unknown_model(reason, p, revision));
        return out;
    }
    auto* inst = cfg.as<InstanceObj>();
    if (!recipe.annotated && !job && !inst->find("model") &&
        inst->class_path.find("ConfigContainer") == std::string::npos) {
        out.is_recipe = false;
        return out;
    }
    if (!inst->poisoned.empty()) {
        out.root.set("model", unknown_model(inst->poisoned, anchor, revision));
        return out;
    }
    // A mixed_precision name stays a name: Bridge looks it up at run time, and so does the engine, through the tree's
    // lookup for this ConfigContainer class (PrecisionLookup), after any overlay or override has had its say.
    if (inst->cls && inst->cls->module) out.config_module = inst->cls->module->name;
    const Schema& schema = Schema::instance();
    const auto& sections = schema.config_sections();
    Exporter e;
    for (const auto& a : inst->attrs) {
        if (std::find(sections.begin(), sections.end(), a.name) == sections.end()) continue;  // not checked
        Provenance p = provenance_of(a.info, e.chains);
        if (a.name != "model") {
            Value section = e.value(a.value, p, 0);
            // The section's class, as Bridge's config dumps write it: a polymorphic section (peft: LoRA or DoRA) is
            // known by it.
            if (section.is_map() && a.value.is_obj(ObjKind::Instance) && !section.find("_target_"))
                if (const std::string& cls = a.value.as<InstanceObj>()->class_path; !cls.empty())
                    section.set("_target_", Value::string(cls, p));
            out.root.set(a.name, std::move(section));
            continue;
        }
        if (a.value.is_unknown()) {
            out.root.set("model", unknown_model(a.value.reason(), p, revision));
            continue;
        }
        if (!a.value.is_obj(ObjKind::Instance)) {
            out.root.set("model", e.value(a.value, p, 0));
            continue;
        }
        auto* model = a.value.as<InstanceObj>();
        if (!model->poisoned.empty()) {
            out.root.set("model", unknown_model(model->poisoned, p, revision));
            continue;
        }
        // A model object made for an unknown value knows only what was written to it since.
        // Unknown where a call the evaluator does not follow received it, when that is what made it so.
        Provenance unknown_at = p;
        if (model->opaque_at.valid()) unknown_at = Provenance::at(Origin::Recipe, model->opaque_at.range());
        Value m = model->opaque.empty() ? Value::map(p) : unknown_model(model->opaque, unknown_at, revision);
        export_model_fields(*model, m, e, out.diagnostics, 0, revision);
        out.root.set("model", std::move(m));
    }
    if (e.values > limit(Limit::PythonExportValues))
        out.diagnostics.push_back(input_error(
            InputError::LimitExceeded, e.over_at.valid() ? e.over_at : recipe.def,
            fmt::format("the config of recipe {} expands to more than the limit of {} values (a list or dict that "
                        "holds itself many times over?; --limit python-export-values); its values are not known",
                        recipe.name, limit(Limit::PythonExportValues))));
    if (!inst->opaque.empty()) {
        // The config came from something the linter cannot follow, or went through a call it does not follow (then
        // pointed at): what the recipe did not set is unknown.
        Provenance at = anchor;
        if (inst->opaque_at.valid()) at = Provenance::at(Origin::Recipe, inst->opaque_at.range());
        for (const char* section : {"model", "mixed_precision", "comm_overlap"})
            if (!out.root.find(section))
                out.root.set(section, std::string(section) == "model" ? unknown_model(inst->opaque, at, revision)
                                                                      : Value::unknown(inst->opaque, at));
    }
    return out;
}

namespace {

class TreePrecisionLookup final : public PrecisionLookup {
public:
    TreePrecisionLookup(Project& project, std::string config_module)
        : project_(project), config_module_(std::move(config_module)) {}

    Answer find(const std::string& name) const override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = answers_.find(name); it != answers_.end()) return it->second;
        Answer a = look_up(name);
        answers_.emplace(name, a);
        return a;
    }

private:
    Answer look_up(const std::string& name) const {
        Answer a;
        Module* config_module = project_.index().find(config_module_);
        if (!config_module) return a;
        ObjectRegistry objects;  // destroyed last: frees what the call made
        ObjectRegistry::Use use(objects);
        std::vector<Diagnostic> ignored;
        Interp in(project_, &ignored);
        PrecisionResolution r = resolve_precision_name(in, config_module, name);
        using Kind = PrecisionResolution::Kind;
        a.applies = r.kind != Kind::NoLookup;
        if (r.kind == Kind::Config || r.kind == Kind::Unknown) a.config = export_value(r.config, SetInfo{});
        if (r.kind == Kind::NotRegistered) {
            a.names = std::move(r.names);
            a.notes.push_back(Note{r.resolver, fmt::format("{}, which has no \"{}\"", r.resolver_note, name)});
        }
        return a;
    }

    Project& project_;
    std::string config_module_;
    mutable std::mutex mutex_;
    mutable std::map<std::string, Answer> answers_;
};

}  // namespace

std::shared_ptr<const PrecisionLookup> make_precision_lookup(Project& project, std::string config_module) {
    return std::make_shared<TreePrecisionLookup>(project, std::move(config_module));
}

}  // namespace mbl::py
