// Python builtins and the methods of builtin values, as far as recipes use them.
#include "parser/python/builtins.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <cmath>
#include <unordered_map>

#include "parser/python/interpreter.hpp"

namespace mbl::py {

// ---------------------------------------------------------------------------------------------------------------
// The builtin namespace

const Val* builtin_global(const std::string& name) {
    static const std::unordered_map<std::string, Val> table = [] {
        std::unordered_map<std::string, Val> t;
        auto add = [&](const char* n, Builtin id) { t.emplace(n, Val::obj(std::make_shared<BuiltinObj>(id, n))); };
        add("len", Builtin::Len); add("range", Builtin::Range); add("list", Builtin::List);
        add("tuple", Builtin::Tuple); add("dict", Builtin::Dict); add("set", Builtin::Set);
        add("frozenset", Builtin::Frozenset); add("sorted", Builtin::Sorted); add("reversed", Builtin::Reversed);
        add("min", Builtin::Min); add("max", Builtin::Max); add("sum", Builtin::Sum); add("abs", Builtin::Abs);
        add("int", Builtin::Int); add("float", Builtin::Float); add("str", Builtin::Str); add("bool", Builtin::Bool);
        add("isinstance", Builtin::Isinstance); add("issubclass", Builtin::Issubclass);
        add("getattr", Builtin::Getattr); add("setattr", Builtin::Setattr); add("hasattr", Builtin::Hasattr);
        add("enumerate", Builtin::Enumerate); add("zip", Builtin::Zip); add("any", Builtin::Any);
        add("all", Builtin::All); add("round", Builtin::Round); add("divmod", Builtin::Divmod);
        add("print", Builtin::Print); add("repr", Builtin::Repr); add("callable", Builtin::Callable);
        add("super", Builtin::Super); add("type", Builtin::Type); add("iter", Builtin::Iter); add("next", Builtin::Next);
        add("map", Builtin::Map); add("filter", Builtin::Filter); add("id", Builtin::Id); add("hash", Builtin::Hash);
        add("vars", Builtin::Vars); add("open", Builtin::Open); add("staticmethod", Builtin::Staticmethod);
        add("classmethod", Builtin::Classmethod); add("property", Builtin::Property); add("object", Builtin::Object);
        for (const char* e : {"Exception", "BaseException", "ValueError", "TypeError", "KeyError", "IndexError",
                              "RuntimeError", "NotImplementedError", "AssertionError", "ImportError",
                              "ModuleNotFoundError", "AttributeError", "OSError", "FileNotFoundError",
                              "StopIteration", "Warning", "UserWarning", "DeprecationWarning", "FutureWarning"})
            add(e, Builtin::Exception);
        t.emplace("NotImplemented", Val::obj(std::make_shared<ExternalObj>("NotImplemented")));
        t.emplace("__file__", Val::unknown("the file path at run time"));
        return t;
    }();
    auto it = table.find(name);
    return it == table.end() ? nullptr : &it->second;
}

Val Interp::builtin_method(const Val& self, const std::string& name, Loc at) {
    static const std::unordered_map<std::string, Builtin> str_methods = {
        {"lower", Builtin::StrLower}, {"upper", Builtin::StrUpper}, {"strip", Builtin::StrStrip},
        {"lstrip", Builtin::StrLstrip}, {"rstrip", Builtin::StrRstrip}, {"split", Builtin::StrSplit},
        {"join", Builtin::StrJoin}, {"replace", Builtin::StrReplace}, {"startswith", Builtin::StrStartswith},
        {"endswith", Builtin::StrEndswith}, {"format", Builtin::StrFormat}, {"title", Builtin::StrTitle},
        {"capitalize", Builtin::StrCapitalize}};
    static const std::unordered_map<std::string, Builtin> list_methods = {
        {"append", Builtin::ListAppend}, {"extend", Builtin::ListExtend}, {"insert", Builtin::ListInsert},
        {"pop", Builtin::ListPop}, {"remove", Builtin::ListRemove}, {"index", Builtin::ListIndex},
        {"count", Builtin::ListCount}, {"copy", Builtin::ListCopy}, {"clear", Builtin::ListClear},
        {"sort", Builtin::ListSort}, {"reverse", Builtin::ListReverse}};
    static const std::unordered_map<std::string, Builtin> dict_methods = {
        {"get", Builtin::DictGet}, {"items", Builtin::DictItems}, {"keys", Builtin::DictKeys},
        {"values", Builtin::DictValues}, {"update", Builtin::DictUpdate}, {"pop", Builtin::DictPop},
        {"setdefault", Builtin::DictSetdefault}, {"copy", Builtin::DictCopy}, {"clear", Builtin::DictClear}};
    static const std::unordered_map<std::string, Builtin> set_methods = {
        {"add", Builtin::SetAdd}, {"update", Builtin::SetUpdate}, {"discard", Builtin::SetDiscard},
        {"remove", Builtin::SetDiscard}, {"union", Builtin::SetUnion}, {"copy", Builtin::ListCopy}};
    const std::unordered_map<std::string, Builtin>* table = nullptr;
    if (self.is_str()) table = &str_methods;
    else if (self.is_obj(ObjKind::List)) table = &list_methods;
    else if (self.is_obj(ObjKind::Tuple)) {
        if (name != "index" && name != "count") table = nullptr;
        else table = &list_methods;
    } else if (self.is_obj(ObjKind::Dict)) table = &dict_methods;
    else if (self.is_obj(ObjKind::Set)) table = &set_methods;
    if (table)
        if (auto it = table->find(name); it != table->end()) {
            auto b = std::make_shared<BuiltinObj>(it->second, name);
            b->self = self;
            return Val::obj(b, at);
        }
    if (self.is_str() || self.is_number() || self.is_bool())
        return Val::unknown(fmt::format("method .{}() of {} is not modelled", name, type_name(self)), at);
    return Val::unknown(fmt::format("attribute .{} of {} is not modelled", name, type_name(self)), at);
}

namespace {

const Val* arg(const CallArgs& args, size_t i, const char* kw = nullptr) {
    if (i < args.pos.size()) return &args.pos[i];
    if (kw)
        for (const auto& [k, v] : args.kw)
            if (k == kw) return &v;
    return nullptr;
}

bool sortable_less(const Val& a, const Val& b, bool& ok) {
    if (a.is_number() && b.is_number()) return a.as_number() < b.as_number();
    if (a.is_str() && b.is_str()) return a.s < b.s;
    ok = false;
    return false;
}

std::optional<bool> is_instance(Interp& in, const Val& x, const Val& t) {
    if (t.is_obj(ObjKind::Tuple)) {
        bool unknown = false;
        for (const auto& item : t.as<SeqObj>()->items) {
            auto r = is_instance(in, x, item);
            if (!r) unknown = true;
            else if (*r) return true;
        }
        return unknown ? std::nullopt : std::optional<bool>(false);
    }
    if (x.is_unknown()) return std::nullopt;
    if (t.is_obj(ObjKind::Builtin)) {
        Builtin id = t.as<BuiltinObj>()->id;
        switch (id) {
            case Builtin::Str: return x.is_str();
            case Builtin::Int: return x.is_int();
            case Builtin::Float: return x.is_float();
            case Builtin::Bool: return x.is_bool();
            case Builtin::List: return x.is_obj(ObjKind::List);
            case Builtin::Tuple: return x.is_obj(ObjKind::Tuple);
            case Builtin::Dict: return x.is_obj(ObjKind::Dict);
            case Builtin::Set: return x.is_obj(ObjKind::Set);
            case Builtin::Object: return true;
            default: return std::nullopt;
        }
    }
    if (t.is_obj(ObjKind::Class)) {
        if (!x.is_obj(ObjKind::Instance)) return x.is_obj() && !x.is_obj(ObjKind::External) ? std::optional<bool>(false)
                                                 : x.is_obj() ? std::nullopt
                                                              : std::optional<bool>(false);
        auto* inst = x.as<InstanceObj>();
        if (!inst->cls) return std::nullopt;
        auto* target = t.as<ClassObj>();
        std::vector<const ClassObj*> seen;
        std::function<bool(const ClassObj*)> walk = [&](const ClassObj* c) {
            if (c == target) return true;
            if (std::find(seen.begin(), seen.end(), c) != seen.end() || seen.size() > 64) return false;
            seen.push_back(c);
            for (const auto& b : c->bases)
                if (b.is_obj(ObjKind::Class) && walk(b.as<ClassObj>())) return true;
            return false;
        };
        return walk(inst->cls.get());
    }
    if (t.is_obj(ObjKind::External)) {
        const std::string& path = t.as<ExternalObj>()->path;
        if (!x.is_obj(ObjKind::Instance)) {
            if (x.is_obj(ObjKind::External)) return std::nullopt;
            return false;  // a builtin value is not an instance of an outside config class
        }
        auto* inst = x.as<InstanceObj>();
        auto short_name = [](const std::string& p) { return p.substr(p.rfind('.') + 1); };
        if (short_name(inst->class_path) == short_name(path)) return true;
        return std::nullopt;
    }
    (void)in;
    return std::nullopt;
}

}  // namespace

Val Interp::call_builtin(Frame& f, BuiltinObj& b, CallArgs& args, Loc site) {
    auto unknown = [&](std::string why) { return Val::unknown(std::move(why), site); };
    const Val* a0 = arg(args, 0);
    const Val* a1 = arg(args, 1);
    std::string reason;
    switch (b.id) {
        case Builtin::Len: {
            if (!a0) return unknown("len() without an argument");
            if (a0->is_str()) return Val::integer(static_cast<std::int64_t>(a0->s.size()), site);
            if (a0->is_obj(ObjKind::Dict)) {
                auto* d = a0->as<DictObj>();
                return d->unknown.empty() ? Val::integer(static_cast<std::int64_t>(d->items.size()), site) : unknown(d->unknown);
            }
            auto items = iterate(*a0, reason);
            return items ? Val::integer(static_cast<std::int64_t>(items->size()), site) : unknown(reason);
        }
        case Builtin::Range: {
            std::int64_t start = 0, stop = 0, step = 1;
            std::vector<const Val*> ps;
            for (const auto& p : args.pos) ps.push_back(&p);
            for (const Val* p : ps)
                if (!p->is_int()) return unknown("range() of an unknown bound");
            if (ps.size() == 1) stop = ps[0]->as_int();
            else if (ps.size() >= 2) {
                start = ps[0]->as_int();
                stop = ps[1]->as_int();
                if (ps.size() == 3) step = ps[2]->as_int();
            }
            if (step == 0) return unknown("range() step of zero");
            std::vector<Val> items;
            for (std::int64_t i = start; step > 0 ? i < stop : i > stop;) {
                if (limit_items(items.size())) return unknown("a range too long for the linter");
                items.push_back(Val::integer(i, site));
                if (__builtin_add_overflow(i, step, &i)) break;
            }
            return make_list(std::move(items), ObjKind::List, site);
        }
        case Builtin::List:
        case Builtin::Tuple:
        case Builtin::Set:
        case Builtin::Frozenset: {
            ObjKind kind = b.id == Builtin::List ? ObjKind::List : b.id == Builtin::Tuple ? ObjKind::Tuple : ObjKind::Set;
            if (!a0) return make_list({}, kind, site);
            auto items = iterate(*a0, reason);
            if (!items) return unknown(reason);
            if (kind == ObjKind::Set) {
                std::vector<Val> unique;
                for (auto& item : *items) {
                    bool dup = false;
                    for (const auto& u : unique) dup |= py_equal(u, item) == true;
                    if (!dup) unique.push_back(item);
                }
                return make_list(std::move(unique), kind, site);
            }
            return make_list(std::move(*items), kind, site);
        }
        case Builtin::Dict: {
            auto d = std::make_shared<DictObj>();
            if (a0) {
                if (a0->is_obj(ObjKind::Dict)) {
                    d->items = a0->as<DictObj>()->items;
                    d->unknown = a0->as<DictObj>()->unknown;
                } else {
                    auto items = iterate(*a0, reason);
                    if (!items) return unknown(reason);
                    for (const auto& pair : *items) {
                        std::string r2;
                        auto kv = iterate(pair, r2);
                        if (!kv || kv->size() != 2) return unknown("dict() of values that are not pairs");
                        d->items.emplace_back((*kv)[0], (*kv)[1]);
                    }
                }
            }
            for (const auto& [k, v] : args.kw) {
                bool replaced = false;
                for (auto& kv : d->items)
                    if (kv.first.is_str() && kv.first.s == k) {
                        kv.second = v;
                        replaced = true;
                    }
                if (!replaced) d->items.emplace_back(Val::str(k, site), v);
            }
            if (!args.unknown.empty()) d->unknown = args.unknown;
            return Val::obj(d, site);
        }
        case Builtin::Sorted:
        case Builtin::Reversed: {
            if (!a0) return unknown("missing argument");
            auto items = iterate(*a0, reason);
            if (!items) return unknown(reason);
            if (b.id == Builtin::Reversed) {
                std::reverse(items->begin(), items->end());
                return make_list(std::move(*items), ObjKind::List, site);
            }
            for (const auto& [k, v] : args.kw)
                if (k == "key") return unknown("sorted() with a key function");
            bool ok = true;
            std::stable_sort(items->begin(), items->end(), [&](const Val& x, const Val& y) { return sortable_less(x, y, ok); });
            if (!ok) return unknown("sorted() of values the linter cannot order");
            for (const auto& [k, v] : args.kw)
                if (k == "reverse" && truthy(v) == true) std::reverse(items->begin(), items->end());
            return make_list(std::move(*items), ObjKind::List, site);
        }
        case Builtin::Min:
        case Builtin::Max:
        case Builtin::Sum: {
            std::vector<Val> items;
            if (args.pos.size() == 1 || b.id == Builtin::Sum) {
                if (!a0) return unknown("missing argument");
                auto it = iterate(*a0, reason);
                if (!it) return unknown(reason);
                items = std::move(*it);
            } else {
                items = args.pos;
            }
            if (b.id == Builtin::Sum) {
                Val total = a1 ? *a1 : Val::integer(0, site);
                for (const auto& v : items) total = binary_op("+", total, v, site);
                return total;
            }
            if (items.empty()) return unknown("min()/max() of an empty sequence");
            Val best = items[0];
            for (const auto& v : items) {
                if (v.is_unknown()) return unknown(v.reason());
                bool ok = true;
                bool less = sortable_less(v, best, ok);
                if (!ok) return unknown("min()/max() of values the linter cannot order");
                if (b.id == Builtin::Min ? less : sortable_less(best, v, ok)) best = v;
            }
            return best;
        }
        case Builtin::Abs:
            if (a0 && a0->is_int() && a0->as_int() != INT64_MIN) return Val::integer(std::llabs(a0->as_int()), site);
            if (a0 && a0->is_float()) return Val::floating(std::fabs(a0->d), site);
            return unknown("abs() of an unknown value");
        case Builtin::Round:
            if (a0 && a0->is_number() && !a1 && std::fabs(a0->as_number()) < 9e18)
                return Val::integer(static_cast<std::int64_t>(std::nearbyint(a0->as_number())), site);
            return unknown("round() with digits");
        case Builtin::Divmod:
            if (a0 && a1 && a0->is_int() && a1->is_int() && a1->as_int() != 0 &&
                !(a0->as_int() == INT64_MIN && a1->as_int() == -1))
                return make_list({binary_op("//", *a0, *a1, site), binary_op("%", *a0, *a1, site)}, ObjKind::Tuple, site);
            return unknown("divmod() of unknown values");
        case Builtin::Int:
            if (!a0) return Val::integer(0, site);
            if (a0->is_int()) return Val::integer(a0->as_int(), site);
            if (a0->is_float() && std::isfinite(a0->d) && std::fabs(a0->d) < 9e18)
                return Val::integer(static_cast<std::int64_t>(a0->d), site);
            if (a0->is_str() && !a1) {
                char* end = nullptr;
                std::string s = a0->s;
                long long v = std::strtoll(s.c_str(), &end, 10);
                if (end && *end == '\0' && !s.empty()) return Val::integer(v, site);
            }
            return unknown("int() of a value the linter cannot convert");
        case Builtin::Float:
            if (!a0) return Val::floating(0.0, site);
            if (a0->is_number()) return Val::floating(a0->as_number(), site);
            if (a0->is_str()) {
                char* end = nullptr;
                double v = std::strtod(a0->s.c_str(), &end);
                if (end && *end == '\0' && !a0->s.empty()) return Val::floating(v, site);
            }
            return unknown("float() of a value the linter cannot convert");
        case Builtin::Str:
            if (!a0) return Val::str("", site);
            if (a0->is_unknown()) return unknown(a0->reason());
            if (a0->is_obj() && !a0->is_obj(ObjKind::List) && !a0->is_obj(ObjKind::Tuple) && !a0->is_obj(ObjKind::Dict))
                return unknown("str() of an object");
            return Val::str(py_str(*a0), site);
        case Builtin::Bool: {
            if (!a0) return Val::boolean(false, site);
            auto t = truthy(*a0);
            return t ? Val::boolean(*t, site) : unknown("bool() of an unknown value");
        }
        case Builtin::Repr:
            if (a0 && !a0->is_unknown() && !a0->is_obj()) return Val::str(a0->is_str() ? "'" + a0->s + "'" : repr(*a0), site);
            return unknown("repr() of an object");
        case Builtin::Isinstance: {
            if (!a0 || !a1) return unknown("isinstance() needs two arguments");
            auto r = is_instance(*this, *a0, *a1);
            return r ? Val::boolean(*r, site) : unknown(fmt::format("isinstance() of {} the linter cannot decide", type_name(*a0)));
        }
        case Builtin::Super: {
            // super() in a method: the method's class and its first argument; super(C, obj) names them.
            Val self = a1 ? *a1 : f.self;
            std::shared_ptr<ClassObj> after = a0 && a0->is_obj(ObjKind::Class) ? std::static_pointer_cast<ClassObj>(a0->o)
                                                                                : f.defining_class;
            if (!after || !(self.is_obj(ObjKind::Instance) || self.is_obj(ObjKind::Class)))
                return unknown("super() outside a method of a class the linter read");
            auto sup = std::make_shared<SuperObj>();
            sup->self = self;
            sup->after = after;
            return Val::obj(sup, site);
        }
        case Builtin::Issubclass: {
            if (!a0 || !a1) return unknown("issubclass() needs two arguments");
            std::vector<Val> bases{*a1};
            if (a1->is_obj(ObjKind::Tuple)) bases = a1->as<SeqObj>()->items;
            bool undecided = false;
            for (const auto& base : bases) {
                auto r = is_subclass(*a0, base);
                if (r && *r) return Val::boolean(true, site);
                undecided |= !r;
            }
            if (undecided) return unknown(fmt::format("issubclass() of {} the linter cannot decide", type_name(*a0)));
            return Val::boolean(false, site);
        }
        case Builtin::Getattr: {
            if (!a0 || !a1 || !a1->is_str()) return unknown("getattr() with an unknown attribute name");
            const std::string& name = a1->s;
            const Val* dflt = arg(args, 2);
            if (dflt && a0->is_obj(ObjKind::Instance)) {
                auto* inst = a0->as<InstanceObj>();
                if (inst->poisoned.empty() && !inst->find(name)) {
                    bool found = false;
                    if (inst->cls) class_attr(f, inst->cls, name, a0, site, found);
                    if (!found && inst->model_like && project_.model_default(name)) found = true;
                    bool closed = inst->closed || (inst->cls && !inst->model_like);
                    if (closed && inst->cls)
                        for (const auto& c : mro(inst->cls))
                            for (const auto& base : c->bases) closed &= base.is_obj(ObjKind::Class);
                    if (!found) return closed ? *dflt : unknown(fmt::format("getattr of \"{}\", which {} may lack", name, type_name(*a0)));
                }
            }
            if (dflt && a0->is_obj(ObjKind::Module)) {
                Val v = get_attr(f, *a0, name, site);
                if (v.is_unknown() && a0->as<ModuleObj>()->module->state.load() == Module::Ready &&
                    !a0->as<ModuleObj>()->module->globals->find(name))
                    return *dflt;
                return v;
            }
            if (dflt && a0->is_none()) return *dflt;
            return get_attr(f, *a0, name, site);
        }
        case Builtin::Setattr: {
            if (!a0 || !a1) return unknown("setattr() needs three arguments");
            const Val* value = arg(args, 2);
            if (!value) return unknown("setattr() needs three arguments");
            if (!a1->is_str()) {
                poison(*a0, "setattr() with an attribute name known only at run time");
                return Val::none(site);
            }
            if (a0->may_alias()) spoil_candidates(*a0, "setattr() on a value that may be this object");
            set_attr(f, *a0, a1->s, *value, store_info(f));
            return Val::none(site);
        }
        case Builtin::Hasattr: {
            if (!a0 || !a1 || !a1->is_str()) return unknown("hasattr() with an unknown attribute name");
            if (a0->is_obj(ObjKind::Instance)) {
                auto* inst = a0->as<InstanceObj>();
                if (!inst->poisoned.empty()) return unknown(inst->poisoned);
                if (inst->find(a1->s)) return Val::boolean(true, site);
                bool found = false;
                if (inst->cls) class_attr(f, inst->cls, a1->s, a0, site, found);
                if (found) return Val::boolean(true, site);
                if (inst->model_like && project_.model_default(a1->s)) return Val::boolean(true, site);
                if (inst->closed) return Val::boolean(false, site);
                return unknown(fmt::format("whether {} has \"{}\"", type_name(*a0), a1->s));
            }
            if (a0->is_none() || a0->is_number() || a0->is_str()) return Val::boolean(false, site);
            return unknown("hasattr() of an object the linter does not model");
        }
        case Builtin::Enumerate: {
            if (!a0) return unknown("missing argument");
            auto items = iterate(*a0, reason);
            if (!items) return unknown(reason);
            std::int64_t start = 0;
            if (const Val* s = arg(args, 1, "start"); s && s->is_int()) start = s->as_int();
            std::vector<Val> out;
            for (size_t i = 0; i < items->size(); ++i)
                out.push_back(make_list({Val::integer(start + static_cast<std::int64_t>(i), site), (*items)[i]}, ObjKind::Tuple, site));
            return make_list(std::move(out), ObjKind::List, site);
        }
        case Builtin::Zip: {
            std::vector<std::vector<Val>> lists;
            for (const auto& p : args.pos) {
                auto items = iterate(p, reason);
                if (!items) return unknown(reason);
                lists.push_back(std::move(*items));
            }
            std::vector<Val> out;
            size_t n = lists.empty() ? 0 : SIZE_MAX;
            for (const auto& l : lists) n = std::min(n, l.size());
            for (size_t i = 0; i < n; ++i) {
                std::vector<Val> row;
                for (const auto& l : lists) row.push_back(l[i]);
                out.push_back(make_list(std::move(row), ObjKind::Tuple, site));
            }
            return make_list(std::move(out), ObjKind::List, site);
        }
        case Builtin::Any:
        case Builtin::All: {
            if (!a0) return unknown("missing argument");
            auto items = iterate(*a0, reason);
            if (!items) return unknown(reason);
            bool unknown_item = false;
            for (const auto& v : *items) {
                auto t = truthy(v);
                if (!t) unknown_item = true;
                else if (*t == (b.id == Builtin::Any)) return Val::boolean(*t, site);
            }
            if (unknown_item) return unknown("an element is unknown");
            return Val::boolean(b.id == Builtin::All, site);
        }
        case Builtin::Print: return Val::none(site);
        case Builtin::Callable:
            if (a0 && (a0->is_obj(ObjKind::Function) || a0->is_obj(ObjKind::Class) || a0->is_obj(ObjKind::Method) ||
                       a0->is_obj(ObjKind::Builtin) || a0->is_obj(ObjKind::Partial)))
                return Val::boolean(true, site);
            if (a0 && (a0->is_none() || a0->is_number() || a0->is_str())) return Val::boolean(false, site);
            return unknown("callable() of an object");
        case Builtin::Iter: {
            if (!a0) return unknown("missing argument");
            auto items = iterate(*a0, reason);
            return items ? make_list(std::move(*items), ObjKind::List, site) : unknown(reason);
        }
        case Builtin::Next: {
            if (!a0) return unknown("missing argument");
            auto items = iterate(*a0, reason);
            if (items && !items->empty()) return (*items)[0];
            if (items && a1) return *a1;
            return unknown("next() of an iterator the linter does not model");
        }
        case Builtin::Map:
        case Builtin::Filter: {
            if (!a0 || !a1) return unknown("missing argument");
            auto items = iterate(*a1, reason);
            if (!items) return unknown(reason);
            std::vector<Val> out;
            for (const auto& v : *items) {
                if (b.id == Builtin::Map) {
                    CallArgs one;
                    one.pos.push_back(v);
                    out.push_back(call(f, *a0, std::move(one), site));
                    continue;
                }
                std::optional<bool> keep;
                if (a0->is_none()) {
                    keep = truthy(v);
                } else {
                    CallArgs one;
                    one.pos.push_back(v);
                    keep = truthy(call(f, *a0, std::move(one), site));
                }
                if (!keep) return unknown("filter() with an unknown condition");
                if (*keep) out.push_back(v);
            }
            return make_list(std::move(out), ObjKind::List, site);
        }
        case Builtin::Property: {
            auto p = std::make_shared<PropertyObj>();
            if (a0) p->getter = *a0;
            return Val::obj(p, site);
        }
        case Builtin::Exception: return Val::obj(std::make_shared<ExternalObj>("builtins." + b.name), site);
        case Builtin::Object: {
            auto inst = std::make_shared<InstanceObj>();
            inst->class_path = "object";
            return Val::obj(inst, site);
        }
        case Builtin::Open: return unknown("open() is never run by the linter");
        case Builtin::HfFromPretrained:
        case Builtin::HfFromConfig:
        case Builtin::HfAutoConfig:
        case Builtin::HfToProvider:
        case Builtin::HfGetModelConfig:
        case Builtin::HfToTextProvider: return call_auto_bridge(f, b, args, site);
        default: break;
    }

    // Methods of builtin values.
    const Val& self = b.self;
    if (self.is_str()) {
        const std::string& s = self.s;
        switch (b.id) {
            case Builtin::StrLower: {
                std::string out = s;
                for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                return Val::str(out, site);
            }
            case Builtin::StrUpper: {
                std::string out = s;
                for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                return Val::str(out, site);
            }
            case Builtin::StrTitle:
            case Builtin::StrCapitalize: return unknown("str.title()/capitalize() is not modelled");
            case Builtin::StrStrip:
            case Builtin::StrLstrip:
            case Builtin::StrRstrip: {
                std::string chars = a0 && a0->is_str() ? a0->s : std::string(" \t\n\r\f\v");
                if (a0 && !a0->is_str() && !a0->is_none()) return unknown("strip() of unknown characters");
                size_t start = 0, end = s.size();
                if (b.id != Builtin::StrRstrip)
                    while (start < end && chars.find(s[start]) != std::string::npos) ++start;
                if (b.id != Builtin::StrLstrip)
                    while (end > start && chars.find(s[end - 1]) != std::string::npos) --end;
                return Val::str(s.substr(start, end - start), site);
            }
            case Builtin::StrSplit: {
                std::vector<Val> parts;
                if (!a0 || a0->is_none()) {
                    size_t i = 0;
                    while (i < s.size()) {
                        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
                        size_t j = i;
                        while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
                        if (j > i) parts.push_back(Val::str(s.substr(i, j - i), site));
                        i = j;
                    }
                } else if (a0->is_str() && !a0->s.empty() && !a1) {
                    size_t start = 0, pos;
                    while ((pos = s.find(a0->s, start)) != std::string::npos) {
                        parts.push_back(Val::str(s.substr(start, pos - start), site));
                        start = pos + a0->s.size();
                    }
                    parts.push_back(Val::str(s.substr(start), site));
                } else {
                    return unknown("str.split() with arguments the linter does not model");
                }
                return make_list(std::move(parts), ObjKind::List, site);
            }
            case Builtin::StrJoin: {
                if (!a0) return unknown("missing argument");
                auto items = iterate(*a0, reason);
                if (!items) return unknown(reason);
                std::string out;
                for (size_t i = 0; i < items->size(); ++i) {
                    if (!(*items)[i].is_str()) return unknown("join() of values that are not known strings");
                    if (i) out += s;
                    out += (*items)[i].s;
                }
                return Val::str(out, site);
            }
            case Builtin::StrReplace: {
                if (!a0 || !a1 || !a0->is_str() || !a1->is_str() || a0->s.empty()) return unknown("replace() of unknown strings");
                std::string out;
                size_t start = 0, pos;
                while ((pos = s.find(a0->s, start)) != std::string::npos) {
                    out += s.substr(start, pos - start) + a1->s;
                    start = pos + a0->s.size();
                }
                return Val::str(out + s.substr(start), site);
            }
            case Builtin::StrStartswith:
            case Builtin::StrEndswith: {
                if (!a0) return unknown("missing argument");
                std::vector<Val> options;
                if (a0->is_obj(ObjKind::Tuple)) options = a0->as<SeqObj>()->items;
                else options.push_back(*a0);
                for (const auto& o : options) {
                    if (!o.is_str()) return unknown("startswith()/endswith() of an unknown string");
                    bool hit = b.id == Builtin::StrStartswith
                                   ? s.rfind(o.s, 0) == 0
                                   : s.size() >= o.s.size() && s.compare(s.size() - o.s.size(), o.s.size(), o.s) == 0;
                    if (hit) return Val::boolean(true, site);
                }
                return Val::boolean(false, site);
            }
            case Builtin::StrFormat: {
                std::string out;
                size_t auto_index = 0;
                for (size_t i = 0; i < s.size(); ++i) {
                    char c = s[i];
                    if ((c == '{' || c == '}') && i + 1 < s.size() && s[i + 1] == c) {
                        out += c;
                        ++i;
                        continue;
                    }
                    if (c != '{') {
                        out += c;
                        continue;
                    }
                    size_t close = s.find('}', i);
                    if (close == std::string::npos) return unknown("a malformed format string");
                    std::string field = s.substr(i + 1, close - i - 1);
                    if (field.find_first_of(":!.[") != std::string::npos) return unknown("a format specification");
                    const Val* v = nullptr;
                    if (field.empty()) v = arg(args, auto_index++);
                    else if (std::all_of(field.begin(), field.end(), ::isdigit)) v = arg(args, std::stoul(field));
                    else
                        for (const auto& [k, kv] : args.kw)
                            if (k == field) v = &kv;
                    if (!v || v->is_unknown() || (v->is_obj() && !v->is_obj(ObjKind::List) && !v->is_obj(ObjKind::Tuple)))
                        return unknown("format() of an unknown value");
                    out += py_str(*v);
                    i = close;
                }
                return Val::str(out, site);
            }
            default: break;
        }
    }
    if (self.is_obj(ObjKind::List) || self.is_obj(ObjKind::Tuple) || self.is_obj(ObjKind::Set)) {
        auto* l = self.as<SeqObj>();
        switch (b.id) {
            case Builtin::ListAppend:
            case Builtin::SetAdd:
                if (!a0) return unknown("missing argument");
                note_mutation(l);
                if (b.id == Builtin::SetAdd)
                    for (const auto& item : l->items)
                        if (py_equal(item, *a0) == true) return Val::none(site);
                if (limit_items(l->items.size() + 1)) l->unknown = "the list is too long for the linter";
                else if (l->unknown.empty()) l->items.push_back(*a0);  // unknown contents stay unknown
                return Val::none(site);
            case Builtin::ListExtend:
            case Builtin::SetUpdate: {
                if (!a0) return unknown("missing argument");
                note_mutation(l);
                auto items = iterate(*a0, reason);
                if (!items) {
                    l->unknown = reason;
                } else if (l->unknown.empty()) {
                    for (auto& item : *items) {
                        bool dup = false;
                        if (b.id == Builtin::SetUpdate)
                            for (const auto& x : l->items) dup |= py_equal(x, item) == true;
                        if (!dup) l->items.push_back(std::move(item));
                    }
                    if (limit_items(l->items.size())) l->unknown = "the list is too long for the linter";
                }
                return Val::none(site);
            }
            case Builtin::ListInsert: {
                if (!a0 || !a1) return unknown("missing argument");
                note_mutation(l);
                if (!a0->is_int()) {
                    l->unknown = "an element was inserted at an unknown position";
                    return Val::none(site);
                }
                std::int64_t n = static_cast<std::int64_t>(l->items.size());
                std::int64_t i = a0->as_int() < 0 ? std::max<std::int64_t>(0, a0->as_int() + n) : std::min(a0->as_int(), n);
                l->items.insert(l->items.begin() + i, *a1);
                return Val::none(site);
            }
            case Builtin::ListPop: {
                if (!l->unknown.empty()) {
                    note_mutation(l);
                    return unknown(l->unknown);
                }
                if (l->items.empty()) return unknown("pop() from an empty list");
                std::int64_t n = static_cast<std::int64_t>(l->items.size());
                std::int64_t i = n - 1;
                if (a0) {
                    if (!a0->is_int()) {
                        note_mutation(l);
                        l->unknown = "an element was removed at an unknown position";
                        return unknown("pop() at an unknown position");
                    }
                    i = a0->as_int() < 0 ? a0->as_int() + n : a0->as_int();
                }
                if (i < 0 || i >= n) return unknown("pop() index out of range");
                note_mutation(l);
                Val v = l->items[static_cast<size_t>(i)];
                l->items.erase(l->items.begin() + i);
                return v;
            }
            case Builtin::ListRemove:
            case Builtin::SetDiscard: {
                if (!a0) return unknown("missing argument");
                note_mutation(l);
                for (auto it = l->items.begin(); it != l->items.end(); ++it) {
                    auto eq = py_equal(*it, *a0);
                    if (!eq) {
                        l->unknown = "an element was removed that the linter cannot identify";
                        return Val::none(site);
                    }
                    if (*eq) {
                        l->items.erase(it);
                        return Val::none(site);
                    }
                }
                return Val::none(site);
            }
            case Builtin::ListIndex:
            case Builtin::ListCount: {
                if (!a0 || !l->unknown.empty()) return unknown("index()/count() of unknown contents");
                std::int64_t count = 0;
                for (size_t i = 0; i < l->items.size(); ++i) {
                    auto eq = py_equal(l->items[i], *a0);
                    if (!eq) return unknown("index()/count() of unknown contents");
                    if (*eq) {
                        if (b.id == Builtin::ListIndex) return Val::integer(static_cast<std::int64_t>(i), site);
                        ++count;
                    }
                }
                if (b.id == Builtin::ListIndex) return unknown("index() of a missing element");
                return Val::integer(count, site);
            }
            case Builtin::ListCopy: {
                Val c = make_list(l->items, self.o->kind, site);
                c.as<SeqObj>()->unknown = l->unknown;
                return c;
            }
            case Builtin::ListClear:
                note_mutation(l);
                l->items.clear();
                l->unknown.clear();
                return Val::none(site);
            case Builtin::ListSort: {
                note_mutation(l);
                for (const auto& [k, v] : args.kw)
                    if (k == "key") {
                        l->unknown = "sorted with a key function";
                        return Val::none(site);
                    }
                bool ok = true;
                std::stable_sort(l->items.begin(), l->items.end(), [&](const Val& x, const Val& y) { return sortable_less(x, y, ok); });
                if (!ok) l->unknown = "sorted values the linter cannot order";
                for (const auto& [k, v] : args.kw)
                    if (k == "reverse" && truthy(v) == true) std::reverse(l->items.begin(), l->items.end());
                return Val::none(site);
            }
            case Builtin::ListReverse:
                note_mutation(l);
                std::reverse(l->items.begin(), l->items.end());
                return Val::none(site);
            case Builtin::SetUnion: {
                std::vector<Val> items = l->items;
                for (const auto& p : args.pos) {
                    auto more = iterate(p, reason);
                    if (!more) return unknown(reason);
                    for (auto& v : *more) {
                        bool dup = false;
                        for (const auto& x : items) dup |= py_equal(x, v) == true;
                        if (!dup) items.push_back(v);
                    }
                }
                return make_list(std::move(items), ObjKind::Set, site);
            }
            default: break;
        }
    }
    if (self.is_obj(ObjKind::Dict)) {
        auto* d = self.as<DictObj>();
        auto find = [&](const Val& key) -> std::optional<size_t> {
            for (size_t i = 0; i < d->items.size(); ++i)
                if (py_equal(d->items[i].first, key) == true) return i;
            return std::nullopt;
        };
        switch (b.id) {
            case Builtin::DictGet: {
                if (!a0 || a0->is_unknown()) return unknown("get() with an unknown key");
                if (auto i = find(*a0)) return d->items[*i].second;
                if (!d->unknown.empty()) return unknown(d->unknown);
                return a1 ? *a1 : Val::none(site);
            }
            case Builtin::DictItems:
            case Builtin::DictKeys:
            case Builtin::DictValues: {
                if (!d->unknown.empty()) return unknown(d->unknown);
                std::vector<Val> out;
                for (const auto& [k, v] : d->items) {
                    if (b.id == Builtin::DictKeys) out.push_back(k);
                    else if (b.id == Builtin::DictValues) out.push_back(v);
                    else out.push_back(make_list({k, v}, ObjKind::Tuple, site));
                }
                return make_list(std::move(out), ObjKind::List, site);
            }
            case Builtin::DictUpdate: {
                note_mutation(d);
                std::vector<std::pair<Val, Val>> add;
                if (a0) {
                    if (a0->is_obj(ObjKind::Dict)) {
                        add = a0->as<DictObj>()->items;
                        if (!a0->as<DictObj>()->unknown.empty()) d->unknown = a0->as<DictObj>()->unknown;
                    } else {
                        d->unknown = "update() with a value that is not a known dict";
                    }
                }
                for (const auto& [k, v] : args.kw) add.emplace_back(Val::str(k, site), v);
                if (!args.unknown.empty()) d->unknown = args.unknown;
                for (auto& [k, v] : add) {
                    if (auto i = find(k)) d->items[*i].second = v;
                    else d->items.emplace_back(k, v);
                }
                return Val::none(site);
            }
            case Builtin::DictPop: {
                if (!a0 || a0->is_unknown()) return unknown("pop() with an unknown key");
                note_mutation(d);
                if (auto i = find(*a0)) {
                    Val v = d->items[*i].second;
                    d->items.erase(d->items.begin() + static_cast<std::ptrdiff_t>(*i));
                    return v;
                }
                if (!d->unknown.empty()) return unknown(d->unknown);
                return a1 ? *a1 : unknown("pop() of a missing key");
            }
            case Builtin::DictSetdefault: {
                if (!a0 || a0->is_unknown()) return unknown("setdefault() with an unknown key");
                if (auto i = find(*a0)) return d->items[*i].second;
                if (!d->unknown.empty()) return unknown(d->unknown);
                note_mutation(d);
                Val v = a1 ? *a1 : Val::none(site);
                d->items.emplace_back(*a0, v);
                return v;
            }
            case Builtin::DictCopy: {
                auto c = std::make_shared<DictObj>();
                c->items = d->items;
                c->unknown = d->unknown;
                return Val::obj(c, site);
            }
            case Builtin::DictClear:
                note_mutation(d);
                d->items.clear();
                d->unknown.clear();
                return Val::none(site);
            default: break;
        }
    }
    return unknown(fmt::format("{}() is not modelled", b.name));
}

}  // namespace mbl::py
