// Branches whose condition is unknown. While a branch runs, every slot it changes (an attribute, a name of a scope,
// the contents of a container) that is older than the branch is first recorded in the branch's journal with its
// original state; the branch is then undone, and the outcomes of all branches are merged: a slot that ends up
// different becomes unknown. Also here: the unknowns that may stand for known objects, and poisoning.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>
#include <unordered_set>

#include "pyeval/interpreter.hpp"

namespace mbl::py {

struct Interp::Slot {
    enum Kind { Attr = 0, Var = 1, Contents = 2 } kind;
    ObjPtr obj;                // the instance (Attr) or container (Contents)
    std::shared_ptr<Env> env;  // Var
    std::string name;
    std::tuple<int, const void*, std::string> key() const {
        return {kind, kind == Var ? static_cast<const void*>(env.get()) : static_cast<const void*>(obj.get()), name};
    }
};

namespace {

constexpr const char* kPoisonSlot = "\x01poisoned";
constexpr const char* kOpaqueSlot = "\x01opaque";

struct SlotState {
    bool too_big = false;  // a container too large to copy: restoring it makes its contents unknown
    bool present = false;
    Val value;
    SetInfo info;
    std::vector<Val> items;
    std::vector<std::pair<Val, Val>> dict_items;
    std::string unknown;
};

}  // namespace

struct Interp::Journal {
    std::uint64_t start_epoch = 0;
    std::map<std::tuple<int, const void*, std::string>, std::pair<Slot, SlotState>> originals;
};

constexpr std::size_t kMaxTrackedItems = 512;  // larger containers changed in a branch become unknown

static SlotState capture_slot(const Interp::Slot& s) {  // cost: see BranchRunner::run_one
    SlotState st;
    switch (s.kind) {
        case Interp::Slot::Attr: {
            auto* inst = static_cast<InstanceObj*>(s.obj.get());
            if (s.name == kPoisonSlot) {
                st.present = !inst->poisoned.empty();
                st.value = Val::str(inst->poisoned);
            } else if (s.name == kOpaqueSlot) {
                st.present = !inst->opaque.empty();
                st.value = Val::str(inst->opaque, inst->opaque_at);
            } else if (const Attr* a = inst->find(s.name)) {
                st.present = true;
                st.value = a->value;
                st.info = a->info;
            }
            break;
        }
        case Interp::Slot::Var:
            if (const Val* v = s.env->find(s.name)) {
                st.present = true;
                st.value = *v;
            }
            break;
        case Interp::Slot::Contents:
            st.present = true;
            if (s.obj->kind == ObjKind::Dict) {
                auto* d = static_cast<DictObj*>(s.obj.get());
                if (d->items.size() > kMaxTrackedItems) st.too_big = true;
                else st.dict_items = d->items;
                st.unknown = d->unknown;
            } else {
                auto* q = static_cast<SeqObj*>(s.obj.get());
                if (q->items.size() > kMaxTrackedItems) st.too_big = true;
                else st.items = q->items;
                st.unknown = q->unknown;
            }
            break;
    }
    return st;
}

static void restore_slot(const Interp::Slot& s, const SlotState& st) {
    switch (s.kind) {
        case Interp::Slot::Attr: {
            auto* inst = static_cast<InstanceObj*>(s.obj.get());
            if (s.name == kPoisonSlot) {
                inst->poisoned = st.present ? st.value.s : std::string();
                break;
            }
            if (s.name == kOpaqueSlot) {
                inst->opaque = st.present ? st.value.s : std::string();
                inst->opaque_at = st.present ? st.value.at : Loc{};
                break;
            }
            auto it =
                std::find_if(inst->attrs.begin(), inst->attrs.end(), [&](const Attr& a) { return a.name == s.name; });
            if (!st.present) {
                if (it != inst->attrs.end()) inst->attrs.erase(it);
            } else if (it != inst->attrs.end()) {
                it->value = st.value;
                it->info = st.info;
            } else {
                inst->attrs.push_back(Attr{s.name, st.value, st.info});
            }
            break;
        }
        case Interp::Slot::Var:
            if (st.present) s.env->set(s.name, st.value);
            else s.env->erase(s.name);
            break;
        case Interp::Slot::Contents: {
            const std::string big = "a container too large to follow through branches";
            if (s.obj->kind == ObjKind::Dict) {
                auto* d = static_cast<DictObj*>(s.obj.get());
                d->items = st.dict_items;
                d->unknown = st.too_big ? big : st.unknown;
            } else {
                auto* q = static_cast<SeqObj*>(s.obj.get());
                q->items = st.items;
                q->unknown = st.too_big ? big : st.unknown;
            }
            break;
        }
    }
}

static bool same_state(const SlotState& a, const SlotState& b) {
    if (a.too_big || b.too_big) return false;
    if (a.present != b.present) return false;
    if (!a.present) return true;
    if (a.unknown != b.unknown) return false;
    if (!same_val(a.value, b.value)) return false;
    if (a.items.size() != b.items.size() || a.dict_items.size() != b.dict_items.size()) return false;
    for (size_t i = 0; i < a.items.size(); ++i)
        if (!same_val(a.items[i], b.items[i])) return false;
    for (size_t i = 0; i < a.dict_items.size(); ++i)
        if (!same_val(a.dict_items[i].first, b.dict_items[i].first) ||
            !same_val(a.dict_items[i].second, b.dict_items[i].second))
            return false;
    return true;
}

void Interp::record(const Slot& s) {
    const std::uint64_t epoch = s.kind == Slot::Var ? s.env->epoch : s.obj->epoch;
    const auto key = s.key();
    // Innermost journal first: once one already holds the slot, every older one does too (they were all active
    // when it was first recorded); a slot created after a journal started is also newer than every older one.
    for (auto it = journals_.rbegin(); it != journals_.rend(); ++it) {
        Journal* j = *it;
        ++steps_;
        if (epoch > j->start_epoch) break;  // created inside the branch: nothing to undo
        if (j->originals.count(key)) break;
        j->originals.emplace(key, std::make_pair(s, capture_slot(s)));
    }
}

void Interp::note_mutation(Object* container) {
    if (journals_.empty() || !container) return;
    record(Slot{Slot::Contents, container->shared_from_this(), nullptr, {}});
}

void Interp::note_attr_write(const Val& instance, const std::string& name) {
    if (!journals_.empty()) record(Slot{Slot::Attr, instance.o, nullptr, name});
}

void Interp::note_var_write(Env& env, const std::string& name) {
    if (!journals_.empty()) record(Slot{Slot::Var, nullptr, env.shared_from_this(), name});
}

void Interp::mark_alias(Val& unknown, const std::vector<Val>& candidates) {
    constexpr std::size_t kMaxCandidates = 64;
    unknown.b = true;
    auto list = std::make_shared<SeqObj>(ObjKind::Tuple);
    auto add = [&](const Val& c) {
        for (const auto& have : list->items)
            if (have.o == c.o) return;  // each object once: merges in loops must not pile them up
        if (list->items.size() < kMaxCandidates) list->items.push_back(c);
        else list->unknown = "too many candidates";
    };
    for (const auto& c : candidates) {
        if (c.is_obj()) add(c);
        else if (c.may_alias() && c.o)
            for (const auto& inner : static_cast<SeqObj*>(c.o.get())->items) add(inner);
        else if (c.may_alias()) list->unknown = "an unknown candidate";
    }
    unknown.o = list;
}

void Interp::spoil_candidates(const Val& unknown, const std::string& reason) {
    if (!unknown.may_alias() || !unknown.o) return;
    for (const auto& c : static_cast<SeqObj*>(unknown.o.get())->items) poison(c, reason);
}

void Interp::poison(const Val& v, const std::string& reason) {
    if (v.is_obj(ObjKind::List) || v.is_obj(ObjKind::Set) || v.is_obj(ObjKind::Tuple)) {
        note_mutation(v.o.get());
        v.as<SeqObj>()->unknown = reason;
        return;
    }
    if (v.is_obj(ObjKind::Dict)) {
        note_mutation(v.o.get());
        v.as<DictObj>()->unknown = reason;
        return;
    }
    if (!v.is_obj(ObjKind::Instance)) return;
    auto* inst = v.as<InstanceObj>();
    if (!inst->poisoned.empty()) return;
    if (!journals_.empty()) record(Slot{Slot::Attr, v.o, nullptr, kPoisonSlot});
    inst->poisoned = reason;
}

void Interp::havoc(Frame& f, const Val& v, const std::string& reason, std::unordered_set<const Object*>& seen) {
    if (v.may_alias() && v.o) {
        for (const auto& c : static_cast<SeqObj*>(v.o.get())->items) havoc(f, c, reason, seen);
        return;
    }
    if (!v.is_obj() || !seen.insert(v.o.get()).second) return;
    ++steps_;  // the walk is bounded by the recipe's step budget, like any other work
    if (v.is_obj(ObjKind::List) || v.is_obj(ObjKind::Set) || v.is_obj(ObjKind::Dict)) {
        // Contents already unknown: nothing in them can be read any more, so nothing to walk again.
        if (!(v.is_obj(ObjKind::Dict) ? v.as<DictObj>()->unknown : v.as<SeqObj>()->unknown).empty()) return;
        if (v.is_obj(ObjKind::Dict)) {
            for (const auto& [_, item] : v.as<DictObj>()->items)
                if (!out_of_budget()) havoc(f, item, reason, seen);
        } else {
            for (const auto& item : v.as<SeqObj>()->items)
                if (!out_of_budget()) havoc(f, item, reason, seen);
        }
        poison(v, reason);
        return;
    }
    if (!v.is_obj(ObjKind::Instance)) return;
    auto* inst = v.as<InstanceObj>();
    if (!inst->poisoned.empty()) return;
    if (!journals_.empty()) record(Slot{Slot::Attr, v.o, nullptr, kOpaqueSlot});
    inst->opaque = reason;
    inst->opaque_at = f.stmt;
    // The objects it holds stay (the call may change them, not likely replace them); every other value it holds,
    // and every field it takes by default, is whatever the call left.
    for (auto& a : inst->attrs) {
        ++steps_;
        if (a.value.is_obj(ObjKind::Instance) || a.value.is_obj(ObjKind::List) || a.value.is_obj(ObjKind::Dict) ||
            a.value.is_obj(ObjKind::Set)) {
            havoc(f, a.value, reason, seen);
            continue;
        }
        note_attr_write(v, a.name);
        a.value = Val::unknown(reason, f.stmt);
        a.info = store_info(f);
    }
}

// Runs each branch from the same starting state and merges the outcomes. `rest` are the statements after the
// branching statement in its block: when some branches end (return/break/continue) and others fall through, the
// rest runs once, in the merged state of the falling-through branches, and is then merged with the ended ones.
struct Interp::BranchRunner {
    Interp& in;
    Frame& f;
    Loc where;

