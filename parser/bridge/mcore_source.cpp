// Reads Megatron Core's config classes from a tree on disk, statement by statement, as scripts/mcore_facts.py reads
// them from git (the same rules for types, defaults and the recompute vocabulary; tests/python/test_mcore_source.cpp
// holds the two to the same answers).
#include "parser/bridge/mcore_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>

#include "core/file_text.hpp"
#include "core/post_init.hpp"
#include "parser/bridge/mcore_tree.hpp"
#include "pyeval/ast.hpp"

namespace mbl::py {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t kMaxSourceFile = 8u << 20;

}  // namespace

std::string compact(std::string_view s) {
    std::string out;
    for (char c : s)
        if (c != ' ' && c != '\n' && c != '\t' && c != '\r' && c != '\\') out += c;
    return out;
}

std::string last_part(std::string_view dotted) {
    const auto dot = dotted.rfind('.');
    return std::string(dot == std::string_view::npos ? dotted : dotted.substr(dot + 1));
}

static std::optional<std::string> read_file(const fs::path& p) {
    return read_file_text(p.string(), kMaxSourceFile).text;
}

const SourceModule* TreeReader::module(const std::string& name) {
    if (auto it = modules_.find(name); it != modules_.end()) return it->second.get();
    std::unique_ptr<SourceModule> m;
    std::string base = name;
    std::replace(base.begin(), base.end(), '.', '/');
    for (const auto& [rel, package] : {std::pair{base + ".py", false}, std::pair{base + "/__init__.py", true}}) {
        auto text = read_file(root_ / rel);
        if (!text) continue;
        m = std::make_unique<SourceModule>();
        m->name = name;
        m->path = rel;
        m->package = package;
        // A syntax error leaves tree-sitter's recovered tree: the classes it still holds are read.
        m->ast = parse_python(rel, std::move(*text)).ast;
        read_imports(*m);
        break;
    }
    return (modules_[name] = std::move(m)).get();
}

void TreeReader::read_imports(SourceModule& m) {
    const Ast& a = m.ast;
    if (a.root == kNoNode) return;
    for (NodeId s : a.named_kids(a.root)) {
        NodeId def = a.kind(s) == Kind::DecoratedDefinition ? a.field(s, Field::Definition) : s;
        if (a.kind(def) == Kind::ClassDefinition) m.classes[std::string(a.source(a.field(def, Field::Name)))] = def;
        if (a.kind(def) == Kind::FunctionDefinition)
            m.functions[std::string(a.source(a.field(def, Field::Name)))] = def;
        if (a.kind(s) == Kind::ExpressionStatement) {
            NodeId x = a.first_named(s);
            if (a.kind(x) == Kind::Assignment && a.kind(a.field(x, Field::Left)) == Kind::Identifier &&
                a.field(x, Field::Right) != kNoNode)
                m.assigned[std::string(a.source(a.field(x, Field::Left)))] = a.field(x, Field::Right);
        }
    }
    for (NodeId id = 0; id < a.nodes.size(); ++id) {
        if (a.kind(id) == Kind::ImportFromStatement) {
            const std::string module = imported_module(m, id);
            for (std::uint32_t i = 0; i < a.count(id); ++i) {
                NodeId k = a.kid(id, i);
                if (a[k].field == Field::ModuleName) continue;
                if (a.kind(k) == Kind::DottedName) {
                    const std::string name = compact(a.source(k));
                    m.imported[name] = {module, name};
                } else if (a.kind(k) == Kind::AliasedImport) {
                    m.imported[std::string(a.source(a.field(k, Field::Alias)))] = {
                        module, compact(a.source(a.field(k, Field::Name)))};
                }
            }
        } else if (a.kind(id) == Kind::ImportStatement) {
            for (NodeId k : a.named_kids(id)) {
                if (a.kind(k) == Kind::AliasedImport) {
                    m.imported[std::string(a.source(a.field(k, Field::Alias)))] = {
                        compact(a.source(a.field(k, Field::Name))), ""};
                } else if (a.kind(k) == Kind::DottedName) {
                    const std::string dotted = compact(a.source(k));
                    const std::string top = dotted.substr(0, dotted.find('.'));
                    m.imported[top] = {top, ""};
                }
            }
        }
    }
}

