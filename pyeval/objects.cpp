// Classes, instances, attributes (reading and setting), and calls to names from outside the source root (what a
// library outside the root does at run time is the host's: host.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_set>

#include "pyeval/builtins.hpp"
#include "pyeval/interpreter.hpp"

namespace mbl::py {

namespace {

// Where the keyword argument `k` of a constructor call stored its value.
SetInfo keyword_info(const CallArgs& args, std::size_t k, Loc site, const Chain& chain) {
    SetInfo info{k < args.kw_locs.size() ? args.kw_locs[k] : site, chain};
    info.keyword = true;
    return info;
}

}  // namespace

std::vector<std::shared_ptr<ClassObj>> Interp::mro(const std::shared_ptr<ClassObj>& cls) const {
    std::vector<std::shared_ptr<ClassObj>> out;
    // Depth-first, left to right, each class once: close enough to C3 for dataclass hierarchies.
    std::function<void(const std::shared_ptr<ClassObj>&, int)> visit = [&](const std::shared_ptr<ClassObj>& c,
                                                                           int depth) {
        if (depth > 50 || std::find(out.begin(), out.end(), c) != out.end()) return;
        out.push_back(c);
        for (const auto& b : c->bases)
            if (b.is_obj(ObjKind::Class)) visit(std::static_pointer_cast<ClassObj>(b.o), depth + 1);
    };
    visit(cls, 0);
    return out;
}

bool Interp::takes_defaults(const std::shared_ptr<ClassObj>& cls, const std::string& path) const {
    const Host& host = project_.host();
    if (!path.empty() && host.defaults_class(last_component(path))) return true;
    if (!cls) return false;
    for (const auto& c : mro(cls)) {
        if (host.defaults_class(c->name)) return true;
        for (const auto& b : c->bases)
            if (b.is_obj(ObjKind::External) && host.defaults_class(last_component(b.as<ExternalObj>()->path)))
                return true;
    }
    return false;
}

Val Interp::class_attr(Frame& f, const std::shared_ptr<ClassObj>& cls, const std::string& name, const Val* self, Loc at,
                       bool& found) {
    return lookup_in(f, mro(cls), name, self, cls, at, found);
}

Val Interp::lookup_in(Frame& f, const std::vector<std::shared_ptr<ClassObj>>& classes, const std::string& name,
                      const Val* self, const std::shared_ptr<ClassObj>& owner, Loc at, bool& found) {
    found = false;
    for (const auto& c : classes) {
        const Val* v = c->own_attr(name);
        if (!v) continue;
        found = true;
        if (v->is_obj(ObjKind::Function)) {
            auto* fn = v->as<FunctionObj>();
            if (fn->staticmethod) return *v;
            auto m = std::make_shared<MethodObj>();
            m->func = *v;
            if (fn->classmethod) m->self = Val::obj(owner);
            else if (self) m->self = *self;
            else return *v;
            return Val::obj(m, at);
        }
        if (v->is_obj(ObjKind::Property)) {
            if (!self) return *v;
            CallArgs args;
            args.pos.push_back(*self);
            return call(f, v->as<PropertyObj>()->getter, std::move(args), at);
        }
        if (c->is_enum) return Val::obj(std::make_shared<ExternalObj>(c->qualname + "." + name), at);
        return thaw(*v);
    }
    return Val();
}

std::optional<std::vector<std::string>> Interp::dataclass_field_names(const std::shared_ptr<ClassObj>& cls) const {
    std::vector<std::string> names;
    std::unordered_set<std::string> seen;
    // Built on classes the host describes, whose fields it lists.
    const std::vector<ChainClass> chain = field_chain(cls);
    if (std::any_of(chain.begin(), chain.end(), [](const ChainClass& c) { return c.outside != nullptr; })) {
        for (const ChainField& f : chain_fields(chain)) names.push_back(f.name);
        return names;
    }
    bool outside_base = false;
    const auto order = mro(cls);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        for (const auto& b : (*it)->bases) outside_base |= !b.is_obj(ObjKind::Class);
        if (!(*it)->dataclass) continue;
        for (const auto& df : (*it)->fields)
            if (seen.insert(df.name).second) names.push_back(df.name);
    }
    if (outside_base) {
        // An outside base whose instances take the host's defaults adds the fields those defaults name.
        if (!takes_defaults(cls, {})) return std::nullopt;
        for (const auto& n : project_.host().default_names())
            if (!seen.count(n)) names.push_back(n);  // the host's names are distinct: `seen` holds the others
    }
    return names;
}