    struct Outcome {
        Flow flow = Flow::Normal;
        std::optional<Val> result;
        std::map<std::tuple<int, const void*, std::string>, std::pair<Interp::Slot, SlotState>> finals;
        std::map<std::tuple<int, const void*, std::string>, std::pair<Interp::Slot, SlotState>> originals;
    };

    Outcome run_one(const std::function<Flow()>& body) {
        Interp::Journal j;
        j.start_epoch = current_epoch();
        in.journals_.push_back(&j);
        std::optional<Val> saved = f.result;
        Outcome o;
        o.flow = body();
        o.result = f.result;
        f.result = saved;
        // Undoing and merging cost work the statements do not count: charge it to the step budget.
        in.steps_ += static_cast<std::int64_t>(2 * j.originals.size());
        for (auto& [key, entry] : j.originals) {
            auto& fin =
                o.finals.emplace(key, std::make_pair(entry.first, capture_slot(entry.first))).first->second.second;
            in.steps_ += static_cast<std::int64_t>(fin.items.size() + fin.dict_items.size());
        }
        for (auto& [key, entry] : j.originals) restore_slot(entry.first, entry.second);
        in.journals_.pop_back();
        o.originals = std::move(j.originals);
        return o;
    }

    Val merge_val(const std::optional<Val>& a, const std::optional<Val>& b) const {
        if (!a) return b ? *b : Val::none();
        if (!b) return *a;
        return merge_vals(*a, *b, where);
    }