std::pair<const SourceModule*, NodeId> TreeReader::find_class(const std::string& module_name,
                                                              const std::string& class_name, int depth) {
    const SourceModule* m = module(module_name);
    if (!m || depth > 8) return {nullptr, kNoNode};
    if (auto it = m->classes.find(class_name); it != m->classes.end()) return {m, it->second};
    if (auto it = m->imported.find(class_name); it != m->imported.end() && !it->second.second.empty())
        return find_class(it->second.first, it->second.second, depth + 1);
    return {nullptr, kNoNode};
}

std::string imported_module(const SourceModule& m, NodeId import_from) {
    const Ast& a = m.ast;
    NodeId from = a.field(import_from, Field::ModuleName);
    if (a.kind(from) != Kind::RelativeImport) return compact(a.source(from));
    // `from ..x import y`: one dot is this package, each further dot one package up.
    std::string dots, rest;
    for (NodeId k : a.named_kids(from))
        if (a.kind(k) == Kind::ImportPrefix) dots = std::string(a.source(k));
        else rest = compact(a.source(k));
    std::string package = m.package_name();
    for (std::size_t up = 1; up < dots.size(); ++up) package = package.substr(0, package.rfind('.'));
    return rest.empty() ? package : package + "." + rest;
}

std::pair<const SourceModule*, NodeId> TreeReader::find_def(const std::string& module_name, const std::string& name,
                                                            char what, int depth) {
    const SourceModule* m = module(module_name);
    if (!m || depth > 8) return {nullptr, kNoNode};
    const auto& table = what == 'f' ? m->functions : m->assigned;
    if (auto it = table.find(name); it != table.end()) return {m, it->second};
    if (auto it = m->imported.find(name); it != m->imported.end() && !it->second.second.empty())
        return find_def(it->second.first, it->second.second, what, depth + 1);
    return {nullptr, kNoNode};
}

bool TreeReader::is_enum_class(const SourceModule& m, const std::string& name) {
    auto [owner, cls] = find_class(m.name, name);
    if (!owner) return false;
    const Ast& a = owner->ast;
    for (NodeId b : a.named_kids(a.field(cls, Field::Superclasses))) {
        const std::string base = last_part(compact(a.source(b)));
        if (base == "Enum" || base == "IntEnum" || base == "StrEnum" || base == "Flag") return true;
    }
    return false;
}