std::optional<bool> Interp::is_subclass(const Val& cls, const Val& base) const {
    if (!cls.is_obj(ObjKind::Class)) {
        if (cls.is_obj(ObjKind::External) && base.is_obj(ObjKind::External))
            return cls.as<ExternalObj>()->path == base.as<ExternalObj>()->path ? std::optional<bool>(true)
                                                                               : std::nullopt;
        return cls.is_obj(ObjKind::External) && base.is_obj(ObjKind::Class) ? std::optional<bool>(false) : std::nullopt;
    }
    const auto order = mro(std::static_pointer_cast<ClassObj>(cls.o));
    if (base.is_obj(ObjKind::Class))  // an outside class never derives from a class of the root
        return std::find(order.begin(), order.end(), std::static_pointer_cast<ClassObj>(base.o)) != order.end();
    if (!base.is_obj(ObjKind::External)) return std::nullopt;
    bool outside_base = false;
    for (const auto& c : order)
        for (const auto& b : c->bases) {
            if (b.is_obj(ObjKind::External) && b.as<ExternalObj>()->path == base.as<ExternalObj>()->path) return true;
            outside_base |= !b.is_obj(ObjKind::Class);
        }
    return outside_base ? std::nullopt : std::optional<bool>(false);
}

Val Interp::get_attr(Frame& f, const Val& obj, const std::string& name, Loc at) {
    if (obj.is_unknown()) {
        Val u = Val::unknown(obj.reason(), obj.at.valid() ? obj.at : at);
        u.b = obj.b;
        u.o = obj.o;  // an attribute of what may be a known object may be part of it
        return u;
    }
    if (!obj.is_obj()) {
        if (obj.is_none()) return Val::unknown(fmt::format("reads .{} of None", name), at);
        return builtin_method(obj, name, at);
    }
    switch (obj.o->kind) {
        case ObjKind::Instance: {
            auto* inst = obj.as<InstanceObj>();
            if (!inst->poisoned.empty()) return Val::unknown(inst->poisoned, at);
            if (const Attr* a = inst->find(name)) return a->value;
            if (inst->cls) {
                bool found = false;
                Val v = class_attr(f, inst->cls, name, &obj, at, found);
                if (found) return v;
            }
            if (!inst->opaque.empty()) return Val::unknown(inst->opaque, at);
            if (inst->closed) return Val::unknown(fmt::format("{} has no attribute \"{}\"", type_name(obj), name), at);
            if (auto v = host().attr(*this, obj, name, at)) return *v;
            if (inst->takes_defaults)
                if (auto d = host().attr_default(name)) {
                    Val v = *d;
                    v.at = at;
                    return v;
                }
            return Val::unknown(fmt::format("{} has no known attribute \"{}\"", type_name(obj), name), at);
        }
        case ObjKind::Class: {
            auto cls = std::static_pointer_cast<ClassObj>(obj.o);
            if (auto v = host().attr(*this, obj, name, at)) return *v;
            bool found = false;
            Val v = class_attr(f, cls, name, nullptr, at, found);
            if (found) return v;
            if (name == "__name__") return Val::str(cls->name, at);
            if (name == "__dataclass_fields__") {
                auto names = dataclass_field_names(cls);
                if (!names)
                    return Val::unknown(fmt::format("the fields of {}, which an outside base class adds to", cls->name),
                                        at);
                auto d = std::make_shared<DictObj>();
                for (const auto& n : *names) d->items.emplace_back(Val::str(n, at), Val::none(at));
                return Val::obj(d, at);
            }
            return Val::unknown(fmt::format("class {} has no known attribute \"{}\"", cls->name, name), at);
        }
        case ObjKind::Module: return module_attr(f, obj.as<ModuleObj>()->module, name, at);
        case ObjKind::Super: {
            auto* sup = obj.as<SuperObj>();
            std::shared_ptr<ClassObj> cls = sup->self.is_obj(ObjKind::Class)
                                                ? std::static_pointer_cast<ClassObj>(sup->self.o)
                                            : sup->self.is_obj(ObjKind::Instance) ? sup->self.as<InstanceObj>()->cls
                                                                                  : nullptr;
            if (!cls) return Val::unknown(fmt::format("super().{} of an object of an outside class", name), at);
            auto order = mro(cls);
            auto start = std::find(order.begin(), order.end(), sup->after);
            if (start == order.end()) return Val::unknown(fmt::format("super().{} outside its class", name), at);
            std::vector<std::shared_ptr<ClassObj>> rest(start + 1, order.end());
            bool found = false;
            const Val* self = sup->self.is_obj(ObjKind::Instance) ? &sup->self : nullptr;
            Val v = lookup_in(f, rest, name, self, cls, at, found);
            if (found) return v;
            return Val::unknown(fmt::format("super().{}, which an outside base class may define", name), at);
        }
        case ObjKind::External: {
            const std::string& path = obj.as<ExternalObj>()->path;
            if (path == "typing" && name == "TYPE_CHECKING") return Val::boolean(false, at);
            if (auto v = host().attr(*this, obj, name, at)) return *v;
            return Val::obj(std::make_shared<ExternalObj>(path + "." + name), at);
        }
        case ObjKind::Host: {
            if (auto v = host().attr(*this, obj, name, at)) return *v;
            return Val::unknown(fmt::format("attribute {} of an object the host made is not modelled", name), at);
        }
        case ObjKind::Function:
            if (name == "__name__") return Val::str(obj.as<FunctionObj>()->name, at);
            return Val::unknown(fmt::format("attribute {} of a function", name), at);
        default: return builtin_method(obj, name, at);
    }
}