    // The merge of several outcomes of one slot (pointers: the states may hold large containers).
    SlotState merged_state(const std::vector<const SlotState*>& states) const {
        for (size_t i = 1; i < states.size(); ++i) {
            if (same_state(*states.front(), *states[i])) continue;
            // Keep the provenance of a branch that wrote the slot, so the unknown has a location.
            const SlotState* keep = states.front();
            for (const SlotState* st : states)
                if (st->present && (st->info.loc.valid() || !keep->present)) keep = st;
            SlotState u;
            u.present = true;
            u.info = keep->info;
            const std::string reason = fmt::format("set differently depending on the condition at {}:{}",
                                                   where.file ? *where.file : "", where.line);
            std::vector<Val> objects;
            for (const SlotState* st : states)
                if (st->value.is_obj() || st->value.may_alias()) objects.push_back(st->value);
            u.value = Val::unknown(reason, where);
            if (!objects.empty()) Interp::mark_alias(u.value, objects);
            u.unknown = reason;  // a list or dict whose contents differ: contents unknown
            return u;
        }
        return *states.front();
    }

    // Applies the merge of `outs` to the live state (journaled for enclosing branches).
    void apply_merge(const std::vector<const Outcome*>& outs) {
        std::map<std::tuple<int, const void*, std::string>, std::pair<const Interp::Slot*, const SlotState*>> slots;
        for (const Outcome* o : outs)
            for (const auto& [key, entry] : o->originals)
                slots.emplace(key, std::make_pair(&entry.first, &entry.second));
        in.steps_ += static_cast<std::int64_t>(slots.size() * outs.size());
        std::vector<const SlotState*> states;
        for (const auto& [key, slot] : slots) {
            states.clear();
            for (const Outcome* o : outs) {
                auto it = o->finals.find(key);
                states.push_back(it != o->finals.end() ? &it->second.second : slot.second);
                in.steps_ += static_cast<std::int64_t>(states.back()->items.size() + states.back()->dict_items.size());
            }
            SlotState st = merged_state(states);
            in.record(*slot.first);
            restore_slot(*slot.first, st);
        }
    }