namespace {

// --- annotations -----------------------------------------------------------------------------------------------

struct TypeFact {
    std::string type = "any";  // "none" for a bare None
    bool nullable = false;
    std::vector<std::string> values;
};

TypeFact type_of(const Ast& a, NodeId n);

TypeFact union_of(const Ast& a, const std::vector<NodeId>& args) {
    std::vector<TypeFact> parts;
    for (NodeId x : args) parts.push_back(type_of(a, x));
    TypeFact out;
    for (const auto& p : parts) out.nullable |= p.type == "none" || p.nullable;
    std::vector<TypeFact> kinds;
    for (const auto& p : parts)
        if (p.type != "none") kinds.push_back(p);
    std::vector<std::string> distinct;
    for (const auto& k : kinds)
        if (std::find(distinct.begin(), distinct.end(), k.type) == distinct.end()) distinct.push_back(k.type);
    if (distinct.size() == 1) {
        out.type = distinct[0];
        if (kinds.size() == 1) out.values = kinds[0].values;
    } else if (distinct.size() == 2 && std::find(distinct.begin(), distinct.end(), "int") != distinct.end() &&
               std::find(distinct.begin(), distinct.end(), "float") != distinct.end()) {
        out.type = "float";
    }
    return out;
}

std::optional<std::string> string_literal(const Ast& a, NodeId n);

// `head[args]`: a subscript in an expression, or a generic type in an annotation.
TypeFact generic_type(const Ast& a, const std::string& head, const std::vector<NodeId>& args);

TypeFact subscript_type(const Ast& a, NodeId n) {
    const std::string head = last_part(compact(a.source(a.field(n, Field::Value))));
    std::vector<NodeId> args;
    for (std::uint32_t i = 0; i < a.count(n); ++i)
        if (a[a.kid(n, i)].field == Field::Subscript) args.push_back(a.kid(n, i));
    if (args.size() == 1 && a.kind(args[0]) == Kind::Tuple) args = a.named_kids(args[0]);
    return generic_type(a, head, args);
}

// An annotation's `generic_type` node: its name, then a `type_parameter` holding one `type` per argument.
TypeFact annotation_generic_type(const Ast& a, NodeId n) {
    std::string head;
    std::vector<NodeId> args;
    for (NodeId k : a.named_kids(n)) {
        if (a.kind(k) == Kind::TypeParameter) {
            // Each argument is a `type` node; Literal's are expressions (strings, None) inside it.
            for (NodeId arg : a.named_kids(k)) args.push_back(a.kind(arg) == Kind::Type ? a.first_named(arg) : arg);
        } else if (head.empty()) {
            head = last_part(compact(a.source(k)));
        }
    }
    return generic_type(a, head, args);
}

TypeFact generic_type(const Ast& a, const std::string& head, const std::vector<NodeId>& args) {
    if (head == "Optional" && !args.empty()) {
        TypeFact t = type_of(a, args[0]);
        t.nullable = true;
        return t;
    }
    if (head == "Union") return union_of(a, args);
    if (head == "Literal") {
        TypeFact t;
        bool strings = true, ints = true, any = false;
        for (NodeId x : args) {
            if (a.kind(x) == Kind::None) {
                t.nullable = true;
                continue;
            }
            any = true;
            auto s = string_literal(a, x);
            if (s) t.values.push_back(*s);
            strings &= s.has_value();
            ints &= a.kind(x) == Kind::Integer;
        }
        t.type = any && strings ? "str" : any && ints ? "int" : "any";
        if (t.type != "str") t.values.clear();
        return t;
    }
    if (head == "Annotated" && !args.empty()) return type_of(a, args[0]);
    TypeFact t;
    static const std::vector<std::string> lists = {"list", "List", "tuple",     "Tuple",    "Sequence",
                                                   "set",  "Set",  "frozenset", "FrozenSet"};
    static const std::vector<std::string> dicts = {"dict", "Dict", "Mapping", "MutableMapping"};
    if (std::find(lists.begin(), lists.end(), head) != lists.end()) t.type = "list";
    else if (std::find(dicts.begin(), dicts.end(), head) != dicts.end()) t.type = "dict";
    else if (head == "Callable") t.type = "callable";
    return t;
}

TypeFact type_of(const Ast& a, NodeId n) {
    switch (a.kind(n)) {
        case Kind::Type:
        case Kind::ParenthesizedExpression: return type_of(a, a.first_named(n));
        case Kind::String: {
            // A forward reference: the annotation written as a string.
            auto text = string_literal(a, n);
            if (!text) return {"any", true, {}};
            ParseOutcome parsed = parse_python("<annotation>", *text);
            if (parsed.syntax_error) return {"any", true, {}};
            const Ast& inner = parsed.ast;
            NodeId stmt = inner.first_named(inner.root);
            return stmt == kNoNode ? TypeFact{"any", true, {}} : type_of(inner, inner.first_named(stmt));
        }
        case Kind::None: return {"none", true, {}};
        case Kind::BinaryOperator:
            if (compact(a.source(a.field(n, Field::Operator))) == "|")
                return union_of(a, {a.field(n, Field::Left), a.field(n, Field::Right)});
            return {};
        case Kind::Subscript: return subscript_type(a, n);
        case Kind::GenericType: return annotation_generic_type(a, n);
        case Kind::UnionType: return union_of(a, a.named_kids(n));
        default: break;
    }
    const std::string name = compact(a.source(n));
    const std::string head = last_part(name);
    TypeFact t;
    if (head == "bool" || head == "int" || head == "float" || head == "str") t.type = head;
    else if (head == "list" || head == "List" || head == "tuple" || head == "Tuple" || head == "Sequence" ||
             head == "set" || head == "Set" || head == "frozenset" || head == "FrozenSet")
        t.type = "list";
    else if (head == "dict" || head == "Dict" || head == "Mapping" || head == "MutableMapping") t.type = "dict";
    else if (head == "Callable") t.type = "callable";
    else if (name == "torch.dtype" || name == "dtype") t.type = "dtype";
    return t;
}

// --- defaults --------------------------------------------------------------------------------------------------

}  // namespace

