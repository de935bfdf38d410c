// The methods of list, tuple, set and dict the evaluator models, one small function each; `b.self` is the container
// (the table runs them only on their own kind). A change is journaled first (Interp::note_mutation) so that a branch
// can be undone; a change the evaluator cannot follow makes the contents unknown rather than wrong.
#include <algorithm>

#include "pyeval/builtins.hpp"
#include "pyeval/interpreter.hpp"

namespace mbl::py {

namespace {

// --- list, tuple and set (a set keeps insertion order and no duplicates) ---

SeqObj& seq(BuiltinObj& b) { return *b.self.as<SeqObj>(); }

// list.append(), set.add()
Val seq_append(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    SeqObj* l = &seq(b);
    const Val* a0 = call_arg(args, 0);
    if (!a0) return Val::unknown("missing argument", site);
    in.note_mutation(l);
    if (b.id == Builtin::SetAdd)
        for (const auto& item : l->items)
            if (py_equal(item, *a0) == true) return Val::none(site);
    if (in.limit_items(l->items.size() + 1)) l->unknown = "the list is too long for the linter";
    else if (l->unknown.empty()) l->items.push_back(*a0);  // unknown contents stay unknown
    return Val::none(site);
}

// list.extend(), set.update()
Val seq_extend(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    SeqObj* l = &seq(b);
    const Val* a0 = call_arg(args, 0);
    if (!a0) return Val::unknown("missing argument", site);
    in.note_mutation(l);
    std::string reason;
    auto items = in.iterate(*a0, reason);
    if (!items) {
        l->unknown = reason;
    } else if (l->unknown.empty()) {
        for (auto& item : *items) {
            bool dup = false;
            if (b.id == Builtin::SetUpdate)
                for (const auto& x : l->items) dup |= py_equal(x, item) == true;
            if (!dup) l->items.push_back(std::move(item));
        }
        if (in.limit_items(l->items.size())) l->unknown = "the list is too long for the linter";
    }
    return Val::none(site);
}

Val list_insert(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    SeqObj* l = &seq(b);
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (!a0 || !a1) return Val::unknown("missing argument", site);
    in.note_mutation(l);
    if (!a0->is_int()) {
        l->unknown = "an element was inserted at an unknown position";
        return Val::none(site);
    }
    std::int64_t n = static_cast<std::int64_t>(l->items.size());
    std::int64_t i = a0->as_int() < 0 ? std::max<std::int64_t>(0, a0->as_int() + n) : std::min(a0->as_int(), n);
    l->items.insert(l->items.begin() + i, *a1);
    return Val::none(site);
}

Val list_pop(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    SeqObj* l = &seq(b);
    const Val* a0 = call_arg(args, 0);
    if (!l->unknown.empty()) {
        in.note_mutation(l);
        return Val::unknown(l->unknown, site);
    }
    if (l->items.empty()) return Val::unknown("pop() from an empty list", site);
    std::int64_t n = static_cast<std::int64_t>(l->items.size());
    std::int64_t i = n - 1;
    if (a0) {
        if (!a0->is_int()) {
            in.note_mutation(l);
            l->unknown = "an element was removed at an unknown position";
            return Val::unknown("pop() at an unknown position", site);
        }
        i = a0->as_int() < 0 ? a0->as_int() + n : a0->as_int();
    }
    if (i < 0 || i >= n) return Val::unknown("pop() index out of range", site);
    in.note_mutation(l);
    Val v = l->items[static_cast<size_t>(i)];
    l->items.erase(l->items.begin() + i);
    return v;
}

// list.remove(), set.discard() and set.remove()
Val seq_remove(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    SeqObj* l = &seq(b);
    const Val* a0 = call_arg(args, 0);
    if (!a0) return Val::unknown("missing argument", site);
    in.note_mutation(l);
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

// index(), count() of a list or tuple
Val seq_index_count(Interp&, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    SeqObj* l = &seq(b);
    const Val* a0 = call_arg(args, 0);
    if (!a0 || !l->unknown.empty()) return Val::unknown("index()/count() of unknown contents", site);
    std::int64_t count = 0;
    for (size_t i = 0; i < l->items.size(); ++i) {
        auto eq = py_equal(l->items[i], *a0);
        if (!eq) return Val::unknown("index()/count() of unknown contents", site);
        if (*eq) {
            if (b.id == Builtin::ListIndex) return Val::integer(static_cast<std::int64_t>(i), site);
            ++count;
        }
    }
    if (b.id == Builtin::ListIndex) return Val::unknown("index() of a missing element", site);
    return Val::integer(count, site);
}

// list.copy(), set.copy()
Val seq_copy(Interp& in, Frame&, BuiltinObj& b, CallArgs&, Loc site) {
    SeqObj* l = &seq(b);
    Val c = in.make_list(l->items, b.self.o->kind, site);
    c.as<SeqObj>()->unknown = l->unknown;
    return c;
}

Val list_clear(Interp& in, Frame&, BuiltinObj& b, CallArgs&, Loc site) {
    SeqObj* l = &seq(b);
    in.note_mutation(l);
    l->items.clear();
    l->unknown.clear();
    return Val::none(site);
}

Val list_sort(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    SeqObj* l = &seq(b);
    in.note_mutation(l);
    for (const auto& [k, v] : args.kw)
        if (k == "key") {
            l->unknown = "sorted with a key function";
            return Val::none(site);
        }
    bool ok = true;
    std::stable_sort(l->items.begin(), l->items.end(),
                     [&](const Val& x, const Val& y) { return sortable_less(x, y, ok); });
    if (!ok) l->unknown = "sorted values the linter cannot order";
    for (const auto& [k, v] : args.kw)
        if (k == "reverse" && truthy(v) == true) std::reverse(l->items.begin(), l->items.end());
    return Val::none(site);
}

Val list_reverse(Interp& in, Frame&, BuiltinObj& b, CallArgs&, Loc site) {
    SeqObj* l = &seq(b);
    in.note_mutation(l);
    std::reverse(l->items.begin(), l->items.end());
    return Val::none(site);
}

Val set_union(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    std::vector<Val> items = seq(b).items;
    for (const auto& p : args.pos) {
        std::string reason;
        auto more = in.iterate(p, reason);
        if (!more) return Val::unknown(reason, site);
        for (auto& v : *more) {
            bool dup = false;
            for (const auto& x : items) dup |= py_equal(x, v) == true;
            if (!dup) items.push_back(v);
        }
    }
    return in.make_list(std::move(items), ObjKind::Set, site);
}

// --- dict ---

DictObj& dict(BuiltinObj& b) { return *b.self.as<DictObj>(); }

Val dict_get(Interp&, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    DictObj& d = dict(b);
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (!a0 || a0->is_unknown()) return Val::unknown("get() with an unknown key", site);
    if (auto i = find_key(d, *a0)) return d.items[*i].second;
    if (!d.unknown.empty()) return Val::unknown(d.unknown, site);
    return a1 ? *a1 : Val::none(site);
}

// items(), keys(), values(): lists of the current entries.
Val dict_view(Interp& in, Frame&, BuiltinObj& b, CallArgs&, Loc site) {
    DictObj& d = dict(b);
    if (!d.unknown.empty()) return Val::unknown(d.unknown, site);
    std::vector<Val> out;
    for (const auto& [k, v] : d.items) {
        if (b.id == Builtin::DictKeys) out.push_back(k);
        else if (b.id == Builtin::DictValues) out.push_back(v);
        else out.push_back(in.make_list({k, v}, ObjKind::Tuple, site));
    }
    return in.make_list(std::move(out), ObjKind::List, site);
}

Val dict_update(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    DictObj& d = dict(b);
    const Val* a0 = call_arg(args, 0);
    in.note_mutation(&d);
    std::vector<std::pair<Val, Val>> add;
    if (a0) {
        if (a0->is_obj(ObjKind::Dict)) {
            add = a0->as<DictObj>()->items;
            if (!a0->as<DictObj>()->unknown.empty()) d.unknown = a0->as<DictObj>()->unknown;
        } else {
            d.unknown = "update() with a value that is not a known dict";
        }
    }
    for (const auto& [k, v] : args.kw) add.emplace_back(Val::str(k, site), v);
    if (!args.unknown.empty()) d.unknown = args.unknown;
    for (auto& [k, v] : add) set_item(d, std::move(k), std::move(v));
    return Val::none(site);
}

Val dict_pop(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    DictObj& d = dict(b);
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (!a0 || a0->is_unknown()) return Val::unknown("pop() with an unknown key", site);
    in.note_mutation(&d);
    if (auto i = find_key(d, *a0)) {
        Val v = d.items[*i].second;
        d.items.erase(d.items.begin() + static_cast<std::ptrdiff_t>(*i));
        return v;
    }
    if (!d.unknown.empty()) return Val::unknown(d.unknown, site);
    return a1 ? *a1 : Val::unknown("pop() of a missing key", site);
}

Val dict_setdefault(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    DictObj& d = dict(b);
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (!a0 || a0->is_unknown()) return Val::unknown("setdefault() with an unknown key", site);
    if (auto i = find_key(d, *a0)) return d.items[*i].second;
    if (!d.unknown.empty()) return Val::unknown(d.unknown, site);
    in.note_mutation(&d);
    Val v = a1 ? *a1 : Val::none(site);
    d.items.emplace_back(*a0, v);
    return v;
}

Val dict_copy(Interp&, Frame&, BuiltinObj& b, CallArgs&, Loc site) {
    const DictObj& d = dict(b);
    auto c = std::make_shared<DictObj>();
    c->items = d.items;
    c->unknown = d.unknown;
    return Val::obj(c, site);
}

Val dict_clear(Interp& in, Frame&, BuiltinObj& b, CallArgs&, Loc site) {
    DictObj& d = dict(b);
    in.note_mutation(&d);
    d.items.clear();
    d.unknown.clear();
    return Val::none(site);
}

constexpr BuiltinEntry kContainerEntries[] = {
    {Builtin::ListAppend, Receiver::Sequence, seq_append},
    {Builtin::SetAdd, Receiver::Sequence, seq_append},
    {Builtin::ListExtend, Receiver::Sequence, seq_extend},
    {Builtin::SetUpdate, Receiver::Sequence, seq_extend},
    {Builtin::ListInsert, Receiver::Sequence, list_insert},
    {Builtin::ListPop, Receiver::Sequence, list_pop},
    {Builtin::ListRemove, Receiver::Sequence, seq_remove},
    {Builtin::SetDiscard, Receiver::Sequence, seq_remove},
    {Builtin::ListIndex, Receiver::Sequence, seq_index_count},
    {Builtin::ListCount, Receiver::Sequence, seq_index_count},
    {Builtin::ListCopy, Receiver::Sequence, seq_copy},
    {Builtin::ListClear, Receiver::Sequence, list_clear},
    {Builtin::ListSort, Receiver::Sequence, list_sort},
    {Builtin::ListReverse, Receiver::Sequence, list_reverse},
    {Builtin::SetUnion, Receiver::Sequence, set_union},
    {Builtin::DictGet, Receiver::Dict, dict_get},
    {Builtin::DictItems, Receiver::Dict, dict_view},
    {Builtin::DictKeys, Receiver::Dict, dict_view},
    {Builtin::DictValues, Receiver::Dict, dict_view},
    {Builtin::DictUpdate, Receiver::Dict, dict_update},
    {Builtin::DictPop, Receiver::Dict, dict_pop},
    {Builtin::DictSetdefault, Receiver::Dict, dict_setdefault},
    {Builtin::DictCopy, Receiver::Dict, dict_copy},
    {Builtin::DictClear, Receiver::Dict, dict_clear},
};

}  // namespace

std::span<const BuiltinEntry> container_builtins() { return kContainerEntries; }

}  // namespace mbl::py
