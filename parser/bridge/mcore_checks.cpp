// Compiles Megatron Core's `__post_init__` methods into a check program (core/post_init.hpp): statement by statement,
// names resolved through the tree's imports, functions of the tree it calls compiled too. What cannot be expressed
// becomes an unknown (a value or a statement), never a guess: the executor then reports what depends on it as
// possible, not certain.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "core/post_init.hpp"
#include "parser/bridge/mcore_tree.hpp"

namespace mbl::py {

using post_init::Expr;
using post_init::Function;
using post_init::Op;
using post_init::Program;
using post_init::Site;
using post_init::St;
using post_init::Stmt;

namespace {

constexpr int kMaxFunctionDepth = 6;
constexpr std::size_t kMaxFunctions = 200;

const std::set<std::string, std::less<>> kBuiltins = {
    "len", "isinstance", "set",  "frozenset", "list", "tuple", "sorted",  "any",     "all",   "min",       "max", "sum",
    "int", "float",      "bool", "str",       "repr", "abs",   "getattr", "hasattr", "range", "enumerate", "zip"};
const std::set<std::string, std::less<>> kTypes = {"int", "float",     "str",  "bool",  "list",     "tuple",  "dict",
                                                   "set", "frozenset", "List", "Tuple", "Sequence", "Mapping"};
const std::set<std::string, std::less<>> kDtypes = {"float32", "float", "float16", "half",  "bfloat16", "float64",
                                                    "double",  "int8",  "uint8",   "int32", "int64"};

// A class of the tree as the facts name it: where it is defined.
ConfigClass class_at(const SourceModule& m, NodeId cls) {
    ConfigClass c;
    c.name = std::string(m.ast.source(m.ast.field(cls, Field::Name)));
    c.module = m.name;
    c.file = m.path;
    c.line = static_cast<int>(m.ast[cls].line);
    return c;
}

Expr unknown_expr(std::string why, std::string kind = "call") {
    Expr e;
    e.op = Op::Unknown;
    e.name = std::move(why);
    e.kind = std::move(kind);
    return e;
}

Expr make(Op op, std::string name = {}, std::vector<Expr> kids = {}) {
    Expr e;
    e.op = op;
    e.name = std::move(name);
    e.kids = std::move(kids);
    return e;
}

Expr constant(Value v) {
    Expr e;
    e.op = Op::Const;
    e.value = std::make_shared<const Value>(std::move(v));
    return e;
}

// A name as a function body sees it.
struct Binding {
    enum Kind { None, Module, Function, Class, Constant, External } kind = None;
    std::string path;  // dotted module path, or module.name
    const SourceModule* module = nullptr;
    NodeId node = kNoNode;
};

class Compiler {
public:
    Compiler(TreeReader& tree, const ClassFacts& facts) : tree_(tree), facts_(facts) {}

    // A start-up over several config objects (Megatron Bridge's): the methods of `cls` see `self` as the config
    // section `object` (its attributes are the fields "object.<name>"), and the tree's dataclasses it constructs are
    // values (the bundled __post_init__ programs were compiled with them unknown, and stay so).
    void section_class(const std::string& cls, const std::string& object) {
        class_objects_[cls] = object + ".";
        dataclass_values_ = true;
    }

    // Megatron Bridge's ConfigContainer: its methods see `self` as the whole config (post_init::kContainer), whose
    // `sections` are config objects. From here on, a statement the linter does not follow may change any of them.
    void container_class(const std::string& cls, std::set<std::string, std::less<>> sections) {
        container_class_ = cls;
        container_sections_ = std::move(sections);
        dataclass_values_ = true;
        writes_all_ = true;
    }

    void sections(std::vector<std::string> names) { program_->sections = std::move(names); }

    // The classes the container's functions test a section against (`isinstance(self.dataset, (A, B))`), with the
    // other classes of the modules defining them (their subclasses there: FinetuningDatasetConfig beside
    // GPTSFTDatasetConfig), described for the config that names a section's class (post_init::SectionClass); the
    // methods the container calls on that section compiled for each, with the section as `self`.
    void describe_section_classes(const SourceModule& container_module) {
        std::map<std::string, std::set<std::string, std::less<>>, std::less<>> tested;  // section -> type names
        for (const auto& [name, fn] : program_->functions)
            if (name.rfind(container_class_ + ".", 0) == 0) collect_isinstance(fn.body, tested);
        describe_tested(tested, {container_module.name});
        // Then the objects those classes' methods test an attribute of theirs against (EnergonDatasetConfig.validate:
        // `isinstance(self.task_encoder, (...))`), with the names their modules see.
        std::map<std::string, std::set<std::string, std::less<>>, std::less<>> nested;
        std::vector<std::string> modules;
        for (const auto& [key, c] : program_->classes) {
            modules.push_back(key.substr(0, key.rfind('.')));
            for (const auto& [method, fn] : c.methods)
                if (auto f = program_->functions.find(fn); f != program_->functions.end())
                    collect_isinstance(f->second.body, nested);
        }
        std::erase_if(nested, [&](const auto& n) { return tested.count(n.first) > 0; });
        describe_tested(nested, modules);
    }

    void describe_tested(const std::map<std::string, std::set<std::string, std::less<>>, std::less<>>& tested,
                         const std::vector<std::string>& seen_from) {
        for (const auto& [section, types] : tested) {
            // The model is Megatron Core's config class under a provider the executor reads by its fields: its class
            // is not looked up (post_init's class_of).
            if (section == "model") continue;
            std::set<const SourceModule*> modules;
            std::set<std::string, std::less<>> family;  // the tested classes and their bases in the tree
            for (const auto& type : types)
                for (const auto& from : seen_from) {
                    auto [m, cls] = tree_.find_class(from, type);
                    if (!m) continue;
                    modules.insert(m);
                    for (const auto& [owner, base] : tree_mro(*m, cls)) family.insert(class_at(*owner, base).name);
                    break;
                }
            for (const SourceModule* m : modules)
                for (const auto& [name, node] : m->classes) {
                    const auto line = tree_mro(*m, node);
                    if (std::any_of(line.begin(), line.end(),
                                    [&](const auto& k) { return family.count(class_at(*k.first, k.second).name) > 0; }))
                        describe_class(*m, name, section);
                }
        }
    }

    bool defines(const ConfigClass& cls, std::string_view method) { return method_node(cls, method).first != nullptr; }

    // The fields of the class a section is: each annotated name of its class body and its bases', bases first as
    // dataclasses order them, with its default compiled in its module's names. A base outside the tree (Bridge's
    // OptimizerConfig derives from Megatron Core's) is read from `outside` (Megatron Core's sources the tree pins)
    // where given; else the list is incomplete.
    void describe_section_fields(const std::string& section, const SourceModule& m, NodeId cls, TreeReader* outside) {
        post_init::SectionFields out;
        out.cls = m.name + "." + class_at(m, cls).name;
        // The classes along the MRO (single inheritance, as these configs are), most derived first.
        std::vector<std::pair<const SourceModule*, NodeId>> line;
        std::pair<const SourceModule*, NodeId> at{&m, cls};
        TreeReader* reader = &tree_;
        while (at.first && line.size() < 16) {
            line.push_back(at);
            const Ast& a = at.first->ast;
            const auto bases = a.named_kids(a.field(at.second, Field::Superclasses));
            if (bases.empty()) break;
            const std::string base = compact(a.source(bases.front()));
            if (base == "object" || base.find('[') != std::string::npos) break;
            auto next = reader->find_class(at.first->name, last_part(base));
            if (!next.first && reader == &tree_ && outside) {
                // A base the tree imports from outside it: the same name in Megatron Core's sources.
                auto imported = at.first->imported.find(last_part(base));
                if (imported != at.first->imported.end() && !imported->second.second.empty()) {
                    next = outside->find_class(imported->second.first, imported->second.second);
                    if (next.first) reader = outside;
                }
            }
            if (!next.first) {
                out.complete = false;
                break;
            }
            at = next;
        }
        for (auto k = line.rbegin(); k != line.rend(); ++k) {
            const Ast& a = k->first->ast;
            for (NodeId stmt : a.named_kids(a.field(k->second, Field::Body))) {
                NodeId as = a.kind(stmt) == Kind::ExpressionStatement ? a.first_named(stmt) : kNoNode;
                if (as == kNoNode || a.kind(as) != Kind::Assignment || a.field(as, Field::Type) == kNoNode ||
                    a.kind(a.field(as, Field::Left)) != Kind::Identifier)
                    continue;
                const std::string name(a.source(a.field(as, Field::Left)));
                NodeId dflt = a.field(as, Field::Right);
                // Only a literal default is used (Program::section_fields): anything else reads as unknown.
                Expr value = dflt == kNoNode
                                 ? unknown_expr(fmt::format("{} is constructed without {}", out.cls, name), "pure")
                                 : in_module(*k->first, out.cls, [&] { return expr(dflt); });
                auto same = std::find(out.names.begin(), out.names.end(), name);
                if (same != out.names.end()) {  // a subclass's redeclaration keeps the base's place
                    out.defaults[static_cast<std::size_t>(same - out.names.begin())] = std::move(value);
                    continue;
                }
                out.names.push_back(name);
                out.defaults.push_back(std::move(value));
            }
        }
        program_->section_fields[section] = std::move(out);
    }

    // Compiles `cls.method` as one step of the start-up, its parameters bound to `args` (Step::args).
    bool add_step(const ConfigClass& cls, const std::string& method, const std::vector<std::string>& args,
                  std::string file, int line, std::string when = {}) {
        for (std::size_t i = 0; i < args.size(); ++i)
            if (args[i] != post_init::kContainer) pending_objects_[i] = args[i].empty() ? "" : args[i] + ".";
        const std::string fn = ensure_method(cls, method);
        pending_objects_.clear();
        if (fn.empty()) return false;
        program_->steps.push_back({fn, args, std::move(file), line, std::move(when)});
        return true;
    }

    // A call of the start-up the linter cannot compile: the executor treats the whole config as changed there.
    void add_unfollowed_step(const std::string& call, std::string file, int line) {
        program_->steps.push_back({std::string(post_init::kUnfollowedStep) + call, {}, std::move(file), line, {}});
    }

    // The program, its files named from `root` (Bridge's repository root: "src/megatron/bridge/...").
    std::shared_ptr<const Program> take(std::string commit, const std::string& root) {
        program_->commit = std::move(commit);
        for (auto& site : program_->sites) site.file = root + site.file;
        for (auto& [name, fn] : program_->functions) fn.file = root + fn.file;
        for (auto& step : program_->steps) step.file = root + step.file;
        return program_;
    }

    std::shared_ptr<const Program> compile() {
        for (const auto& c : facts_.classes) {
            for (const ConfigClass* k : facts_.mro(c.name)) {
                if (method_node(*k, "__post_init__").second == kNoNode) continue;
                const std::string fn = ensure_method(*k, "__post_init__");
                if (!fn.empty()) program_->entries[c.name] = fn;
                break;
            }
        }
        program_->commit = facts_.commit;
        return program_;
    }

private:
    static void collect_isinstance(const Expr& e,
                                   std::map<std::string, std::set<std::string, std::less<>>, std::less<>>& out) {
        // `self.dataset` in the container's methods; `self.task_encoder` ("dataset.task_encoder") in a section's.
        const bool on_section =
            e.op == Op::Builtin && e.name == "isinstance" && e.kids.size() == 2 &&
            ((e.kids[0].op == Op::Attr && e.kids[0].kids.size() == 1 && e.kids[0].kids[0].op == Op::Var) ||
             (e.kids[0].op == Op::Self && e.kids[0].name.find('.') != std::string::npos));
        if (on_section) {
            const Expr& t = e.kids[1];
            if (t.op == Op::Type) out[e.kids[0].name].insert(t.name);
            for (const auto& k : t.kids)
                if (k.op == Op::Type) out[e.kids[0].name].insert(k.name);
        }
        for (const auto& k : e.kids) collect_isinstance(k, out);
    }
    static void collect_isinstance(const std::vector<Stmt>& block,
                                   std::map<std::string, std::set<std::string, std::less<>>, std::less<>>& out) {
        for (const auto& st : block) {
            collect_isinstance(st.e, out);
            collect_isinstance(st.body, out);
            collect_isinstance(st.orelse, out);
        }
    }

