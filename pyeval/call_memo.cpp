// CallMemo (see call_memo.hpp): the evaluation of a call into an evaluator of its own, and its copies.
#include "pyeval/call_memo.hpp"

#include <fmt/format.h>

#include <unordered_set>

namespace mbl::py {

struct CallMemo::Entry {
    ObjectRegistry objects;  // what the evaluation made; declared first, so destroyed last (frees cycles)
    bool usable = false;
    std::optional<Val> answer;
    std::vector<std::pair<const Object*, ObjPtr>> thawed;  // module global -> the evaluation's private copy
    std::int64_t steps = 0;
    int expr_depth_peak = 0;
    // Stand-ins for the caller's call chain and call site: whatever holds them is re-hung on the caller's.
    std::string stand_in_file = "<call memo>";
    Loc stand_in_site;
    Chain stand_in_chain;
};

namespace {

// Whether every object the evaluation made and `roots` reach can be copied: containers and instances are, and
// immutable outside names and modules can be shared; a function, class or host object it made cannot (a closure
// holds the evaluation's scopes).
class Reach {
public:
    explicit Reach(const ObjectRegistry& made) : made_(made) {}

    bool val(const Val& v) { return !v.o || obj(v.o.get()); }
    bool made_here(const Val& v) const { return v.o && v.o->registry == &made_; }

    bool obj(const Object* o) {
        if (!o || o->registry != &made_ || !seen_.insert(o).second) return true;
        if (o->kind == ObjKind::External || o->kind == ObjKind::Module) return true;
        if (!copied_when_shared(o->kind)) return false;
        switch (o->kind) {
            case ObjKind::List:
            case ObjKind::Tuple:
            case ObjKind::Set:
                for (const auto& item : static_cast<const SeqObj*>(o)->items)
                    if (!val(item)) return false;
                return true;
            case ObjKind::Dict:
                for (const auto& [k, item] : static_cast<const DictObj*>(o)->items)
                    if (!val(k) || !val(item)) return false;
                return true;
            case ObjKind::Instance: {
                auto* inst = static_cast<const InstanceObj*>(o);
                if (!obj(inst->cls.get())) return false;
                for (const auto& a : inst->attrs)
                    if (!val(a.value)) return false;
                return true;
            }
            case ObjKind::Partial: {
                auto* p = static_cast<const PartialObj*>(o);
                if (!val(p->func)) return false;
                for (const auto& a : p->args)
                    if (!val(a)) return false;
                for (const auto& [k, a] : p->kwargs)
                    if (!val(a)) return false;
                return true;
            }
            case ObjKind::Method: {
                auto* m = static_cast<const MethodObj*>(o);
                return val(m->self) && !made_here(m->func);  // copies share the function (copy_object)
            }
            case ObjKind::Builtin: return val(static_cast<const BuiltinObj*>(o)->self);
            case ObjKind::FieldSpec: {
                auto* s = static_cast<const FieldSpecObj*>(o);
                return (!s->default_value || val(*s->default_value)) && (!s->factory || !made_here(*s->factory));
            }
            default: return false;
        }
    }

private:
    const ObjectRegistry& made_;
    std::unordered_set<const Object*> seen_;
};

// A copy of what an entry holds, for one caller: objects the evaluation made are copied (once each, so that sharing
// and cycles are kept), others shared; call chains below the stand-in hang from `to_chain`, the stand-in site is
// `to_site`.
class Copier {
public:
    Copier(const ObjectRegistry& made, const Chain& from_chain, const std::string* from_file, Chain to_chain,
           Loc to_site)
        : made_(made),
          from_chain_(from_chain),
          from_file_(from_file),
          to_chain_(std::move(to_chain)),
          to_site_(to_site) {}

    Loc loc(Loc l) const { return l.file == from_file_ ? to_site_ : l; }

    Chain chain(const Chain& c) {
        if (!c) return c;
        if (c == from_chain_) return to_chain_;
        if (auto it = sites_.find(c.get()); it != sites_.end()) return it->second;
        Chain parent = chain(c->parent);
        Chain out = c;  // not made below the stand-in: kept
        if (parent != c->parent) {
            auto step = std::make_shared<CallSite>();
            step->loc = loc(c->loc);
            step->callee = c->callee;
            step->parent = parent;
            step->depth = parent ? parent->depth + 1 : 1;  // as Interp::call_function counts
            out = step;
        }
        sites_.emplace(c.get(), out);
        return out;
    }