std::string unescape(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\' || i + 1 >= s.size()) {
            out += s[i];
            continue;
        }
        const char c = s[++i];
        switch (c) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'r': out += '\r'; break;
            case '\\': out += '\\'; break;
            case '\'': out += '\''; break;
            case '"': out += '"'; break;
            case '\n': break;
            default: out += '\\'; out += c;
        }
    }
    return out;
}

namespace {

std::optional<std::string> string_literal(const Ast& a, NodeId n) {
    if (a.kind(n) == Kind::ConcatenatedString) {
        std::string out;
        for (NodeId k : a.named_kids(n)) {
            auto part = string_literal(a, k);
            if (!part) return std::nullopt;
            out += *part;
        }
        return out;
    }
    if (a.kind(n) != Kind::String) return std::nullopt;
    std::string out;
    bool raw = false;
    for (std::uint32_t i = 0; i < a.count(n); ++i) {
        NodeId k = a.kid(n, i);
        if (a.kind(k) == Kind::StringStart) {
            for (char c : a.source(k)) {
                if (c == '"' || c == '\'') break;
                const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                if (l == 'f' || l == 'b') return std::nullopt;
                raw |= l == 'r';
            }
        } else if (a.kind(k) == Kind::StringContent) {
            out += raw ? std::string(a.source(k)) : unescape(a.source(k));
        } else if (a.kind(k) == Kind::Interpolation) {
            return std::nullopt;
        } else if (a.kind(k) == Kind::EscapeSequence) {
            out += unescape(a.source(k));
        }
    }
    return out;
}

struct NotLiteral {};

class DefaultReader {
public:
    DefaultReader(TreeReader& tree, const SourceModule& m) : tree_(tree), m_(m), a_(m.ast) {}