    // The names a class body declares with a value: its fields (`x: int = 1`, `x = 1`) and methods. A bare annotation
    // (`x: int`) is left out: an instance has it only where the class is a dataclass.
    static void declared_names(const SourceModule& m, NodeId cls, std::vector<std::string>& out) {
        const Ast& a = m.ast;
        for (NodeId st : a.named_kids(a.field(cls, Field::Body))) {
            NodeId def = a.kind(st) == Kind::DecoratedDefinition ? a.field(st, Field::Definition) : st;
            std::string name;
            if (a.kind(def) == Kind::FunctionDefinition) name = std::string(a.source(a.field(def, Field::Name)));
            if (a.kind(st) == Kind::ExpressionStatement) {
                NodeId x = a.first_named(st);
                if (a.kind(x) == Kind::Assignment && a.kind(a.field(x, Field::Left)) == Kind::Identifier &&
                    a.field(x, Field::Right) != kNoNode)
                    name = std::string(a.source(a.field(x, Field::Left)));
            }
            if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
        }
    }

    // `name` of module `m` as a post_init::SectionClass: its bases in the tree, depth first (the single-inheritance
    // chains of Bridge's config classes; a base outside the tree, such as Megatron Core's, is left out: it cannot
    // derive from a class of the tree), what they declare, and the section's methods compiled where defined.
    std::vector<std::pair<const SourceModule*, NodeId>> tree_mro(const SourceModule& m, NodeId cls) {
        std::vector<std::pair<const SourceModule*, NodeId>> out, todo{{&m, cls}};
        while (!todo.empty() && out.size() < 16) {
            const auto next = todo.front();
            todo.erase(todo.begin());
            if (std::find(out.begin(), out.end(), next) != out.end()) continue;
            out.push_back(next);
            const Ast& a = next.first->ast;
            for (NodeId b : a.named_kids(a.field(next.second, Field::Superclasses))) {
                if (a.kind(b) != Kind::Identifier && a.kind(b) != Kind::Attribute) continue;
                auto base = tree_.find_class(next.first->name, last_part(compact(a.source(b))));
                if (base.first) todo.push_back(base);
            }
        }
        return out;
    }

    void describe_class(const SourceModule& m, const std::string& name, const std::string& section) {
        const std::string key = m.name + "." + name;
        if (program_->classes.count(key)) return;
        post_init::SectionClass described;
        described.section = section;
        std::vector<ConfigClass> line;  // the classes of the tree along the MRO
        for (const auto& [owner, cls] : tree_mro(m, m.classes.at(name))) {
            line.push_back(class_at(*owner, cls));
            described.mro.push_back(line.back().name);
            declared_names(*owner, cls, described.attributes);
        }
        for (const auto& method : section_methods_[section])
            for (const ConfigClass& c : line) {
                if (!defines(c, method)) continue;
                class_objects_[c.name] = section + ".";
                if (const std::string fn = ensure_method(c, method); !fn.empty()) described.methods[method] = fn;
                break;
            }
        program_->classes[key] = std::move(described);
    }

    TreeReader& tree_;
    const ClassFacts& facts_;
    std::shared_ptr<Program> program_ = std::make_shared<Program>();
    int depth_ = 0;
    std::map<std::string, std::string, std::less<>> class_objects_;  // class -> "section." its `self` stands for
    bool dataclass_values_ = false;
    std::string container_class_;  // ConfigContainer, where its methods are compiled
    std::set<std::string, std::less<>> container_sections_;
    bool writes_all_ = false;  // an unknown statement may change any config object (post_init::kWritesAll)
    // The methods the container's functions call on each of its sections (`self.dataset.validate()`).
    std::map<std::string, std::set<std::string, std::less<>>, std::less<>> section_methods_;
    // The config objects the next function compiled is given: parameter position -> "" (the model) or "section.".
    std::map<std::size_t, std::string> pending_objects_;

    // The function being compiled.
    struct Context {
        const SourceModule* module = nullptr;
        const ConfigClass* cls = nullptr;  // for methods: the class defining it
        std::string function, file;
        std::string self;                                   // the first parameter's name, for methods
        std::set<std::string, std::less<>> params;          // the parameters' names
        std::set<std::string, std::less<>> locals;          // parameters and assigned names
        std::map<std::string, Binding, std::less<>> bound;  // names the body imports
        std::vector<std::vector<std::string>> guards;       // the fields each enclosing condition reads
        std::map<std::string, std::vector<std::string>, std::less<>> local_reads;  // variable -> fields its value read
        std::map<std::string, std::string, std::less<>> nested;  // a function defined in the body -> its compiled name
        std::string self_prefix;  // "section." where `self` is a config section; "" where it is the config
        std::map<std::string, std::string, std::less<>> objects;  // parameter -> the config object it is given
    };
    Context* ctx_ = nullptr;

    const Ast& ast() const { return ctx_->module->ast; }

    std::pair<const SourceModule*, NodeId> method_node(const ConfigClass& c, std::string_view name) {
        auto [m, cls] = tree_.find_class(c.module, c.name);
        if (!m) return {nullptr, kNoNode};
        const Ast& a = m->ast;
        for (NodeId s : a.named_kids(a.field(cls, Field::Body))) {
            NodeId def = a.kind(s) == Kind::DecoratedDefinition ? a.field(s, Field::Definition) : s;
            if (a.kind(def) == Kind::FunctionDefinition && a.source(a.field(def, Field::Name)) == name) return {m, def};
        }
        return {nullptr, kNoNode};
    }

    bool is_property(const SourceModule& m, NodeId def) const {
        const Ast& a = m.ast;
        NodeId parent_decorated = kNoNode;
        // The decorated definition holding `def`, if any: its decorators precede it.
        for (NodeId id = 0; id < a.nodes.size(); ++id)
            if (a.kind(id) == Kind::DecoratedDefinition && a.field(id, Field::Definition) == def) parent_decorated = id;
        if (parent_decorated == kNoNode) return false;
        for (NodeId k : a.named_kids(parent_decorated))
            if (a.kind(k) == Kind::Decorator && compact(a.source(k)).find("property") != std::string::npos) return true;
        return false;
    }

    // The class along `start`'s MRO (after `after`, when given) defining `name`.
    const ConfigClass* defining_class(const ConfigClass& start, std::string_view name, const ConfigClass* after) {
        bool passed = after == nullptr;
        for (const ConfigClass* k : facts_.mro(start.name)) {
            if (!passed) {
                passed = k == after || k->name == after->name;
                continue;
            }
            if (method_node(*k, name).second != kNoNode) return k;
        }
        return nullptr;
    }

    std::string ensure_method(const ConfigClass& c, std::string_view name) {
        const std::string qualified = fmt::format("{}.{}", c.name, name);
        if (program_->functions.count(qualified)) return qualified;
        auto [m, def] = method_node(c, name);
        if (!m) return {};
        return compile_function(*m, def, qualified, &c) ? qualified : std::string();
    }

    std::string ensure_function(const SourceModule& m, NodeId def) {
        const std::string qualified = fmt::format("{}.{}", m.name, m.ast.source(m.ast.field(def, Field::Name)));
        if (program_->functions.count(qualified)) return qualified;
        return compile_function(m, def, qualified, nullptr) ? qualified : std::string();
    }

    bool compile_function(const SourceModule& m, NodeId def, const std::string& qualified, const ConfigClass* cls) {
        if (depth_ >= kMaxFunctionDepth || program_->functions.size() >= kMaxFunctions) return false;
        const auto objects = std::exchange(pending_objects_, {});
        Function placeholder;  // a recursive call finds it while the body is compiled
        placeholder.name = qualified;
        program_->functions[qualified] = placeholder;
        Context c;
        c.module = &m;
        c.cls = cls;
        c.function = qualified;
        c.file = m.path;
        Context* saved = ctx_;
        ctx_ = &c;
        ++depth_;
        Function fn;
        fn.name = qualified;
        fn.file = m.path;
        const Ast& a = m.ast;
        for (NodeId p : a.named_kids(a.field(def, Field::Parameters))) {
            std::string pname;
            Expr dflt = make(Op::Unknown);
            switch (a.kind(p)) {
                case Kind::Identifier: pname = std::string(a.source(p)); break;
                case Kind::TypedParameter: pname = std::string(a.source(a.first_named(p))); break;
                case Kind::DefaultParameter:
                case Kind::TypedDefaultParameter:
                    pname = std::string(a.source(a.field(p, Field::Name)));
                    dflt = expr(a.field(p, Field::Value));
                    if (dflt.op == Op::Unknown && dflt.name.empty()) dflt.name = "a default the linter does not model";
                    break;
                default: break;  // *args, **kwargs, separators
            }
            if (pname.empty()) continue;
            fn.params.push_back(pname);
            fn.defaults.push_back(std::move(dflt));
            c.locals.insert(pname);
            c.params.insert(pname);
        }
        if (cls && !fn.params.empty()) c.self = fn.params[0];
        if (cls)
            if (auto it = class_objects_.find(cls->name); it != class_objects_.end()) c.self_prefix = it->second;
        for (const auto& [position, object] : objects)
            if (position < fn.params.size() && !(cls && position == 0 && !c.self_prefix.empty()))
                c.objects[fn.params[position]] = object;
        collect_locals(a.field(def, Field::Body));
        fn.body = block(a.field(def, Field::Body));
        --depth_;
        ctx_ = saved;
        program_->functions[qualified] = std::move(fn);
        return true;
    }

    // Every name the body assigns is a local (Python's rule), so that a module-level name it shadows is not read.
    void collect_locals(NodeId body) {
        const Ast& a = ast();
        std::vector<NodeId> todo{body};
        while (!todo.empty()) {
            NodeId n = todo.back();
            todo.pop_back();
            const Kind k = a.kind(n);
            if (k == Kind::FunctionDefinition || k == Kind::ClassDefinition || k == Kind::Lambda) {
                if (NodeId name = a.field(n, Field::Name); name != kNoNode)
                    ctx_->locals.insert(std::string(a.source(name)));
                continue;
            }
            if (k == Kind::Assignment || k == Kind::AugmentedAssignment || k == Kind::ForStatement) {
                NodeId target = a.field(n, Field::Left);
                std::vector<NodeId> names{target};
                while (!names.empty()) {
                    NodeId t = names.back();
                    names.pop_back();
                    if (a.kind(t) == Kind::Identifier) ctx_->locals.insert(std::string(a.source(t)));
                    else if (a.kind(t) == Kind::PatternList || a.kind(t) == Kind::TuplePattern ||
                             a.kind(t) == Kind::ListPattern || a.kind(t) == Kind::ExpressionList ||
                             a.kind(t) == Kind::Tuple || a.kind(t) == Kind::ParenthesizedExpression)
                        for (NodeId x : a.named_kids(t)) names.push_back(x);
                }
            }
            if (k == Kind::NamedExpression)
                if (NodeId name = a.field(n, Field::Name); name != kNoNode)
                    ctx_->locals.insert(std::string(a.source(name)));
            for (std::uint32_t i = 0; i < a.count(n); ++i) todo.push_back(a.kid(n, i));
        }
    }

    // --- names ---------------------------------------------------------------------------------------------

    Binding resolve_in(const SourceModule& m, const std::string& name) {
        Binding b;
        if (auto it = m.imported.find(name); it != m.imported.end()) {
            const auto& [module, member] = it->second;
            return resolve_member(module, member);
        }
        if (m.functions.count(name)) return {Binding::Function, m.name + "." + name, &m, m.functions.at(name)};
        if (m.classes.count(name)) return {Binding::Class, m.name + "." + name, &m, m.classes.at(name)};
        if (m.assigned.count(name)) return {Binding::Constant, m.name + "." + name, &m, m.assigned.at(name)};
        return b;
    }

    // `member` of module `module` ("" for the module itself), found in the tree when it is there.
    Binding resolve_member(const std::string& module, const std::string& member) {
        if (member.empty()) return {Binding::Module, module, tree_.module(module), kNoNode};
        if (auto [m, def] = tree_.find_def(module, member, 'f'); m)
            return {Binding::Function, m->name + "." + member, m, def};
        if (auto [m, cls] = tree_.find_class(module, member); m)
            return {Binding::Class, m->name + "." + member, m, cls};
        if (auto [m, v] = tree_.find_def(module, member, '='); m)
            return {Binding::Constant, m->name + "." + member, m, v};
        if (tree_.module(module + "." + member))
            return {Binding::Module, module + "." + member, tree_.module(module + "." + member), kNoNode};
        return {Binding::External, module + "." + member, nullptr, kNoNode};
    }

