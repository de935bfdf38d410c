// Names: scopes and binding (journaled while a branch runs), lookup through closures, module globals and builtins,
// module attributes (lazy re-exports followed), and the import statements that bind them.
#include <fmt/format.h>

#include "pyeval/interpreter.hpp"

namespace mbl::py {

Env& Interp::scope(Frame& f) { return f.locals ? *f.locals : *f.module->globals; }

void Interp::bind_local(Env& env, const std::string& name, Val v) {
    note_var_write(env, name);
    env.set(name, std::move(v));
}

void Interp::bind(Frame& f, const std::string& name, Val v) {
    Env& env = scope(f);
    if (env.owner != id_) return;  // never write another evaluator's scope
    bind_local(env, name, std::move(v));
}

Val Interp::lookup(Frame& f, const std::string& name, Loc at) {
    for (Env* e = f.locals.get(); e; e = e->parent.get()) {
        if (const Val* v = e->find(name)) {
            if (v->is_obj(ObjKind::LazyImport)) {
                auto* lazy = v->as<LazyImportObj>();
                Module* m = project_.index().find_from(lazy->module, lazy->from);
                if (!m) return Val::obj(std::make_shared<ExternalObj>(lazy->module + "." + lazy->name), at);
                return module_attr(f, m, lazy->name, at);
            }
            return e->owner == id_ ? *v : thaw(*v);
        }
    }
    if (f.module) {
        Env& g = *f.module->globals;
        if (const Val* v = g.find(name)) {
            if (v->is_obj(ObjKind::LazyImport)) {
                auto* lazy = v->as<LazyImportObj>();
                Module* m = project_.index().find_from(lazy->module, lazy->from);
                if (!m) return Val::obj(std::make_shared<ExternalObj>(lazy->module + "." + lazy->name), at);
                return module_attr(f, m, lazy->name, at);
            }
            return g.owner == id_ ? *v : thaw(*v);
        }
    }
    if (const Val* b = builtin_global(name)) return *b;
    if (f.module && f.module->syntax_error)
        return Val::unknown(fmt::format("{} has a syntax error", f.module->path), at);
    return Val::unknown(fmt::format("name \"{}\" is not defined", name), at);
}

Val Interp::module_global(Module* m, const std::string& name) {
    Frame f;
    f.module = m;
    return module_attr(f, m, name, {});
}

Val Interp::module_attr(Frame& f, Module* m, const std::string& name, Loc at) {
    project_.ensure_initialized(m, import_depth_);
    if (const Val* v = m->globals->find(name)) {
        if (v->is_obj(ObjKind::LazyImport)) {
            auto* lazy = v->as<LazyImportObj>();
            if (++import_depth_ > project_.limits().max_import_depth) {
                --import_depth_;
                return Val::unknown(fmt::format("re-export chain of \"{}\" is too long (a cycle?)", name), at);
            }
            Val out;
            if (Module* target = project_.index().find_from(lazy->module, lazy->from)) {
                out = module_attr(f, target, lazy->name, at);
            } else {
                out = Val::obj(std::make_shared<ExternalObj>(lazy->module + "." + lazy->name), at);
            }
            --import_depth_;
            return out;
        }
        return m->globals->owner == id_ ? *v : thaw(*v);
    }
    const std::string sub = m->name + "." + name;
    if (m->is_package && m->name.rfind("__file__:", 0) != 0)
        if (Module* s = project_.index().find_from(sub, m)) return Val::obj(std::make_shared<ModuleObj>(s), at);
    if (m->syntax_error) return Val::unknown(fmt::format("{} has a syntax error", m->path), at);
    if (m->state.load() != Module::Ready)
        return Val::unknown(
            fmt::format("\"{}\" is not yet defined when {} is imported (an import cycle)", name, m->path), at);
    // A name a namespace package (a folder without __init__.py) does not hold may be a part of it outside the root
    // (a sibling package installed elsewhere): a symbol, as if outside the root.
    if (m->namespace_package) return Val::obj(std::make_shared<ExternalObj>(m->name + "." + name), at);
    // A name a module or regular package of the root neither defines nor holds as a submodule (a version mismatch, a
    // preset or module renamed in one file and not in the file reading it) is no object at all: Python raises
    // AttributeError or ImportError there, or the module makes the name in a way the evaluator does not follow
    // (`from outside import *`, `globals()[...]`, a module `__getattr__`). Either way nothing is known of it; a
    // symbol would stand for an object that is not None and equals no string, and checks would run on that.
    return Val::unknown(fmt::format("{} defines no name \"{}\"", m->name, name), at);
}

Val Interp::import_module(Frame& f, const std::string& dotted, Loc at) {
    if (Module* m = project_.index().find_from(dotted, f.module)) return Val::obj(std::make_shared<ModuleObj>(m), at);
    return Val::obj(std::make_shared<ExternalObj>(dotted), at);
}

std::string Interp::resolve_relative(Frame& f, NodeId rel) {
    const Ast& a = ast(f);
    int dots = 0;
    std::string tail;
    for (NodeId k : a.named_kids(rel)) {
        if (a.kind(k) == Kind::ImportPrefix) dots = static_cast<int>(a.source(k).size());
        else if (a.kind(k) == Kind::DottedName) tail = std::string(a.source(k));
    }
    std::string base = f.module->package();
    for (int i = 1; i < dots; ++i) {
        auto dot = base.rfind('.');
        base = dot == std::string::npos ? std::string() : base.substr(0, dot);
    }
    if (tail.empty()) return base;
    return base.empty() ? tail : base + "." + tail;
}

static std::string strip_spaces(std::string_view s) {
    std::string out;
    for (char c : s)
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\\') out += c;
    return out;
}

void Interp::exec_import(Frame& f, NodeId node) {
    const Ast& a = ast(f);
    Loc at = loc(f, node);
    for (NodeId k : a.named_kids(node)) {
        if (a.kind(k) == Kind::DottedName) {
            std::string dotted = strip_spaces(a.source(k));
            std::string top = dotted.substr(0, dotted.find('.'));
            // `import a.b.c` binds `a`; attribute access then finds the submodules.
            bind(f, top, import_module(f, top, at));
        } else if (a.kind(k) == Kind::AliasedImport) {
            std::string dotted = strip_spaces(a.source(a.field(k, Field::Name)));
            std::string alias(a.source(a.field(k, Field::Alias)));
            bind(f, alias, import_module(f, dotted, at));
        }
    }
}

void Interp::exec_import_from(Frame& f, NodeId node) {
    const Ast& a = ast(f);
    Loc at = loc(f, node);
    NodeId modnode = a.field(node, Field::ModuleName);
    if (modnode == kNoNode) return;
    std::string dotted =
        a.kind(modnode) == Kind::RelativeImport ? resolve_relative(f, modnode) : strip_spaces(a.source(modnode));
    Module* m = dotted.empty() ? nullptr : project_.index().find_from(dotted, f.module);
    const bool lazy = !f.locals && f.module->globals->owner == id_;  // module level: resolve names on first use
    for (std::uint32_t i = 0; i < a.count(node); ++i) {
        NodeId k = a.kid(node, i);
        if (a[k].field == Field::ModuleName) continue;
        if (a.kind(k) == Kind::WildcardImport) {
            if (!m) continue;  // names of an outside module are not known; reading one gives an unknown
            project_.ensure_initialized(m, import_depth_);
            std::vector<std::string> names;
            const Val* all = m->globals->find("__all__");
            if (all && (all->is_obj(ObjKind::List) || all->is_obj(ObjKind::Tuple))) {
                for (const auto& item : all->as<SeqObj>()->items)
                    if (item.is_str()) names.push_back(item.s);
            } else {
                for (const auto& [name, _] : m->globals->vars)
                    if (!name.empty() && name[0] != '_') names.push_back(name);
            }
            for (const auto& name : names) {
                const Val* v = m->globals->find(name);
                if (v && v->is_obj(ObjKind::LazyImport)) bind(f, name, *v);
                else bind(f, name, module_attr(f, m, name, at));
            }
            continue;
        }
        std::string name, alias;
        if (a.kind(k) == Kind::DottedName) {
            name = alias = strip_spaces(a.source(k));
        } else if (a.kind(k) == Kind::AliasedImport) {
            name = strip_spaces(a.source(a.field(k, Field::Name)));
            alias = std::string(a.source(a.field(k, Field::Alias)));
        } else {
            continue;
        }
        if (!m) {
            if (dotted == "typing" && name == "TYPE_CHECKING") {
                bind(f, alias, Val::boolean(false, at));  // False whenever the code runs
                continue;
            }
            bind(f, alias, Val::obj(std::make_shared<ExternalObj>(dotted + "." + name), at));
        } else if (lazy) {
            bind(f, alias, Val::obj(std::make_shared<LazyImportObj>(f.module, dotted, name), at));
        } else {
            bind(f, alias, module_attr(f, m, name, at));
        }
    }
}

std::string last_component(std::string_view dotted) {
    auto dot = dotted.rfind('.');
    return std::string(dot == std::string_view::npos ? dotted : dotted.substr(dot + 1));
}

}  // namespace mbl::py