    Value literal(NodeId n) const;
    // The default of a field whose right-hand side is `n` (kNoNode: none), into `f`.
    void read(NodeId n, ClassField& f) const;

private:
    std::string dotted(NodeId n) const;
    TreeReader& tree_;
    const SourceModule& m_;
    const Ast& a_;
};

Value number_op(const Value& x, const Value& y, const std::string& op) {
    if (!x.is_number() || !y.is_number()) throw NotLiteral{};
    if (x.is_int() && y.is_int() && op != "**") {
        const std::int64_t l = x.as_int(), r = y.as_int();
        return Value::integer(op == "*" ? l * r : op == "+" ? l + r : l - r);
    }
    const double l = x.as_number(), r = y.as_number();
    if (op == "**") {
        const double p = std::pow(l, r);
        if (x.is_int() && y.is_int() && r >= 0) return Value::integer(static_cast<std::int64_t>(p));
        return Value::floating(p);
    }
    return Value::floating(op == "*" ? l * r : op == "+" ? l + r : l - r);
}

Value DefaultReader::literal(NodeId n) const {
    switch (a_.kind(n)) {
        case Kind::Integer: {
            std::string text;
            for (char c : a_.source(n))
                if (c != '_') text += c;
            char* end = nullptr;
            errno = 0;
            const long long v = std::strtoll(text.c_str(), &end, 0);
            if (errno || !end || *end) throw NotLiteral{};
            return Value::integer(v);
        }
        case Kind::Float: {
            std::string text;
            for (char c : a_.source(n))
                if (c != '_') text += c;
            if (!text.empty() && (text.back() == 'j' || text.back() == 'J')) throw NotLiteral{};
            return Value::floating(std::strtod(text.c_str(), nullptr));
        }
        case Kind::True: return Value::boolean(true);
        case Kind::False: return Value::boolean(false);
        case Kind::None: return Value::null();
        case Kind::String:
        case Kind::ConcatenatedString: {
            auto s = string_literal(a_, n);
            if (!s) throw NotLiteral{};
            return Value::string(*s);
        }
        case Kind::ParenthesizedExpression: return literal(a_.first_named(n));
        case Kind::List:
        case Kind::Tuple: {
            std::vector<Value> items;
            for (NodeId k : a_.named_kids(n)) items.push_back(literal(k));
            return Value::list(std::move(items));
        }
        case Kind::Dictionary: {
            Value out = Value::map();
            for (NodeId pair : a_.named_kids(n)) {
                if (a_.kind(pair) != Kind::Pair) throw NotLiteral{};
                const Value key = literal(a_.field(pair, Field::Key));
                if (!key.is_string()) throw NotLiteral{};
                out.set(key.as_string(), literal(a_.field(pair, Field::Value)));
            }
            return out;
        }
        case Kind::UnaryOperator: {
            const std::string op = compact(a_.source(a_.field(n, Field::Operator)));
            const Value v = literal(a_.field(n, Field::Argument));
            if (!v.is_number() || (op != "-" && op != "+")) throw NotLiteral{};
            if (op == "+") return v;
            return v.is_int() ? Value::integer(-v.as_int()) : Value::floating(-v.as_number());
        }
        case Kind::BinaryOperator: {
            const std::string op = compact(a_.source(a_.field(n, Field::Operator)));
            if (op != "*" && op != "+" && op != "-" && op != "**") throw NotLiteral{};
            return number_op(literal(a_.field(n, Field::Left)), literal(a_.field(n, Field::Right)), op);
        }
        case Kind::Attribute: {
            // An enum member (`AttnBackend.auto`) is written as its name, as configs spell it.
            NodeId object = a_.field(n, Field::Object);
            if (a_.kind(object) == Kind::Identifier && tree_.is_enum_class(m_, std::string(a_.source(object))))
                return Value::string(std::string(a_.source(a_.field(n, Field::AttributeName))));
            throw NotLiteral{};
        }
        default: throw NotLiteral{};
    }
}

std::string DefaultReader::dotted(NodeId n) const {
    std::vector<std::string> parts;
    while (a_.kind(n) == Kind::Attribute) {
        parts.emplace_back(a_.source(a_.field(n, Field::AttributeName)));
        n = a_.field(n, Field::Object);
    }
    if (a_.kind(n) != Kind::Identifier) return {};
    std::string head(a_.source(n));
    if (auto it = m_.imported.find(head); it != m_.imported.end())
        head = it->second.second.empty() ? it->second.first : it->second.first + "." + it->second.second;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) head += "." + *it;
    return head;
}