    Binding resolve(const std::string& name) {
        if (auto it = ctx_->bound.find(name); it != ctx_->bound.end()) return it->second;
        return resolve_in(*ctx_->module, name);
    }

    // A dotted attribute chain of names (`torch.cuda.is_available`), or "" when the base is no plain name.
    std::string dotted(NodeId n) {
        const Ast& a = ast();
        if (a.kind(n) == Kind::Identifier) return std::string(a.source(n));
        if (a.kind(n) == Kind::Attribute) {
            std::string base = dotted(a.field(n, Field::Object));
            if (base.empty()) return {};
            return base + "." + std::string(a.source(a.field(n, Field::AttributeName)));
        }
        return {};
    }

    // The full path a dotted chain names through the bindings (`np.float32` -> numpy.float32); "" for a local.
    std::string external_path(const std::string& chain) {
        const std::string head = chain.substr(0, chain.find('.'));
        if (ctx_->locals.count(head)) return {};
        Binding b = resolve(head);
        const std::string rest = chain.size() > head.size() ? chain.substr(head.size()) : "";
        switch (b.kind) {
            case Binding::Module:
            case Binding::External:
            case Binding::Function:
            case Binding::Class:
            case Binding::Constant: return b.path + rest;
            case Binding::None: return kBuiltins.count(head) || kTypes.count(head) ? head + rest : head + rest;
        }
        return {};
    }

    // Records an enum class of the tree in the program (its members and values); false when `b` is no enum.
    bool register_enum(const Binding& b) {
        if (b.kind != Binding::Class || !b.module) return false;
        const std::string name = last_part(b.path);
        if (program_->enums.count(name)) return true;
        if (!tree_.is_enum_class(*b.module, name)) return false;
        const Ast& a = b.module->ast;
        post_init::EnumClass ec;
        for (NodeId base : a.named_kids(a.field(b.node, Field::Superclasses))) {
            const std::string bn = last_part(compact(a.source(base)));
            ec.str_valued |= bn == "str" || bn == "StrEnum";
        }
        std::int64_t next_auto = 1;
        for (NodeId s : a.named_kids(a.field(b.node, Field::Body))) {
            if (a.kind(s) != Kind::ExpressionStatement) continue;
            NodeId x = a.first_named(s);
            if (a.kind(x) != Kind::Assignment || a.kind(a.field(x, Field::Left)) != Kind::Identifier) continue;
            const std::string member(a.source(a.field(x, Field::Left)));
            NodeId v = a.field(x, Field::Right);
            Value value = Value::unknown("an enum value the linter does not read");
            if (a.kind(v) == Kind::String) {
                std::string text;
                for (NodeId k : a.named_kids(v))
                    if (a.kind(k) == Kind::StringContent) text += unescape(a.source(k));
                value = Value::string(text);
            } else if (a.kind(v) == Kind::Integer) {
                try {
                    next_auto = std::stoll(compact(a.source(v)), nullptr, 0);
                    value = Value::integer(next_auto++);
                } catch (...) {
                }
            } else if (a.kind(v) == Kind::Call && last_part(compact(a.source(a.field(v, Field::Function)))) == "auto") {
                value = Value::integer(next_auto++);
            }
            ec.members.emplace_back(member, std::move(value));
        }
        program_->enums.emplace(name, std::move(ec));
        return true;
    }

    // An enum member: `Fp8Recipe.delayed` -> "delayed" for a str-valued enum, else the member as a value of its own.
    std::optional<Expr> enum_member(const Binding& b, const std::string& member) {
        if (!register_enum(b)) return std::nullopt;
        const std::string name = last_part(b.path);
        for (const auto& [m, v] : program_->enums.at(name).members) {
            if (m != member) continue;
            if (program_->enums.at(name).str_valued && v.is_string()) return constant(v);
            return constant(Value::string("\x01"
                                          "enum:" +
                                          name + "." + member));
        }
        return std::nullopt;
    }

    // --- reads ---------------------------------------------------------------------------------------------

    void reads_of(NodeId n, std::vector<std::string>& out) {
        const Ast& a = ast();
        std::vector<NodeId> todo{n};
        auto add = [&](const std::string& f) {
            if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
        };
        while (!todo.empty()) {
            NodeId x = todo.back();
            todo.pop_back();
            if (auto field = object_field(x)) {
                add(*field);
                continue;
            }
            if (auto field = getattr_field(x)) {
                add(*field);
                continue;
            }
            if (a.kind(x) == Kind::Identifier)
                if (auto it = ctx_->local_reads.find(a.source(x)); it != ctx_->local_reads.end())
                    for (const auto& f : it->second) add(f);
            for (std::uint32_t i = a.count(x); i-- > 0;) todo.push_back(a.kid(x, i));  // source order
        }
    }

    // The config field an attribute chain reads: `self.x` ("x", or "section.x" where self is a section), and on a
    // section or another config object it is given, the whole chain (`self.user_cfg.flag`: "section.user_cfg.flag").
    std::optional<std::string> object_field(NodeId x) {
        const Ast& a = ast();
        if (a.kind(x) != Kind::Attribute) return std::nullopt;
        NodeId obj = a.field(x, Field::Object);
        const std::string attr(a.source(a.field(x, Field::AttributeName)));
        if (auto section = container_section(obj)) return *section == "model" ? attr : *section + "." + attr;
        if (a.kind(obj) == Kind::Identifier) {
            if (in_container() && a.source(obj) == ctx_->self) return std::nullopt;  // a section, not a field
            if (!ctx_->self.empty() && a.source(obj) == ctx_->self) return ctx_->self_prefix + attr;
            if (auto it = ctx_->objects.find(a.source(obj)); it != ctx_->objects.end()) return it->second + attr;
            return std::nullopt;
        }
        auto base = object_field(obj);
        if (!base || base->find('.') == std::string::npos) return std::nullopt;  // a field's attribute: the field
        return *base + "." + attr;
    }

    // `getattr(self.dataset, "enable_offline_packing", False)` on a ConfigContainer's section: the field it reads.
    std::optional<std::string> getattr_field(NodeId x) {
        const Ast& a = ast();
        if (!in_container() || a.kind(x) != Kind::Call) return std::nullopt;
        const std::string callee = compact(a.source(a.field(x, Field::Function)));
        if ((callee != "getattr" && callee != "hasattr") || ctx_->locals.count(callee)) return std::nullopt;
        auto args = a.named_kids(a.field(x, Field::Arguments));
        if (args.size() < 2 || a.kind(args[1]) != Kind::String) return std::nullopt;
        auto section = container_section(args[0]);
        const std::string name = literal_text(args[1]);
        if (!section || name.empty() || name.find_first_of("{.") != std::string::npos) return std::nullopt;
        return *section == "model" ? name : *section + "." + name;
    }

    // A method called on a variable the function itself assigned (`out.extend(...)`): it changes no config object.
    bool on_own_local(const Expr& method) const {
        const Expr& target = method.kids[0];
        return target.op == Op::Var && !ctx_->params.count(target.name);
    }

    bool in_container() const {
        return ctx_ && ctx_->cls && !container_class_.empty() && ctx_->cls->name == container_class_;
    }

    // `self.<section>` in a ConfigContainer method: the section's name.
    // A config object a method may be called on: a container section (`self.dataset` in ConfigContainer), or an
    // attribute of the section a method's `self` is (`self.task_encoder` in EnergonDatasetConfig: "dataset.task_encoder").
    std::optional<std::string> section_object(NodeId x) {
        if (auto section = container_section(x)) return section;
        const Ast& a = ast();
        if (!ctx_ || ctx_->self_prefix.empty() || a.kind(x) != Kind::Attribute) return std::nullopt;
        NodeId obj = a.field(x, Field::Object);
        if (a.kind(obj) != Kind::Identifier || a.source(obj) != ctx_->self) return std::nullopt;
        return ctx_->self_prefix + std::string(a.source(a.field(x, Field::AttributeName)));
    }

    std::optional<std::string> container_section(NodeId x) {
        const Ast& a = ast();
        if (!in_container() || a.kind(x) != Kind::Attribute) return std::nullopt;
        NodeId obj = a.field(x, Field::Object);
        if (a.kind(obj) != Kind::Identifier || a.source(obj) != ctx_->self) return std::nullopt;
        std::string name(a.source(a.field(x, Field::AttributeName)));
        if (!container_sections_.count(name)) return std::nullopt;
        return name;
    }

    int add_site(Site::Kind kind, int line, std::string exception, NodeId message, NodeId extra_guard = kNoNode) {
        Site s;
        s.kind = kind;
        s.exception = std::move(exception);
        s.file = ctx_->file;
        s.line = line;
        s.function = ctx_->function;
        if (message != kNoNode) s.text = literal_text(message);
        for (const auto& g : ctx_->guards)
            for (const auto& f : g)
                if (std::find(s.reads.begin(), s.reads.end(), f) == s.reads.end()) s.reads.push_back(f);
        if (extra_guard != kNoNode) reads_of(extra_guard, s.reads);
        program_->sites.push_back(std::move(s));
        return static_cast<int>(program_->sites.size() - 1);
    }

    // Source text on one line: each run of whitespace (a condition split over lines) as one space.
    static std::string collapsed(std::string_view text) {
        std::string out;
        for (char c : text) {
            const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
            if (!space) out += c;
            else if (!out.empty() && out.back() != ' ') out += ' ';
        }
        while (!out.empty() && out.back() == ' ') out.pop_back();
        return out;
    }

    // A message's literal text, interpolations written as {...}.
    std::string literal_text(NodeId n) {
        const Ast& a = ast();
        if (a.kind(n) == Kind::ConcatenatedString) {
            std::string out;
            for (NodeId k : a.named_kids(n)) out += literal_text(k);
            return out;
        }
        if (a.kind(n) == Kind::String) {
            std::string out;
            for (NodeId k : a.named_kids(n)) {
                if (a.kind(k) == Kind::StringContent) out += unescape(a.source(k));
                else if (a.kind(k) == Kind::Interpolation) out += "{...}";
            }
            return out;
        }
        if (a.kind(n) == Kind::ParenthesizedExpression) return literal_text(a.first_named(n));
        if (a.kind(n) == Kind::BinaryOperator)
            return literal_text(a.field(n, Field::Left)) + literal_text(a.field(n, Field::Right));
        return "{...}";
    }

    // --- statements ----------------------------------------------------------------------------------------

    std::vector<Stmt> block(NodeId b) {
        std::vector<Stmt> out;
        const Ast& a = ast();
        std::vector<NodeId> stmts = a.kind(b) == Kind::Block ? a.named_kids(b) : std::vector<NodeId>{b};
        for (NodeId s : stmts) statement(s, out);
        return out;
    }

    Stmt stmt(St kind, NodeId at) {
        Stmt s;
        s.kind = kind;
        s.line = static_cast<int>(ast()[at].line);
        return s;
    }

    // What the statements under `n` write on self: made unknown by a statement the linter does not follow.
    std::vector<std::string> writes_of(NodeId n) {
        const Ast& a = ast();
        std::vector<std::string> out;
        std::vector<NodeId> todo{n};
        while (!todo.empty()) {
            NodeId x = todo.back();
            todo.pop_back();
            if ((a.kind(x) == Kind::Assignment || a.kind(x) == Kind::AugmentedAssignment) && !ctx_->self.empty()) {
                NodeId t = a.field(x, Field::Left);
                while (a.kind(t) == Kind::Attribute || a.kind(t) == Kind::Subscript) {
                    NodeId obj = a.kind(t) == Kind::Attribute ? a.field(t, Field::Object) : a.field(t, Field::Value);
                    if (a.kind(t) == Kind::Attribute && a.source(obj) == ctx_->self) {
                        const std::string f =
                            ctx_->self_prefix + std::string(a.source(a.field(t, Field::AttributeName)));
                        if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
                        break;
                    }
                    t = obj;
                }
            }
            for (std::uint32_t i = 0; i < a.count(x); ++i) todo.push_back(a.kid(x, i));
        }
        return out;
    }

    // setattr(object, name, value) on an object a function is given or built: the executor sets the field where the
    // object is a config object or a local dataclass, and treats the config as changed anywhere else.
    void set_on_object(NodeId n, Expr object, Expr name, Expr value, std::vector<Stmt>& out) {
        Stmt s = stmt(St::Set, n);
        s.e = make(Op::Tuple, {}, {std::move(object), std::move(name), std::move(value)});
        s.site = add_site(Site::Kind::Unknown, s.line, "", kNoNode);
        program_->sites[static_cast<std::size_t>(s.site)].text =
            "setattr on an object or with a name the linter does not know";
        out.push_back(std::move(s));
    }