    SetInfo info(const SetInfo& i) {
        SetInfo out = i;
        out.loc = loc(i.loc);
        out.chain = chain(i.chain);
        return out;
    }

    Val val(const Val& v) {
        Val out = v;
        out.at = loc(v.at);
        if (v.o) out.o = obj(v.o);
        return out;
    }

    ObjPtr obj(const ObjPtr& o) {
        if (!o || o->registry != &made_ || !copied_when_shared(o->kind)) return o;
        if (auto it = copies_.find(o.get()); it != copies_.end()) return it->second;
        return copy_object(
            o, [this](const Object* src, const ObjPtr& c) { copies_.emplace(src, c); },
            [this](const Val& v) { return val(v); }, [this](const SetInfo& i) { return info(i); });
    }

private:
    const ObjectRegistry& made_;
    const Chain& from_chain_;
    const std::string* from_file_;
    Chain to_chain_;
    Loc to_site_;
    std::unordered_map<const Object*, ObjPtr> copies_;
    std::unordered_map<const CallSite*, Chain> sites_;
};

}  // namespace

std::shared_ptr<CallMemo::Entry> CallMemo::evaluate(Interp& in, const Frame& f, const Body& body) {
    auto e = std::make_shared<Entry>();
    e->stand_in_site = Loc{&e->stand_in_file, 1, 1, 1, 1};
    e->stand_in_chain = std::make_shared<CallSite>(CallSite{e->stand_in_site, "", nullptr, 0});
    std::vector<Diagnostic> diagnostics;
    {
        ObjectRegistry::Use use(e->objects);
        Interp sub(in.project(), &diagnostics);
        Frame sf;
        sf.module = f.module;
        sf.function = f.function;
        sf.depth = f.depth;
        sf.chain = e->stand_in_chain;
        sf.stmt = e->stand_in_site;
        e->answer = body(sub, sf, e->stand_in_site);
        e->steps = sub.steps_;
        e->expr_depth_peak = sub.expr_depth_peak_;
        for (const auto& [original, copy] : sub.thawed_) e->thawed.emplace_back(original, copy);
    }
    Reach reach(e->objects);
    e->usable = diagnostics.empty() && (!e->answer || reach.val(*e->answer));
    for (const auto& [original, copy] : e->thawed) e->usable = e->usable && reach.obj(copy.get());
    return e;
}

std::optional<Val> CallMemo::call(Interp& in, Frame& f, Loc site, const std::string& key, const Body& body) {
    const std::string full_key = fmt::format("{}\n{}", key, f.depth);  // the call depth limit counts from here
    std::shared_ptr<Entry> e;
    bool evaluate_here = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = entries_.find(full_key);
        if (it == entries_.end()) {
            entries_.emplace(full_key, nullptr);
            evaluate_here = true;
        } else {
            e = it->second;  // null while another thread evaluates it: this call runs directly
        }
    }
    if (evaluate_here && in.import_depth_ == 0) {
        try {
            e = evaluate(in, f, body);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex_);
            entries_.erase(full_key);
            throw;
        }
        std::lock_guard<std::mutex> lock(mutex_);
        entries_[full_key] = e;
        ++counts_.evaluated;
    } else if (evaluate_here) {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_.erase(full_key);  // a module's top level: left for a recipe to evaluate
    }

    const EvalLimits& limits = in.project().limits();
    bool exact = e && e->usable && in.import_depth_ == 0 && in.steps_ + e->steps <= limits.max_steps &&
                 in.expr_depth_ + e->expr_depth_peak <= limits.max_expr_depth &&
                 (e->thawed.empty() || in.journals_.empty());
    for (std::size_t i = 0; exact && e && i < e->thawed.size(); ++i) exact = !in.thawed_.count(e->thawed[i].first);
    if (!exact) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ++counts_.direct;
        }
        return body(in, f, site);
    }
    Copier copier(e->objects, e->stand_in_chain, &e->stand_in_file, f.chain, site);
    for (const auto& [original, copy] : e->thawed) {
        ObjPtr mine = copier.obj(copy);
        mine->epoch = 0;  // as Interp::thaw makes them: state from before any branch
        in.thawed_[original] = mine;
    }
    std::optional<Val> out;
    if (e->answer) out = copier.val(*e->answer);
    in.steps_ += e->steps;
    std::lock_guard<std::mutex> lock(mutex_);
    ++counts_.copied;
    return out;
}

CallMemo::Counts CallMemo::counts() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return counts_;
}

}  // namespace mbl::py