void DefaultReader::read(NodeId n, ClassField& f) const {
    if (n == kNoNode) {
        f.required = true;
        return;
    }
    if (a_.kind(n) == Kind::Call && last_part(compact(a_.source(a_.field(n, Field::Function)))) == "field") {
        std::map<std::string, NodeId> kw;
        for (NodeId arg : a_.named_kids(a_.field(n, Field::Arguments)))
            if (a_.kind(arg) == Kind::KeywordArgument)
                kw[std::string(a_.source(a_.field(arg, Field::Name)))] = a_.field(arg, Field::Value);
        if (auto it = kw.find("init");
            it != kw.end() && (a_.kind(it->second) == Kind::True || a_.kind(it->second) == Kind::False))
            f.init = a_.kind(it->second) == Kind::True;
        if (auto it = kw.find("default"); it != kw.end()) {
            n = it->second;
        } else if (auto fac = kw.find("default_factory"); fac != kw.end()) {
            const std::string name = compact(a_.source(fac->second));
            if (name == "list" || name == "tuple" || name == "set") f.default_value = Value::list({});
            else if (name == "dict") f.default_value = Value::map();
            else if (a_.kind(fac->second) == Kind::Lambda) {
                NodeId body = a_.field(fac->second, Field::Body);
                try {
                    f.default_value = literal(body);
                } catch (const NotLiteral&) {
                    f.expr = std::string(a_.source(body));
                }
            } else {
                f.expr = name + "()";
            }
            return;
        } else {
            f.required = f.init;
            return;
        }
    }
    try {
        f.default_value = literal(n);
    } catch (const NotLiteral&) {
        const std::string d = a_.kind(n) == Kind::Attribute || a_.kind(n) == Kind::Identifier ? dotted(n) : "";
        f.expr = d.empty() ? std::string(a_.source(n)) : d;
    }
}

// --- classes ---------------------------------------------------------------------------------------------------

std::vector<ClassField> read_fields(TreeReader& tree, const SourceModule& m, NodeId cls) {
    const Ast& a = m.ast;
    std::vector<ClassField> fields;
    DefaultReader defaults(tree, m);
    for (NodeId stmt : a.named_kids(a.field(cls, Field::Body))) {
        if (a.kind(stmt) != Kind::ExpressionStatement) continue;
        NodeId as = a.first_named(stmt);
        if (a.kind(as) != Kind::Assignment || a.field(as, Field::Type) == kNoNode) continue;
        NodeId target = a.field(as, Field::Left);
        if (a.kind(target) != Kind::Identifier) continue;
        NodeId ann = a.first_named(a.field(as, Field::Type));
        NodeId head = a.kind(ann) == Kind::Subscript ? a.field(ann, Field::Value) : ann;
        const std::string head_name = last_part(compact(a.source(head)));
        if (head_name == "ClassVar" || head_name == "InitVar") continue;
        ClassField f;
        f.name = std::string(a.source(target));
        f.line = static_cast<int>(a[stmt].line);
        const TypeFact t = type_of(a, ann);
        f.type = t.type == "none" ? FieldType::Any : parse_field_type(t.type);
        f.nullable = t.nullable;
        f.values = t.values;
        defaults.read(a.field(as, Field::Right), f);
        auto same = std::find_if(fields.begin(), fields.end(), [&](const ClassField& x) { return x.name == f.name; });
        if (same != fields.end()) *same = std::move(f);
        else fields.push_back(std::move(f));
    }
    return fields;
}