    // A statement whose only object is the process environment (`os.environ[k] = v`, `os.environ.pop(k)`: Bridge's
    // comm-overlap setup sets CUDA_DEVICE_MAX_CONNECTIONS), or a call outside the tree given only literals: it changes
    // no config object.
    bool on_environment_only(NodeId n) {
        const Ast& a = ast();
        NodeId x = a.kind(n) == Kind::ExpressionStatement ? a.first_named(n) : n;
        NodeId object = kNoNode;
        if (a.kind(x) == Kind::Assignment || a.kind(x) == Kind::AugmentedAssignment) {
            NodeId target = a.field(x, Field::Left);
            if (a.kind(target) == Kind::Subscript) object = a.field(target, Field::Value);
        } else if (a.kind(x) == Kind::Call) {
            NodeId callee = a.field(x, Field::Function);
            if (a.kind(callee) == Kind::Attribute) object = a.field(callee, Field::Object);
            // Its arguments: values read, never changed, by the environment's methods.
        }
        if (constant_call_outside(x)) return true;
        if (object == kNoNode) return false;
        const std::string chain = dotted(object);
        return !chain.empty() && external_path(chain) == "os.environ";
    }

    // A call of a function outside the tree given nothing but literals (`torch.use_deterministic_algorithms(True)` in
    // Bridge's validate): no config object reaches it, so it changes none.
    bool constant_call_outside(NodeId x) {
        const Ast& a = ast();
        if (a.kind(x) != Kind::Call) return false;
        const std::string chain = dotted(a.field(x, Field::Function));
        if (chain.empty()) return false;
        const std::string head = chain.substr(0, chain.find('.'));
        if (ctx_->locals.count(head)) return false;
        const Binding b = resolve(head);
        const bool outside = (b.kind == Binding::Module && !b.module) || b.kind == Binding::External;
        if (!outside) return false;
        for (NodeId arg : a.named_kids(a.field(x, Field::Arguments))) {
            if (a.kind(arg) == Kind::Comment) continue;
            NodeId v = a.kind(arg) == Kind::KeywordArgument ? a.field(arg, Field::Value) : arg;
            switch (a.kind(v)) {
                case Kind::Integer:
                case Kind::Float:
                case Kind::String:
                case Kind::True:
                case Kind::False:
                case Kind::None: continue;
                default: return false;
            }
        }
        return true;
    }

    void opaque(NodeId n, std::string why, std::vector<Stmt>& out) {
        Stmt s = stmt(St::Unknown, n);
        s.name = std::move(why);
        s.names = writes_of(n);
        if (writes_all_ && !on_environment_only(n)) s.names.push_back(std::string(post_init::kWritesAll));
        s.site = add_site(Site::Kind::Unknown, s.line, "", kNoNode);
        program_->sites[static_cast<std::size_t>(s.site)].text = s.name;
        out.push_back(std::move(s));
    }

    void statement(NodeId n, std::vector<Stmt>& out) {
        const Ast& a = ast();
        switch (a.kind(n)) {
            case Kind::Comment:
            case Kind::PassStatement:
            case Kind::GlobalStatement:
            case Kind::NonlocalStatement:
            case Kind::FutureImportStatement: return;
            case Kind::ImportStatement:
            case Kind::ImportFromStatement: return bind_imports(n);
            case Kind::ExpressionStatement: return expression_statement(n, out);
            case Kind::IfStatement: return if_statement(n, out);
            case Kind::ForStatement: return for_statement(n, out);
            case Kind::TryStatement: return try_statement(n, out);
            case Kind::WithStatement: {
                for (auto& s : block(a.field(n, Field::Body))) out.push_back(std::move(s));
                return;
            }
            case Kind::RaiseStatement: {
                Stmt s = stmt(St::Raise, n);
                NodeId x = a.first_named(n);
                NodeId message = kNoNode;
                if (x == kNoNode) {
                    s.name = "(re-raised)";
                } else if (a.kind(x) == Kind::Call) {
                    s.name = last_part(compact(a.source(a.field(x, Field::Function))));
                    auto args = a.named_kids(a.field(x, Field::Arguments));
                    if (!args.empty() && a.kind(args[0]) != Kind::KeywordArgument) message = args[0];
                } else {
                    s.name = last_part(compact(a.source(x)));
                }
                if (message != kNoNode) s.e = expr(message);
                else s.e = constant(Value::string(""));
                s.site = add_site(Site::Kind::Raise, s.line, s.name, message);
                out.push_back(std::move(s));
                return;
            }
            case Kind::AssertStatement: {
                auto parts = a.named_kids(n);
                if (parts.empty()) return;
                Stmt check = stmt(St::If, n);
                check.e = make(Op::Not, {}, {expr(parts[0])});
                Stmt r = stmt(St::Raise, n);
                r.name = "AssertionError";
                NodeId message = parts.size() > 1 ? parts[1] : kNoNode;
                r.e = message != kNoNode ? expr(message) : constant(Value::string(""));
                r.site = add_site(Site::Kind::Raise, r.line, "AssertionError", message, parts[0]);
                // An assert without a message is known by its condition (the line Python's traceback shows), so
                // that a rule can name it and a report can say what failed.
                if (message == kNoNode) program_->sites.back().text = "assert " + collapsed(a.source(parts[0]));
                check.body.push_back(std::move(r));
                out.push_back(std::move(check));
                return;
            }
            case Kind::ReturnStatement: {
                Stmt s = stmt(St::Return, n);
                NodeId v = a.first_named(n);
                s.e = v == kNoNode ? constant(Value::null()) : expr(v);
                out.push_back(std::move(s));
                return;
            }
            case Kind::BreakStatement: out.push_back(stmt(St::Break, n)); return;
            case Kind::ContinueStatement: out.push_back(stmt(St::Continue, n)); return;
            case Kind::FunctionDefinition: {
                // A helper defined in the body: compiled like any function (names of the enclosing body it reads
                // are unknown there).
                const std::string name(a.source(a.field(n, Field::Name)));
                const std::string q = fmt::format("{}.<locals>.{}", ctx_->function, name);
                if (compile_function(*ctx_->module, n, q, nullptr)) {
                    ctx_->nested[name] = q;
                    return;
                }
                Stmt s = stmt(St::Let, n);
                s.name = name;
                s.e = unknown_expr(fmt::format("{} is defined inside the check", name));
                out.push_back(std::move(s));
                return;
            }
            case Kind::ClassDefinition:
            case Kind::DecoratedDefinition: {
                // A nested definition: its name is bound to something the linter does not model.
                NodeId def = a.kind(n) == Kind::DecoratedDefinition ? a.field(n, Field::Definition) : n;
                Stmt s = stmt(St::Let, n);
                s.name = std::string(a.source(a.field(def, Field::Name)));
                s.e = unknown_expr(fmt::format("{} is defined inside the check", s.name));
                out.push_back(std::move(s));
                return;
            }
            default: return opaque(n, fmt::format("a statement the linter does not follow (line {})", a[n].line), out);
        }
    }

    void bind_imports(NodeId n) {
        const Ast& a = ast();
        if (a.kind(n) == Kind::ImportStatement) {
            for (NodeId k : a.named_kids(n)) {
                if (a.kind(k) == Kind::AliasedImport)
                    ctx_->bound[std::string(a.source(a.field(k, Field::Alias)))] =
                        resolve_member(compact(a.source(a.field(k, Field::Name))), "");
                else if (a.kind(k) == Kind::DottedName) {
                    const std::string d = compact(a.source(k));
                    ctx_->bound[d.substr(0, d.find('.'))] = resolve_member(d.substr(0, d.find('.')), "");
                }
            }
            return;
        }
        const std::string module = imported_module(*ctx_->module, n);
        for (std::uint32_t i = 0; i < a.count(n); ++i) {
            NodeId k = a.kid(n, i);
            if (a[k].field == Field::ModuleName) continue;
            if (a.kind(k) == Kind::DottedName) {
                const std::string name = compact(a.source(k));
                ctx_->bound[name] = resolve_member(module, name);
            } else if (a.kind(k) == Kind::AliasedImport) {
                ctx_->bound[std::string(a.source(a.field(k, Field::Alias)))] =
                    resolve_member(module, compact(a.source(a.field(k, Field::Name))));
            }
        }
    }

    // A call that only logs: its level, or "" when it is no logging call.
    std::string log_level(NodeId call) {
        const Ast& a = ast();
        const std::string chain = dotted(a.field(call, Field::Function));
        const std::string path = chain.empty() ? "" : external_path(chain);
        const std::string last = last_part(chain);
        if (path == "warnings.warn") return "warning";
        if (last == "log_single_rank" || last == "log_on_each_pipeline_stage") {
            auto args = a.named_kids(a.field(call, Field::Arguments));
            for (NodeId x : args) {
                const std::string s = compact(a.source(x));
                if (s.find("WARNING") != std::string::npos || s.find("WARN") != std::string::npos) return "warning";
            }
            return "info";
        }
        const std::string head = chain.substr(0, chain.find('.'));
        if ((head == "logger" || head == "logging" || head == "log" || path.rfind("logging", 0) == 0) &&
            chain.find('.') != std::string::npos) {
            if (last == "warning" || last == "warn") return "warning";
            return "info";
        }
        if (chain == "print") return "info";
        return {};
    }

    void expression_statement(NodeId n, std::vector<Stmt>& out) {
        const Ast& a = ast();
        NodeId x = a.first_named(n);
        switch (a.kind(x)) {
            case Kind::String:
            case Kind::ConcatenatedString: return;  // a docstring
            case Kind::Assignment: return assignment(x, out);
            case Kind::AugmentedAssignment: return augmented(x, out);
            case Kind::Call: {
                const std::string level = log_level(x);
                if (level == "warning") {
                    Stmt s = stmt(St::Warn, x);
                    auto args = a.named_kids(a.field(x, Field::Arguments));
                    NodeId message = kNoNode;
                    for (NodeId arg : args)
                        if (a.kind(arg) == Kind::String || a.kind(arg) == Kind::ConcatenatedString ||
                            a.kind(arg) == Kind::BinaryOperator || a.kind(arg) == Kind::ParenthesizedExpression)
                            message = message == kNoNode ? arg : message;
                    s.e = message != kNoNode ? expr(message) : constant(Value::string(""));
                    s.site = add_site(Site::Kind::Warn, s.line, "", message);
                    out.push_back(std::move(s));
                    return;
                }
                if (!level.empty()) return;
                auto args = a.named_kids(a.field(x, Field::Arguments));
                if (compact(a.source(a.field(x, Field::Function))) == "setattr" && args.size() == 3 &&
                    !ctx_->self.empty() && a.source(args[0]) == ctx_->self && !ctx_->locals.count("setattr") &&
                    ctx_->self_prefix.empty()) {
                    Stmt s = stmt(St::Set, x);
                    s.e = make(Op::Tuple, {}, {expr(args[1]), expr(args[2])});
                    s.site = add_site(Site::Kind::Unknown, s.line, "", kNoNode);
                    program_->sites[static_cast<std::size_t>(s.site)].text =
                        "setattr with a name the linter does not know";
                    out.push_back(std::move(s));
                    return;
                }
                // setattr(param, name, value) on an object the function is given or built (Bridge's _apply_cfgs
                // copies a dataclass's fields onto a config this way).
                if (compact(a.source(a.field(x, Field::Function))) == "setattr" && args.size() == 3 &&
                    a.kind(args[0]) == Kind::Identifier && a.source(args[0]) != ctx_->self &&
                    ctx_->locals.count(std::string(a.source(args[0]))) && !ctx_->locals.count("setattr"))
                    return set_on_object(x, expr(args[0]), expr(args[1]), expr(args[2]), out);
                Expr e = expr(x);
                // On the whole config, a method the linter does not follow may change the object it is called on.
                if ((e.op == Op::Unknown && e.kind != "pure") ||
                    (writes_all_ && e.op == Op::Method && !on_own_local(e))) {
                    // A call the linter cannot follow may check or change anything it is given.
                    opaque(x, fmt::format("{} (line {})", e.name, a[x].line), out);
                    // A method of a container section (`self.dataset.validate()`): kept, so that the executor runs it
                    // where the config names the section's class and the program compiled the method for it.
                    const NodeId callee = a.field(x, Field::Function);
                    if (e.op == Op::Method && a.kind(callee) == Kind::Attribute)
                        if (auto section = section_object(a.field(callee, Field::Object))) {
                            section_methods_[*section].insert(e.name);
                            out.back().e = std::move(e);
                        }
                    return;
                }
                Stmt s = stmt(St::Eval, x);
                s.e = std::move(e);
                out.push_back(std::move(s));
                return;
            }
            default: {
                Stmt s = stmt(St::Eval, x);
                s.e = expr(x);
                out.push_back(std::move(s));
            }
        }
    }

