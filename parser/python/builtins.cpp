// Python builtins and the methods of builtin values, as far as recipes use them.
#include "parser/python/builtins.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
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

bool sortable_less(const Val& a, const Val& b, bool& ok) {
    if (a.is_number() && b.is_number()) return a.as_number() < b.as_number();
    if (a.is_str() && b.is_str()) return a.s < b.s;
    ok = false;
    return false;
}

namespace {

// The table by id, built from the groups once; an id without a function is not modelled.
const BuiltinEntry& builtin_entry(Builtin id) {
    static const auto table = [] {
        std::array<BuiltinEntry, static_cast<std::size_t>(Builtin::Count)> t{};
        for (auto group : {function_builtins(), str_builtins(), bridge_api_builtins()})
            for (const BuiltinEntry& e : group) t[static_cast<std::size_t>(e.id)] = e;
        return t;
    }();
    return table[static_cast<std::size_t>(id)];
}

bool runs_on(Receiver receiver, const Val& self) {
    switch (receiver) {
        case Receiver::Any: return true;
        case Receiver::Str: return self.is_str();
        case Receiver::Sequence:
            return self.is_obj(ObjKind::List) || self.is_obj(ObjKind::Tuple) || self.is_obj(ObjKind::Set);
        case Receiver::Dict: return self.is_obj(ObjKind::Dict);
    }
    return false;
}

}  // namespace

Val Interp::call_builtin(Frame& f, BuiltinObj& b, CallArgs& args, Loc site) {
    const BuiltinEntry& entry = builtin_entry(b.id);
    if (entry.fn && runs_on(entry.receiver, b.self)) return entry.fn(*this, f, b, args, site);
    auto unknown = [&](std::string why) { return Val::unknown(std::move(why), site); };
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    std::string reason;

    // Methods of builtin values.
    const Val& self = b.self;
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