bool Interp::set_attr(Frame&, const Val& obj, const std::string& name, Val value, const SetInfo& info) {
    if (!obj.is_obj(ObjKind::Instance)) return false;
    auto* inst = obj.as<InstanceObj>();
    note_attr_write(obj, name);
    host().attr_stored(name, value);
    if (Attr* a = inst->find(name)) {
        a->value = std::move(value);
        a->info = info;
    } else {
        inst->attrs.push_back(Attr{name, std::move(value), info});
    }
    return true;
}

Val Interp::instantiate(Frame& f, const std::shared_ptr<ClassObj>& cls, CallArgs args, Loc site) {
    if (cls->is_enum) return Val::unknown(fmt::format("an enum value of {} made at run time", cls->name), site);
    if (auto v = host().intercept_call(*this, f, Val::obj(cls, site), args, site)) return *v;
    auto inst = std::make_shared<InstanceObj>();
    inst->cls = cls;
    inst->class_path = cls->qualname;
    inst->takes_defaults = takes_defaults(cls, {});
    inst->created = SetInfo{site, f.chain, Origin::Recipe, nullptr};
    Val self = Val::obj(inst, site);
    const auto classes = mro(cls);
    const std::vector<ChainClass> chain = field_chain(cls);
    bool dataclass = false, external_base = false;
    for (const auto& c : classes) {
        dataclass |= c->dataclass;
        for (const auto& b : c->bases) external_base |= !b.is_obj(ObjKind::Class);
    }
    // A class built on a described class is a dataclass through it.
    for (const auto& c : chain) dataclass |= c.outside != nullptr;
    // An explicit __init__ runs (a dataclass's generated one is modelled below).
    for (const auto& c : classes) {
        const Val* init = c->own_attr("__init__");
        if (!init || !init->is_obj(ObjKind::Function)) continue;
        if (dataclass && c->dataclass) break;
        call_function(f, std::static_pointer_cast<FunctionObj>(init->o), std::move(args), site, &self);
        return self;
    }
    if (!dataclass) {
        for (size_t i = 0; i < args.kw.size(); ++i)
            inst->attrs.push_back(Attr{args.kw[i].first, args.kw[i].second, keyword_info(args, i, site, f.chain)});
        if (!args.unknown.empty()) inst->poisoned = "made with " + args.unknown;
        return self;
    }
    // Dataclass fields, base classes first (described classes among them); a redefinition keeps its base's position.
    const std::vector<ChainField> fields = chain_fields(chain);
    std::vector<bool> kw_used(args.kw.size(), false);
    size_t next_pos = 0;
    for (const ChainField& cf : fields) {
        const bool init = cf.tree ? cf.tree->init : cf.outside->init;
        std::optional<Val> v;
        SetInfo info{site, f.chain, Origin::Recipe, nullptr};
        if (init && next_pos < args.pos.size()) v = args.pos[next_pos++];
        for (size_t k = 0; init && !v && k < args.kw.size(); ++k)
            if (!kw_used[k] && args.kw[k].first == cf.name) {
                v = args.kw[k].second;
                kw_used[k] = true;
                info = keyword_info(args, k, site, f.chain);
            }
        if (!v && !args.unknown.empty())
            v = Val::unknown(fmt::format("{} may be set by {}", cf.name, args.unknown), site);
        if (!v && cf.outside) {
            // The host's default, when the object holds it (the host may supply it through attr_default instead).
            if (auto a = host().described_default(*cf.outside_owner, *cf.outside, inst->created))
                inst->attrs.push_back(std::move(*a));
            continue;
        }
        if (!v && (cf.tree->default_value || cf.tree->factory)) {
            info = SetInfo{cf.tree->loc, f.chain, Origin::Default,
                           std::make_shared<const std::string>(fmt::format("default of {}", cf.tree_owner->name))};
            if (cf.tree->default_value) {
                v = thaw(*cf.tree->default_value);
            } else {
                v = call(f, *cf.tree->factory, {}, cf.tree->loc);
            }
        }
        if (!v) {
            if (external_base) continue;  // may be filled by the outside base class; nothing to record
            v = Val::unknown(fmt::format("field \"{}\" of {} is not given", cf.name, cls->name), site);
        }
        inst->attrs.push_back(Attr{cf.name, std::move(*v), info});
    }
    for (size_t k = 0; k < args.kw.size(); ++k)
        if (!kw_used[k] && external_base)
            inst->attrs.push_back(Attr{args.kw[k].first, args.kw[k].second, keyword_info(args, k, site, f.chain)});
    return self;
}