    void assign_to(NodeId target, Expr value, NodeId at, std::vector<Stmt>& out, NodeId value_node) {
        const Ast& a = ast();
        if (in_container() && a.kind(target) == Kind::Attribute) {
            NodeId holder = a.field(target, Field::Object);
            const std::string attr(a.source(a.field(target, Field::AttributeName)));
            if (auto section = container_section(holder)) {  // self.train.x = value
                Stmt s = stmt(St::Set, at);
                s.name = *section == "model" ? attr : *section + "." + attr;
                s.e = std::move(value);
                out.push_back(std::move(s));
                return;
            }
            if (a.kind(holder) == Kind::Identifier && a.source(holder) == ctx_->self) {
                if (container_sections_.count(attr))
                    return opaque(at, fmt::format("replaces the config's {} section", attr), out);
                return;  // an attribute of the container worked out at start-up: reading it is unknown anyway
            }
        }
        if (a.kind(target) == Kind::Attribute && !ctx_->self.empty() &&
            a.source(a.field(target, Field::Object)) == ctx_->self) {
            Stmt s = stmt(St::Set, at);
            s.name = ctx_->self_prefix + std::string(a.source(a.field(target, Field::AttributeName)));
            s.e = std::move(value);
            out.push_back(std::move(s));
            return;
        }
        // `self.cfg.name = value` on a section: its field `cfg` becomes a copy with `name` set.
        if (a.kind(target) == Kind::Attribute && !ctx_->self_prefix.empty()) {
            NodeId holder = a.field(target, Field::Object);
            if (a.kind(holder) == Kind::Attribute && a.source(a.field(holder, Field::Object)) == ctx_->self) {
                Stmt s = stmt(St::Set, at);
                s.name = ctx_->self_prefix + std::string(a.source(a.field(holder, Field::AttributeName)));
                s.e = make(Op::Builtin, std::string(post_init::kWithBuiltin),
                           {make(Op::Self, s.name),
                            constant(Value::string(std::string(a.source(a.field(target, Field::AttributeName))))),
                            std::move(value)});
                out.push_back(std::move(s));
                return;
            }
        }
        if (a.kind(target) == Kind::Identifier) {
            Stmt s = stmt(St::Let, at);
            s.name = std::string(a.source(target));
            std::vector<std::string> reads;
            if (value_node != kNoNode) reads_of(value_node, reads);
            ctx_->local_reads[s.name] = reads;
            s.e = std::move(value);
            out.push_back(std::move(s));
            return;
        }
        if (a.kind(target) == Kind::PatternList || a.kind(target) == Kind::TuplePattern ||
            a.kind(target) == Kind::ExpressionList || a.kind(target) == Kind::Tuple) {
            Stmt s = stmt(St::Let, at);
            for (NodeId t : a.named_kids(target)) {
                if (a.kind(t) != Kind::Identifier) return opaque(at, "an unpacking the linter does not follow", out);
                s.names.push_back(std::string(a.source(t)));
            }
            s.e = std::move(value);
            out.push_back(std::move(s));
            return;
        }
        // `cfg.name = value` on a local dataclass value (a section's start-up builds its own): a copy with `name` set.
        if (a.kind(target) == Kind::Attribute && dataclass_values_) {
            NodeId holder = a.field(target, Field::Object);
            const std::string local(a.source(holder));
            // (Under the whole config a parameter may be a section it is given: not a local copy.)
            if (a.kind(holder) == Kind::Identifier && ctx_->locals.count(local) && !ctx_->objects.count(local) &&
                local != ctx_->self && !(writes_all_ && ctx_->params.count(local))) {
                Stmt s = stmt(St::Let, at);
                s.name = local;
                s.e = make(Op::Builtin, std::string(post_init::kWithBuiltin),
                           {make(Op::Var, local),
                            constant(Value::string(std::string(a.source(a.field(target, Field::AttributeName))))),
                            std::move(value)});
                out.push_back(std::move(s));
                return;
            }
        }
        // `config.name = value` on an object the function is given (Bridge's helpers set fields of the model they are
        // handed): as setattr(config, "name", value), on whatever the parameter holds.
        if (a.kind(target) == Kind::Attribute) {
            NodeId holder = a.field(target, Field::Object);
            const std::string local(a.source(holder));
            if (a.kind(holder) == Kind::Identifier && local != ctx_->self && ctx_->locals.count(local))
                return set_on_object(
                    at, make(Op::Var, local),
                    constant(Value::string(std::string(a.source(a.field(target, Field::AttributeName))))),
                    std::move(value), out);
            // `config.ddp.name = value` on the whole config a function is given (Bridge's
            // _validate_and_sync_distributed_optimizer_settings): set on whatever object `config.ddp` is; the executor
            // treats any other object as changed anywhere.
            NodeId root = holder;
            while (a.kind(root) == Kind::Attribute) root = a.field(root, Field::Object);
            const std::string base(a.source(root));
            if (a.kind(holder) == Kind::Attribute && a.kind(root) == Kind::Identifier && base != ctx_->self &&
                ctx_->locals.count(base))
                return set_on_object(
                    at, expr(holder),
                    constant(Value::string(std::string(a.source(a.field(target, Field::AttributeName))))),
                    std::move(value), out);
        }
        opaque(at, fmt::format("an assignment to {} the linter does not follow", compact(a.source(target))), out);
    }

    void assignment(NodeId x, std::vector<Stmt>& out) {
        const Ast& a = ast();
        NodeId right = a.field(x, Field::Right);
        if (right == kNoNode) return;             // a bare annotation
        if (a.kind(right) == Kind::Assignment) {  // a = b = value: assign the innermost value to every target
            std::vector<NodeId> targets{a.field(x, Field::Left)};
            while (a.kind(right) == Kind::Assignment) {
                targets.push_back(a.field(right, Field::Left));
                right = a.field(right, Field::Right);
            }
            for (NodeId t : targets) assign_to(t, expr(right), x, out, right);
            return;
        }
        assign_to(a.field(x, Field::Left), expr(right), x, out, right);
    }

    void augmented(NodeId x, std::vector<Stmt>& out) {
        const Ast& a = ast();
        NodeId target = a.field(x, Field::Left);
        std::string op;
        for (std::uint32_t i = 0; i < a.count(x); ++i)
            if (a.kind(a.kid(x, i)) == Kind::Operator) op = compact(a.source(a.kid(x, i)));
        if (op.size() < 2) return opaque(x, "an augmented assignment the linter does not follow", out);
        op.pop_back();  // "+=" -> "+"
        Expr value = make(Op::Bin, op, {expr(target), expr(a.field(x, Field::Right))});
        assign_to(target, std::move(value), x, out, a.field(x, Field::Right));
    }

    void if_statement(NodeId n, std::vector<Stmt>& out) {
        const Ast& a = ast();
        Stmt s = stmt(St::If, n);
        NodeId cond = a.field(n, Field::Condition);
        s.e = expr(cond);
        std::vector<std::string> reads;
        reads_of(cond, reads);
        ctx_->guards.push_back(reads);
        s.body = block(a.field(n, Field::Consequence));
        // elif / else clauses: each elif is an if in the else branch of the one before it.
        std::vector<NodeId> alternatives;
        for (std::uint32_t i = 0; i < a.count(n); ++i)
            if (a[a.kid(n, i)].field == Field::Alternative) alternatives.push_back(a.kid(n, i));
        std::vector<Stmt>* tail = &s.orelse;
        std::size_t pushed = 1;
        for (NodeId alt : alternatives) {
            if (a.kind(alt) == Kind::ElifClause) {
                Stmt e = stmt(St::If, alt);
                NodeId c = a.field(alt, Field::Condition);
                e.e = expr(c);
                std::vector<std::string> r;
                reads_of(c, r);
                ctx_->guards.push_back(r);
                ++pushed;
                e.body = block(a.field(alt, Field::Consequence));
                tail->push_back(std::move(e));
                tail = &tail->back().orelse;
            } else if (a.kind(alt) == Kind::ElseClause) {
                *tail = block(a.field(alt, Field::Body));
            }
        }
        for (std::size_t i = 0; i < pushed; ++i) ctx_->guards.pop_back();
        out.push_back(std::move(s));
    }

    void for_statement(NodeId n, std::vector<Stmt>& out) {
        const Ast& a = ast();
        Stmt s = stmt(St::For, n);
        NodeId target = a.field(n, Field::Left);
        if (a.kind(target) == Kind::Identifier) {
            s.name = std::string(a.source(target));
        } else {
            for (NodeId t : a.named_kids(target)) {
                if (a.kind(t) != Kind::Identifier) return opaque(n, "a loop the linter does not follow", out);
                s.names.push_back(std::string(a.source(t)));
            }
        }
        NodeId iter = a.field(n, Field::Right);
        s.e = expr(iter);
        std::vector<std::string> reads;
        reads_of(iter, reads);
        ctx_->guards.push_back(reads);
        s.body = block(a.field(n, Field::Body));
        ctx_->guards.pop_back();
        if (a.field(n, Field::Alternative) != kNoNode) return opaque(n, "a for-else loop", out);
        out.push_back(std::move(s));
    }

    void try_statement(NodeId n, std::vector<Stmt>& out) {
        const Ast& a = ast();
        Stmt s = stmt(St::Try, n);
        s.body = block(a.field(n, Field::Body));
        std::vector<Stmt> finally;
        for (NodeId k : a.named_kids(n)) {
            if (a.kind(k) == Kind::ExceptClause) {
                // Each handler is one more possibility; their bodies run only when the try body raised.
                NodeId body = kNoNode;
                for (NodeId x : a.named_kids(k))
                    if (a.kind(x) == Kind::Block) body = x;
                if (body == kNoNode) continue;
                auto handler = block(body);
                for (auto& h : handler) s.orelse.push_back(std::move(h));
            } else if (a.kind(k) == Kind::FinallyClause) {
                for (NodeId x : a.named_kids(k))
                    if (a.kind(x) == Kind::Block) finally = block(x);
            } else if (a.kind(k) == Kind::ElseClause) {
                auto els = block(a.field(k, Field::Body));
                for (auto& e : els) s.body.push_back(std::move(e));
            }
        }
        out.push_back(std::move(s));
        for (auto& f : finally) out.push_back(std::move(f));
    }

    // --- expressions ---------------------------------------------------------------------------------------

    Expr string_expr(NodeId n) {
        const Ast& a = ast();
        if (a.kind(n) == Kind::ConcatenatedString) {
            Expr out = make(Op::FStr);
            for (NodeId k : a.named_kids(n)) {
                Expr part = string_expr(k);
                if (part.op == Op::FStr)
                    for (auto& p : part.kids) out.kids.push_back(std::move(p));
                else out.kids.push_back(std::move(part));
            }
            return out;
        }
        bool raw = false, fstring = false, bytes = false;
        Expr out = make(Op::FStr);
        std::string text;
        for (std::uint32_t i = 0; i < a.count(n); ++i) {
            NodeId k = a.kid(n, i);
            switch (a.kind(k)) {
                case Kind::StringStart:
                    for (char c : a.source(k)) {
                        if (c == '"' || c == '\'') break;
                        const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                        raw |= l == 'r';
                        fstring |= l == 'f';
                        bytes |= l == 'b';
                    }
                    break;
                case Kind::StringContent: {
                    std::string t(a.source(k));
                    if (fstring) {
                        std::string u;
                        for (std::size_t j = 0; j < t.size(); ++j) {
                            u += t[j];
                            if ((t[j] == '{' || t[j] == '}') && j + 1 < t.size() && t[j + 1] == t[j]) ++j;
                        }
                        t = std::move(u);
                    }
                    text += raw ? t : unescape(t);
                    break;
                }
                case Kind::EscapeSequence: text += unescape(a.source(k)); break;
                case Kind::Interpolation: {
                    if (!text.empty()) out.kids.push_back(constant(Value::string(std::move(text))));
                    text.clear();
                    Expr part = expr(a.field(k, Field::Expression));
                    const std::string src(a.source(k));
                    // `{x!r}` renders the repr; `{x=}` the text and the repr; a format spec is not modelled.
                    if (a.field(k, Field::FormatSpec) != kNoNode) part = unknown_expr("an f-string format", "pure");
                    if (src.find("=}") != std::string::npos || src.find("=!") != std::string::npos) {
                        std::string shown = src.substr(1, src.find('='));
                        out.kids.push_back(constant(Value::string(shown)));
                        out.kids.push_back(make(Op::Builtin, "repr", {std::move(part)}));
                    } else if (src.find("!r") != std::string::npos) {
                        out.kids.push_back(make(Op::Builtin, "repr", {std::move(part)}));
                    } else {
                        out.kids.push_back(std::move(part));
                    }
                    break;
                }
                default: break;
            }
        }
        if (bytes) return unknown_expr("a bytes literal", "pure");
        if (!text.empty() || out.kids.empty()) out.kids.push_back(constant(Value::string(std::move(text))));
        if (out.kids.size() == 1 && out.kids[0].op == Op::Const) return out.kids[0];
        return out;
    }

