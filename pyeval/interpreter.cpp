// Statements of the abstract evaluator: blocks, assignments, control flow, function and class definitions.
// Names, scopes and imports are in scopes.cpp; branches whose condition is unknown run through branches.cpp.
#include "pyeval/interpreter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace mbl::py {

// ---------------------------------------------------------------------------------------------------------------
// Setup

bool Interp::charge_bytes(std::size_t bytes, Loc at, bool one_value) {
    const EvalLimits& limits = project_.limits();
    bytes_ += bytes;
    const bool too_large = one_value && bytes > limits.max_value_bytes;
    if (!too_large && bytes_ <= limits.max_total_bytes) return true;
    if (budget_reason_.empty()) {
        budget_reason_ =
            too_large ? fmt::format("a value grows past the limit of {} for one value (--limit python-value-bytes)",
                                    format_limit(*find_limit("python-value-bytes"), limits.max_value_bytes))
                      : fmt::format("the values built grow past the limit of {} for one recipe (--limit "
                                    "python-total-bytes)",
                                    format_limit(*find_limit("python-total-bytes"), limits.max_total_bytes));
        budget_site_ = at;
    }
    steps_ = limits.max_steps + 1;  // stops the recipe as the step budget does
    return false;
}

Interp::Interp(Project& project, std::vector<Diagnostic>* diagnostics)
    : project_(project), diagnostics_(diagnostics), id_(project.next_id()) {}

void Interp::report(Diagnostic d) {
    if (diagnostics_) diagnostics_->push_back(std::move(d));
}

SetInfo Interp::store_info(Frame& f) const {
    SetInfo info;
    info.loc = f.stmt;
    info.chain = f.chain;
    info.origin = Origin::Recipe;
    return info;
}

// ---------------------------------------------------------------------------------------------------------------
// Statements

void Interp::run_module(Module* m, int import_depth) {
    import_depth_ = import_depth;
    m->globals->owner = id_;
    Frame f;
    f.module = m;
    f.function = "<module>";
    bind(f, "__name__", Val::str(m->name));
    if (!m->ast) return;
    const Ast& a = *m->ast;
    std::vector<NodeId> stmts;
    for (std::uint32_t i = 0; i < a.count(a.root); ++i) stmts.push_back(a.kid(a.root, i));
    module_frame_ = &f;
    module_ = m;
    exec_stmts(f, stmts, 0);
    module_frame_ = nullptr;
}

Flow Interp::exec_block(Frame& f, NodeId block) {
    if (block == kNoNode) return Flow::Normal;
    const Ast& a = ast(f);
    std::vector<NodeId> stmts;
    stmts.reserve(a.count(block));
    for (std::uint32_t i = 0; i < a.count(block); ++i) stmts.push_back(a.kid(block, i));
    return exec_stmts(f, stmts, 0);
}