    Flow run(const std::vector<std::function<Flow()>>& branches, const std::vector<NodeId>* rest, size_t next,
             bool& consumed_rest) {
        consumed_rest = false;
        std::vector<Outcome> outs;
        outs.reserve(branches.size());
        for (const auto& b : branches) outs.push_back(run_one(b));
        std::vector<const Outcome*> live, falling, ending;
        for (const auto& o : outs)
            if (o.flow != Flow::Raise) live.push_back(&o);
        if (live.empty()) return Flow::Raise;  // every path fails; the state is the pre-branch one
        for (const Outcome* o : live) (o->flow == Flow::Normal ? falling : ending).push_back(o);
        std::optional<Val> ended_result;
        for (const Outcome* o : ending)
            if (o->flow == Flow::Return) ended_result = ended_result ? merge_val(ended_result, o->result) : o->result;

        if (ending.empty()) {
            apply_merge(falling);
            return Flow::Normal;
        }
        if (falling.empty()) {
            apply_merge(ending);
            bool any_return = false;
            for (const Outcome* o : ending) any_return |= o->flow == Flow::Return;
            if (any_return) {
                f.result = ended_result;
                return Flow::Return;
            }
            return ending.front()->flow;
        }
        // Some paths ended, others go on: run the rest of the block for the latter, then merge both worlds.
        Outcome cont = run_one([&] {
            apply_merge(falling);
            if (!rest || next >= rest->size()) return Flow::Normal;
            return in.exec_stmts(f, *rest, next);
        });
        consumed_rest = rest && next < rest->size();
        std::vector<const Outcome*> ended_world = ending;
        Outcome merged_end;
        {
            // The state of the ended paths, as one outcome.
            std::map<std::tuple<int, const void*, std::string>, Interp::Slot> slots;
            for (const Outcome* o : ending)
                for (const auto& [key, entry] : o->originals) {
                    slots.emplace(key, entry.first);
                    merged_end.originals.emplace(key, entry);
                }
            std::vector<const SlotState*> states;
            for (const auto& [key, slot] : slots) {
                states.clear();
                const SlotState& original = merged_end.originals[key].second;
                for (const Outcome* o : ending) {
                    auto it = o->finals.find(key);
                    states.push_back(it != o->finals.end() ? &it->second.second : &original);
                }
                merged_end.finals.emplace(key, std::make_pair(slot, merged_state(states)));
            }
        }
        apply_merge({&merged_end, &cont});
        if (cont.flow == Flow::Return) {
            f.result = merge_val(ended_result, cont.result);
            return Flow::Return;
        }
        if (cont.flow == Flow::Raise) {
            // The going-on paths fail later: only the ended ones remain.
            apply_merge({&merged_end});
            if (ended_result) f.result = ended_result;
            return ended_result ? Flow::Return : ending.front()->flow;
        }
        if (ended_result) f.result = f.result ? merge_val(f.result, ended_result) : ended_result;
        return cont.flow;
    }
};

Flow Interp::run_branches(Frame& f, Loc where, const std::vector<std::function<Flow()>>& branches,
                          const std::vector<NodeId>* rest, std::size_t next, bool& consumed_rest) {
    return BranchRunner{*this, f, where}.run(branches, rest, next, consumed_rest);
}

Val merge_vals(const Val& a, const Val& b, Loc where) {
    if (same_val(a, b)) return a;
    Val u = Val::unknown(fmt::format("depends on the condition at {}:{}", where.file ? *where.file : "", where.line),
                         where);
    if (a.is_obj() || b.is_obj() || a.may_alias() || b.may_alias()) Interp::mark_alias(u, {a, b});
    return u;
}

}  // namespace mbl::py