    std::vector<Expr> args_of(NodeId arglist, const Function* callee, bool& ok, std::size_t skip = 0) {
        const Ast& a = ast();
        std::vector<Expr> pos;
        std::vector<std::pair<std::string, Expr>> kw;
        ok = true;
        for (NodeId x : a.named_kids(arglist)) {
            if (a.kind(x) == Kind::KeywordArgument) {
                kw.emplace_back(std::string(a.source(a.field(x, Field::Name))), expr(a.field(x, Field::Value)));
            } else if (a.kind(x) == Kind::ListSplat || a.kind(x) == Kind::DictionarySplat) {
                ok = false;
            } else {
                pos.push_back(expr(x));
            }
        }
        if (kw.empty()) return pos;
        if (!callee) {
            ok = false;
            return pos;
        }
        // Keyword arguments placed by the callee's parameter names.
        std::vector<Expr> out = std::move(pos);
        for (auto& [name, value] : kw) {
            auto it = std::find(callee->params.begin(), callee->params.end(), name);
            if (it == callee->params.end()) {
                ok = false;
                return out;
            }
            const std::size_t i = static_cast<std::size_t>(it - callee->params.begin());
            if (i < skip) {
                ok = false;
                return out;
            }
            const std::size_t slot = i - skip;
            while (out.size() < slot) {
                // A parameter not given: its default, which the executor fills in when the list stops short.
                const Expr& d = callee->defaults[out.size() + skip];
                out.push_back(d.op == Op::Unknown && d.name.empty() ? unknown_expr("a missing argument") : d);
            }
            if (slot < out.size()) out[slot] = std::move(value);
            else out.push_back(std::move(value));
        }
        return out;
    }

    Expr call_expr(NodeId n) {
        const Ast& a = ast();
        NodeId fn = a.field(n, Field::Function);
        NodeId arglist = a.field(n, Field::Arguments);
        if (a.kind(arglist) == Kind::GeneratorExpression) {
            // f(x for x in xs): one argument, the generator.
            const std::string name(a.source(fn));
            if (kBuiltins.count(name) && !ctx_->locals.count(name)) return make(Op::Builtin, name, {expr(arglist)});
            return unknown_expr(fmt::format("calls {}", compact(a.source(fn))));
        }
        // super().method(...)
        if (a.kind(fn) == Kind::Attribute) {
            NodeId obj = a.field(fn, Field::Object);
            const std::string attr(a.source(a.field(fn, Field::AttributeName)));
            if (a.kind(obj) == Kind::Call && compact(a.source(a.field(obj, Field::Function))) == "super" && ctx_->cls) {
                const ConfigClass* base = nullptr;
                for (const ConfigClass* k : facts_.mro(ctx_->cls->name)) {
                    if (k->name == ctx_->cls->name) continue;
                    if (method_node(*k, attr).second != kNoNode) {
                        base = k;
                        break;
                    }
                }
                if (!base) return unknown_expr(fmt::format("super().{} outside the classes read", attr));
                const std::string q = ensure_method(*base, attr);
                if (q.empty()) return unknown_expr(fmt::format("super().{}", attr));
                bool ok = true;
                auto args = args_of(arglist, &program_->functions[q], ok, 1);
                if (!ok) return unknown_expr(fmt::format("super().{} with arguments the linter does not follow", attr));
                args.insert(args.begin(), make(Op::Var, ctx_->self));
                return make(Op::Call, q, std::move(args));
            }
            // self.method(...)
            if (!ctx_->self.empty() && a.source(obj) == ctx_->self && ctx_->cls) {
                if (const ConfigClass* owner = defining_class(*ctx_->cls, attr, nullptr)) {
                    pass_objects(arglist, 1);
                    const std::string q = ensure_method(*owner, attr);
                    pending_objects_.clear();
                    if (q.empty()) return unknown_expr(fmt::format("calls self.{}", attr));
                    bool ok = true;
                    auto args = args_of(arglist, &program_->functions[q], ok, 1);
                    if (!ok)
                        return unknown_expr(fmt::format("self.{} with arguments the linter does not follow", attr));
                    args.insert(args.begin(), make(Op::Var, ctx_->self));
                    return make(Op::Call, q, std::move(args));
                }
            }
        }
        const std::string chain = dotted(fn);
        const std::string path = chain.empty() ? "" : external_path(chain);
        const std::string last = last_part(chain);
        if (auto it = ctx_->nested.find(chain); it != ctx_->nested.end()) {
            bool ok = true;
            auto args = args_of(arglist, &program_->functions[it->second], ok);
            if (ok) return make(Op::Call, it->second, std::move(args));
        }
        if (!chain.empty() && chain.find('.') == std::string::npos && !ctx_->locals.count(chain)) {
            Binding b = resolve(chain);
            if (b.kind == Binding::None && kBuiltins.count(chain)) {
                Expr e = make(Op::Builtin, chain);
                for (NodeId x : a.named_kids(arglist)) {
                    if (a.kind(x) == Kind::KeywordArgument || a.kind(x) == Kind::ListSplat ||
                        a.kind(x) == Kind::DictionarySplat)
                        return unknown_expr(fmt::format("{} with arguments the linter does not follow", chain), "pure");
                    e.kids.push_back(expr(x));
                }
                return e;
            }
        }
        if (last == "is_te_min_version") {
            auto args = a.named_kids(arglist);
            if (args.empty()) return unknown_expr("is_te_min_version", "te");
            Expr e = make(Op::Ext, "is_te_min_version", {expr(args[0])});
            return e;
        }
        if (last == "get_te_version") return make(Op::Ext, "te_version");
        if (last == "is_torch_min_version") {
            auto args = a.named_kids(arglist);
            if (args.empty()) return unknown_expr("is_torch_min_version", "torch");
            return make(Op::Ext, "is_torch_min_version", {expr(args[0])});
        }
        if (path == "dataclasses.fields") {
            auto args = a.named_kids(arglist);
            if (args.size() == 1 && a.kind(args[0]) != Kind::KeywordArgument)
                return make(Op::Builtin, std::string(post_init::kFieldsBuiltin), {expr(args[0])});
        }
        if (path.rfind("os.", 0) == 0) return unknown_expr(fmt::format("{}: an environment variable", chain), "env");
        if (path.rfind("torch.cuda", 0) == 0 || path.rfind("torch.distributed", 0) == 0)
            return unknown_expr(fmt::format("{}: a fact of the GPU or the process group", chain), "gpu");
        // A function of the tree.
        if (!chain.empty() && chain.find('.') == std::string::npos && !ctx_->locals.count(chain)) {
            Binding b = resolve(chain);
            if (b.kind == Binding::Function && b.module) {
                pass_objects(arglist, 0);
                const std::string q = ensure_function(*b.module, b.node);
                pending_objects_.clear();
                if (!q.empty()) {
                    bool ok = true;
                    auto args = args_of(arglist, &program_->functions[q], ok);
                    if (ok) return make(Op::Call, q, std::move(args));
                }
            }
            if (b.kind == Binding::Class && register_enum(b)) {
                auto args = a.named_kids(arglist);
                if (args.size() == 1 && a.kind(args[0]) != Kind::KeywordArgument)
                    return make(Op::Builtin,
                                "\x01"
                                "enum",
                                {make(Op::Type, last_part(b.path)), expr(args[0])});
            }
            if (b.kind == Binding::Class && dataclass_values_)
                if (auto value = dataclass_value(b, arglist)) return *value;
            if (b.kind == Binding::Class) return unknown_expr(fmt::format("constructs {}", last_part(b.path)), "pure");
        }
        // A method of a value: kids[0] the object.
        if (a.kind(fn) == Kind::Attribute) {
            NodeId obj = a.field(fn, Field::Object);
            const std::string head = chain.substr(0, chain.find('.'));
            const bool module_call = !chain.empty() && !ctx_->locals.count(head) &&
                                     resolve(head).kind != Binding::None && resolve(head).kind != Binding::Constant;
            if (!module_call) {
                Expr e = make(Op::Method, std::string(a.source(a.field(fn, Field::AttributeName))), {expr(obj)});
                for (NodeId x : a.named_kids(arglist)) {
                    if (a.kind(x) == Kind::KeywordArgument || a.kind(x) == Kind::ListSplat ||
                        a.kind(x) == Kind::DictionarySplat)
                        return unknown_expr(fmt::format("{} with arguments the linter does not follow", e.name),
                                            "pure");
                    e.kids.push_back(expr(x));
                }
                return e;
            }
        }
        return unknown_expr(fmt::format("calls {}", chain.empty() ? compact(a.source(fn)) : path));
    }

    // The config objects a call passes on (`has_cuda_graph_module(model_cfg, "attn")`), by the callee's parameter
    // positions (`skip`: a method's self), for the callee to be compiled with.
    void pass_objects(NodeId arglist, std::size_t skip) {
        const Ast& a = ast();
        std::size_t position = skip;
        for (NodeId x : a.named_kids(arglist)) {
            if (a.kind(x) == Kind::Comment) continue;
            if (a.kind(x) == Kind::KeywordArgument || a.kind(x) == Kind::ListSplat ||
                a.kind(x) == Kind::DictionarySplat)
                break;
            if (a.kind(x) == Kind::Identifier) {
                if (auto it = ctx_->objects.find(a.source(x)); it != ctx_->objects.end())
                    pending_objects_[position] = it->second;
                else if (!ctx_->self_prefix.empty() && a.source(x) == ctx_->self)
                    pending_objects_[position] = ctx_->self_prefix;
            }
            ++position;
        }
    }

    // `Cls(name=value, ...)` of a dataclass of the tree with no bases: its fields as a mapping, each the argument
    // given or the default the class declares; nullopt for anything else.
    std::optional<Expr> dataclass_value(const Binding& b, NodeId arglist) {
        if (!b.module || b.node == kNoNode) return std::nullopt;
        const Ast& m = b.module->ast;
        if (NodeId bases = m.field(b.node, Field::Superclasses); bases != kNoNode && !m.named_kids(bases).empty())
            return std::nullopt;
        bool dataclass = false;
        for (NodeId id = 0; id < m.nodes.size(); ++id)
            if (m.kind(id) == Kind::DecoratedDefinition && m.field(id, Field::Definition) == b.node)
                for (NodeId d : m.named_kids(id))
                    dataclass |=
                        m.kind(d) == Kind::Decorator && compact(m.source(d)).find("dataclass") != std::string::npos;
        if (!dataclass) return std::nullopt;
        const Ast& a = ast();
        std::map<std::string, Expr, std::less<>> given;
        for (NodeId x : a.named_kids(arglist)) {
            if (a.kind(x) == Kind::Comment) continue;
            if (a.kind(x) != Kind::KeywordArgument) return std::nullopt;
            given[std::string(a.source(a.field(x, Field::Name)))] = expr(a.field(x, Field::Value));
        }
        Expr out = make(Op::Dict, last_part(b.path));  // named by its class, which isinstance decides on
        for (NodeId stmt : m.named_kids(m.field(b.node, Field::Body))) {
            if (m.kind(stmt) != Kind::ExpressionStatement) continue;
            NodeId as = m.first_named(stmt);
            if (m.kind(as) != Kind::Assignment || m.field(as, Field::Type) == kNoNode ||
                m.kind(m.field(as, Field::Left)) != Kind::Identifier)
                continue;
            const std::string name(m.source(m.field(as, Field::Left)));
            Expr value;
            if (auto it = given.find(name); it != given.end()) {
                value = std::move(it->second);
                given.erase(it);
            } else if (NodeId dflt = m.field(as, Field::Right); dflt != kNoNode) {
                value = in_module(*b.module, b.path, [&] { return expr(dflt); });
            } else {
                value = unknown_expr(fmt::format("{} is constructed without {}", last_part(b.path), name), "pure");
            }
            out.kids.push_back(constant(Value::string(name)));
            out.kids.push_back(std::move(value));
        }
        if (!given.empty()) return std::nullopt;  // an argument no field takes
        return out;
    }