Flow Interp::exec_stmts(Frame& f, const std::vector<NodeId>& stmts, std::size_t from) {
    for (std::size_t i = from; i < stmts.size(); ++i) {
        if (&f == module_frame_ && !out_of_budget()) module_stmt_ = stmts[i];  // the statement that spent it
        bool consumed = false;
        Flow flow = exec_stmt(f, stmts[i], stmts, i + 1, consumed);
        if (consumed || flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
}

Flow Interp::exec_stmt(Frame& f, NodeId s, const std::vector<NodeId>& rest, std::size_t next, bool& consumed_rest) {
    if (++steps_ > project_.limits().max_steps) return Flow::Raise;  // budget spent: unwind (the result is dropped)
    if (handed_) return Flow::Raise;  // a job script's config is handed over: unwind to run_main_block
    const Ast& a = ast(f);
    f.stmt = loc(f, s);
    if (entry_points_ && hand_over(f, s)) return Flow::Raise;
    switch (a.kind(s)) {
        case Kind::ExpressionStatement:
            for (NodeId k : a.named_kids(s)) {
                f.stmt = loc(f, k);
                if (a.kind(k) == Kind::Assignment) exec_assignment(f, k);
                else if (a.kind(k) == Kind::AugmentedAssignment) exec_aug_assignment(f, k);
                else eval(f, k);
            }
            return Flow::Normal;
        case Kind::ReturnStatement: {
            auto kids = a.named_kids(s);
            Val v = kids.empty() ? Val::none() : eval(f, kids[0]);
            f.result = f.result ? merge_vals(*f.result, v, f.stmt) : v;
            return Flow::Return;
        }
        case Kind::IfStatement: return exec_if(f, s, rest, next, consumed_rest);
        case Kind::ForStatement: return exec_for(f, s);
        case Kind::WhileStatement: return exec_while(f, s);
        case Kind::TryStatement: return exec_try(f, s);
        case Kind::MatchStatement: return exec_match(f, s);
        case Kind::WithStatement: {
            for (NodeId k : a.named_kids(s))
                if (a.kind(k) == Kind::WithClause)
                    for (NodeId item : a.named_kids(k)) eval(f, a.field(item, Field::Value));
            return exec_block(f, a.field(s, Field::Body));
        }
        case Kind::FunctionDefinition: exec_function_def(f, s, {}); return Flow::Normal;
        case Kind::ClassDefinition: exec_class_def(f, s, kNoNode); return Flow::Normal;
        case Kind::DecoratedDefinition: {
            std::vector<Val> decorators;
            for (NodeId k : a.named_kids(s))
                if (a.kind(k) == Kind::Decorator) {
                    auto kids = a.named_kids(k);
                    decorators.push_back(kids.empty() ? Val::unknown("empty decorator") : eval(f, kids[0]));
                }
            NodeId def = a.field(s, Field::Definition);
            if (def == kNoNode) return Flow::Normal;
            if (a.kind(def) == Kind::FunctionDefinition) exec_function_def(f, def, decorators);
            else exec_class_def(f, def, s);
            return Flow::Normal;
        }
        case Kind::ImportStatement: exec_import(f, s); return Flow::Normal;
        case Kind::ImportFromStatement: exec_import_from(f, s); return Flow::Normal;
        case Kind::BreakStatement: return Flow::Break;
        case Kind::ContinueStatement: return Flow::Continue;
        case Kind::RaiseStatement: return Flow::Raise;
        case Kind::DeleteStatement: exec_delete(f, s); return Flow::Normal;
        default:
            // pass, assert, global, nonlocal, future imports, type aliases: nothing the config depends on.
            return Flow::Normal;
    }
}

Flow Interp::exec_if(Frame& f, NodeId s, const std::vector<NodeId>& rest, std::size_t next, bool& consumed_rest) {
    const Ast& a = ast(f);
    // Clauses in order: (condition or none for else, body).
    std::vector<std::pair<NodeId, NodeId>> clauses;
    clauses.emplace_back(a.field(s, Field::Condition), a.field(s, Field::Consequence));
    for (std::uint32_t i = 0; i < a.count(s); ++i) {
        NodeId k = a.kid(s, i);
        if (a.kind(k) == Kind::ElifClause)
            clauses.emplace_back(a.field(k, Field::Condition), a.field(k, Field::Consequence));
        else if (a.kind(k) == Kind::ElseClause) clauses.emplace_back(kNoNode, a.field(k, Field::Body));
    }
    std::vector<NodeId> candidates;  // bodies that may run
    bool has_else = false;
    Loc where = loc(f, s);
    for (const auto& [cond, body] : clauses) {
        if (cond == kNoNode) {
            candidates.push_back(body);
            has_else = true;
            break;
        }
        Val c = eval(f, cond);
        auto t = truthy(c);
        if (t && *t) {
            candidates.push_back(body);
            has_else = true;  // an always-true clause ends the chain
            break;
        }
        if (!t) {
            candidates.push_back(body);
            where = loc(f, cond);
        }
    }
    if (candidates.size() == 1 && has_else) return exec_block(f, candidates[0]);
    if (candidates.empty()) return Flow::Normal;
    std::vector<std::function<Flow()>> branches;
    for (NodeId body : candidates) branches.push_back([this, &f, body] { return exec_block(f, body); });
    if (!has_else) branches.push_back([] { return Flow::Normal; });
    return run_branches(f, where, branches, &rest, next, consumed_rest);
}

Flow Interp::exec_for(Frame& f, NodeId s) {
    const Ast& a = ast(f);
    NodeId target = a.field(s, Field::Left);
    NodeId body = a.field(s, Field::Body);
    NodeId else_clause = a.field(s, Field::Alternative);
    Val iterable = eval(f, a.field(s, Field::Right));
    std::string reason;
    auto items = iterate(iterable, reason);
    SetInfo info = store_info(f);
    if (!items) {
        // Unknown iterations: the body may run (with an unknown loop variable) or not.
        Loc where = loc(f, a.field(s, Field::Right));
        std::vector<std::function<Flow()>> branches;
        branches.push_back([&, this] {
            Val var = Val::unknown("loop variable over " + reason, where);
            var.b = true;  // the elements may be objects the evaluator knows
            assign_target(f, target, var, info);
            Flow fl = exec_block(f, body);
            return fl == Flow::Break || fl == Flow::Continue ? Flow::Normal : fl;
        });
        branches.push_back([] { return Flow::Normal; });
        bool consumed = false;
        return run_branches(f, where, branches, nullptr, 0, consumed);
    }
    for (auto& item : *items) {
        assign_target(f, target, item, info);
        Flow fl = exec_block(f, body);
        if (fl == Flow::Break) return Flow::Normal;
        if (fl == Flow::Return || fl == Flow::Raise) return fl;
    }
    if (else_clause != kNoNode) return exec_block(f, a.field(else_clause, Field::Body));
    return Flow::Normal;
}

Flow Interp::exec_while(Frame& f, NodeId s) {
    const Ast& a = ast(f);
    NodeId cond = a.field(s, Field::Condition);
    NodeId body = a.field(s, Field::Body);
    for (int iteration = 0; iteration < project_.limits().max_while_iterations; ++iteration) {
        auto t = truthy(eval(f, cond));
        if (t && !*t) return Flow::Normal;
        if (!t) {
            std::vector<std::function<Flow()>> branches;
            branches.push_back([&, this] {
                Flow fl = exec_block(f, body);
                return fl == Flow::Break || fl == Flow::Continue ? Flow::Normal : fl;
            });
            branches.push_back([] { return Flow::Normal; });
            bool consumed = false;
            return run_branches(f, loc(f, cond), branches, nullptr, 0, consumed);
        }
        Flow fl = exec_block(f, body);
        if (fl == Flow::Break) return Flow::Normal;
        if (fl == Flow::Return || fl == Flow::Raise) return fl;
        if (out_of_budget()) return Flow::Raise;
    }
    steps_ = project_.limits().max_steps + 1;  // a loop that does not end: stop the recipe as over budget
    return Flow::Raise;
}

static bool contains_import(const Ast& a, NodeId n, int depth = 0) {
    if (depth > 50) return false;
    if (a.kind(n) == Kind::ImportStatement || a.kind(n) == Kind::ImportFromStatement) return true;
    if (a.kind(n) == Kind::FunctionDefinition || a.kind(n) == Kind::ClassDefinition) return false;
    for (std::uint32_t i = 0; i < a.count(n); ++i)
        if (contains_import(a, a.kid(n, i), depth + 1)) return true;
    return false;
}

Flow Interp::exec_try(Frame& f, NodeId s) {
    const Ast& a = ast(f);
    NodeId body = a.field(s, Field::Body);
    NodeId handler = kNoNode, else_body = kNoNode, finally_body = kNoNode;
    for (NodeId k : a.named_kids(s)) {
        if (a.kind(k) == Kind::ExceptClause && handler == kNoNode) {
            for (NodeId c : a.named_kids(k))
                if (a.kind(c) == Kind::Block) handler = c;
        } else if (a.kind(k) == Kind::ElseClause) {
            else_body = a.field(k, Field::Body);
        } else if (a.kind(k) == Kind::FinallyClause) {
            for (NodeId c : a.named_kids(k))
                if (a.kind(c) == Kind::Block) finally_body = c;
        }
    }
    auto run_body = [&, this] {
        Flow fl = exec_block(f, body);
        if (fl == Flow::Raise && handler != kNoNode) return exec_block(f, handler);
        if (fl == Flow::Normal && else_body != kNoNode) return exec_block(f, else_body);
        return fl;
    };
    Flow flow;
    if (handler != kNoNode && contains_import(a, body)) {
        // An import that may fail at run time (optional dependency): both outcomes are possible.
        std::vector<std::function<Flow()>> branches{run_body, [&, this] { return exec_block(f, handler); }};
        bool consumed = false;
        flow = run_branches(f, loc(f, s), branches, nullptr, 0, consumed);
    } else {
        flow = run_body();
    }
    if (finally_body != kNoNode) {
        Flow fin = exec_block(f, finally_body);
        if (fin != Flow::Normal) return fin;
    }
    return flow;
}

Flow Interp::exec_match(Frame& f, NodeId s) {
    const Ast& a = ast(f);
    eval(f, a.field(s, Field::Subject));
    std::vector<std::function<Flow()>> branches;
    NodeId body = a.field(s, Field::Body);
    if (body != kNoNode)
        for (NodeId c : a.named_kids(body))
            if (a.kind(c) == Kind::CaseClause) {
                NodeId consequence = a.field(c, Field::Consequence);
                branches.push_back([this, &f, consequence] { return exec_block(f, consequence); });
            }
    branches.push_back([] { return Flow::Normal; });
    bool consumed = false;
    return run_branches(f, loc(f, s), branches, nullptr, 0, consumed);
}

void Interp::exec_delete(Frame& f, NodeId s) {
    const Ast& a = ast(f);
    std::vector<NodeId> targets;
    for (NodeId k : a.named_kids(s)) {
        if (a.kind(k) == Kind::ExpressionList)
            for (NodeId t : a.named_kids(k)) targets.push_back(t);
        else targets.push_back(k);
    }
    for (NodeId t : targets) {
        if (a.kind(t) == Kind::Identifier) {
            Env& env = scope(f);
            if (env.owner == id_) {
                note_var_write(env, std::string(a.source(t)));
                env.erase(a.source(t));
            }
        } else if (a.kind(t) == Kind::Attribute) {
            Val obj = eval(f, a.field(t, Field::Object));
            std::string name(a.source(a.field(t, Field::AttributeName)));
            if (obj.is_obj(ObjKind::Instance)) {
                note_attr_write(obj, name);
                auto& attrs = obj.as<InstanceObj>()->attrs;
                attrs.erase(std::remove_if(attrs.begin(), attrs.end(), [&](const Attr& x) { return x.name == name; }),
                            attrs.end());
            }
        } else if (a.kind(t) == Kind::Subscript) {
            Val container = eval(f, a.field(t, Field::Value));
            Val key = eval(f, a.field(t, Field::Subscript));
            if (container.is_obj(ObjKind::Dict)) {
                auto* d = container.as<DictObj>();
                note_mutation(d);
                if (key.is_unknown()) {
                    d->unknown = "an entry with an unknown key was deleted";
                } else {
                    d->items.erase(std::remove_if(d->items.begin(), d->items.end(),
                                                  [&](const auto& kv) { return py_equal(kv.first, key) == true; }),
                                   d->items.end());
                }
            } else if (container.is_obj(ObjKind::List)) {
                auto* l = container.as<SeqObj>();
                note_mutation(l);
                if (key.is_int()) {
                    std::int64_t i = key.as_int();
                    std::int64_t n = static_cast<std::int64_t>(l->items.size());
                    if (i < 0) i += n;
                    if (i >= 0 && i < n) l->items.erase(l->items.begin() + i);
                } else {
                    l->unknown = "an element was deleted at an unknown position";
                }
            }
        }
    }
}

void Interp::exec_assignment(Frame& f, NodeId node) {
    const Ast& a = ast(f);
    // `a = b = value`: the right side nests; every left side receives the same value.
    std::vector<NodeId> targets;
    NodeId cur = node;
    while (a.kind(cur) == Kind::Assignment) {
        targets.push_back(a.field(cur, Field::Left));
        NodeId right = a.field(cur, Field::Right);
        if (right == kNoNode) return;  // an annotation without a value
        cur = right;
    }
    Val value = eval(f, cur);
    SetInfo info = store_info(f);
    for (NodeId t : targets) assign_target(f, t, value, info);
}

void Interp::exec_aug_assignment(Frame& f, NodeId node) {
    const Ast& a = ast(f);
    NodeId target = a.field(node, Field::Left);
    NodeId op = a.field(node, Field::Operator);
    std::string opstr(op == kNoNode ? "" : a.source(op));
    Val current = eval(f, target);
    Val rhs = eval(f, a.field(node, Field::Right));
    if (opstr == "+=" && current.is_obj(ObjKind::List)) {
        // In place: every alias of the list sees the change.
        auto* l = current.as<SeqObj>();
        note_mutation(l);
        std::string reason;
        auto items = iterate(rhs, reason);
        if (!items) l->unknown = reason;
        else if (limit_items(l->items.size() + items->size())) l->unknown = "the list is too long";
        else if (l->unknown.empty()) l->items.insert(l->items.end(), items->begin(), items->end());
        return;
    }
    std::string binop = opstr.substr(0, opstr.size() - 1);
    Val result = binary_op(binop, current, rhs, f.stmt);
    assign_target(f, target, std::move(result), store_info(f));
}

void Interp::assign_target(Frame& f, NodeId t, Val value, const SetInfo& info) {
    const Ast& a = ast(f);
    switch (a.kind(t)) {
        case Kind::Identifier: bind(f, std::string(a.source(t)), std::move(value)); return;
        case Kind::Attribute: {
            NodeId object = a.field(t, Field::Object);
            Val obj = eval(f, object);
            if (obj.may_alias()) spoil_candidates(obj, "an attribute was set on a value that may be this object");
            else if (obj.is_unknown()) obj = materialize(f, object, obj);
            set_attr(f, obj, std::string(a.source(a.field(t, Field::AttributeName))), std::move(value), info);
            return;
        }
        case Kind::Subscript: {
            Val container = eval(f, a.field(t, Field::Value));
            Val key = eval(f, a.field(t, Field::Subscript));
            if (container.is_obj(ObjKind::Dict)) {
                auto* d = container.as<DictObj>();
                note_mutation(d);
                if (key.is_unknown()) {
                    d->unknown = "an entry with an unknown key was set";
                    return;
                }
                for (auto& kv : d->items)
                    if (py_equal(kv.first, key) == true) {
                        kv.second = std::move(value);
                        return;
                    }
                d->items.emplace_back(std::move(key), std::move(value));
            } else if (container.is_obj(ObjKind::List)) {
                auto* l = container.as<SeqObj>();
                note_mutation(l);
                std::int64_t n = static_cast<std::int64_t>(l->items.size());
                if (key.is_int()) {
                    std::int64_t i = key.as_int();
                    if (i < 0) i += n;
                    if (i >= 0 && i < n) l->items[static_cast<size_t>(i)] = std::move(value);
                } else {
                    l->unknown = "an element was set at an unknown position";
                }
            } else if (container.is_obj(ObjKind::Instance)) {
                poison(container, "an item was set on it with []");
            } else if (container.may_alias()) {
                spoil_candidates(container, "an item was set on a value that may be this object");
            }
            return;
        }
        case Kind::PatternList:
        case Kind::TuplePattern:
        case Kind::ListPattern:
        case Kind::ExpressionList:
        case Kind::Tuple:
        case Kind::List: {
            auto targets = a.named_kids(t);
            std::string reason;
            auto items = iterate(value, reason);
            size_t star = targets.size();
            for (size_t i = 0; i < targets.size(); ++i)
                if (a.kind(targets[i]) == Kind::ListSplatPattern || a.kind(targets[i]) == Kind::ListSplat) star = i;
            if (!items || (star == targets.size() && items->size() != targets.size()) ||
                (star != targets.size() && items->size() + 1 < targets.size())) {
                std::string why = items ? "the number of values does not match" : reason;
                for (NodeId k : targets) {
                    NodeId inner =
                        (a.kind(k) == Kind::ListSplatPattern || a.kind(k) == Kind::ListSplat) ? a.first_named(k) : k;
                    assign_target(f, inner, Val::unknown("unpacked from a value whose " + why, value.at), info);
                }
                return;
            }
            if (star == targets.size()) {
                for (size_t i = 0; i < targets.size(); ++i) assign_target(f, targets[i], (*items)[i], info);
                return;
            }
            size_t after = targets.size() - star - 1;
            for (size_t i = 0; i < star; ++i) assign_target(f, targets[i], (*items)[i], info);
            std::vector<Val> middle(items->begin() + static_cast<std::ptrdiff_t>(star),
                                    items->end() - static_cast<std::ptrdiff_t>(after));
            assign_target(f, a.first_named(targets[star]), make_list(std::move(middle)), info);
            for (size_t i = 0; i < after; ++i)
                assign_target(f, targets[star + 1 + i], (*items)[items->size() - after + i], info);
            return;
        }
        case Kind::ParenthesizedExpression: {
            auto kids = a.named_kids(t);
            if (!kids.empty()) assign_target(f, kids[0], std::move(value), info);
            return;
        }
        default: return;
    }
}

// A write into an unknown object (`cfg.x = 1` where cfg came from a helper the linter cannot follow): the name, or
// the attribute, gets a fresh object that remembers what is written from here on; everything else on it stays
// unknown. Only for unknowns that cannot be an object known elsewhere (see Val::may_alias).
Val Interp::materialize(Frame& f, NodeId expr, const Val& unknown) {
    const Ast& a = ast(f);
    auto inst = std::make_shared<InstanceObj>();
    inst->opaque = unknown.reason().empty() ? std::string("made at run time") : unknown.reason();
    inst->created = store_info(f);
    Val fresh = Val::obj(inst, unknown.at.valid() ? unknown.at : f.stmt);
    if (a.kind(expr) == Kind::Identifier) {
        bind(f, std::string(a.source(expr)), fresh);
        return fresh;
    }
    if (a.kind(expr) == Kind::Attribute) {
        NodeId object = a.field(expr, Field::Object);
        Val parent = eval(f, object);
        if (parent.is_unknown() && !parent.may_alias()) parent = materialize(f, object, parent);
        if (!parent.is_obj(ObjKind::Instance)) return unknown;
        const std::string name(a.source(a.field(expr, Field::AttributeName)));
        SetInfo info = store_info(f);
        if (const Attr* existing = parent.as<InstanceObj>()->find(name)) info = existing->info;
        set_attr(f, parent, name, fresh, info);
        return fresh;
    }
    return unknown;
}

// ---------------------------------------------------------------------------------------------------------------
// Function and class definitions

std::vector<Param> read_params(const Ast& a, NodeId params, const std::function<Val(NodeId)>& eval_default) {
    std::vector<Param> out;
    if (params == kNoNode) return out;
    bool keyword_only = false;
    for (NodeId p : a.named_kids(params)) {
        Param param;
        switch (a.kind(p)) {
            case Kind::Identifier: param.name = a.source(p); break;
            case Kind::DefaultParameter:
            case Kind::TypedDefaultParameter:
                param.name = a.source(a.field(p, Field::Name));
                param.default_value = eval_default(a.field(p, Field::Value));
                break;
            case Kind::TypedParameter: {
                for (NodeId k : a.named_kids(p)) {
                    if (a[k].field == Field::Type) continue;
                    if (a.kind(k) == Kind::Identifier) param.name = a.source(k);
                    else if (a.kind(k) == Kind::ListSplatPattern) {
                        param.kind = Param::Kind::VarArgs;
                        param.name = a.source(a.first_named(k));
                    } else if (a.kind(k) == Kind::DictionarySplatPattern) {
                        param.kind = Param::Kind::VarKw;
                        param.name = a.source(a.first_named(k));
                    }
                }
                break;
            }
            case Kind::ListSplatPattern:
                param.kind = Param::Kind::VarArgs;
                param.name = a.source(a.first_named(p));
                break;
            case Kind::DictionarySplatPattern:
                param.kind = Param::Kind::VarKw;
                param.name = a.source(a.first_named(p));
                break;
            case Kind::KeywordSeparator: keyword_only = true; continue;
            default: continue;  // positional separator `/`
        }
        // Parameters after `*args` or a bare `*` are keyword-only.
        if (param.kind == Param::Kind::VarArgs) keyword_only = true;
        else if (param.kind == Param::Kind::Normal && keyword_only) param.kind = Param::Kind::KeywordOnly;
        out.push_back(std::move(param));
    }
    return out;
}

void Interp::exec_function_def(Frame& f, NodeId def, const std::vector<Val>& decorators) {
    const Ast& a = ast(f);
    auto fn = std::make_shared<FunctionObj>();
    fn->module = f.module;
    fn->def = def;
    fn->body = a.field(def, Field::Body);
    fn->name = a.source(a.field(def, Field::Name));
    fn->qualname = f.module->name + "." + fn->name;
    fn->params = read_params(a, a.field(def, Field::Parameters), [&](NodeId e) { return eval(f, e); });
    fn->closure = f.class_body ? f.locals->parent : f.locals;
    Val result = Val::obj(fn, loc(f, def));
    // Decorators apply bottom-up. Unknown and outside decorators are taken to return the function unchanged.
    for (auto it = decorators.rbegin(); it != decorators.rend(); ++it) {
        const Val& d = *it;
        if (d.is_obj(ObjKind::Builtin)) {
            const std::string& n = d.as<BuiltinObj>()->name;
            if (n == "staticmethod") fn->staticmethod = true;
            else if (n == "classmethod") fn->classmethod = true;
            else if (n == "property") {
                auto prop = std::make_shared<PropertyObj>();
                prop->getter = result;
                result = Val::obj(prop);
            }
            continue;
        }
        if (d.is_obj(ObjKind::Function) || d.is_obj(ObjKind::Partial)) {
            CallArgs args;
            args.pos.push_back(result);
            Val wrapped = call(f, d, std::move(args), loc(f, def));
            if (wrapped.is_obj(ObjKind::Function) || wrapped.is_obj(ObjKind::Partial)) result = wrapped;
        }
    }
    bind(f, fn->name, result);
}

static bool is_dataclass_decorator(const Ast& a, NodeId decorated) {
    if (decorated == kNoNode) return false;
    for (NodeId k : a.named_kids(decorated)) {
        if (a.kind(k) != Kind::Decorator) continue;
        std::string_view text = a.source(k);
        auto paren = text.find('(');
        if (paren != std::string_view::npos) text = text.substr(0, paren);
        while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.remove_suffix(1);
        if (text.size() >= 9 && text.substr(text.size() - 9) == "dataclass") return true;
    }
    return false;
}

void Interp::exec_class_def(Frame& f, NodeId def, NodeId decorated) {
    const Ast& a = ast(f);
    auto cls = std::make_shared<ClassObj>();
    cls->module = f.module;
    cls->name = a.source(a.field(def, Field::Name));
    cls->qualname = f.module->name + "." + cls->name;
    cls->loc = loc(f, def);
    cls->dataclass = is_dataclass_decorator(a, decorated);
    if (NodeId sup = a.field(def, Field::Superclasses); sup != kNoNode) {
        for (NodeId k : a.named_kids(sup)) {
            if (a.kind(k) == Kind::KeywordArgument) continue;  // metaclass=...
            Val base = eval(f, k);
            if (base.is_obj(ObjKind::Class)) {
                auto* b = base.as<ClassObj>();
                if (b->is_enum) cls->is_enum = true;
            } else if (base.is_obj(ObjKind::External)) {
                const std::string& p = base.as<ExternalObj>()->path;
                if (p.size() >= 4 && p.compare(p.size() - 4, 4, "Enum") == 0) cls->is_enum = true;
            }
            cls->bases.push_back(std::move(base));
        }
    }
    // The class body runs in its own scope; annotated assignments are the dataclass fields.
    Frame body_frame;
    body_frame.module = f.module;
    body_frame.locals = std::make_shared<Env>();
    body_frame.locals->owner = id_;
    body_frame.locals->parent = f.locals;
    body_frame.chain = f.chain;
    body_frame.function = cls->name;
    body_frame.depth = f.depth;
    body_frame.class_body = true;
    NodeId body = a.field(def, Field::Body);
    if (body != kNoNode) {
        for (std::uint32_t i = 0; i < a.count(body); ++i) {
            NodeId st = a.kid(body, i);
            body_frame.stmt = loc(body_frame, st);
            if (a.kind(st) == Kind::ExpressionStatement) {
                auto kids = a.named_kids(st);
                if (kids.size() == 1 && a.kind(kids[0]) == Kind::Assignment &&
                    a.field(kids[0], Field::Type) != kNoNode &&
                    a.kind(a.field(kids[0], Field::Left)) == Kind::Identifier) {
                    NodeId asg = kids[0];
                    std::string name(a.source(a.field(asg, Field::Left)));
                    std::string_view type = a.source(a.field(asg, Field::Type));
                    NodeId right = a.field(asg, Field::Right);
                    Val value = right == kNoNode ? Val() : eval(body_frame, right);
                    if (type.find("ClassVar") != std::string_view::npos) {
                        if (right != kNoNode) bind(body_frame, name, value);
                        continue;
                    }
                    DataField field;
                    field.name = name;
                    field.loc = loc(body_frame, asg);
                    if (right != kNoNode) {
                        if (value.is_obj(ObjKind::FieldSpec)) {
                            auto* spec = value.as<FieldSpecObj>();
                            field.default_value = spec->default_value;
                            field.factory = spec->factory;
                            field.init = spec->init;
                            if (spec->default_value) bind(body_frame, name, *spec->default_value);
                        } else {
                            field.default_value = value;
                            bind(body_frame, name, value);
                        }
                    }
                    cls->fields.push_back(std::move(field));
                    continue;
                }
            }
            bool consumed = false;
            std::vector<NodeId> none;
            exec_stmt(body_frame, st, none, 0, consumed);
        }
    }
    for (auto& [name, v] : body_frame.locals->vars) {
        if (v.is_obj(ObjKind::Function) && !v.as<FunctionObj>()->owner.lock()) v.as<FunctionObj>()->owner = cls;
        cls->attrs.emplace_back(name, v);
    }
    if (decorated != kNoNode) host().class_decorated(*this, f, *cls, decorated);
    bind(f, cls->name, Val::obj(cls, cls->loc));
}

}  // namespace mbl::py