// `set(self.recompute_modules) - allowed` in __post_init__: the nearest assignment of `allowed` above it holds the
// labels; `self.recompute_modules = [...]` the default modules.
void read_recompute(const SourceModule& m, NodeId cls, ClassFacts& out) {
    const Ast& a = m.ast;
    NodeId post = kNoNode;
    for (NodeId stmt : a.named_kids(a.field(cls, Field::Body)))
        if (a.kind(stmt) == Kind::FunctionDefinition && a.source(a.field(stmt, Field::Name)) == "__post_init__")
            post = stmt;
    if (post == kNoNode) return;
    const auto start = a[post].start, end = a[post].end;
    std::map<std::string, std::vector<NodeId>> sets;
    auto items_of = [&](NodeId n) {
        std::vector<std::string> v;
        for (NodeId k : a.named_kids(n))
            if (auto s = string_literal(a, k)) v.push_back(*s);
        return v;
    };
    for (NodeId id = 0; id < a.nodes.size(); ++id) {
        if (a.kind(id) != Kind::Assignment || a[id].start < start || a[id].end > end) continue;
        NodeId left = a.field(id, Field::Left), right = a.field(id, Field::Right);
        const Kind rk = a.kind(right);
        if (a.kind(left) == Kind::Identifier && (rk == Kind::Set || rk == Kind::List || rk == Kind::Tuple))
            sets[std::string(a.source(left))].push_back(id);
        if (compact(a.source(left)) == "self.recompute_modules" && rk == Kind::List) {
            out.default_modules = items_of(right);
            out.default_modules_line = static_cast<int>(a[id].line);
        }
    }
    for (NodeId id = 0; id < a.nodes.size(); ++id) {
        if (a.kind(id) != Kind::BinaryOperator || a[id].start < start || a[id].end > end) continue;
        const std::string left = compact(a.source(a.field(id, Field::Left)));
        if (compact(a.source(a.field(id, Field::Operator))) != "-" ||
            (left != "self.recompute_modules" && left != "set(self.recompute_modules)"))
            continue;
        NodeId right = a.field(id, Field::Right);
        NodeId chosen = kNoNode;
        if (a.kind(right) == Kind::Identifier) {
            for (NodeId s : sets[std::string(a.source(right))])
                if (a[s].line <= a[id].line && (chosen == kNoNode || a[s].line > a[chosen].line)) chosen = s;
            if (chosen == kNoNode) continue;
            out.labels = items_of(a.field(chosen, Field::Right));
            out.labels_line = static_cast<int>(a[chosen].line);
        } else if (a.kind(right) == Kind::Set) {
            out.labels = items_of(right);
            out.labels_line = static_cast<int>(a[id].line);
        }
    }
    out.recompute_file = m.path;
}

}  // namespace

std::optional<ClassFacts> read_mcore_classes(const fs::path& root, const ClassFacts& like, std::string& why) {
    TreeReader tree(root);
    ClassFacts out;
    out.root = root.string();
    std::vector<std::pair<std::string, std::string>> todo;  // module, class
    for (const auto& c : like.classes) todo.emplace_back(c.module, c.name);
    for (std::size_t i = 0; i < todo.size(); ++i) {
        const auto [module_name, class_name] = todo[i];
        auto [m, cls] = tree.find_class(module_name, class_name);
        if (!m || out.find(class_name)) continue;
        ConfigClass c;
        c.name = class_name;
        c.module = m->name;
        c.file = m->path;
        c.line = static_cast<int>(m->ast[cls].line);
        const Ast& a = m->ast;
        for (NodeId b : a.named_kids(a.field(cls, Field::Superclasses))) {
            if (a.kind(b) == Kind::KeywordArgument || a.kind(b) == Kind::Subscript) continue;
            const std::string base = last_part(compact(a.source(b)));
            if (base == "object" || base == "ABC" || !tree.find_class(m->name, base).first) continue;
            c.bases.push_back(base);
            todo.emplace_back(m->name, base);
        }
        c.fields = read_fields(tree, *m, cls);
        if (class_name == "TransformerConfig") read_recompute(*m, cls, out);
        out.classes.push_back(std::move(c));
    }
    if (!out.find("TransformerConfig")) {
        why = fmt::format("{} has no megatron/core/transformer/transformer_config.py defining TransformerConfig",
                          root.string());
        return std::nullopt;
    }
    std::sort(out.classes.begin(), out.classes.end(),
              [](const ConfigClass& x, const ConfigClass& y) { return x.name < y.name; });
    out.origin = fmt::format("read from {}", root.string());
    out.index();
    out.checks = std::make_shared<const LazyProgram>(compile_post_init(tree, out));
    return out;
}

}  // namespace mbl::py