    // An expression of another module (a default, a constant), compiled in that module's names.
    template <typename F>
    Expr in_module(const SourceModule& module, const std::string& where, F compile) {
        if (depth_ >= kMaxFunctionDepth) return unknown_expr(where, "pure");
        Context c;
        c.module = &module;
        c.file = module.path;
        c.function = where;
        Context* saved = ctx_;
        ctx_ = &c;
        ++depth_;
        Expr e = compile();
        --depth_;
        ctx_ = saved;
        return e;
    }

    Expr attribute_expr(NodeId n) {
        const Ast& a = ast();
        NodeId obj = a.field(n, Field::Object);
        const std::string attr(a.source(a.field(n, Field::AttributeName)));
        if (!ctx_->self.empty() && a.source(obj) == ctx_->self && a.kind(obj) == Kind::Identifier) {
            // A property of the class runs its getter; anything else is a field.
            if (ctx_->cls)
                if (const ConfigClass* owner = defining_class(*ctx_->cls, attr, nullptr)) {
                    auto [m, def] = method_node(*owner, attr);
                    if (m && is_property(*m, def)) {
                        const std::string q = ensure_method(*owner, attr);
                        if (!q.empty()) return make(Op::Call, q, {make(Op::Var, ctx_->self)});
                    }
                    return unknown_expr(fmt::format("method {} used as a value", attr), "pure");
                }
            if (in_container()) return make(Op::Attr, attr, {make(Op::Var, ctx_->self)});  // post_init::kContainer
            return make(Op::Self, ctx_->self_prefix + attr);
        }
        const std::string chain = dotted(n);
        if (!chain.empty()) {
            const std::string head = chain.substr(0, chain.find('.'));
            if (!ctx_->locals.count(head)) {
                Binding b = resolve(head);
                const std::string path = external_path(chain);
                if (path.rfind("torch.", 0) == 0 && kDtypes.count(last_part(path)) &&
                    std::count(path.begin(), path.end(), '.') == 1)
                    return make(Op::Dtype, [&] {
                        std::string d = last_part(path);
                        if (d == "float") return std::string("float32");
                        if (d == "half") return std::string("float16");
                        if (d == "double") return std::string("float64");
                        return d;
                    }());
                if (b.kind == Binding::Class && chain.find('.') == head.size() &&
                    std::count(chain.begin(), chain.end(), '.') == 1) {
                    if (auto m = enum_member(b, attr)) return *m;
                    return unknown_expr(fmt::format("{}", chain), "pure");
                }
                if (b.kind != Binding::None && b.kind != Binding::Constant)
                    return unknown_expr(fmt::format("{}", path), "pure");
            }
        }
        return make(Op::Attr, attr, {expr(obj)});
    }

    Expr comprehension_expr(NodeId n, const char* kind) {
        const Ast& a = ast();
        Expr e = make(Op::Comp, kind);
        std::vector<NodeId> parts = a.named_kids(n);
        if (parts.empty()) return unknown_expr("an empty comprehension");
        std::vector<Expr> clauses;
        // Comprehension variables are locals of their own scope.
        for (NodeId p : parts) {
            if (a.kind(p) != Kind::ForInClause) continue;
            NodeId left = a.field(p, Field::Left);
            std::vector<NodeId> names{left};
            while (!names.empty()) {
                NodeId t = names.back();
                names.pop_back();
                if (a.kind(t) == Kind::Identifier) ctx_->locals.insert(std::string(a.source(t)));
                else
                    for (NodeId x : a.named_kids(t)) names.push_back(x);
            }
        }
        for (NodeId p : parts) {
            if (a.kind(p) == Kind::ForInClause) {
                Expr c = make(Op::ForIn);
                NodeId left = a.field(p, Field::Left);
                if (a.kind(left) == Kind::Identifier) c.names.push_back(std::string(a.source(left)));
                else
                    for (NodeId t : a.named_kids(left)) {
                        if (a.kind(t) != Kind::Identifier) return unknown_expr("a comprehension target", "pure");
                        c.names.push_back(std::string(a.source(t)));
                    }
                c.kids.push_back(expr(a.field(p, Field::Right)));
                clauses.push_back(std::move(c));
            } else if (a.kind(p) == Kind::IfClause) {
                if (clauses.empty()) return unknown_expr("a comprehension filter", "pure");
                clauses.back().kids.push_back(expr(a.first_named(p)));
            }
        }
        NodeId body = a.field(n, Field::Body);
        if (body == kNoNode) body = parts[0];
        if (std::string(kind) == "dict") {
            if (a.kind(body) != Kind::Pair) return unknown_expr("a dict comprehension", "pure");
            e.kids.push_back(expr(a.field(body, Field::Key)));
            e.kids.push_back(expr(a.field(body, Field::Value)));
        } else {
            e.kids.push_back(expr(body));
        }
        for (auto& c : clauses) e.kids.push_back(std::move(c));
        return e;
    }

    Expr expr(NodeId n) {
        const Ast& a = ast();
        switch (a.kind(n)) {
            case Kind::Integer: {
                const std::string t = compact(a.source(n));
                try {
                    std::string digits;
                    for (char c : t)
                        if (c != '_') digits += c;
                    return constant(Value::integer(std::stoll(digits, nullptr, 0)));
                } catch (...) {
                    return unknown_expr("an integer literal", "pure");
                }
            }
            case Kind::Float: {
                try {
                    return constant(Value::floating(std::stod(compact(a.source(n)))));
                } catch (...) {
                    return unknown_expr("a float literal", "pure");
                }
            }
            case Kind::True: return constant(Value::boolean(true));
            case Kind::False: return constant(Value::boolean(false));
            case Kind::None: return constant(Value::null());
            case Kind::String:
            case Kind::ConcatenatedString: return string_expr(n);
            case Kind::ParenthesizedExpression: return expr(a.first_named(n));
            case Kind::List:
            case Kind::Tuple:
            case Kind::Set:
            case Kind::ExpressionList: {
                Expr e = make(a.kind(n) == Kind::List ? Op::List : a.kind(n) == Kind::Set ? Op::Set : Op::Tuple);
                for (NodeId k : a.named_kids(n)) {
                    if (a.kind(k) == Kind::ListSplat) return unknown_expr("a starred element", "pure");
                    e.kids.push_back(expr(k));
                }
                return e;
            }
            case Kind::Dictionary: {
                Expr e = make(Op::Dict);
                for (NodeId k : a.named_kids(n)) {
                    if (a.kind(k) != Kind::Pair) return unknown_expr("a dict splat", "pure");
                    e.kids.push_back(expr(a.field(k, Field::Key)));
                    e.kids.push_back(expr(a.field(k, Field::Value)));
                }
                return e;
            }
            case Kind::Identifier: {
                const std::string name(a.source(n));
                if (ctx_->locals.count(name)) return make(Op::Var, name);
                Binding b = resolve(name);
                switch (b.kind) {
                    case Binding::None:
                        if (kTypes.count(name)) return make(Op::Type, name);
                        return unknown_expr(fmt::format("the name {}", name), "pure");
                    case Binding::Constant: {
                        // A module constant: compiled in its own module's context.
                        if (!b.module) return unknown_expr(b.path, "pure");
                        return in_module(*b.module, b.path, [&] { return expr(b.node); });
                    }
                    case Binding::Class: register_enum(b); return make(Op::Type, last_part(b.path));
                    default: return unknown_expr(b.path, "pure");
                }
            }
            case Kind::Attribute: return attribute_expr(n);
            case Kind::Call: return call_expr(n);
            case Kind::NotOperator: return make(Op::Not, {}, {expr(a.field(n, Field::Argument))});
            case Kind::BooleanOperator: {
                std::string op;
                for (std::uint32_t i = 0; i < a.count(n); ++i)
                    if (a.kind(a.kid(n, i)) == Kind::Operator) op = compact(a.source(a.kid(n, i)));
                Expr e = make(op == "or" ? Op::Or : Op::And);
                for (NodeId side : {a.field(n, Field::Left), a.field(n, Field::Right)}) {
                    Expr k = expr(side);
                    if (k.op == e.op)
                        for (auto& x : k.kids) e.kids.push_back(std::move(x));
                    else e.kids.push_back(std::move(k));
                }
                return e;
            }
            case Kind::ComparisonOperator: {
                Expr e = make(Op::Cmp);
                for (std::uint32_t i = 0; i < a.count(n); ++i) {
                    NodeId k = a.kid(n, i);
                    if (a.kind(k) == Kind::Operator) {
                        std::string op;
                        for (char c : a.source(k)) {
                            if (c == ' ' || c == '\t' || c == '\n' || c == '\\' || c == '\r') {
                                if (!op.empty() && op.back() != ' ') op += ' ';
                            } else {
                                op += c;
                            }
                        }
                        while (!op.empty() && op.back() == ' ') op.pop_back();
                        e.ops.push_back(op);
                    } else if (a.kind(k) != Kind::Comment) {
                        e.kids.push_back(expr(k));
                    }
                }
                if (e.kids.size() != e.ops.size() + 1) return unknown_expr("a comparison", "pure");
                return e;
            }
            case Kind::BinaryOperator: {
                std::string op;
                for (std::uint32_t i = 0; i < a.count(n); ++i)
                    if (a.kind(a.kid(n, i)) == Kind::Operator) op = compact(a.source(a.kid(n, i)));
                return make(Op::Bin, op, {expr(a.field(n, Field::Left)), expr(a.field(n, Field::Right))});
            }
            case Kind::UnaryOperator: {
                std::string op;
                for (std::uint32_t i = 0; i < a.count(n); ++i)
                    if (a.kind(a.kid(n, i)) == Kind::Operator) op = compact(a.source(a.kid(n, i)));
                Expr v = expr(a.field(n, Field::Argument));
                if (op == "-") return make(Op::Neg, {}, {std::move(v)});
                if (op == "+") return v;
                return unknown_expr(fmt::format("operator {}", op), "pure");
            }
            case Kind::ConditionalExpression: {
                auto k = a.named_kids(n);
                if (k.size() != 3) return unknown_expr("a conditional expression", "pure");
                return make(Op::IfExp, {}, {expr(k[1]), expr(k[0]), expr(k[2])});
            }
            case Kind::Subscript: {
                std::vector<NodeId> subs;
                for (std::uint32_t i = 0; i < a.count(n); ++i)
                    if (a[a.kid(n, i)].field == Field::Subscript) subs.push_back(a.kid(n, i));
                if (subs.size() != 1 || a.kind(subs[0]) == Kind::Slice) return unknown_expr("a slice", "pure");
                return make(Op::Sub, {}, {expr(a.field(n, Field::Value)), expr(subs[0])});
            }
            case Kind::ListComprehension: return comprehension_expr(n, "list");
            case Kind::SetComprehension: return comprehension_expr(n, "set");
            case Kind::GeneratorExpression: return comprehension_expr(n, "gen");
            case Kind::DictionaryComprehension: return comprehension_expr(n, "dict");
            default:
                return unknown_expr(fmt::format("an expression the linter does not model (line {})", a[n].line),
                                    "pure");
        }
    }
};

// The calls Megatron Bridge's start-up makes on one config section, as its source states them: in
// `runtime_config_update`, under `if cfg.<section> is not None:`, each `cfg.<section>.<method>(cfg.<a>, ...)`.
struct SectionCall {
    std::string method;
    std::vector<std::string> args;  // "" the model, else the section passed
    int line = 0;
    bool conditional = false;  // container_calls: made inside a compound statement (a branch, a loop, a try)
};

std::vector<SectionCall> section_calls(const SourceModule& m, NodeId fn, const std::string& section) {
    const Ast& a = m.ast;
    std::vector<SectionCall> out;
    NodeId first = a.first_named(a.field(fn, Field::Parameters));
    if (first != kNoNode && a.kind(first) != Kind::Identifier) first = a.first_named(first);  // `cfg: ConfigContainer`
    if (first == kNoNode) return out;
    const std::string cfg(a.source(first));
    const std::string guard = cfg + "." + section + "isnotNone";
    std::function<void(NodeId, bool)> walk = [&](NodeId n, bool guarded) {
        if (a.kind(n) == Kind::IfStatement) guarded |= compact(a.source(a.field(n, Field::Condition))) == guard;
        if (a.kind(n) == Kind::Call && guarded) {
            const std::string callee = compact(a.source(a.field(n, Field::Function)));
            const std::string prefix = cfg + "." + section + ".";
            if (callee.rfind(prefix, 0) == 0 && callee.find('.', prefix.size()) == std::string::npos) {
                SectionCall call{callee.substr(prefix.size()), {section}, static_cast<int>(a[n].line)};
                for (NodeId x : a.named_kids(a.field(n, Field::Arguments))) {
                    const std::string arg = compact(a.source(x));
                    if (a.kind(x) != Kind::Attribute || arg.rfind(cfg + ".", 0) != 0 ||
                        arg.find('.', cfg.size() + 1) != std::string::npos)
                        return;  // an argument that is no section of the container: not followed
                    const std::string name = arg.substr(cfg.size() + 1);
                    call.args.push_back(name == "model" ? std::string() : name);
                }
                out.push_back(std::move(call));
                return;
            }
        }
        for (NodeId k : a.named_kids(n)) walk(k, guarded);
    };
    walk(a.field(fn, Field::Body), false);
    return out;
}

// The sections a start-up configures, in source order: each `X` of an `if cfg.X is not None:` in its body.
std::vector<std::string> guarded_sections(const SourceModule& m, NodeId fn) {
    const Ast& a = m.ast;
    NodeId first = a.first_named(a.field(fn, Field::Parameters));
    if (first != kNoNode && a.kind(first) != Kind::Identifier) first = a.first_named(first);  // `cfg: ConfigContainer`
    if (first == kNoNode) return {};
    const std::string prefix = std::string(a.source(first)) + ".";
    std::vector<std::string> out;
    std::vector<NodeId> todo{a.field(fn, Field::Body)};
    while (!todo.empty()) {
        NodeId n = todo.back();
        todo.pop_back();
        if (a.kind(n) == Kind::IfStatement) {
            const std::string c = compact(a.source(a.field(n, Field::Condition)));
            if (c.rfind(prefix, 0) == 0 && c.size() > prefix.size() + 9 && c.ends_with("isnotNone")) {
                std::string name = c.substr(prefix.size(), c.size() - prefix.size() - 9);
                if (name.find('.') == std::string::npos && std::find(out.begin(), out.end(), name) == out.end())
                    out.push_back(std::move(name));
            }
        }
        const auto kids = a.named_kids(n);
        for (auto k = kids.rbegin(); k != kids.rend(); ++k) todo.push_back(*k);
    }
    return out;
}

// The class ConfigContainer declares for a section (`comm_overlap: Optional[CommOverlapConfig] = None`).
std::pair<const SourceModule*, NodeId> section_class(TreeReader& tree, const SourceModule& config,
                                                     const std::string& section) {
    auto [m, container] = tree.find_class(config.name, "ConfigContainer");
    if (!m) return {nullptr, kNoNode};
    const Ast& a = m->ast;
    for (NodeId stmt : a.named_kids(a.field(container, Field::Body))) {
        NodeId as = a.kind(stmt) == Kind::ExpressionStatement ? a.first_named(stmt) : kNoNode;
        if (as == kNoNode || a.kind(as) != Kind::Assignment || a.field(as, Field::Type) == kNoNode ||
            a.source(a.field(as, Field::Left)) != section)
            continue;
        std::vector<NodeId> todo{a.field(as, Field::Type)};
        while (!todo.empty()) {
            NodeId n = todo.back();
            todo.pop_back();
            if (a.kind(n) == Kind::Identifier)
                if (auto found = tree.find_class(m->name, std::string(a.source(n))); found.first) return found;
            for (NodeId k : a.named_kids(n)) todo.push_back(k);
        }
    }
    return {nullptr, kNoNode};
}

// The whole config's own methods the start-up calls with no argument, in source order (`cfg.validate()` at the end of
// runtime_config_update; `cfg._disable_native_energon_packing_moe_overlap()` before the comm-overlap setup).
std::vector<SectionCall> container_calls(const SourceModule& m, NodeId fn) {
    const Ast& a = m.ast;
    NodeId first = a.first_named(a.field(fn, Field::Parameters));
    if (first != kNoNode && a.kind(first) != Kind::Identifier) first = a.first_named(first);
    if (first == kNoNode) return {};
    const std::string object(a.source(first));
    std::vector<SectionCall> out;
    for (NodeId statement : a.named_kids(a.field(fn, Field::Body))) {
        // A call that is the statement itself runs whenever the start-up does; one inside a compound statement only
        // on some paths.
        const bool plain = a.kind(statement) == Kind::ExpressionStatement;
        std::vector<NodeId> todo{statement};
        while (!todo.empty()) {
            NodeId n = todo.back();
            todo.pop_back();
            NodeId callee = a.kind(n) == Kind::Call ? a.field(n, Field::Function) : kNoNode;
            if (callee != kNoNode && a.kind(callee) == Kind::Attribute &&
                compact(a.source(a.field(callee, Field::Object))) == object &&
                a.named_kids(a.field(n, Field::Arguments)).empty())
                out.push_back({std::string(a.source(a.field(callee, Field::AttributeName))),
                               {std::string(post_init::kContainer)},
                               static_cast<int>(a[n].line),
                               !plain || a.first_named(statement) != n});
            for (NodeId k : a.named_kids(n)) todo.push_back(k);
        }
    }
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.line < y.line; });
    return out;
}