Val Interp::external_call(Frame& f, const Val& callee, CallArgs args, Loc site) {
    const std::string& path = callee.as<ExternalObj>()->path;
    const std::string name = last_component(path);
    if (auto v = host().intercept_call(*this, f, callee, args, site)) return *v;
    if ((path == "dataclasses.fields" || path == "dataclasses.is_dataclass") && !args.pos.empty()) {
        const Val& x = args.pos[0];
        std::shared_ptr<ClassObj> cls = x.is_obj(ObjKind::Class)      ? std::static_pointer_cast<ClassObj>(x.o)
                                        : x.is_obj(ObjKind::Instance) ? x.as<InstanceObj>()->cls
                                                                      : nullptr;
        if (!cls) return Val::unknown(fmt::format("{}() of {}", path, type_name(x)), site);
        bool dataclass = false;
        for (const auto& c : mro(cls)) dataclass |= c->dataclass;
        auto names = dataclass_field_names(cls);
        if (path == "dataclasses.is_dataclass") {
            if (dataclass) return Val::boolean(true, site);
            return names ? Val::boolean(false, site)
                         : Val::unknown(fmt::format("whether {} is a dataclass", cls->name), site);
        }
        if (!names)
            return Val::unknown(fmt::format("the fields of {}, which an outside base class adds to", cls->name), site);
        std::vector<Val> items;
        for (const auto& n : *names) {
            bool init = true;
            for (const auto& c : mro(cls))
                for (const auto& df : c->fields)
                    if (df.name == n) init = df.init;
            auto field_obj = std::make_shared<InstanceObj>();
            field_obj->class_path = "dataclasses.Field";
            field_obj->closed = true;
            field_obj->attrs.push_back(Attr{"name", Val::str(n, site), {}});
            field_obj->attrs.push_back(Attr{"init", Val::boolean(init, site), {}});
            items.push_back(Val::obj(field_obj, site));
        }
        return make_list(std::move(items), ObjKind::Tuple, site);
    }
    if (path == "dataclasses.field" || (name == "field" && path.find("dataclass") != std::string::npos)) {
        auto spec = std::make_shared<FieldSpecObj>();
        for (const auto& [k, v] : args.kw) {
            if (k == "default") spec->default_value = v;
            else if (k == "default_factory") spec->factory = v;
            else if (k == "init") spec->init = truthy(v).value_or(true);
        }
        return Val::obj(spec, site);
    }
    if ((path == "dataclasses.replace" || path == "copy.deepcopy" || path == "copy.copy") && !args.pos.empty()) {
        // A copy: a fresh object the caller may change without touching the original.
        std::unordered_map<const Object*, ObjPtr> saved;
        saved.swap(thawed_);
        Val copy = thaw(args.pos[0]);
        saved.swap(thawed_);
        if (copy.is_obj()) copy.o->epoch = next_epoch();
        if (path == "dataclasses.replace") {
            SetInfo info = store_info(f);
            for (size_t i = 0; i < args.kw.size(); ++i) {
                info.loc = i < args.kw_locs.size() ? args.kw_locs[i] : site;
                set_attr(f, copy, args.kw[i].first, args.kw[i].second, info);
            }
        }
        return copy;
    }
    if (path == "functools.partial" && !args.pos.empty()) {
        auto p = std::make_shared<PartialObj>();
        p->func = args.pos[0];
        p->args.assign(args.pos.begin() + 1, args.pos.end());
        p->kwargs = args.kw;
        return Val::obj(p, site);
    }
    if (path == "typing.cast" && args.pos.size() == 2) return args.pos[1];
    if (path == "importlib.import_module" && !args.pos.empty() && args.pos[0].is_str()) {
        // A module named at run time is found where an import statement of this module would find it.
        std::string dotted = args.pos[0].s;
        if (!dotted.empty() && dotted[0] == '.') {
            const Val* package = args.pos.size() > 1 ? &args.pos[1] : nullptr;
            for (const auto& [k, v] : args.kw)
                if (k == "package") package = &v;
            if (!package || !package->is_str())
                return Val::unknown(
                    fmt::format("the module \"{}\" relative to a package known only at run time", dotted), site);
            const std::size_t dots = std::min(dotted.size(), dotted.find_first_not_of('.'));
            std::string base = package->s;
            for (std::size_t i = 1; i < dots; ++i) base = base.substr(0, std::min(base.size(), base.rfind('.')));
            dotted = dotted.size() > dots ? base + "." + dotted.substr(dots) : base;
        }
        return import_module(f, dotted, site);
    }
    if (path == "os.path.join") {
        std::string out;
        for (const auto& p : args.pos) {
            if (!p.is_str()) return Val::unknown("a path computed at run time", site);
            if (!p.s.empty() && p.s[0] == '/') out = p.s;
            else out += (out.empty() || out.back() == '/' ? "" : "/") + p.s;
        }
        return Val::str(out, site);
    }
    if (path == "logging.getLogger" || path.ends_with(".info") || path.ends_with(".warning") ||
        path.ends_with(".debug") || path == "warnings.warn")
        return Val::none(site);
    // An outside class: an object holding the keyword arguments (and the defaults of a class the host describes).
    if (!name.empty() && std::isupper(static_cast<unsigned char>(name[0])) && name.find('_') != 0 &&
        !(name.size() > 1 && std::all_of(name.begin(), name.end(), [](char c) {
              return std::isupper(static_cast<unsigned char>(c)) || c == '_' ||
                     std::isdigit(static_cast<unsigned char>(c));
          }))) {
        auto inst = std::make_shared<InstanceObj>();
        inst->class_path = path;
        inst->takes_defaults = takes_defaults(nullptr, path);
        inst->created = SetInfo{site, f.chain, Origin::Recipe, nullptr};
        for (size_t i = 0; i < args.kw.size(); ++i)
            inst->attrs.push_back(Attr{args.kw[i].first, args.kw[i].second, keyword_info(args, i, site, f.chain)});
        if (!args.unknown.empty()) inst->poisoned = "made with " + args.unknown;
        if (const ConfigClass* c = host().described_class(path)) host().add_described_defaults(*inst, *c);
        return Val::obj(inst, site);
    }
    havoc_arguments(f, args, fmt::format("{}{}()", kUnfollowedCall, path));
    return Val::unknown(fmt::format("the result of {}(), which is outside the source root", path), site);
}

void Interp::havoc_arguments(Frame& f, const CallArgs& args, const std::string& reason) {
    std::unordered_set<const Object*> seen;
    for (const auto& v : args.pos) havoc(f, v, reason, seen);
    for (const auto& [_, v] : args.kw) havoc(f, v, reason, seen);
}

}  // namespace mbl::py
