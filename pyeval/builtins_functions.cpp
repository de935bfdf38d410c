// The builtin functions the evaluator models (len, range, isinstance, getattr, ...), one small function each, as
// far as recipes use them; with known arguments each gives Python's result, anything else an unknown with a reason.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>

#include "pyeval/builtins.hpp"
#include "pyeval/interpreter.hpp"

namespace mbl::py {

namespace {

std::optional<bool> is_instance(const Val& x, const Val& t) {
    if (t.is_obj(ObjKind::Tuple)) {
        bool unknown = false;
        for (const auto& item : t.as<SeqObj>()->items) {
            auto r = is_instance(x, item);
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
        if (!x.is_obj(ObjKind::Instance))
            return x.is_obj() && !x.is_obj(ObjKind::External) ? std::optional<bool>(false)
                   : x.is_obj()                               ? std::nullopt
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
    return std::nullopt;
}

// --- sizes and sequences ---

Val builtin_len(Interp& in, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    if (!a0) return Val::unknown("len() without an argument", site);
    if (a0->is_str()) return Val::integer(static_cast<std::int64_t>(a0->s.size()), site);
    if (a0->is_obj(ObjKind::Dict)) {
        auto* d = a0->as<DictObj>();
        return d->unknown.empty() ? Val::integer(static_cast<std::int64_t>(d->items.size()), site)
                                  : Val::unknown(d->unknown, site);
    }
    std::string reason;
    auto items = in.iterate(*a0, reason);
    return items ? Val::integer(static_cast<std::int64_t>(items->size()), site) : Val::unknown(reason, site);
}

Val builtin_range(Interp& in, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    std::int64_t start = 0, stop = 0, step = 1;
    std::vector<const Val*> ps;
    for (const auto& p : args.pos) ps.push_back(&p);
    for (const Val* p : ps)
        if (!p->is_int()) return Val::unknown("range() of an unknown bound", site);
    if (ps.size() == 1) stop = ps[0]->as_int();
    else if (ps.size() >= 2) {
        start = ps[0]->as_int();
        stop = ps[1]->as_int();
        if (ps.size() == 3) step = ps[2]->as_int();
    }
    if (step == 0) return Val::unknown("range() step of zero", site);
    std::vector<Val> items;
    for (std::int64_t i = start; step > 0 ? i < stop : i > stop;) {
        if (in.limit_items(items.size())) return Val::unknown("a range too long for the linter", site);
        items.push_back(Val::integer(i, site));
        if (__builtin_add_overflow(i, step, &i)) break;
    }
    return in.make_list(std::move(items), ObjKind::List, site);
}

// list(), tuple(), set(), frozenset()
Val builtin_sequence(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    ObjKind kind = b.id == Builtin::List ? ObjKind::List : b.id == Builtin::Tuple ? ObjKind::Tuple : ObjKind::Set;
    const Val* a0 = call_arg(args, 0);
    if (!a0) return in.make_list({}, kind, site);
    std::string reason;
    auto items = in.iterate(*a0, reason);
    if (!items) return Val::unknown(reason, site);
    if (kind == ObjKind::Set) {
        std::vector<Val> unique;
        for (auto& item : *items) {
            bool dup = false;
            for (const auto& u : unique) dup |= py_equal(u, item) == true;
            if (!dup) unique.push_back(item);
        }
        return in.make_list(std::move(unique), kind, site);
    }
    return in.make_list(std::move(*items), kind, site);
}

Val builtin_dict(Interp& in, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    auto d = std::make_shared<DictObj>();
    if (const Val* a0 = call_arg(args, 0)) {
        if (a0->is_obj(ObjKind::Dict)) {
            d->items = a0->as<DictObj>()->items;
            d->unknown = a0->as<DictObj>()->unknown;
        } else {
            std::string reason;
            auto items = in.iterate(*a0, reason);
            if (!items) return Val::unknown(reason, site);
            for (const auto& pair : *items) {
                std::string r2;
                auto kv = in.iterate(pair, r2);
                if (!kv || kv->size() != 2) return Val::unknown("dict() of values that are not pairs", site);
                d->items.emplace_back((*kv)[0], (*kv)[1]);
            }
        }
    }
    for (const auto& [k, v] : args.kw) set_item(*d, Val::str(k, site), v);
    if (!args.unknown.empty()) d->unknown = args.unknown;
    return Val::obj(d, site);
}

Val builtin_sorted(Interp& in, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    Val error;
    auto items = first_arg_items(in, args, site, error);
    if (!items) return error;
    for (const auto& [k, v] : args.kw)
        if (k == "key") return Val::unknown("sorted() with a key function", site);
    bool ok = true;
    std::stable_sort(items->begin(), items->end(), [&](const Val& x, const Val& y) { return sortable_less(x, y, ok); });
    if (!ok) return Val::unknown("sorted() of values the linter cannot order", site);
    for (const auto& [k, v] : args.kw)
        if (k == "reverse" && truthy(v) == true) std::reverse(items->begin(), items->end());
    return in.make_list(std::move(*items), ObjKind::List, site);
}

Val builtin_reversed(Interp& in, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    Val error;
    auto items = first_arg_items(in, args, site, error);
    if (!items) return error;
    std::reverse(items->begin(), items->end());
    return in.make_list(std::move(*items), ObjKind::List, site);
}

Val builtin_enumerate(Interp& in, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    Val error;
    auto items = first_arg_items(in, args, site, error);
    if (!items) return error;
    std::int64_t start = 0;
    if (const Val* s = call_arg(args, 1, {"start"}); s && s->is_int()) start = s->as_int();
    std::vector<Val> out;
    for (size_t i = 0; i < items->size(); ++i)
        out.push_back(in.make_list({Val::integer(start + static_cast<std::int64_t>(i), site), (*items)[i]},
                                   ObjKind::Tuple, site));
    return in.make_list(std::move(out), ObjKind::List, site);
}

Val builtin_zip(Interp& in, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    std::vector<std::vector<Val>> lists;
    for (const auto& p : args.pos) {
        std::string reason;
        auto items = in.iterate(p, reason);
        if (!items) return Val::unknown(reason, site);
        lists.push_back(std::move(*items));
    }
    std::vector<Val> out;
    size_t n = lists.empty() ? 0 : SIZE_MAX;
    for (const auto& l : lists) n = std::min(n, l.size());
    for (size_t i = 0; i < n; ++i) {
        std::vector<Val> row;
        for (const auto& l : lists) row.push_back(l[i]);
        out.push_back(in.make_list(std::move(row), ObjKind::Tuple, site));
    }
    return in.make_list(std::move(out), ObjKind::List, site);
}

Val builtin_iter(Interp& in, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    Val error;
    auto items = first_arg_items(in, args, site, error);
    return items ? in.make_list(std::move(*items), ObjKind::List, site) : error;
}

Val builtin_next(Interp& in, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (!a0) return Val::unknown("missing argument", site);
    std::string reason;
    auto items = in.iterate(*a0, reason);
    if (items && !items->empty()) return (*items)[0];
    if (items && a1) return *a1;
    return Val::unknown("next() of an iterator the linter does not model", site);
}

// map(), filter(): the function runs on each element.
Val builtin_map_filter(Interp& in, Frame& f, BuiltinObj& b, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (!a0 || !a1) return Val::unknown("missing argument", site);
    std::string reason;
    auto items = in.iterate(*a1, reason);
    if (!items) return Val::unknown(reason, site);
    std::vector<Val> out;
    for (const auto& v : *items) {
        if (b.id == Builtin::Map) {
            CallArgs one;
            one.pos.push_back(v);
            out.push_back(in.call(f, *a0, std::move(one), site));
            continue;
        }
        std::optional<bool> keep;
        if (a0->is_none()) {
            keep = truthy(v);
        } else {
            CallArgs one;
            one.pos.push_back(v);
            keep = truthy(in.call(f, *a0, std::move(one), site));
        }
        if (!keep) return Val::unknown("filter() with an unknown condition", site);
        if (*keep) out.push_back(v);
    }
    return in.make_list(std::move(out), ObjKind::List, site);
}

// any(), all()
Val builtin_any_all(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    Val error;
    auto items = first_arg_items(in, args, site, error);
    if (!items) return error;
    bool unknown_item = false;
    for (const auto& v : *items) {
        auto t = truthy(v);
        if (!t) unknown_item = true;
        else if (*t == (b.id == Builtin::Any)) return Val::boolean(*t, site);
    }
    if (unknown_item) return Val::unknown("an element is unknown", site);
    return Val::boolean(b.id == Builtin::All, site);
}

// --- numbers ---

// min(), max()
Val builtin_min_max(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    std::vector<Val> items;
    if (args.pos.size() == 1) {
        std::string reason;
        auto it = in.iterate(args.pos[0], reason);
        if (!it) return Val::unknown(reason, site);
        items = std::move(*it);
    } else {
        items = args.pos;
    }
    if (items.empty()) return Val::unknown("min()/max() of an empty sequence", site);
    Val best = items[0];
    for (const auto& v : items) {
        if (v.is_unknown()) return Val::unknown(v.reason(), site);
        bool ok = true;
        bool less = sortable_less(v, best, ok);
        if (!ok) return Val::unknown("min()/max() of values the linter cannot order", site);
        if (b.id == Builtin::Min ? less : sortable_less(best, v, ok)) best = v;
    }
    return best;
}

Val builtin_sum(Interp& in, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a1 = call_arg(args, 1);
    Val error;
    auto items = first_arg_items(in, args, site, error);
    if (!items) return error;
    Val total = a1 ? *a1 : Val::integer(0, site);
    for (const auto& v : *items) total = in.binary_op("+", total, v, site);
    return total;
}

Val builtin_abs(Interp&, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    if (a0 && a0->is_int() && a0->as_int() != INT64_MIN) return Val::integer(std::llabs(a0->as_int()), site);
    if (a0 && a0->is_float()) return Val::floating(std::fabs(a0->d), site);
    return Val::unknown("abs() of an unknown value", site);
}

Val builtin_round(Interp&, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (a0 && a0->is_number() && !a1 && std::fabs(a0->as_number()) < 9e18)
        return Val::integer(static_cast<std::int64_t>(std::nearbyint(a0->as_number())), site);
    return Val::unknown("round() with digits", site);
}

Val builtin_divmod(Interp& in, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (a0 && a1 && a0->is_int() && a1->is_int() && a1->as_int() != 0 &&
        !(a0->as_int() == INT64_MIN && a1->as_int() == -1))
        return in.make_list({in.binary_op("//", *a0, *a1, site), in.binary_op("%", *a0, *a1, site)}, ObjKind::Tuple,
                            site);
    return Val::unknown("divmod() of unknown values", site);
}

// --- conversions ---

Val builtin_int(Interp&, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
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
    return Val::unknown("int() of a value the linter cannot convert", site);
}

Val builtin_float(Interp&, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    if (!a0) return Val::floating(0.0, site);
    if (a0->is_number()) return Val::floating(a0->as_number(), site);
    if (a0->is_str()) {
        char* end = nullptr;
        double v = std::strtod(a0->s.c_str(), &end);
        if (end && *end == '\0' && !a0->s.empty()) return Val::floating(v, site);
    }
    return Val::unknown("float() of a value the linter cannot convert", site);
}

Val builtin_str(Interp&, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    if (!a0) return Val::str("", site);
    if (a0->is_unknown()) return Val::unknown(a0->reason(), site);
    if (a0->is_obj() && !a0->is_obj(ObjKind::List) && !a0->is_obj(ObjKind::Tuple) && !a0->is_obj(ObjKind::Dict))
        return Val::unknown("str() of an object", site);
    return Val::str(py_str(*a0), site);
}

Val builtin_bool(Interp&, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    if (!a0) return Val::boolean(false, site);
    auto t = truthy(*a0);
    return t ? Val::boolean(*t, site) : Val::unknown("bool() of an unknown value", site);
}

Val builtin_repr(Interp&, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    if (a0 && !a0->is_unknown() && !a0->is_obj()) return Val::str(a0->is_str() ? "'" + a0->s + "'" : repr(*a0), site);
    return Val::unknown("repr() of an object", site);
}

// --- types, classes and attributes ---

Val builtin_isinstance(Interp&, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (!a0 || !a1) return Val::unknown("isinstance() needs two arguments", site);
    auto r = is_instance(*a0, *a1);
    return r ? Val::boolean(*r, site)
             : Val::unknown(fmt::format("isinstance() of {} the linter cannot decide", type_name(*a0)), site);
}

Val builtin_issubclass(Interp& in, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (!a0 || !a1) return Val::unknown("issubclass() needs two arguments", site);
    std::vector<Val> bases{*a1};
    if (a1->is_obj(ObjKind::Tuple)) bases = a1->as<SeqObj>()->items;
    bool undecided = false;
    for (const auto& base : bases) {
        auto r = in.is_subclass(*a0, base);
        if (r && *r) return Val::boolean(true, site);
        undecided |= !r;
    }
    if (undecided)
        return Val::unknown(fmt::format("issubclass() of {} the linter cannot decide", type_name(*a0)), site);
    return Val::boolean(false, site);
}

// super() in a method: the method's class and its first argument; super(C, obj) names them.
Val builtin_super(Interp&, Frame& f, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    Val self = a1 ? *a1 : f.self;
    std::shared_ptr<ClassObj> after =
        a0 && a0->is_obj(ObjKind::Class) ? std::static_pointer_cast<ClassObj>(a0->o) : f.defining_class;
    if (!after || !(self.is_obj(ObjKind::Instance) || self.is_obj(ObjKind::Class)))
        return Val::unknown("super() outside a method of a class the linter read", site);
    auto sup = std::make_shared<SuperObj>();
    sup->self = self;
    sup->after = after;
    return Val::obj(sup, site);
}

Val builtin_getattr(Interp& in, Frame& f, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (!a0 || !a1 || !a1->is_str()) return Val::unknown("getattr() with an unknown attribute name", site);
    const std::string& name = a1->s;
    const Val* dflt = call_arg(args, 2);
    if (dflt && a0->is_obj(ObjKind::Instance)) {
        auto* inst = a0->as<InstanceObj>();
        if (inst->poisoned.empty() && !inst->find(name)) {
            bool found = false;
            if (inst->cls) in.class_attr(f, inst->cls, name, a0, site, found);
            if (!found && inst->takes_defaults && in.host().attr_default(name)) found = true;
            bool closed = inst->closed || (inst->cls && !inst->takes_defaults);
            if (closed && inst->cls)
                for (const auto& c : in.mro(inst->cls))
                    for (const auto& base : c->bases) closed &= base.is_obj(ObjKind::Class);
            if (!found)
                return closed ? *dflt
                              : Val::unknown(fmt::format("getattr of \"{}\", which {} may lack", name, type_name(*a0)),
                                             site);
        }
    }
    if (dflt && a0->is_obj(ObjKind::Module)) {
        Val v = in.get_attr(f, *a0, name, site);
        // A name the module does not define reads as a symbol (an outside name); getattr's default is the answer.
        if ((v.is_unknown() || v.is_obj(ObjKind::External)) &&
            a0->as<ModuleObj>()->module->state.load() == Module::Ready &&
            !a0->as<ModuleObj>()->module->globals->find(name))
            return *dflt;
        return v;
    }
    if (dflt && a0->is_none()) return *dflt;
    return in.get_attr(f, *a0, name, site);
}

Val builtin_setattr(Interp& in, Frame& f, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (!a0 || !a1) return Val::unknown("setattr() needs three arguments", site);
    const Val* value = call_arg(args, 2);
    if (!value) return Val::unknown("setattr() needs three arguments", site);
    if (!a1->is_str()) {
        in.poison(*a0, "setattr() with an attribute name known only at run time");
        return Val::none(site);
    }
    if (a0->may_alias()) in.spoil_candidates(*a0, "setattr() on a value that may be this object");
    in.set_attr(f, *a0, a1->s, *value, in.store_info(f));
    return Val::none(site);
}

Val builtin_hasattr(Interp& in, Frame& f, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (!a0 || !a1 || !a1->is_str()) return Val::unknown("hasattr() with an unknown attribute name", site);
    if (a0->is_obj(ObjKind::Instance)) {
        auto* inst = a0->as<InstanceObj>();
        if (!inst->poisoned.empty()) return Val::unknown(inst->poisoned, site);
        if (inst->find(a1->s)) return Val::boolean(true, site);
        bool found = false;
        if (inst->cls) in.class_attr(f, inst->cls, a1->s, a0, site, found);
        if (found) return Val::boolean(true, site);
        if (inst->takes_defaults && in.host().attr_default(a1->s)) return Val::boolean(true, site);
        if (inst->closed) return Val::boolean(false, site);
        return Val::unknown(fmt::format("whether {} has \"{}\"", type_name(*a0), a1->s), site);
    }
    if (a0->is_none() || a0->is_number() || a0->is_str()) return Val::boolean(false, site);
    return Val::unknown("hasattr() of an object the linter does not model", site);
}

Val builtin_callable(Interp&, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    const Val* a0 = call_arg(args, 0);
    if (a0 && (a0->is_obj(ObjKind::Function) || a0->is_obj(ObjKind::Class) || a0->is_obj(ObjKind::Method) ||
               a0->is_obj(ObjKind::Builtin) || a0->is_obj(ObjKind::Partial)))
        return Val::boolean(true, site);
    if (a0 && (a0->is_none() || a0->is_number() || a0->is_str())) return Val::boolean(false, site);
    return Val::unknown("callable() of an object", site);
}

Val builtin_property(Interp&, Frame&, BuiltinObj&, CallArgs& args, Loc site) {
    auto p = std::make_shared<PropertyObj>();
    if (const Val* a0 = call_arg(args, 0)) p->getter = *a0;
    return Val::obj(p, site);
}

Val builtin_object(Interp&, Frame&, BuiltinObj&, CallArgs&, Loc site) {
    auto inst = std::make_shared<InstanceObj>();
    inst->class_path = "object";
    return Val::obj(inst, site);
}

// ValueError(...) and the other exception classes: the outside name, never raised.
Val builtin_exception(Interp&, Frame&, BuiltinObj& b, CallArgs&, Loc site) {
    return Val::obj(std::make_shared<ExternalObj>("builtins." + b.name), site);
}

// --- effects the linter never has ---

Val builtin_print(Interp&, Frame&, BuiltinObj&, CallArgs&, Loc site) { return Val::none(site); }

Val builtin_open(Interp&, Frame&, BuiltinObj&, CallArgs&, Loc site) {
    return Val::unknown("open() is never run by the linter", site);
}

// type, id, hash, vars, staticmethod and classmethod (when called, not as decorators) are not modelled.
constexpr BuiltinEntry kFunctionEntries[] = {
    {Builtin::Len, Receiver::Any, builtin_len},
    {Builtin::Range, Receiver::Any, builtin_range},
    {Builtin::List, Receiver::Any, builtin_sequence},
    {Builtin::Tuple, Receiver::Any, builtin_sequence},
    {Builtin::Set, Receiver::Any, builtin_sequence},
    {Builtin::Frozenset, Receiver::Any, builtin_sequence},
    {Builtin::Dict, Receiver::Any, builtin_dict},
    {Builtin::Sorted, Receiver::Any, builtin_sorted},
    {Builtin::Reversed, Receiver::Any, builtin_reversed},
    {Builtin::Enumerate, Receiver::Any, builtin_enumerate},
    {Builtin::Zip, Receiver::Any, builtin_zip},
    {Builtin::Iter, Receiver::Any, builtin_iter},
    {Builtin::Next, Receiver::Any, builtin_next},
    {Builtin::Map, Receiver::Any, builtin_map_filter},
    {Builtin::Filter, Receiver::Any, builtin_map_filter},
    {Builtin::Any, Receiver::Any, builtin_any_all},
    {Builtin::All, Receiver::Any, builtin_any_all},
    {Builtin::Min, Receiver::Any, builtin_min_max},
    {Builtin::Max, Receiver::Any, builtin_min_max},
    {Builtin::Sum, Receiver::Any, builtin_sum},
    {Builtin::Abs, Receiver::Any, builtin_abs},
    {Builtin::Round, Receiver::Any, builtin_round},
    {Builtin::Divmod, Receiver::Any, builtin_divmod},
    {Builtin::Int, Receiver::Any, builtin_int},
    {Builtin::Float, Receiver::Any, builtin_float},
    {Builtin::Str, Receiver::Any, builtin_str},
    {Builtin::Bool, Receiver::Any, builtin_bool},
    {Builtin::Repr, Receiver::Any, builtin_repr},
    {Builtin::Isinstance, Receiver::Any, builtin_isinstance},
    {Builtin::Issubclass, Receiver::Any, builtin_issubclass},
    {Builtin::Super, Receiver::Any, builtin_super},
    {Builtin::Getattr, Receiver::Any, builtin_getattr},
    {Builtin::Setattr, Receiver::Any, builtin_setattr},
    {Builtin::Hasattr, Receiver::Any, builtin_hasattr},
    {Builtin::Callable, Receiver::Any, builtin_callable},
    {Builtin::Property, Receiver::Any, builtin_property},
    {Builtin::Object, Receiver::Any, builtin_object},
    {Builtin::Exception, Receiver::Any, builtin_exception},
    {Builtin::Print, Receiver::Any, builtin_print},
    {Builtin::Open, Receiver::Any, builtin_open},
};

}  // namespace

std::span<const BuiltinEntry> function_builtins() { return kFunctionEntries; }

}  // namespace mbl::py