// ConfigContainer's fields (`train: TrainingConfig`, `comm_overlap: Optional[CommOverlapConfig] = None`): the
// sections a ConfigContainer method reads as config objects.
std::set<std::string, std::less<>> container_sections(const SourceModule& m, NodeId container) {
    const Ast& a = m.ast;
    std::set<std::string, std::less<>> out;
    for (NodeId stmt : a.named_kids(a.field(container, Field::Body))) {
        NodeId as = a.kind(stmt) == Kind::ExpressionStatement ? a.first_named(stmt) : kNoNode;
        if (as != kNoNode && a.kind(as) == Kind::Assignment && a.field(as, Field::Type) != kNoNode &&
            a.kind(a.field(as, Field::Left)) == Kind::Identifier)
            out.insert(std::string(a.source(a.field(as, Field::Left))));
    }
    return out;
}

}  // namespace

std::shared_ptr<const Program> compile_post_init(TreeReader& tree, const ClassFacts& facts) {
    Compiler c(tree, facts);
    return c.compile();
}

std::shared_ptr<const Program> compile_bridge_startup(TreeReader& tree, std::string commit, std::string& why,
                                                      TreeReader* outside) {
    // Where Bridge's start-up configures the sections: training/config.py's runtime_config_update since 2025's
    // autumn, training/setup.py's setup before.
    const std::pair<const char*, const char*> startups[] = {
        {"megatron.bridge.training.config", "runtime_config_update"}, {"megatron.bridge.training.setup", "setup"}};
    const SourceModule* where = nullptr;
    std::vector<std::pair<std::string, std::vector<SectionCall>>> by_section;  // in the order first called
    for (const auto& [module, function] : startups) {
        const SourceModule* m = tree.module(module);
        if (!m || !m->functions.count(function)) continue;
        for (const auto& section : guarded_sections(*m, m->functions.at(function)))
            if (auto calls = section_calls(*m, m->functions.at(function), section); !calls.empty())
                by_section.emplace_back(section, std::move(calls));
        if (!by_section.empty()) {
            where = m;
            break;
        }
    }
    const SourceModule* config = tree.module("megatron.bridge.training.config");
    if (!where || !config) {
        why = "no start-up the linter follows calls a method of a config section (training/config.py "
              "runtime_config_update, training/setup.py setup)";
        return nullptr;
    }
    ClassFacts facts;
    struct Section {
        std::string name;
        const SourceModule* module = nullptr;
        NodeId cls = kNoNode;
        std::size_t index = 0;  // into facts.classes
    };
    std::vector<Section> sections;
    for (const auto& [name, calls] : by_section) {
        // A section of no class of the tree (its annotation names none): its calls are not followed.
        auto [m, cls] = section_class(tree, *config, name);
        sections.push_back({name, m, cls, m ? facts.classes.size() : 0});
        if (m) facts.classes.push_back(class_at(*m, cls));
    }
    // The whole config's own methods the start-up calls, where it validates the whole config (runtime_config_update
    // ends with cfg.validate()): each a step given the whole config, in order with the sections'.
    auto [container_module, container] = tree.find_class(config->name, "ConfigContainer");
    std::vector<SectionCall> own = container_module && where->functions.count("runtime_config_update")
                                       ? container_calls(*where, where->functions.at("runtime_config_update"))
                                       : std::vector<SectionCall>{};
    if (std::none_of(own.begin(), own.end(), [](const SectionCall& c) { return c.method == "validate"; })) own.clear();
    const std::size_t container_index = facts.classes.size();
    if (!own.empty()) facts.classes.push_back(class_at(*container_module, container));
    facts.index();
    Compiler compiler(tree, facts);
    for (const auto& sec : sections) {
        if (!sec.module) continue;
        compiler.section_class(facts.classes[sec.index].name, sec.name);
        compiler.describe_section_fields(sec.name, *sec.module, sec.cls, outside);
    }
    // The other sections the sections' methods are given (`setup(cfg.model, cfg.optimizer, cfg.ddp)`): their fields
    // too, for what hasattr asks of them.
    std::set<std::string, std::less<>> described;
    for (const auto& sec : sections) described.insert(sec.name);
    for (const auto& [name, calls] : by_section)
        for (const auto& call : calls)
            for (const auto& arg : call.args)
                if (!arg.empty() && described.insert(arg).second)
                    if (auto [m, cls] = section_class(tree, *config, arg); m)
                        compiler.describe_section_fields(arg, *m, cls, outside);
    if (!own.empty()) {
        auto names = container_sections(*container_module, container);
        compiler.container_class(facts.classes[container_index].name, names);
        compiler.sections(std::vector<std::string>(names.begin(), names.end()));
    }
    // Every call in the order the start-up makes them; constructing a section (a dataclass) ran its __post_init__
    // before the start-up calls anything on it.
    struct Call {
        const SectionCall* call;
        const Section* section;  // null: a method of the whole config
    };
    std::vector<Call> order;
    for (std::size_t i = 0; i < sections.size(); ++i)
        for (const auto& call : by_section[i].second) order.push_back({&call, &sections[i]});
    for (const auto& call : own) order.push_back({&call, nullptr});
    std::stable_sort(order.begin(), order.end(),
                     [](const Call& x, const Call& y) { return x.call->line < y.call->line; });
    std::set<std::string, std::less<>> constructed;
    for (const auto& [call, section] : order) {
        if (section && !section->module) {
            compiler.add_unfollowed_step(section->name + "." + call->method, where->path, call->line);
            continue;
        }
        const ConfigClass& owner = section ? facts.classes[section->index] : facts.classes[container_index];
        if (section && constructed.insert(section->name).second && compiler.defines(owner, "__post_init__"))
            compiler.add_step(owner, "__post_init__", {section->name}, owner.file, owner.line, section->name);
        // A method of the whole config the start-up calls on some paths only: nothing after it is claimed.
        if (!section && call->conditional) {
            compiler.add_unfollowed_step(owner.name + "." + call->method, where->path, call->line);
            continue;
        }
        if (compiler.add_step(owner, call->method, call->args, where->path, call->line,
                              section ? section->name : std::string()))
            continue;
        // A method the linter cannot find (a fork's mixin, a base outside the tree): nothing after it is certain.
        if (section || call->method != "validate") {
            compiler.add_unfollowed_step(owner.name + "." + call->method, where->path, call->line);
            continue;
        }
        why = fmt::format("{}.{} is not defined where the linter looks", owner.name, call->method);
        return nullptr;
    }
    if (!own.empty()) compiler.describe_section_classes(*container_module);
    return compiler.take(std::move(commit), "src/");
}

}  // namespace mbl::py
