#include "core/post_init.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "core/version.hpp"

namespace mbl::post_init {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------------------------
// JSON form (the checks of schemas/mcore/facts/, schemas/bridge/checks.json). Short keys: the files hold thousands of nodes.

namespace {

const char* const kOpNames[] = {"const", "list", "tuple", "set",   "dict",  "self",    "var",    "attr",   "not",
                                "and",   "or",   "cmp",   "bin",   "neg",   "builtin", "method", "call",   "ifexp",
                                "sub",   "fstr", "comp",  "forin", "dtype", "ext",     "type",   "unknown"};
const char* const kStNames[] = {"if",  "raise",  "set",   "let",      "eval", "warn",
                                "for", "return", "break", "continue", "try",  "unknown"};
const char* const kSiteKinds[] = {"raise", "warn", "unknown"};

template <typename E, std::size_t N>
E parse_name(const std::string& s, const char* const (&names)[N], const char* what) {
    for (std::size_t i = 0; i < N; ++i)
        if (s == names[i]) return static_cast<E>(i);
    throw std::runtime_error(fmt::format("unknown {} \"{}\" in a checks file", what, s));
}

json value_to_json(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Null: return nullptr;
        case Value::Kind::Bool: return v.as_bool();
        case Value::Kind::Int: return v.as_int();
        case Value::Kind::Float: return v.as_number();
        case Value::Kind::String: return v.as_string();
        default: return nullptr;
    }
}

Value value_from_json(const json& j) {
    if (j.is_boolean()) return Value::boolean(j.get<bool>());
    if (j.is_number_integer()) return Value::integer(j.get<std::int64_t>());
    if (j.is_number()) return Value::floating(j.get<double>());
    if (j.is_string()) return Value::string(j.get<std::string>());
    return Value::null();
}

json expr_to_json(const Expr& e) {
    json j = json::object();
    j["o"] = kOpNames[static_cast<int>(e.op)];
    if (e.op == Op::Const) j["v"] = e.value ? value_to_json(*e.value) : json(nullptr);
    if (!e.name.empty()) j["n"] = e.name;
    if (!e.kind.empty()) j["k"] = e.kind;
    if (!e.ops.empty()) j["ops"] = e.ops;
    if (!e.names.empty()) j["ns"] = e.names;
    if (!e.kids.empty()) {
        json kids = json::array();
        for (const auto& k : e.kids) kids.push_back(expr_to_json(k));
        j["a"] = std::move(kids);
    }
    return j;
}

Expr expr_from_json(const json& j) {
    Expr e;
    e.op = parse_name<Op>(j.at("o").get<std::string>(), kOpNames, "expression");
    if (e.op == Op::Const) e.value = std::make_shared<const Value>(value_from_json(j.at("v")));
    e.name = j.value("n", "");
    e.kind = j.value("k", "");
    if (j.contains("ops")) e.ops = j.at("ops").get<std::vector<std::string>>();
    if (j.contains("ns")) e.names = j.at("ns").get<std::vector<std::string>>();
    if (j.contains("a"))
        for (const auto& k : j.at("a")) e.kids.push_back(expr_from_json(k));
    return e;
}

json block_to_json(const std::vector<Stmt>& block);

json stmt_to_json(const Stmt& s) {
    json j = json::object();
    j["s"] = kStNames[static_cast<int>(s.kind)];
    j["l"] = s.line;
    if (!s.name.empty()) j["n"] = s.name;
    if (!s.names.empty()) j["ns"] = s.names;
    if (s.e.op != Op::Unknown || !s.e.name.empty()) j["e"] = expr_to_json(s.e);
    if (!s.body.empty()) j["b"] = block_to_json(s.body);
    if (!s.orelse.empty()) j["x"] = block_to_json(s.orelse);
    if (s.site >= 0) j["site"] = s.site;
    return j;
}

json block_to_json(const std::vector<Stmt>& block) {
    json out = json::array();
    for (const auto& s : block) out.push_back(stmt_to_json(s));
    return out;
}

std::vector<Stmt> block_from_json(const json& j);

Stmt stmt_from_json(const json& j) {
    Stmt s;
    s.kind = parse_name<St>(j.at("s").get<std::string>(), kStNames, "statement");
    s.line = j.value("l", 0);
    s.name = j.value("n", "");
    if (j.contains("ns")) s.names = j.at("ns").get<std::vector<std::string>>();
    if (j.contains("e")) s.e = expr_from_json(j.at("e"));
    if (j.contains("b")) s.body = block_from_json(j.at("b"));
    if (j.contains("x")) s.orelse = block_from_json(j.at("x"));
    s.site = j.value("site", -1);
    return s;
}

std::vector<Stmt> block_from_json(const json& j) {
    std::vector<Stmt> out;
    out.reserve(j.size());
    for (const auto& s : j) out.push_back(stmt_from_json(s));
    return out;
}

}  // namespace

Program Program::from_json(const json& j) {
    try {
        Program p;
        p.commit = j.value("commit", "");
        for (const auto& [name, f] : j.at("functions").items()) {
            Function fn;
            fn.name = name;
            fn.file = f.value("file", "");
            fn.params = f.at("params").get<std::vector<std::string>>();
            if (f.contains("defaults"))
                for (const auto& d : f.at("defaults")) fn.defaults.push_back(expr_from_json(d));
            fn.defaults.resize(fn.params.size());
            fn.body = block_from_json(f.at("body"));
            p.functions.emplace(name, std::move(fn));
        }
        p.entries = j.at("entries").get<std::map<std::string, std::string, std::less<>>>();
        if (j.contains("steps"))
            for (const auto& st : j.at("steps")) {
                Step step;
                step.function = st.at("function").get<std::string>();
                step.args = st.at("args").get<std::vector<std::string>>();
                step.file = st.value("file", "");
                step.line = st.value("line", 0);
                step.when = st.value("when", "");
                p.steps.push_back(std::move(step));
            }
        if (j.contains("sections")) p.sections = j.at("sections").get<std::vector<std::string>>();
        if (j.contains("classes"))
            for (const auto& [name, c] : j.at("classes").items()) {
                SectionClass sc;
                sc.section = c.at("section").get<std::string>();
                sc.mro = c.at("mro").get<std::vector<std::string>>();
                sc.attributes = c.at("attributes").get<std::vector<std::string>>();
                sc.methods = c.at("methods").get<std::map<std::string, std::string, std::less<>>>();
                p.classes.emplace(name, std::move(sc));
            }
        if (j.contains("section_fields"))
            for (const auto& [name, f] : j.at("section_fields").items()) {
                SectionFields sf;
                sf.cls = f.at("class").get<std::string>();
                sf.names = f.at("names").get<std::vector<std::string>>();
                for (const auto& d : f.at("defaults")) sf.defaults.push_back(expr_from_json(d));
                sf.complete = f.value("complete", true);
                sf.bases_from = f.value("bases_from", "");
                if (sf.defaults.size() != sf.names.size())
                    throw std::runtime_error(fmt::format("malformed checks file: section_fields {}", name));
                p.section_fields.emplace(name, std::move(sf));
            }
        if (j.contains("enums"))
            for (const auto& [name, e] : j.at("enums").items()) {
                EnumClass ec;
                ec.str_valued = e.value("str", false);
                for (const auto& m : e.at("members"))
                    ec.members.emplace_back(m.at(0).get<std::string>(), value_from_json(m.at(1)));
                p.enums.emplace(name, std::move(ec));
            }
        for (const auto& s : j.at("sites")) {
            Site site;
            site.kind = parse_name<Site::Kind>(s.at("kind").get<std::string>(), kSiteKinds, "site kind");
            site.exception = s.value("exception", "");
            site.file = s.value("file", "");
            site.line = s.value("line", 0);
            site.function = s.value("function", "");
            site.text = s.value("text", "");
            if (s.contains("reads")) site.reads = s.at("reads").get<std::vector<std::string>>();
            p.sites.push_back(std::move(site));
        }
        return p;
    } catch (const json::exception& e) {
        throw std::runtime_error(fmt::format("malformed checks file: {}", e.what()));
    }
}

json Program::to_json() const {
    json j = json::object();
    j["commit"] = commit;
    j["entries"] = entries;
    if (!steps.empty()) {
        json sj = json::array();
        for (const auto& st : steps) {
            json o = {{"function", st.function}, {"args", st.args}, {"file", st.file}, {"line", st.line}};
            if (!st.when.empty()) o["when"] = st.when;
            sj.push_back(std::move(o));
        }
        j["steps"] = std::move(sj);
    }
    if (!sections.empty()) j["sections"] = sections;
    if (!classes.empty()) {
        json cs = json::object();
        for (const auto& [name, c] : classes)
            cs[name] = {{"section", c.section}, {"mro", c.mro}, {"attributes", c.attributes}, {"methods", c.methods}};
        j["classes"] = std::move(cs);
    }
    if (!section_fields.empty()) {
        json fs = json::object();
        for (const auto& [name, f] : section_fields) {
            json ds = json::array();
            for (const auto& d : f.defaults) ds.push_back(expr_to_json(d));
            fs[name] = {{"class", f.cls}, {"names", f.names}, {"defaults", std::move(ds)}};
            if (!f.complete) fs[name]["complete"] = false;
            if (!f.bases_from.empty()) fs[name]["bases_from"] = f.bases_from;
        }
        j["section_fields"] = std::move(fs);
    }
    if (!enums.empty()) {
        json es = json::object();
        for (const auto& [name, e] : enums) {
            json members = json::array();
            for (const auto& [m, v] : e.members) members.push_back(json::array({m, value_to_json(v)}));
            es[name] = {{"str", e.str_valued}, {"members", std::move(members)}};
        }
        j["enums"] = std::move(es);
    }
    json sites_j = json::array();
    for (const auto& s : sites) {
        json o = {{"kind", kSiteKinds[static_cast<int>(s.kind)]},
                  {"file", s.file},
                  {"line", s.line},
                  {"function", s.function},
                  {"text", s.text},
                  {"reads", s.reads}};
        if (!s.exception.empty()) o["exception"] = s.exception;
        sites_j.push_back(std::move(o));
    }
    j["sites"] = std::move(sites_j);
    json fns = json::object();
    for (const auto& [name, f] : functions) {
        json o = {{"file", f.file}, {"params", f.params}, {"body", block_to_json(f.body)}};
        bool any_default = false;
        for (const auto& d : f.defaults) any_default |= d.op != Op::Unknown || !d.name.empty();
        if (any_default) {
            json ds = json::array();
            for (const auto& d : f.defaults) ds.push_back(expr_to_json(d));
            o["defaults"] = std::move(ds);
        }
        fns[name] = std::move(o);
    }
    j["functions"] = std::move(fns);
    return j;
}

// ---------------------------------------------------------------------------------------------------------------
// Python semantics over Value, three-valued: nullopt is "unknown".

namespace {

constexpr std::int64_t kMaxSteps = 200000;
constexpr int kMaxDepth = 24;
constexpr std::size_t kMaxItems = 4096;
const char* const kDtypePrefix = "\x01"
                                 "dtype:";  // split: "\x01d" would read as one hex escape

Value unknown(std::string why) { return Value::unknown(std::move(why)); }

// Python sets are lists here, marked so that isinstance and repr tell them apart.
const char* const kSetMark = "\x01set";
Value set_of(std::vector<Value> items) {
    Value v = Value::list(std::move(items));
    v.prov().detail = kSetMark;
    return v;
}
bool is_set(const Value& v) { return v.is_list() && v.prov().detail == kSetMark; }
// A dataclass the checks construct themselves (a class of no base, its fields a mapping): "\x01dataclass:Name".
const std::string kDataclassMark = "\x01"
                                   "dataclass:";
std::optional<std::string> dataclass_of(const Value& v) {
    if (!v.is_map() || v.prov().detail.rfind(kDataclassMark, 0) != 0) return std::nullopt;
    return v.prov().detail.substr(kDataclassMark.size());
}

// Members of enums whose values are not strings: "\x01enum:Class.member".
const char* const kEnumPrefix = "\x01"
                                "enum:";
bool is_enum_member(const Value& v) { return v.is_string() && v.as_string().rfind(kEnumPrefix, 0) == 0; }
std::string enum_member_text(const Value& v) { return v.as_string().substr(6); }  // "Class.member"
const char* const kTypePrefix = "\x01type:";
// The config objects a program reads: "\x01self" the model (or the class whose __post_init__ runs), "\x01self:NAME" a
// config section, whose attributes are the fields "NAME.<attribute>".
const char* const kSelf = "\x01self";
std::optional<std::string> object_prefix(const Value& v) {
    if (!v.is_string() || v.as_string().rfind(kSelf, 0) != 0) return std::nullopt;
    const std::string& s = v.as_string();
    if (s.size() == 5) return std::string();
    if (s[5] != ':') return std::nullopt;
    return s.substr(6) + ".";
}
bool is_type(const Value& v) { return v.is_string() && v.as_string().rfind(kTypePrefix, 0) == 0; }

std::string canonical_dtype(std::string s) {
    if (s.rfind("torch.", 0) == 0) s = s.substr(6);
    if (s == "float") return "float32";
    if (s == "half") return "float16";
    if (s == "double") return "float64";
    if (s == "bf16") return "bfloat16";
    return s;
}

// A dtype as a config holds it: "bfloat16", "torch.bfloat16", {_target_: torch.bfloat16, _call_: false}.
std::optional<std::string> dtype_of(const Value& v) {
    if (v.is_string()) {
        if (v.as_string().rfind(kDtypePrefix, 0) == 0) return v.as_string().substr(7);
        return canonical_dtype(v.as_string());
    }
    if (v.is_map()) {
        const std::string t = v.target();
        if (!t.empty()) return canonical_dtype(t);
    }
    return std::nullopt;
}

bool is_dtype(const Value& v) { return v.is_string() && v.as_string().rfind(kDtypePrefix, 0) == 0; }

std::optional<bool> truth(const Value& v) {
    if (v.is_unknown()) return std::nullopt;
    return v.truthy();
}

std::optional<bool> py_eq(const Value& a, const Value& b) {
    if (a.is_unknown() || b.is_unknown()) return std::nullopt;
    if (is_dtype(a) || is_dtype(b)) {
        auto x = dtype_of(a), y = dtype_of(b);
        if (!x || !y) return a.is_null() || b.is_null() ? std::optional<bool>(false) : std::nullopt;
        return *x == *y;
    }
    const bool an = a.is_number() || a.is_bool(), bn = b.is_number() || b.is_bool();
    if (an && bn) {
        auto num = [](const Value& v) { return v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.as_number(); };
        return num(a) == num(b);
    }
    if (a.kind() != b.kind()) {
        if (a.is_map() || b.is_map()) return std::nullopt;  // a dump's object stands for something we can't compare
        return false;
    }
    if (a.is_list()) {
        if (a.items().size() != b.items().size()) return false;
        for (std::size_t i = 0; i < a.items().size(); ++i) {
            auto e = py_eq(a.items()[i], b.items()[i]);
            if (!e || !*e) return e;
        }
        return true;
    }
    if (a.is_map()) return a.contains_unknown() || b.contains_unknown() ? std::nullopt : std::optional(a.same_as(b));
    return a.same_as(b);
}

std::optional<bool> py_contains(const Value& container, const Value& item) {
    if (container.is_unknown() || item.is_unknown()) return std::nullopt;
    if (container.is_string()) {
        if (!item.is_string()) return std::nullopt;
        return container.as_string().find(item.as_string()) != std::string::npos;
    }
    if (container.is_list()) {
        bool unsure = false;
        for (const auto& x : container.items()) {
            auto e = py_eq(x, item);
            if (e && *e) return true;
            if (!e) unsure = true;
        }
        return unsure ? std::nullopt : std::optional<bool>(false);
    }
    if (container.is_map()) {
        if (!item.is_string()) return std::nullopt;
        if (!container.target().empty()) return std::nullopt;
        return container.find(item.as_string()) != nullptr;
    }
    return std::nullopt;
}

std::optional<double> as_num(const Value& v) {
    if (v.is_bool()) return v.as_bool() ? 1.0 : 0.0;
    if (v.is_number()) return v.as_number();
    return std::nullopt;
}

std::optional<bool> py_order(const std::string& op, const Value& a, const Value& b) {
    if (a.is_unknown() || b.is_unknown()) return std::nullopt;
    int c = 0;
    if (auto x = as_num(a), y = as_num(b); x && y) {
        c = *x < *y ? -1 : (*x > *y ? 1 : 0);
    } else if (a.is_string() && b.is_string()) {
        c = a.as_string().compare(b.as_string());
    } else {
        return std::nullopt;  // Python raises TypeError: not the check we model
    }
    if (op == "<") return c < 0;
    if (op == "<=") return c <= 0;
    if (op == ">") return c > 0;
    return c >= 0;
}

std::string py_repr(const Value& v);

std::string py_str(const Value& v) {
    if (is_enum_member(v)) return enum_member_text(v);
    if (v.is_string()) {
        if (auto d = dtype_of(v); d && is_dtype(v)) return "torch." + *d;
        return v.as_string();
    }
    return py_repr(v);
}

std::string py_repr(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Null: return "None";
        case Value::Kind::Bool: return v.as_bool() ? "True" : "False";
        case Value::Kind::Int: return std::to_string(v.as_int());
        case Value::Kind::Float: {
            double d = v.as_number();
            if (std::floor(d) == d && std::abs(d) < 1e16) return fmt::format("{:.1f}", d);
            return fmt::format("{}", d);
        }
        case Value::Kind::String:
            if (is_dtype(v) || is_enum_member(v))
                return is_enum_member(v) ? "<" + enum_member_text(v) + ">" : py_str(v);
            return "'" + v.as_string() + "'";
        case Value::Kind::List: {
            if (is_set(v) && v.items().empty()) return "set()";
            std::string out = is_set(v) ? "{" : "[";
            for (std::size_t i = 0; i < v.items().size(); ++i) out += (i ? ", " : "") + py_repr(v.items()[i]);
            return out + (is_set(v) ? "}" : "]");
        }
        case Value::Kind::Map: {
            if (!v.target().empty()) return v.target();
            std::string out = "{";
            bool first = true;
            for (const auto& e : v.entries()) {
                out += (first ? "'" : ", '") + e.key + "': " + py_repr(e.value);
                first = false;
            }
            return out + "}";
        }
        case Value::Kind::Unknown: return "<unknown>";
    }
    return "?";
}

Value bool_value(std::optional<bool> b, const std::string& why) { return b ? Value::boolean(*b) : unknown(why); }

std::string why_of(const Value& v) { return v.is_unknown() ? v.unknown_reason() : std::string("an unknown value"); }

std::vector<Value> unique_items(std::vector<Value> items) {
    std::vector<Value> out;
    for (auto& x : items) {
        bool seen = false;
        for (const auto& y : out)
            if (auto e = py_eq(x, y); e && *e) seen = true;
        if (!seen) out.push_back(std::move(x));
    }
    return out;
}

// Items of an iterable; nullopt when unknown (or not iterable as we model it).
std::optional<std::vector<Value>> items_of(const Value& v) {
    if (v.is_list()) {
        return v.items();
    }
    if (v.is_map() && v.target().empty()) {
        std::vector<Value> keys;
        for (const auto& e : v.entries()) keys.push_back(Value::string(e.key));
        return keys;
    }
    if (v.is_string()) {
        std::vector<Value> chars;
        for (char c : v.as_string()) chars.push_back(Value::string(std::string(1, c)));
        return chars;
    }
    return std::nullopt;
}

Value binary(const std::string& op, const Value& a, const Value& b) {
    if (a.is_unknown()) return a;
    if (b.is_unknown()) return b;
    auto x = as_num(a), y = as_num(b);
    if (x && y) {
        const bool ints = !a.is_float() && !b.is_float();
        const std::int64_t i = ints ? (a.is_bool() ? a.as_bool() : a.as_int()) : 0;
        const std::int64_t j = ints ? (b.is_bool() ? b.as_bool() : b.as_int()) : 0;
        if (op == "+") return ints ? Value::integer(i + j) : Value::floating(*x + *y);
        if (op == "-") return ints ? Value::integer(i - j) : Value::floating(*x - *y);
        if (op == "*") return ints ? Value::integer(i * j) : Value::floating(*x * *y);
        if (op == "/") return *y == 0 ? unknown("division by zero") : Value::floating(*x / *y);
        if (op == "//" || op == "%") {
            if (*y == 0) return unknown("division by zero");
            if (ints) {
                std::int64_t q = i / j, r = i % j;
                if (r != 0 && ((r < 0) != (j < 0))) {
                    --q;
                    r += j;
                }
                return Value::integer(op == "//" ? q : r);
            }
            const double q = std::floor(*x / *y);
            return Value::floating(op == "//" ? q : *x - q * *y);
        }
        if (op == "**" && ints && j >= 0 && j < 63) {
            std::int64_t r = 1;
            for (std::int64_t k = 0; k < j; ++k) r *= i;
            return Value::integer(r);
        }
        if (ints && (op == "&" || op == "|" || op == "^")) {
            const std::int64_t r = op == "&" ? (i & j) : op == "|" ? (i | j) : (i ^ j);
            return a.is_bool() && b.is_bool() ? Value::boolean(r != 0) : Value::integer(r);
        }
        return unknown(fmt::format("operator {}", op));
    }
    if (op == "+" && a.is_string() && b.is_string()) return Value::string(a.as_string() + b.as_string());
    if (op == "+" && a.is_list() && b.is_list()) {
        std::vector<Value> items = a.items();
        items.insert(items.end(), b.items().begin(), b.items().end());
        return Value::list(std::move(items));
    }
    if (a.is_list() && b.is_list() && (op == "-" || op == "&" || op == "|")) {  // sets
        std::vector<Value> out;
        if (op == "|") {
            out = a.items();
            out.insert(out.end(), b.items().begin(), b.items().end());
            return set_of(unique_items(std::move(out)));
        }
        for (const auto& item : a.items()) {
            auto in = py_contains(b, item);
            if (!in) return unknown("a set operation over unknown items");
            if (*in == (op == "&")) out.push_back(item);
        }
        return set_of(unique_items(std::move(out)));
    }
    if (op == "*" && a.is_list() && b.is_int() && b.as_int() >= 0 && b.as_int() < 1024) {
        std::vector<Value> out;
        for (std::int64_t k = 0; k < b.as_int(); ++k) out.insert(out.end(), a.items().begin(), a.items().end());
        if (out.size() > kMaxItems) return unknown("a list too long to follow");
        return Value::list(std::move(out));
    }
    return unknown(fmt::format("operator {} on {} and {}", op, py_repr(a), py_repr(b)));
}

std::optional<bool> isinstance_of(const Value& v, const std::string& type) {
    if (v.is_unknown()) return std::nullopt;
    // A config object (a section, the model, the whole config) is an instance of a class the linter does not know.
    if (v.is_string() && (object_prefix(v) || v.as_string() == kContainer)) return std::nullopt;
    if (type == "bool") return v.is_bool();
    if (type == "int") return v.is_bool() || v.is_int();
    if (type == "float") return v.is_float();
    if (type == "str") return v.is_string() && !is_dtype(v);
    // A config's list is a Python list (YAML and JSON have no tuples; the front ends read a recipe's tuple as one
    // only where it is written as a list); the sets are the executor's own, marked.
    if (type == "list" || type == "List" || type == "Sequence") return v.is_list() && !is_set(v);
    if (type == "set" || type == "frozenset") return is_set(v);
    if (type == "tuple" || type == "Tuple") return v.is_list() ? std::nullopt : std::optional<bool>(false);
    // Such a dataclass derives from nothing but object.
    if (auto cls = dataclass_of(v)) return type == *cls || type == "object";
    if (type == "dict" || type == "Mapping") return v.is_map() && v.target().empty();
    return std::nullopt;
}

std::optional<bool> te_at_least(const JobFacts& facts, const Value& wanted) {
    if (!facts.te_version || !wanted.is_string()) return std::nullopt;
    auto have = Version::parse(*facts.te_version);
    auto need = Version::parse(wanted.as_string());
    if (!have || !need) return std::nullopt;
    return *have >= *need;
}

// ---------------------------------------------------------------------------------------------------------------

enum class Flow { Normal, Return, Break, Continue };

using Slots = std::map<std::string, Value, std::less<>>;

// The fields written so far: a frozen base shared by the states an uncertain branch saves and restores, and the
// writes since. A start-up's validation branches hundreds of times over a config whose setup already wrote a hundred
// fields; sharing the base makes saving a state and merging two paths cost what the paths wrote, not all of it.
struct Written {
    std::shared_ptr<const Slots> base = std::make_shared<const Slots>();
    Slots delta;

    const Value* find(std::string_view name) const {
        if (auto it = delta.find(name); it != delta.end()) return &it->second;
        if (auto it = base->find(name); it != base->end()) return &it->second;
        return nullptr;
    }
    void set(const std::string& name, Value v) { delta[name] = std::move(v); }
    // Moves the writes into a new base once they are many: saved states then share them.
    void fold(std::size_t above) {
        if (delta.size() <= above) return;
        auto next = std::make_shared<Slots>(*base);
        for (auto& [k, v] : delta) (*next)[k] = std::move(v);
        delta.clear();
        base = std::move(next);
    }
};

// A local bound to a config attribute read with getattr(object, name): the attribute it holds, while nothing has been
// written since (the executor's count of writes) in the same function.
struct ReadSlot {
    std::string slot;
    std::uint64_t writes = 0;
    const Function* function = nullptr;
};

struct State {
    Written written;
    Slots locals;
};

}  // namespace

// --- what earlier runs taught ------------------------------------------------------------------------------------
//
// A run is a function of the program, the job's facts and the answers its field lookups give: the executor asks the
// same names in the same order of any config whose answers so far are the same. So each run's answers are kept in a
// tree (a path per run: the names asked in order, a branch per answer), with the executor's state at the end of each
// start-up step and the outcome at the end; a later run walks the tree with its own answers and starts from the last
// state it reaches (or takes the outcome). Recipes that share a precision preset share the setup's thousands of steps.
//
// Answers are compared by what the executor reads of them: their content, and the marks sets and dataclasses carry in
// their provenance. The rest of a provenance is carried along, never read: a value of the state holds an answer's
// provenance only as a copy of it (the executor makes no provenance of its own but an empty one or a mark). So a state
// is taken with each provenance of the answers it was reached with replaced by that of this run's answer in the same
// place, where that replacement is a function (two answers of one provenance there have one here, and an empty one
// stays empty); where it is not, the state is not taken.
namespace memo {

// How the executor reads an answer: a section whole (kSectionLookup: whether the config has it, None, a mapping and of
// which class), a field's bare value (read_field), or a config object's attribute as getattr gives it, provenance and
// all (config_field).
enum class Ask : std::uint8_t { Section, Bare, Raw };

struct Record {
    Ask ask = Ask::Bare;
    std::string name;
    std::string key;      // what the executor reads of the answer (key_of)
    bool places = false;  // the answer holds a provenance or key range of its own (has_places)
    Value value;          // then: the answer as the executor holds it (bare for Ask::Bare), for relocation
};
// The answers of one run that hold places, by their index among its answers: what a state it reached is relocated by.
using Places = std::vector<std::pair<std::size_t, Value>>;

// The executor's state between two start-up steps (Executor::end_of_step and resume_from).
struct Saved {
    Outcome outcome;
    Written written;
    std::map<std::string, Rewrite> rewrites;
    std::vector<std::string> rewrite_order;
    const Step* step = nullptr;
    std::optional<Value> tainted;
    std::map<std::string, Value, std::less<>> tainted_sections, tainted_names;
    std::map<std::string, ReadSlot, std::less<>> read_slots;
    std::uint64_t write_count = 0;
    std::int64_t steps = 0;
    int line = 0;
    bool rejected = false;
};

struct Node;
struct Link {
    std::string key;
    std::unique_ptr<Node> next;
};
struct Boundary {
    std::size_t step = 0;  // the state after this step of Program::steps
    std::shared_ptr<const Saved> state;
    std::shared_ptr<const Places> places;  // those of the run that reached it (its first `at` answers')
    std::size_t at = 0;
};
// What few nodes have: the states runs reached there, before the next lookup, or the outcome a run ended with.
struct Reached {
    std::vector<Boundary> boundaries;
    std::shared_ptr<const Outcome> end;
    std::shared_ptr<const Places> end_places;
};
// A node is kept for every answer of every run not answered alike before: it is kept small.
struct Node {
    const std::string* name = nullptr;  // the lookup runs make here (RunMemo::names), null where none is made
    Ask ask = Ask::Bare;
    std::vector<Link> links;
    std::unique_ptr<Reached> reached;
    static const std::vector<Boundary>& no_boundaries() {
        static const std::vector<Boundary> none;
        return none;
    }
    const std::vector<Boundary>& boundaries() const { return reached ? reached->boundaries : no_boundaries(); }
    const Outcome* end() const { return reached ? reached->end.get() : nullptr; }
    Reached& reach() {
        if (!reached) reached = std::make_unique<Reached>();
        return *reached;
    }
};

std::string_view mark_of(const Value& v) {
    const std::string& d = v.prov().detail;
    return !d.empty() && d[0] == '\x01' ? std::string_view(d) : std::string_view();
}

template <typename T>
void put(std::string& out, T x) {
    out.append(reinterpret_cast<const char*>(&x), sizeof x);
}
void put_text(std::string& out, std::string_view text) {
    put(out, static_cast<std::uint32_t>(text.size()));
    out.append(text);
}
// What the executor can tell of a value, spelt out: its kind and content (floats bit for bit: -0.0 prints apart from
// 0.0), a map's entries in order, and (with `marks`) the marks sets and dataclasses carry in their provenance.
void spell(const Value& v, bool marks, std::string& out) {
    out += static_cast<char>('a' + static_cast<int>(v.kind()));
    if (marks) put_text(out, mark_of(v));
    switch (v.kind()) {
        case Value::Kind::Null: return;
        case Value::Kind::Bool: out += v.as_bool() ? '1' : '0'; return;
        case Value::Kind::Int: put(out, v.as_int()); return;
        case Value::Kind::Float: put(out, v.as_number()); return;
        case Value::Kind::String:
        case Value::Kind::Unknown: put_text(out, v.as_string()); return;
        case Value::Kind::List:
            put(out, static_cast<std::uint32_t>(v.items().size()));
            for (const auto& x : v.items()) spell(x, marks, out);
            return;
        case Value::Kind::Map:
            put(out, static_cast<std::uint32_t>(v.entries().size()));
            for (const auto& e : v.entries()) {
                put_text(out, e.key);
                spell(e.value, marks, out);
            }
            return;
    }
}
// The same of post_init's bare(v): a scalar without its provenance, a list's items bare (a set keeps its mark), a
// mapping whole.
void spell_bare(const Value& v, std::string& out) {
    if (v.is_map()) return spell(v, true, out);
    if (!v.is_list()) return spell(v, false, out);
    out += 'L';
    out += v.prov().detail == "\x01set" ? 's' : '-';
    put(out, static_cast<std::uint32_t>(v.items().size()));
    for (const auto& x : v.items()) spell_bare(x, out);
}
// What the executor reads of field_'s answer `v` to a lookup asked this way (see Ask).
std::string key_of(Ask ask, const Value* v) {
    std::string out;
    if (ask == Ask::Bare) {
        if (v) spell_bare(*v, out);
        else spell(Value::null(), false, out);  // bare: an absent field reads as None
        return out;
    }
    if (!v) return "A";
    out += 'P';
    if (ask == Ask::Raw) spell(*v, true, out);
    else if (v->is_map()) out += "M" + v->target();
    else spell_bare(*v, out);
    return out;
}

bool same_range(const SourceRange& a, const SourceRange& b) {
    return a.line == b.line && a.column == b.column && a.end_line == b.end_line && a.end_column == b.end_column &&
           a.file == b.file;
}
bool same_prov(const Provenance& a, const Provenance& b) {
    if (a.origin != b.origin || !same_range(a.range, b.range) || a.detail != b.detail) return false;
    if (a.chain.size() != b.chain.size()) return false;
    for (std::size_t i = 0; i < a.chain.size(); ++i)
        if (!same_range(a.chain[i].range, b.chain[i].range) || a.chain[i].message != b.chain[i].message) return false;
    return true;
}
// What the executor makes itself: no place, no words but a mark.
bool plain(const SourceRange& r) {
    return r.file.empty() && r.line == 0 && r.column == 0 && r.end_line == 0 && r.end_column == 0;
}
bool plain(const Provenance& p) {
    return p.origin == Origin::Default && plain(p.range) && (p.detail.empty() || p.detail[0] == '\x01') &&
           p.chain.empty();
}
// Whether a value holds a provenance or key range the executor did not make.
bool has_places(const Value& v) {
    if (!plain(v.prov())) return true;
    for (const auto& x : v.items())
        if (has_places(x)) return true;
    for (const auto& e : v.entries())
        if (!plain(e.key_range) || has_places(e.value)) return true;
    return false;
}

std::size_t mix(std::size_t h, std::size_t x) { return h ^ (x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }
std::size_t range_hash(const SourceRange& r) {
    std::size_t h = std::hash<std::string>{}(r.file);
    for (int x : {r.line, r.column, r.end_line, r.end_column}) h = mix(h, static_cast<std::size_t>(x));
    return h;
}
std::size_t prov_hash(const Provenance& p) {
    std::size_t h = mix(range_hash(p.range), static_cast<std::size_t>(p.origin));
    h = mix(h, std::hash<std::string>{}(p.detail));
    for (const auto& step : p.chain) h = mix(mix(h, range_hash(step.range)), std::hash<std::string>{}(step.message));
    return h;
}

// The provenances (and key ranges) of one run's answers, each to that of another run's answer in the same place.
class Relocation {
public:
    // Adds the places of two answers alike in content; false where a place would go two ways, or an empty one not to
    // itself.
    bool add(const Value& from, const Value& to) {
        if (!add_prov(from.prov(), to.prov())) return false;
        const auto &x = from.items(), &y = to.items();
        for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
            if (!add(x[i], y[i])) return false;
        const auto &ex = from.entries(), &ey = to.entries();
        for (std::size_t i = 0; i < ex.size() && i < ey.size(); ++i) {
            if (!add_range(ex[i].key_range, ey[i].key_range)) return false;
            if (!add(ex[i].value, ey[i].value)) return false;
        }
        return true;
    }
    bool moves() const { return moves_; }
    // Keeps a value made to be added (the relocation points into what it adds).
    const Value& keep(Value v) { return kept_.emplace_back(std::move(v)); }
    void apply(Value& v) const {
        if (!plain(v.prov()))
            if (const Provenance* to = find_prov(v.prov())) v.prov() = *to;
        bool entries_move = false;
        for (const auto& e : v.entries())
            if (!plain(e.key_range)) entries_move = true;
        for (auto& x : v.items()) apply(x);
        if (v.entries().empty()) return;
        for (auto& e : v.entries()) {  // (the mutable entries drop the key index; only where they change)
            if (entries_move && !plain(e.key_range))
                if (const SourceRange* to = find_range(e.key_range)) e.key_range = *to;
            apply(e.value);
        }
    }

private:
    template <class T>
    using Moves = std::unordered_map<std::size_t, std::vector<std::pair<const T*, const T*>>>;
    Moves<Provenance> provs_;
    Moves<SourceRange> ranges_;
    bool moves_ = false;
    std::list<Value> kept_;

    bool add_prov(const Provenance& from, const Provenance& to) {
        return add_move(provs_, from, to, same_prov, prov_hash);
    }
    bool add_range(const SourceRange& from, const SourceRange& to) {
        return add_move(ranges_, from, to, same_range, range_hash);
    }
    const Provenance* find_prov(const Provenance& p) const { return find_move(provs_, p, same_prov, prov_hash); }
    const SourceRange* find_range(const SourceRange& r) const { return find_move(ranges_, r, same_range, range_hash); }

    // One move from a place of the earlier run to this config's: false where it contradicts one already made.
    template <class T>
    bool add_move(Moves<T>& moves, const T& from, const T& to, bool (*same)(const T&, const T&),
                  std::size_t (*hash)(const T&)) {
        const bool unchanged = same(from, to);
        if (plain(from)) return unchanged;
        auto& bucket = moves[hash(from)];
        for (const auto& [f, t] : bucket)
            if (same(*f, from)) return same(*t, to);
        bucket.emplace_back(&from, &to);
        moves_ |= !unchanged;
        return true;
    }
    template <class T>
    static const T* find_move(const Moves<T>& moves, const T& x, bool (*same)(const T&, const T&),
                              std::size_t (*hash)(const T&)) {
        auto it = moves.find(hash(x));
        if (it == moves.end()) return nullptr;
        for (const auto& [f, t] : it->second)
            if (same(*f, x)) return t;
        return nullptr;
    }
};

void relocate(const Relocation& to, std::vector<Rewrite>& rewrites) {
    for (auto& r : rewrites) {
        to.apply(r.before);
        to.apply(r.after);
    }
}
void relocate(const Relocation& to, Outcome& o) {
    relocate(to, o.rewrites);
    if (o.rewrites_before_validation) relocate(to, *o.rewrites_before_validation);
}
void relocate(const Relocation& to, Saved& s) {
    relocate(to, s.outcome);
    Slots base = *s.written.base;
    for (auto& [k, v] : base) to.apply(v);
    s.written.base = std::make_shared<const Slots>(std::move(base));
    for (auto& [k, v] : s.written.delta) to.apply(v);
    for (auto& [k, r] : s.rewrites) {
        to.apply(r.before);
        to.apply(r.after);
    }
    if (s.tainted) to.apply(*s.tainted);
    for (auto& [k, v] : s.tainted_sections) to.apply(v);
    for (auto& [k, v] : s.tainted_names) to.apply(v);
}

// The states and outcomes a program's memo keeps at most: past it, runs use the memo without adding to it. On Megatron
// Bridge 067f987's tree (`check -j 1 .`) the start-up keeps 290 states and 465 outcomes, Megatron Core's
// `__post_init__` 477 outcomes: 73 MB more at the peak (184 MB against 111 MB without the memo).
constexpr std::size_t kMaxMemoStates = 2048;
// The statements (Executor::steps_) a run makes between two states it keeps, at least: on Megatron Bridge 067f987's
// tree, 300 keeps 15 MB less (191 MB peak against 206 MB, `check -j 1 .`) for 1.3 % more statements run.
constexpr std::int64_t kMinStepsBetweenStates = 300;

}  // namespace memo

struct RunMemo {
    std::mutex mutex;
    std::map<std::string, memo::Node, std::less<>> roots;  // per entry (run) or start-up (run_steps) and job facts
    std::unordered_set<std::string> names;                 // the names the nodes ask
    std::size_t states = 0;
};

RunMemoSlot::RunMemoSlot() : memo_(std::make_unique<RunMemo>()) {}
RunMemoSlot::RunMemoSlot(const RunMemoSlot& /*other*/) : memo_(std::make_unique<RunMemo>()) {}
RunMemoSlot& RunMemoSlot::operator=(const RunMemoSlot& /*other*/) {
    memo_ = std::make_unique<RunMemo>();
    return *this;
}
RunMemoSlot::~RunMemoSlot() = default;

namespace {

class Executor {
public:
    Executor(const Program& p, const std::function<const Value*(std::string_view)>& field, const JobFacts& facts)
        : program_(p), field_(field), facts_(facts) {}

    Outcome run(const Function& entry) {
        auto memo = recall(entry.name);
        if (memo.end) return std::move(*memo.end);
        Value self = Value::string(kSelf);
        call(entry, {self}, 0);
        Outcome out = finish();
        remember(entry.name, out);
        return out;
    }

    Outcome run_steps() {
        auto memo = recall("");
        if (memo.end) return std::move(*memo.end);
        const auto& steps = program_.steps;
        for (std::size_t k = memo.from; k < steps.size(); ++k) {
            run_step(steps[k]);
            if (k + 1 < steps.size()) end_of_step(k);
        }
        Outcome out = finish();
        remember("", out);
        return out;
    }

private:
    void run_step(const Step& step) {
        if (step.function.rfind(kUnfollowedStep, 0) == 0 && !tainted_)
            tainted_ = unknown(fmt::format("after {} ({}:{}), a call the linter does not follow",
                                           step.function.substr(kUnfollowedStep.size()), step.file, step.line));
        auto fn = program_.functions.find(step.function);
        if (fn == program_.functions.end()) return;
        if (!step.when.empty()) {  // the start-up calls it only where the config has the section
            const Value* section = config_field(std::string(kSectionLookup) + step.when);
            if (!section || section->is_null()) return;
        }
        step_ = &step;
        const std::string_view name = step.function;
        if (name.size() > 9 && name.substr(name.size() - 9) == ".validate" && !step.args.empty() &&
            step.args.front() == kContainer && !outcome_.rewrites_before_validation)
            outcome_.rewrites_before_validation = rewrites_now();
        std::vector<Value> args;
        for (const auto& object : step.args)
            args.push_back(Value::string(object == kContainer ? std::string(kContainer)
                                         : object.empty()     ? std::string(kSelf)
                                                              : std::string(kSelf) + ":" + object));
        call(fn->second, std::move(args), step.line);
    }

    // --- the memo (memo::) -------------------------------------------------------------------------------------

    // The tree of earlier runs for this entry ("" the start-up) and these job facts.
    memo::Node& memo_root(const std::string& entry) {
        const auto& te = facts_.te_version;
        const auto& torch = facts_.torch_version;
        const std::string key = fmt::format("{}\n{}{}\n{}{}", entry, te ? "+" : "-", te.value_or(""), torch ? "+" : "-",
                                            torch.value_or(""));
        return program_.memo.get().roots[key];
    }

    struct Recalled {
        std::optional<Outcome> end;  // the whole outcome, where an earlier run's answers were all alike
        std::size_t from = 0;        // else the first step to run
    };

    // This config's answers along a path of the tree: the node that asks, and field_'s answer.
    using Path = std::vector<std::pair<const memo::Node*, const Value*>>;

    // Walks the tree with this config's answers: the outcome where it reaches one, else the run resumed at the last
    // state it passed, each with the places of the answers it was reached with moved to this config's. Keeps the
    // answers up to that state as asked (records_ and the executor's own copies).
    Recalled recall(const std::string& entry) {
        RunMemo& m = program_.memo.get();
        const std::lock_guard<std::mutex> lock(m.mutex);
        const memo::Node* node = &memo_root(entry);
        std::vector<const memo::Boundary*> passed;
        Path path;
        while (true) {
            for (const auto& b : node->boundaries()) passed.push_back(&b);
            if (node->end()) {
                memo::Relocation to;
                if (relocation(*node->reached->end_places, path.size(), path, to)) {
                    Recalled out{*node->end(), 0};
                    if (to.moves()) memo::relocate(to, *out.end);
                    return out;
                }
                break;
            }
            if (!node->name) break;
            const Value* v = field_(*node->name);
            path.emplace_back(node, v);
            const std::string key = memo::key_of(node->ask, v);
            const memo::Link* found = nullptr;
            for (const auto& link : node->links)
                if (link.key == key) {
                    found = &link;
                    break;
                }
            if (!found) break;
            node = found->next.get();
        }
        recording_ = true;
        // The deepest state whose places move to this config's.
        std::stable_sort(passed.begin(), passed.end(),
                         [](const memo::Boundary* x, const memo::Boundary* y) { return x->step > y->step; });
        for (const memo::Boundary* b : passed) {
            memo::Relocation to;
            if (!relocation(*b->places, b->at, path, to)) continue;
            for (std::size_t i = 0; i < b->at; ++i) asked(path[i].first->ask, *path[i].first->name, path[i].second);
            memo::Saved state = *b->state;
            if (to.moves()) memo::relocate(to, state);
            resume_from(std::move(state));
            return {std::nullopt, b->step + 1};
        }
        return {};
    }

    // How the places of an earlier run's first `n` answers move to this run's (alike in what the executor reads).
    static bool relocation(const memo::Places& earlier, std::size_t n, const Path& path, memo::Relocation& to) {
        auto held = [&](std::size_t i) -> const Value* {  // this run's answer as the executor holds it
            const auto& [node, v] = path[i];
            if (!v || node->ask == memo::Ask::Section) return nullptr;
            if (node->ask == memo::Ask::Raw || v->is_map()) return v;
            return v->is_list() ? &to.keep(bare(*v))
                                : nullptr;  // a list's bare value (a mapping inside keeps its places)
        };
        std::size_t next = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const Value* v = held(i);
            if (next < earlier.size() && earlier[next].first == i) {
                if (!v || !to.add(earlier[next].second, *v)) return false;
                ++next;
            } else if (v && memo::has_places(*v)) {
                return false;  // an answer without places there has some here
            }
        }
        return true;
    }

    // A lookup's answer as a record: what the executor reads of it, and the places it holds.
    static memo::Record record(memo::Ask ask, const std::string& name, const Value* v) {
        memo::Record r{ask, name, memo::key_of(ask, v), false, Value()};
        if (!v || ask == memo::Ask::Section) return r;
        if (ask == memo::Ask::Raw || v->is_map()) {
            r.places = memo::has_places(*v);
            if (r.places) r.value = *v;
        } else if (v->is_list()) {
            Value held = bare(*v);
            r.places = memo::has_places(held);
            if (r.places) r.value = std::move(held);
        }
        return r;
    }

    // An answer taken as asked before the state resumed from: in this run's records and the executor's copies.
    void asked(memo::Ask ask, const std::string& name, const Value* v) {
        if (ask == memo::Ask::Bare) bare_fields_.emplace(name, v ? bare(*v) : Value::null());
        else config_fields_.emplace(name, v);
        records_.push_back(record(ask, name, v));
    }
    void note(memo::Ask ask, std::string_view name, const Value* v) const {
        if (recording_) records_.push_back(record(ask, std::string(name), v));
    }

    // Takes a copy of a kept state (relocated where it moves): moved in, not copied a second time.
    void resume_from(memo::Saved&& s) {
        saved_steps_ = s.steps;
        outcome_ = std::move(s.outcome);
        written_ = std::move(s.written);
        rewrites_ = std::move(s.rewrites);
        rewrite_order_ = std::move(s.rewrite_order);
        step_ = s.step;
        tainted_ = std::move(s.tainted);
        tainted_sections_ = std::move(s.tainted_sections);
        tainted_names_ = std::move(s.tainted_names);
        read_slots_ = std::move(s.read_slots);
        write_count_ = s.write_count;
        steps_ = s.steps;
        line_ = s.line;
        rejected_ = s.rejected;
    }

    // After step k of the start-up (not the last): the state, for the runs that will answer alike this far.
    void end_of_step(std::size_t k) {
        if (!recording_ || outcome_.out_of_budget) return;
        // A step that ran few statements since the last state kept is cheaper to run again than a state is to keep.
        if (steps_ - saved_steps_ < memo::kMinStepsBetweenStates) return;
        saved_steps_ = steps_;
        auto s = std::make_shared<memo::Saved>();
        s->outcome = outcome_;
        s->written = written_;
        s->rewrites = rewrites_;
        s->rewrite_order = rewrite_order_;
        s->step = step_;
        s->tainted = tainted_;
        s->tainted_sections = tainted_sections_;
        s->tainted_names = tainted_names_;
        s->read_slots = read_slots_;
        s->write_count = write_count_;
        s->steps = steps_;
        s->line = line_;
        s->rejected = rejected_;
        saved_.push_back(memo::Boundary{k, std::move(s), nullptr, records_.size()});
    }

    // Adds this run's path to the tree: its answers, the states it reached and its outcome.
    void remember(const std::string& entry, const Outcome& out) {
        if (!recording_ || out.out_of_budget) return;
        auto places = std::make_shared<memo::Places>();
        for (std::size_t i = 0; i < records_.size(); ++i)
            if (records_[i].places) places->emplace_back(i, std::move(records_[i].value));
        RunMemo& m = program_.memo.get();
        const std::lock_guard<std::mutex> lock(m.mutex);
        if (m.states >= memo::kMaxMemoStates) return;
        memo::Node* node = &memo_root(entry);
        std::size_t next = 0;
        auto place = [&](std::size_t at) {
            for (; next < saved_.size() && saved_[next].at == at; ++next) {
                memo::Boundary& b = saved_[next];
                if (std::any_of(node->boundaries().begin(), node->boundaries().end(),
                                [&](const memo::Boundary& o) { return o.step == b.step; }))
                    continue;
                b.places = places;
                node->reach().boundaries.push_back(std::move(b));
                ++m.states;
            }
        };
        for (std::size_t i = 0; i < records_.size(); ++i) {
            place(i);
            memo::Record& r = records_[i];
            if (node->end()) return;  // not the path a run with these answers takes: nothing more is added
            if (!node->name) {
                node->ask = r.ask;
                node->name = &*m.names.insert(r.name).first;
            } else if (node->ask != r.ask || *node->name != r.name) {
                return;
            }
            memo::Link* found = nullptr;
            for (auto& link : node->links)
                if (link.key == r.key) {
                    found = &link;
                    break;
                }
            if (!found) {
                node->links.push_back(memo::Link{std::move(r.key), std::make_unique<memo::Node>()});
                found = &node->links.back();
            }
            node = found->next.get();
        }
        place(records_.size());
        if (!node->end() && !node->name) {
            node->reach().end = std::make_shared<const Outcome>(out);
            node->reach().end_places = places;
            ++m.states;
        }
    }

    Outcome finish() {
        outcome_.rewrites.reserve(rewrite_order_.size());
        for (const auto& name : rewrite_order_) {  // the run is over: each rewrite is taken, not copied
            Rewrite& r = rewrites_.find(name)->second;
            r.after = read_field(name);
            outcome_.rewrites.push_back(std::move(r));
        }
        return std::move(outcome_);
    }

    // Each field written so far with its value now.
    std::vector<Rewrite> rewrites_now() const {
        std::vector<Rewrite> out;
        for (const auto& name : rewrite_order_) {
            Rewrite r = rewrites_.at(name);
            r.after = read_field(name);
            out.push_back(std::move(r));
        }
        return out;
    }

    const Program& program_;
    const std::function<const Value*(std::string_view)>& field_;
    const JobFacts& facts_;
    Outcome outcome_;
    Written written_;
    // The config's fields as read, never written: hashed, since the checks' field names share long prefixes.
    struct NameHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    mutable std::unordered_map<std::string, Value, NameHash, std::equal_to<>> bare_fields_;
    mutable std::unordered_map<std::string, const Value*, NameHash, std::equal_to<>> config_fields_;  // config_field
    std::map<std::string, Rewrite> rewrites_;
    std::vector<std::string> rewrite_order_;
    std::vector<std::map<std::string, Value, std::less<>>> frames_;
    const Function* function_ = nullptr;
    const Step* step_ = nullptr;  // run_steps: the step running
    std::optional<Value> result_;
    bool certain_ = true;
    bool rejected_ = false;  // a raise was reached for certain: the job stops there
    // Set once a statement the linter does not follow may have changed any config object: every read is unknown, and
    // the run stops there.
    std::optional<Value> tainted_;
    // A section's method the linter does not follow, called with nothing but constants, may change that section's
    // object only (ConfigContainer's sections are separate dataclasses, and the method is given no other): reads of
    // that section's attributes are unknown after it ("dataset." -> why), and the run goes on.
    std::map<std::string, Value, std::less<>> tainted_sections_;
    // Attributes set on an object the linter could not tell: that attribute of any config object is unknown after.
    std::map<std::string, Value, std::less<>> tainted_names_;
    std::map<std::string, Value, std::less<>> section_field_lists_;  // dataclasses.fields() of a section, made once
    std::map<std::string, ReadSlot, std::less<>> read_slots_;        // `local = getattr(object, name)`
    std::uint64_t write_count_ = 0;
    std::vector<std::string> section_scope_;  // the sections whose own methods are running ("dataset.")
    std::string why_;                         // the unknown the current path depends on
    std::int64_t steps_ = 0;
    // The memo: whether this run adds to it, the answers it got in order, and the states it passed (at the number of
    // answers got by then).
    bool recording_ = false;
    mutable std::vector<memo::Record> records_;
    std::vector<memo::Boundary> saved_;
    std::int64_t saved_steps_ =
        0;  // steps_ when this run last kept a state (or resumed from one)  // the states this run reached (end_of_step), for remember()
    int depth_ = 0;
    int branch_depth_ = 0;  // uncertain branches being run, one inside another
    int line_ = 0;          // the statement being run

    bool out_of_budget() {
        if (++steps_ <= kMaxSteps) return false;
        outcome_.out_of_budget = true;
        return true;
    }

    // A field's value without its provenance: the checks read fields thousands of times per config, and a config's
    // provenance (file names, call chains) is most of a value's size.
    static Value bare(const Value& v) {
        switch (v.kind()) {
            case Value::Kind::Null: return Value::null();
            case Value::Kind::Bool: return Value::boolean(v.as_bool());
            case Value::Kind::Int: return Value::integer(v.as_int());
            case Value::Kind::Float: return Value::floating(v.as_number());
            case Value::Kind::String: return Value::string(v.as_string());
            case Value::Kind::Unknown: return Value::unknown(v.unknown_reason());
            case Value::Kind::List: {
                std::vector<Value> items;
                items.reserve(v.items().size());
                for (const auto& x : v.items()) items.push_back(bare(x));
                Value out = Value::list(std::move(items));
                if (is_set(v)) out.prov().detail = kSetMark;
                return out;
            }
            case Value::Kind::Map: return v;
        }
        return v;
    }

    Value read_field(std::string_view name) const { return read_field_ref(name); }
    // The checks read the same fields many times per run: each field's bare value is made once.
    const Value& read_field_ref(std::string_view name) const {
        if (tainted_) return *tainted_;
        if (const Value* t = taint_of(name)) return *t;
        if (const Value* w = written_.find(name)) return *w;
        return bare_field(name);
    }
    const Value& bare_field(std::string_view name) const {
        auto it = bare_fields_.find(name);
        if (it == bare_fields_.end()) {
            const Value* v = field_(name);
            it = bare_fields_.emplace(std::string(name), v ? bare(*v) : Value::null()).first;
            note(memo::Ask::Bare, name, &it->second);
        }
        return it->second;
    }

    // The config's own value of a field (field_, with its provenance), asked once per name: the setups read the same
    // attributes for every field they copy. Null where the config has no such field.
    const Value* config_field(std::string_view name) const {
        auto it = config_fields_.find(name);
        if (it == config_fields_.end()) {
            it = config_fields_.emplace(std::string(name), field_(name)).first;
            note(name.rfind(kSectionLookup, 0) == 0 ? memo::Ask::Section : memo::Ask::Raw, name, it->second);
        }
        return it->second;
    }

    // Why a field is unknown after a statement the linter does not follow (its name set on an unknown object, or its
    // section changed), or null.
    const Value* taint_of(std::string_view name) const {
        if (!tainted_names_.empty()) {
            const auto dot = name.rfind('.');
            auto it = tainted_names_.find(dot == std::string_view::npos ? name : name.substr(dot + 1));
            if (it != tainted_names_.end()) return &it->second;
        }
        if (tainted_sections_.empty()) return nullptr;
        const auto dot = name.find('.');
        if (dot == std::string_view::npos) return nullptr;
        auto it = tainted_sections_.find(name.substr(0, dot + 1));
        return it == tainted_sections_.end() ? nullptr : &it->second;
    }

    // The section an expression names ("dataset." for `self.dataset` in a container's method), whether or not the
    // config says what the section holds; nullopt for the model, the container or anything else.
    std::optional<std::string> section_of(const Expr& e) {
        if (e.op == Op::Attr && e.name != "model" && !e.kids.empty()) {
            const Value o = eval(e.kids[0]);
            const auto& sections = program_.sections;
            if (o.is_string() && o.as_string() == kContainer &&
                std::find(sections.begin(), sections.end(), e.name) != sections.end())
                return e.name + ".";
        }
        auto prefix = object_prefix(eval(e));
        if (prefix && !prefix->empty()) return prefix;
        return std::nullopt;
    }

    // After a statement the linter does not follow that may change config objects (s.names holds kWritesAll).
    void taint(const Stmt& s) {
        const bool constant_args =
            s.e.op == Op::Method && !s.e.kids.empty() &&
            std::all_of(s.e.kids.begin() + 1, s.e.kids.end(), [](const Expr& k) { return k.op == Op::Const; });
        taint_through(constant_args ? s.e.kids[0] : Expr{}, s.line, s.name);
    }

    // The statement at `line` may have changed the object `object` names: that section where it names one, else any
    // config object.
    void taint_through(const Expr& object, int line, const std::string& what) {
        if (tainted_) return;
        Value why = unknown(fmt::format("after line {}: {}", line, what));
        auto prefix = object.op == Op::Unknown ? std::nullopt : section_of(object);
        if (!prefix && !section_scope_.empty()) prefix = section_scope_.back();
        if (prefix) {
            tainted_sections_.emplace(prefix->substr(0, prefix->find('.') + 1), std::move(why));
            return;
        }
        tainted_ = std::move(why);
    }

    void write_field(const std::string& name, Value v, int line) {
        auto it = rewrites_.find(name);
        if (it == rewrites_.end()) {
            Rewrite r;
            r.field = name;
            r.before = read_field(name);
            r.file = function_ ? function_->file : "";
            it = rewrites_.emplace(name, std::move(r)).first;
            rewrite_order_.push_back(name);
        }
        Rewrite& r = it->second;
        r.line = line;
        r.after_rejection |= rejected_;
        if (function_) r.file = function_->file;
        r.step_section = step_ ? step_->when : std::string();
        written_.set(name, std::move(v));
        ++write_count_;
    }

    Value* local(const std::string& name) {
        if (frames_.empty()) return nullptr;
        auto it = frames_.back().find(name);
        return it == frames_.back().end() ? nullptr : &it->second;
    }

    void event(const Stmt& s, std::string message) {
        if (s.site < 0 || static_cast<std::size_t>(s.site) >= program_.sites.size()) return;
        Event e;
        e.site = &program_.sites[static_cast<std::size_t>(s.site)];
        e.certain = certain_;
        e.message = std::move(message);
        if (!certain_) e.why_uncertain = why_;
        e.step = step_;
        rejected_ |= certain_ && e.site->kind == Site::Kind::Raise;
        outcome_.events.push_back(std::move(e));
    }

    // --- calls ---------------------------------------------------------------------------------------------

    Value call(const Function& fn, std::vector<Value> args, int line) {
        if (depth_ >= kMaxDepth) return unknown(fmt::format("calls nested deeper than {}", kMaxDepth));
        std::map<std::string, Value, std::less<>> frame;
        for (std::size_t i = 0; i < fn.params.size(); ++i) {
            if (i < args.size()) frame[fn.params[i]] = std::move(args[i]);
            else if (i < fn.defaults.size() && (fn.defaults[i].op != Op::Unknown || !fn.defaults[i].name.empty()))
                frame[fn.params[i]] = eval(fn.defaults[i]);
            else
                frame[fn.params[i]] =
                    unknown(fmt::format("{} called without {} (line {})", fn.name, fn.params[i], line));
        }
        const Function* saved_fn = function_;
        auto saved_result = std::move(result_);
        const bool saved_certain = certain_;
        const std::string saved_why = why_;
        frames_.push_back(std::move(frame));
        function_ = &fn;
        result_.reset();
        ++depth_;
        exec_block(fn.body);
        --depth_;
        Value out = result_ ? std::move(*result_) : Value::null();  // result_ is restored below
        frames_.pop_back();
        function_ = saved_fn;
        result_ = std::move(saved_result);
        certain_ = saved_certain;
        why_ = saved_why;
        return out;
    }

    // --- statements ----------------------------------------------------------------------------------------

    Flow exec_block(const std::vector<Stmt>& block) {
        for (const auto& s : block) {
            Flow f = exec(s);
            if (f != Flow::Normal) return f;
        }
        return Flow::Normal;
    }

    State save() {
        // Only outside any branch: a path that folded would no longer share its base with the path beside it.
        if (branch_depth_ == 0) written_.fold(16);
        return {written_, frames_.empty() ? decltype(State::locals){} : frames_.back()};
    }
    State take() {
        State s{std::move(written_), frames_.empty() ? decltype(State::locals){} : std::move(frames_.back())};
        written_ = Written{};
        if (!frames_.empty()) frames_.back().clear();
        return s;
    }
    void restore(State s) {
        written_ = std::move(s.written);
        if (!frames_.empty()) frames_.back() = std::move(s.locals);
    }

    // Each slot of `b` into `a`: kept where both agree, unknown where they differ (`base` answers for a slot one side
    // never touched).
    // (`base` answers with a value that outlives the merge, or null for none; values are not copied to be compared:
    // a merge runs at every uncertain branch.)
    static void merge_slots(Slots& a, const Slots& b, const std::function<const Value*(const std::string&)>& base,
                            const std::string& why) {
        // `a`'s slots first, then those only `b` has (each slot is merged on its own, so the order is free); the
        // first loop only replaces values, so its iterators stay valid.
        for (auto& [k, va] : a) {
            auto ib = b.find(k);
            const Value* vb = ib != b.end() ? &ib->second : base(k);
            if (vb && va.same_as(*vb)) continue;
            Value m = vb ? merged(va, *vb, why) : unknown(fmt::format("depends on {}", why));
            va = std::move(m);  // after the merge has read va
        }
        for (const auto& [k, vb] : b) {
            if (a.count(k)) continue;
            const Value* va = base(k);
            a[k] = va && va->same_as(vb) ? vb : va ? merged(*va, vb, why) : unknown(fmt::format("depends on {}", why));
        }
    }

    // Two paths' writes: where both still share the base they started from, only what each wrote since is compared.
    static void merge_written(Written& a, Written& b, const std::function<const Value*(const std::string&)>& base,
                              const std::string& why) {
        if (a.base != b.base) {  // a path that folded its own writes: compared whole
            a.fold(0);
            b.fold(0);
            Slots whole = *a.base;
            merge_slots(whole, *b.base, base, why);
            a.base = std::make_shared<const Slots>(std::move(whole));
            return;
        }
        const auto shared = a.base;
        merge_slots(
            a.delta, b.delta,
            [&](const std::string& k) -> const Value* {
                if (auto it = shared->find(k); it != shared->end()) return &it->second;
                return base(k);
            },
            why);
    }

    // Two paths' values of one slot: a mapping (a dataclass the checks built) entry by entry, so that one attribute
    // set on one path leaves the others known; anything else unknown where they differ.
    static Value merged(const Value& a, const Value& b, const std::string& why) {
        if (a.same_as(b)) return a;
        if (!a.is_map() || !b.is_map()) return unknown(fmt::format("depends on {}", why));
        Value out = Value::map();
        for (const auto& e : a.entries()) {
            const Value* other = b.find(e.key);
            out.set(e.key, other ? merged(e.value, *other, why) : unknown(fmt::format("depends on {}", why)));
        }
        for (const auto& e : b.entries())
            if (!a.find(e.key)) out.set(e.key, unknown(fmt::format("depends on {}", why)));
        // Both paths' instances of one dataclass: still an instance of it.
        if (dataclass_of(a) && dataclass_of(a) == dataclass_of(b)) out.prov().detail = a.prov().detail;
        return out;
    }

    // Runs each alternative from the same state, as a possibility, and merges their outcomes.
    Flow branch(const std::vector<std::function<Flow()>>& alternatives, const std::string& why) {
        const State start = save();
        const bool saved_certain = certain_;
        const std::string saved_why = why_;
        const auto saved_result = result_;
        std::vector<State> ends;
        std::vector<Flow> flows;
        ++branch_depth_;
        for (const auto& alt : alternatives) {
            if (!ends.empty()) restore(start);  // the first starts from the state `start` copies
            certain_ = false;
            if (saved_certain) why_ = why;
            flows.push_back(alt());
            ends.push_back(take());  // the next alternative starts from `start` again
        }
        --branch_depth_;
        State merged = std::move(ends.front());
        static const Value kNone = Value::null();
        auto field_base = [&](const std::string& k) -> const Value* {
            if (const Value* w = start.written.find(k)) return w;
            if (const Value* f = config_field(k)) return f;
            return &kNone;
        };
        auto local_base = [&](const std::string& k) -> const Value* {
            if (auto it = start.locals.find(k); it != start.locals.end()) return &it->second;
            return nullptr;
        };
        for (std::size_t i = 1; i < ends.size(); ++i) {
            merge_written(merged.written, ends[i].written, field_base, why);
            merge_slots(merged.locals, ends[i].locals, local_base, why);
        }
        restore(std::move(merged));
        certain_ = saved_certain;
        why_ = saved_why;
        const bool same_flow = std::all_of(flows.begin(), flows.end(), [&](Flow f) { return f == flows.front(); });
        if (result_ && saved_result && !result_->same_as(*saved_result))
            result_ = unknown(fmt::format("depends on {}", why));
        if (same_flow) return flows.front();
        // Some alternatives left the block and some did not: what follows runs only possibly.
        certain_ = false;
        if (saved_certain) why_ = why;
        if (result_) result_ = unknown(fmt::format("depends on {}", why));
        else if (std::find(flows.begin(), flows.end(), Flow::Return) != flows.end())
            result_ = unknown(fmt::format("depends on {}", why));
        return Flow::Normal;
    }

    Flow exec(const Stmt& s) {
        if (out_of_budget()) return Flow::Return;
        // Past a statement that may have changed any config object nothing read is known, so no raise could be
        // certain: the rest is not run (a start-up's whole-config validation would branch on every condition).
        if (tainted_) return Flow::Return;
        line_ = s.line;
        switch (s.kind) {
            case St::If: {
                const Value c = eval(s.e);
                if (auto t = truth(c)) return exec_block(*t ? s.body : s.orelse);
                const std::string why = fmt::format("{} (line {})", why_of(c), s.line);
                // `if old != new:` where `old` was just read from a config attribute: on the path where they are
                // equal, that attribute holds `new` (Bridge's setups copy a value over only where it differs).
                const auto equal = equal_path(s.e);
                auto run = [&](const std::vector<Stmt>& block, bool equal_here) {
                    if (equal && equal_here) {
                        write_field(equal->slot, equal->value, s.line);
                        assign({equal->local}, equal->value);
                    }
                    return exec_block(block);
                };
                return branch({[&] { return run(s.body, equal && !equal->on_else); },
                               [&] { return run(s.orelse, equal && equal->on_else); }},
                              why);
            }
            case St::Raise: {
                // Only a certain raise is shown with its message; building the others' would cost every config.
                if (!certain_) {
                    event(s, "");
                    return Flow::Normal;
                }
                const Value m = s.e.op == Op::Unknown && s.e.name.empty() ? Value::string("") : eval(s.e);
                event(s, m.is_unknown() ? std::string() : py_str(m));
                return Flow::Normal;  // go on: every rejection is reported, not only the first
            }
            case St::Warn:
                event(s, "");  // where a warning is reached; its text is the site's (nothing shows it yet)
                return Flow::Normal;
            case St::Unknown: {
                if (follow_section_method(s)) return Flow::Normal;
                event(s, "");
                for (const auto& f : s.names) {
                    if (f == kWritesAll) {
                        taint(s);
                        continue;
                    }
                    write_field(f, unknown(s.name), s.line);
                }
                return Flow::Normal;
            }
            case St::Set: {
                if (!s.name.empty()) {
                    write_field(s.name, eval(s.e), s.line);
                    return Flow::Normal;
                }
                // setattr(self, name, value), or setattr(object, name, value) with the object first
                const bool on_self = s.e.kids.size() == 2;
                const Value object = on_self ? Value::string(kSelf) : eval(s.e.kids[0]);
                const Value name = eval(s.e.kids[on_self ? 0 : 1]);
                Value v = eval(s.e.kids[on_self ? 1 : 2]);
                const auto prefix = object_prefix(object);
                if (name.is_string() && prefix) {
                    write_field(*prefix + name.as_string(), std::move(v), s.line);
                } else if (name.is_string() && dataclass_of(object) && s.e.kids[0].op == Op::Var &&
                           local(s.e.kids[0].name)) {
                    local(s.e.kids[0].name)->set(name.as_string(), std::move(v));  // a dataclass the checks built
                } else {
                    // On an object the linter does not know, any config object may be the one changed: where the
                    // name is known, that attribute of every object; else all of the section it names, or anything.
                    event(s, "");
                    if (!on_self && name.is_string() && !object_prefix(object))
                        tainted_names_.emplace(
                            name.as_string(), unknown(fmt::format("after line {}: setattr on {}", s.line,
                                                                  object.is_unknown() ? why_of(object) : "an object")));
                    else if (!on_self) taint_through(s.e.kids[0], s.line, "setattr");
                }
                return Flow::Normal;
            }
            case St::Let: {
                if (!s.names.empty()) {
                    assign(s.names, eval(s.e));
                    return Flow::Normal;
                }
                // getattr(object, name): its arguments evaluated once, for the value and for the slot it reads.
                std::string slot;
                Value v = is_attribute_read(s.e) ? eval_attribute_call(s.e, &slot) : eval(s.e);
                read_slots_.erase(s.name);
                if (!slot.empty()) read_slots_[s.name] = ReadSlot{std::move(slot), write_count_, function_};
                assign({s.name}, std::move(v));
                return Flow::Normal;
            }
            case St::Eval: eval(s.e); return Flow::Normal;
            case St::Return:
                result_ = s.e.op == Op::Unknown && s.e.name.empty() ? Value::null() : eval(s.e);
                return Flow::Return;
            case St::Break: return Flow::Break;
            case St::Continue: return Flow::Continue;
            case St::For: return exec_for(s);
            case St::Try: {
                if (s.orelse.empty()) return exec_block(s.body);
                // The handlers run only if the body raised: a possibility the linter cannot decide.
                return branch({[&] { return exec_block(s.body); }, [&] { return exec_block(s.orelse); }},
                              fmt::format("whether the code at line {} raises", s.line));
            }
        }
        return Flow::Normal;
    }

    // `getattr(object, name)` with two arguments: a local bound to it is noted in read_slots_.
    static bool is_attribute_read(const Expr& e) {
        return e.op == Op::Builtin && e.name == "getattr" && e.kids.size() == 2;
    }

    struct EqualPath {
        std::string local, slot;
        Value value;
        bool on_else = false;  // `!=`: the equal path is the else branch
    };
    // For `local != other` / `local == other` (one comparison) where `local` holds a config attribute still as read and
    // `other` is known: what the path on which they are equal knows.
    std::optional<EqualPath> equal_path(const Expr& e) {
        if (e.op != Op::Cmp || e.ops.size() != 1 || e.kids.size() != 2 || (e.ops[0] != "!=" && e.ops[0] != "=="))
            return std::nullopt;
        for (int side = 0; side < 2; ++side) {
            const Expr& var = e.kids[static_cast<std::size_t>(side)];
            if (var.op != Op::Var) continue;
            auto it = read_slots_.find(var.name);
            if (it == read_slots_.end() || it->second.writes != write_count_ || it->second.function != function_)
                continue;
            Value other = eval(e.kids[static_cast<std::size_t>(1 - side)]);
            if (other.contains_unknown()) continue;
            return EqualPath{var.name, it->second.slot, std::move(other), e.ops[0] == "!="};
        }
        return std::nullopt;
    }

    void assign(const std::vector<std::string>& names, Value v) {
        if (frames_.empty()) return;
        if (names.size() == 1) {
            frames_.back()[names[0]] = std::move(v);
            return;
        }
        if (v.is_list() && v.items().size() == names.size()) {
            for (std::size_t i = 0; i < names.size(); ++i) frames_.back()[names[i]] = v.items()[i];
            return;
        }
        for (const auto& n : names) frames_.back()[n] = unknown("unpacks a value the linter does not know");
    }

    Flow exec_for(const Stmt& s) {
        Value it = eval(s.e);
        // A list's items taken, not copied: `it` is this loop's own.
        auto items = it.is_list() ? std::optional(std::move(it.items())) : items_of(it);
        const auto names = s.names.empty() ? std::vector<std::string>{s.name} : s.names;
        if (!items) {
            const std::string why = fmt::format("the items of {} (line {})", why_of(it), s.line);
            return branch({[&] {
                               assign(names, unknown(why));
                               Flow f = exec_block(s.body);
                               return f == Flow::Return ? f : Flow::Normal;
                           },
                           [&] { return Flow::Normal; }},
                          why);
        }
        for (auto& item : *items) {
            assign(names, std::move(item));  // items is this loop's own copy
            Flow f = exec_block(s.body);
            if (f == Flow::Break) break;
            if (f == Flow::Return) return f;
            if (out_of_budget()) return Flow::Return;
        }
        return Flow::Normal;
    }

    // --- expressions ---------------------------------------------------------------------------------------

    Value eval(const Expr& e) {
        if (out_of_budget()) return unknown("the check program ran out of steps");
        switch (e.op) {
            case Op::Const: return e.value ? *e.value : Value::null();
            case Op::List:
            case Op::Tuple:
            case Op::Set: {
                std::vector<Value> items;
                for (const auto& k : e.kids) items.push_back(eval(k));
                return e.op == Op::Set ? set_of(unique_items(std::move(items))) : Value::list(std::move(items));
            }
            case Op::Dict: {
                Value m = Value::map();
                for (std::size_t i = 0; i + 1 < e.kids.size(); i += 2) {
                    Value k = eval(e.kids[i]);
                    if (!k.is_string()) return unknown("a dict with keys the linter does not model");
                    m.set(k.as_string(), eval(e.kids[i + 1]));
                }
                if (!e.name.empty()) m.prov().detail = kDataclassMark + e.name;
                return m;
            }
            case Op::Self: return read_field(e.name);
            case Op::Var: {
                if (Value* v = local(e.name)) return *v;
                return unknown(fmt::format("name {} is not bound here", e.name));
            }
            case Op::Attr: {
                // On a local (`field.name`), read in place, not copied: the setups do so for every field they copy.
                if (e.kids[0].op == Op::Var) {
                    if (out_of_budget()) return unknown("the check program ran out of steps");
                    if (const Value* o = local(e.kids[0].name)) return attribute(*o, e.name);
                    return unknown(fmt::format("name {} is not bound here", e.kids[0].name));
                }
                return attribute(eval(e.kids[0]), e.name);
            }
            case Op::Not: {
                const Value v = eval(e.kids[0]);
                auto t = truth(v);
                return t ? Value::boolean(!*t) : v;
            }
            case Op::And:
            case Op::Or: {
                Value last;
                std::optional<Value> pending_unknown;
                for (const auto& k : e.kids) {
                    last = eval(k);
                    auto t = truth(last);
                    if (!t) {
                        if (!pending_unknown) pending_unknown = last;
                        continue;
                    }
                    // `and` stops at a false operand, `or` at a true one, whatever the unknowns before it.
                    if (*t == (e.op == Op::Or)) {
                        if (pending_unknown) {
                            // An earlier unknown could have decided first; a decided truth value is still sound.
                            return Value::boolean(*t);
                        }
                        return last;
                    }
                }
                return pending_unknown ? *pending_unknown : last;
            }
            case Op::Cmp: return compare(e);
            case Op::Bin: return binary(e.name, eval(e.kids[0]), eval(e.kids[1]));
            case Op::Neg: {
                const Value v = eval(e.kids[0]);
                if (v.is_int()) return Value::integer(-v.as_int());
                if (v.is_float()) return Value::floating(-v.as_number());
                return v.is_unknown() ? v : unknown("negation of a non-number");
            }
            case Op::IfExp: {
                const Value c = eval(e.kids[0]);
                auto t = truth(c);
                if (!t) {
                    Value a = eval(e.kids[1]), b = eval(e.kids[2]);
                    return a.same_as(b) ? a : unknown(why_of(c));
                }
                return eval(e.kids[*t ? 1 : 2]);
            }
            case Op::Sub: return subscript(eval(e.kids[0]), eval(e.kids[1]));
            case Op::FStr: {
                std::string out;
                for (const auto& k : e.kids) {
                    const Value v = eval(k);
                    if (v.is_unknown()) out += "<unknown>";
                    else if (auto object = object_prefix(v))  // a config object: Python shows its repr
                        out += object->empty() ? "<the config>"
                                               : fmt::format("<the {} config>", object->substr(0, object->size() - 1));
                    else out += k.name == "r" && k.op != Op::Const ? py_repr(v) : py_str(v);
                }
                return Value::string(std::move(out));
            }
            case Op::Dtype: return Value::string(kDtypePrefix + e.name);
            case Op::Type: return Value::string("\x01type:" + e.name);
            case Op::Ext: {
                if (e.name == "is_te_min_version" && !e.kids.empty()) {
                    auto r = te_at_least(facts_, eval(e.kids[0]));
                    return bool_value(r, "the installed Transformer Engine version (--te-version)");
                }
                if (e.name == "te_version" && facts_.te_version) return Value::string(*facts_.te_version);
                if (e.name == "is_torch_min_version" && !e.kids.empty() && facts_.torch_version) {
                    JobFacts torch;
                    torch.te_version = facts_.torch_version;
                    return bool_value(te_at_least(torch, eval(e.kids[0])), "the installed PyTorch version");
                }
                return unknown(fmt::format("{} (a fact of the machine the job runs on)", e.name));
            }
            case Op::Unknown: return unknown(e.name);
            case Op::Builtin: return builtin(e);
            case Op::Method: return method(e);
            case Op::Call: {
                auto it = program_.functions.find(e.name);
                if (it == program_.functions.end()) return unknown(fmt::format("calls {}", e.name));
                std::vector<Value> args;
                for (const auto& k : e.kids) args.push_back(eval(k));
                return call(it->second, std::move(args), 0);
            }
            case Op::Comp: return comprehension(e);
            case Op::ForIn: return unknown("a comprehension clause out of place");
        }
        return unknown("an expression the linter does not model");
    }

    // `o.name` for an object `o` already evaluated.
    Value attribute(const Value& o, const std::string& name) {
        if (o.is_unknown()) return o;
        if (auto prefix = object_prefix(o)) return read_field(*prefix + name);
        if (o.is_string() && o.as_string() == kContainer) return container_attribute(name);
        if (is_enum_member(o)) {
            const std::string text = enum_member_text(o);
            const std::string cls = text.substr(0, text.find('.')), member = text.substr(text.find('.') + 1);
            if (name == "name") return Value::string(member);
            if (name == "value")
                if (auto en = program_.enums.find(cls); en != program_.enums.end())
                    for (const auto& [m, v] : en->second.members)
                        if (m == member) return v;
        }
        if (o.is_map() && o.target().empty())
            if (const Value* v = o.find(name)) return *v;
        return unknown(fmt::format("attribute {} of {}", name, py_repr(o)));
    }

    Value compare(const Expr& e) {
        // One comparison of two held operands (`old_val != new_val`, `self.fp8 is None`): compared where they are,
        // not copied; neither's evaluation can change the other.
        if (e.ops.size() == 1 && held(e.kids[0]) && held(e.kids[1])) {
            Value left_scratch, right_scratch;
            const Value& left = held_value(e.kids[0], left_scratch);
            const Value& right = held_value(e.kids[1], right_scratch);
            const auto r = compare_one(e.ops[0], left, right);
            if (!r) return unknown(fmt::format("comparison with {}", left.is_unknown() ? why_of(left) : why_of(right)));
            return Value::boolean(*r);
        }
        Value left = eval(e.kids[0]);
        std::optional<Value> pending;
        for (std::size_t i = 0; i < e.ops.size(); ++i) {
            Value right = eval(e.kids[i + 1]);
            const auto r = compare_one(e.ops[i], left, right);
            if (!r) {
                if (!pending)
                    pending =
                        unknown(fmt::format("comparison with {}", left.is_unknown() ? why_of(left) : why_of(right)));
            } else if (!*r) {
                return Value::boolean(false);
            }
            left = std::move(right);
        }
        return pending ? *pending : Value::boolean(true);
    }

    static std::optional<bool> compare_one(const std::string& op, const Value& left, const Value& right) {
        std::optional<bool> r;
        if (op == "==" || op == "!=") {
            r = py_eq(left, right);
            if (r && op == "!=") r = !*r;
        } else if (op == "is" || op == "is not") {
            if (left.is_unknown() || right.is_unknown()) r = std::nullopt;
            else if (right.is_null() || left.is_null()) r = left.is_null() && right.is_null();
            else if (right.is_bool() && left.is_bool()) r = left.as_bool() == right.as_bool();
            else if (right.is_bool() || left.is_bool()) r = false;
            else r = py_eq(left, right);
            if (r && op == "is not") r = !*r;
        } else if (op == "in" || op == "not in") {
            r = py_contains(right, left);
            if (r && op == "not in") r = !*r;
        } else {
            r = py_order(op, left, right);
        }
        return r;
    }

    Value subscript(const Value& o, const Value& k) {
        if (o.is_unknown()) return o;
        if (k.is_unknown()) return k;
        if (is_type(o)) {  // Enum[name]
            const std::string cls = o.as_string().substr(6);
            auto en = program_.enums.find(cls);
            if (en == program_.enums.end() || !k.is_string()) return unknown(fmt::format("{}[...]", cls));
            for (const auto& [m, v] : en->second.members)
                if (m == k.as_string())
                    return en->second.str_valued && v.is_string() ? v : Value::string(kEnumPrefix + cls + "." + m);
            return unknown(fmt::format("{} has no member {} (Python raises KeyError)", cls, k.as_string()));
        }
        if (o.is_list() && (k.is_int() || k.is_bool())) {
            std::int64_t i = k.is_bool() ? k.as_bool() : k.as_int();
            const auto n = static_cast<std::int64_t>(o.items().size());
            if (i < 0) i += n;
            if (i < 0 || i >= n) return unknown("an index out of range");
            return o.items()[static_cast<std::size_t>(i)];
        }
        if (o.is_map() && o.target().empty() && k.is_string())
            if (const Value* v = o.find(k.as_string())) return *v;
        return unknown("a subscript the linter does not model");
    }

    Value comprehension(const Expr& e) {
        // kids: element (and value for dict), then ForIn clauses.
        const std::size_t elts = e.name == "dict" ? 2 : 1;
        std::vector<Value> out;
        Value map = Value::map();
        std::string unknown_why;
        std::vector<std::map<std::string, Value, std::less<>>> saved;
        if (frames_.empty()) return unknown("a comprehension outside a function");
        const auto outer = frames_.back();
        std::function<bool(std::size_t)> clause = [&](std::size_t i) -> bool {
            if (i == e.kids.size()) {
                if (e.name == "dict") {
                    Value k = eval(e.kids[0]);
                    if (!k.is_string()) {
                        unknown_why = "a dict comprehension with keys the linter does not model";
                        return false;
                    }
                    map.set(k.as_string(), eval(e.kids[1]));
                } else {
                    out.push_back(eval(e.kids[0]));
                }
                return out.size() <= kMaxItems;
            }
            const Expr& c = e.kids[i];
            const Value it = eval(c.kids[0]);
            auto items = items_of(it);
            if (!items) {
                unknown_why = why_of(it);
                return false;
            }
            for (auto& item : *items) {
                assign(c.names, item);
                bool keep = true;
                for (std::size_t j = 1; j < c.kids.size(); ++j) {
                    auto t = truth(eval(c.kids[j]));
                    if (!t) {
                        unknown_why = "a comprehension filter on an unknown value";
                        return false;
                    }
                    keep = keep && *t;
                    if (!keep) break;
                }
                if (keep && !clause(i + 1)) return false;
            }
            return true;
        };
        const bool ok = clause(elts);
        frames_.back() = outer;
        if (!ok) return unknown(unknown_why.empty() ? "a comprehension too long to follow" : unknown_why);
        if (e.name == "dict") return map;
        if (e.name == "set") return set_of(unique_items(std::move(out)));
        return Value::list(std::move(out));
    }

    // An attribute of the whole config: a section's object, None where the config sets the section so, unknown where
    // it does not say (a section's default may be None or an instance) or the attribute is no section.
    Value container_attribute(const std::string& name) {
        if (std::find(program_.sections.begin(), program_.sections.end(), name) == program_.sections.end())
            return unknown(fmt::format("the config's {} is worked out at start-up", name));
        if (name == "model") return Value::string(kSelf);
        const Value* section = config_field(std::string(kSectionLookup) + name);
        if (!section) return unknown(fmt::format("the config does not say whether it has a {} section", name));
        if (section->is_null()) return Value::null();
        if (!section->is_map()) return bare(*section);  // `mixed_precision: bf16_mixed`: the value itself
        return Value::string(std::string(kSelf) + ":" + name);
    }

    // The class of a config section the config names (a dump's `_target_`), where the program describes it; null for
    // the model, the whole config, or a section of a class the program does not describe.
    const SectionClass* class_of(const Value& v) const {
        auto prefix = object_prefix(v);
        if (!prefix || prefix->empty()) return nullptr;
        const Value* section = config_field(std::string(kSectionLookup) + prefix->substr(0, prefix->size() - 1));
        if (!section || !section->is_map() || section->target().empty()) return nullptr;
        auto it = program_.classes.find(section->target());
        if (it == program_.classes.end() || it->second.section + "." != *prefix) return nullptr;
        return &it->second;
    }

    // The class of an object a section's attribute holds (`self.task_encoder`: the field "dataset.task_encoder"), where
    // the config names it and the program describes it for that attribute.
    const SectionClass* held_class(const std::string& field, const Value& v) const {
        if (!v.is_map() || v.target().empty()) return nullptr;
        auto it = program_.classes.find(v.target());
        return it != program_.classes.end() && it->second.section == field ? &it->second : nullptr;
    }

    // isinstance of a section whose class is known against the tree's classes the program describes: decided; against
    // any other type (one outside the tree could be a base of the section's), unknown.
    std::optional<bool> section_isinstance(const SectionClass& c, const std::vector<std::string>& types) const {
        std::optional<bool> out = false;
        for (const auto& ty : types) {
            if (std::find(c.mro.begin(), c.mro.end(), ty) != c.mro.end()) return true;
            const bool described = std::any_of(program_.classes.begin(), program_.classes.end(), [&](const auto& k) {
                return !k.second.mro.empty() && k.second.mro.front() == ty;
            });
            if (!described) out = std::nullopt;
        }
        return out;
    }

    // A method called on a section of a known class, where the program compiled it for that class: run, with the
    // section as `self`. False where it is not followed (the caller then treats the call as one it does not know).
    bool follow_section_method(const Stmt& s) {
        if (tainted_ || s.e.op != Op::Method || s.e.kids.empty()) return false;
        const Value object = eval(s.e.kids[0]);
        const SectionClass* c = class_of(object);
        if (!c && s.e.kids[0].op == Op::Self) c = held_class(s.e.kids[0].name, object);
        if (!c) return false;
        auto m = c->methods.find(s.e.name);
        if (m == c->methods.end()) return false;
        auto fn = program_.functions.find(m->second);
        if (fn == program_.functions.end()) return false;
        std::vector<Value> args{object};
        for (std::size_t i = 1; i < s.e.kids.size(); ++i) args.push_back(eval(s.e.kids[i]));
        // Given no other config object, the method reaches only its own section: what it does that the linter does
        // not follow (a base class's __post_init__) changes that section at most.
        const bool own_section_only = std::none_of(args.begin() + 1, args.end(), [](const Value& v) {
            return object_prefix(v) || (v.is_string() && v.as_string() == kContainer);
        });
        const auto prefix = object_prefix(object);
        const bool scoped = own_section_only && prefix && !prefix->empty();
        if (scoped) section_scope_.push_back(prefix->substr(0, prefix->find('.') + 1));
        call(fn->second, std::move(args), s.line);
        if (scoped) section_scope_.pop_back();
        return true;
    }

    // getattr(object, name[, fallback]) or hasattr(object, name) on a config object or a dataclass the checks built;
    // nullopt on anything else.
    std::optional<Value> attribute_builtin(bool has, const Value& object, const Value& name, const Value* fallback) {
        if (!name.is_string()) return std::nullopt;
        const std::string& attribute = name.as_string();
        if (const auto prefix = object_prefix(object)) {
            const std::string field = *prefix + attribute;
            if (tainted_) return *tainted_;
            if (const Value* t = taint_of(field)) return *t;
            if (const SectionClass* c = has ? class_of(object) : nullptr) {
                const auto& at = c->attributes;
                if (std::find(at.begin(), at.end(), attribute) != at.end()) return Value::boolean(true);
            }
            // A field the section's class declares (Program::section_fields), whatever its value.
            if (has && !prefix->empty())
                if (auto it = program_.section_fields.find(std::string_view(*prefix).substr(0, prefix->size() - 1));
                    it != program_.section_fields.end()) {
                    const auto& names = it->second.names;
                    if (std::find(names.begin(), names.end(), attribute) != names.end()) return Value::boolean(true);
                }
            const Value* v = written_.find(field);
            if (!v) v = config_field(field);
            // A section attribute the config does not set: whether its class declares it is unknown too.
            if (has && v && v->is_unknown() && field.find('.') != std::string::npos) return *v;
            if (has) return Value::boolean(v != nullptr);
            if (v) return *v;
            return fallback ? *fallback : unknown(fmt::format("attribute {} is not a field here", attribute));
        }
        // On a dataclass the checks build themselves (a mapping of its fields): its attribute, as Python reads it.
        if (dataclass_of(object)) {
            const Value* v = object.find(attribute);
            if (has) return Value::boolean(v != nullptr);
            if (v) return *v;
            return fallback ? *fallback : unknown(fmt::format("attribute {} is not a field here", attribute));
        }
        return std::nullopt;
    }

    // getattr / hasattr on a config object, and kWithBuiltin (an attribute set on an object a field holds).
    std::optional<Value> object_builtin(const std::string& f, const std::vector<Value>& a) {
        if ((f == "getattr" || f == "hasattr") && a.size() >= 2)
            return attribute_builtin(f == "hasattr", a[0], a[1], a.size() >= 3 ? &a[2] : nullptr);
        // dataclasses.fields() of such a dataclass, or of a config section whose class the program describes: its
        // fields in order, each with its `name` (a section's whatever values the config gives them).
        if (f == kFieldsBuiltin && a.size() == 1) {
            if (auto prefix = object_prefix(a[0]); prefix && !prefix->empty()) {
                const std::string section = prefix->substr(0, prefix->size() - 1);
                if (auto made = section_field_lists_.find(section); made != section_field_lists_.end())
                    return made->second;
                auto it = program_.section_fields.find(section);
                if (it == program_.section_fields.end()) return unknown(fmt::format("the fields of {}", why_of(a[0])));
                std::vector<Value> out;
                for (const auto& name : it->second.names) {
                    Value field = Value::map();
                    field.set("name", Value::string(name));
                    out.push_back(std::move(field));
                }
                return section_field_lists_.emplace(section, Value::list(std::move(out))).first->second;
            }
            if (!dataclass_of(a[0])) return unknown(fmt::format("the fields of {}", why_of(a[0])));
            std::vector<Value> out;
            for (const auto& entry : a[0].entries()) {
                Value field = Value::map();
                field.set("name", Value::string(entry.key));
                out.push_back(std::move(field));
            }
            return Value::list(std::move(out));
        }
        if (f == kWithBuiltin && a.size() == 3) {
            if (!a[0].is_map() || !a[1].is_string())
                return unknown(fmt::format("sets {} on {}", py_str(a[1]), why_of(a[0])));
            Value out = a[0];
            out.set(a[1].as_string(), a[2]);
            return out;
        }
        return std::nullopt;
    }

    Value builtin(const Expr& e) {
        if ((e.name == "getattr" || e.name == "hasattr") && (e.kids.size() == 2 || e.kids.size() == 3))
            return attribute_call(e, nullptr);
        std::vector<Value> a;
        if (e.name != "isinstance") {
            a.reserve(e.kids.size());
            for (const auto& k : e.kids) a.push_back(eval(k));
        }
        return builtin_of(e, a);
    }

    // eval of `getattr(object, name)`, `slot` given the config attribute it reads ("" where it reads none).
    Value eval_attribute_call(const Expr& e, std::string* slot) {
        if (out_of_budget()) return unknown("the check program ran out of steps");
        return attribute_call(e, slot);
    }

    // An operand whose evaluation changes nothing the others are read from (no frame, no write): a local, a constant,
    // a field as read, an attribute of a local.
    static bool held(const Expr& e) {
        return e.op == Op::Var || e.op == Op::Const || e.op == Op::Self ||
               (e.op == Op::Attr && e.kids[0].op == Op::Var);
    }
    // A held operand's value, with eval's steps counted: where it is held (a local, a constant, a field as read, an
    // entry of a local mapping) rather than a copy; `scratch` keeps what eval makes anew.
    const Value& held_value(const Expr& e, Value& scratch) {
        if (out_of_budget()) return scratch = unknown("the check program ran out of steps");
        switch (e.op) {
            case Op::Self: return read_field_ref(e.name);
            case Op::Const: return e.value ? *e.value : scratch;  // scratch: None
            case Op::Var:
                if (const Value* v = local(e.name)) return *v;
                return scratch = unknown(fmt::format("name {} is not bound here", e.name));
            default: {  // Attr of a local
                if (out_of_budget()) return scratch = unknown("the check program ran out of steps");
                const Value* o = local(e.kids[0].name);
                if (!o) return scratch = unknown(fmt::format("name {} is not bound here", e.kids[0].name));
                if (o->is_map() && o->target().empty())
                    if (const Value* v = o->find(e.name)) return *v;
                return scratch = attribute(*o, e.name);
            }
        }
    }

    // getattr / hasattr with 2 or 3 arguments, read in place where every argument is held (the setups' copy loops),
    // else evaluated in turn; `slot` (when asked) gets the config attribute a getattr reads.
    Value attribute_call(const Expr& e, std::string* slot) {
        const bool has = e.name == "hasattr";
        const auto& k = e.kids;
        std::array<Value, 3> scratch;
        std::array<const Value*, 3> a{};
        if (std::all_of(k.begin(), k.end(), held)) {
            for (std::size_t i = 0; i < k.size(); ++i) a[i] = &held_value(k[i], scratch[i]);
        } else {
            for (std::size_t i = 0; i < k.size(); ++i) a[i] = &(scratch[i] = eval(k[i]));
        }
        if (slot && !has && k.size() == 2 && a[1]->is_string())
            if (const auto prefix = object_prefix(*a[0])) *slot = *prefix + a[1]->as_string();
        if (auto v = attribute_builtin(has, *a[0], *a[1], a[2])) return std::move(*v);
        return unknown(fmt::format("builtin {}", e.name));
    }

    // A builtin over its evaluated arguments `a` (isinstance evaluates its own).
    Value builtin_of(const Expr& e, const std::vector<Value>& a) {
        const std::string& f = e.name;
        auto first_unknown = [&]() -> std::optional<Value> {
            for (const auto& v : a)
                if (v.is_unknown()) return v;
            return std::nullopt;
        };
        if (f == "isinstance" && e.kids.size() == 2) {
            const Value v = eval(e.kids[0]);
            const Expr& t = e.kids[1];
            std::vector<std::string> types;
            if (t.op == Op::Type) types.push_back(t.name);
            else if (t.op == Op::Tuple)
                for (const auto& k : t.kids) types.push_back(k.op == Op::Type ? k.name : "?");
            std::optional<bool> any = false;
            const SectionClass* c = class_of(v);
            if (!c && e.kids[0].op == Op::Self) c = held_class(e.kids[0].name, v);
            if (c)
                return bool_value(section_isinstance(*c, types), "the section's class may derive from one outside "
                                                                 "the tree");
            for (const auto& ty : types) {
                auto en = program_.enums.find(ty);
                if (en == program_.enums.end() || v.is_unknown()) continue;
                if (is_enum_member(v) && enum_member_text(v).rfind(ty + ".", 0) == 0) return Value::boolean(true);
                if (v.is_string() && en->second.str_valued && !is_enum_member(v)) any = std::nullopt;
            }
            if (v.is_list() && !is_set(v) && std::find(types.begin(), types.end(), "list") != types.end())
                return Value::boolean(true);
            for (const auto& ty : types) {
                if (program_.enums.count(ty)) continue;
                auto r = isinstance_of(v, ty);
                if (r && *r) return Value::boolean(true);
                if (!r) any = std::nullopt;
            }
            return bool_value(any, v.is_unknown() ? why_of(v) : "the type of a value the linter reads loosely");
        }
        if (f == "getattr" || f == "hasattr") {  // other than with 2 or 3 arguments (builtin() takes those)
            if (auto v = object_builtin(f, a)) return std::move(*v);
            return unknown(fmt::format("builtin {}", f));
        }
        if (auto u = first_unknown()) return *u;
        if (f == "len" && a.size() == 1) {
            if (a[0].is_list()) return Value::integer(static_cast<std::int64_t>(a[0].items().size()));
            if (a[0].is_string()) return Value::integer(static_cast<std::int64_t>(a[0].as_string().size()));
            if (a[0].is_map() && a[0].target().empty())
                return Value::integer(static_cast<std::int64_t>(a[0].entries().size()));
            return unknown("len of a value the linter does not model");
        }
        if ((f == "set" || f == "frozenset" || f == "list" || f == "tuple" || f == "sorted") && a.size() <= 1) {
            if (a.empty()) return Value::list({});
            auto items = items_of(a[0]);
            if (!items) return unknown(fmt::format("{} of a value the linter does not model", f));
            if (f == "set" || f == "frozenset") return set_of(unique_items(std::move(*items)));
            if (f == "sorted") {
                bool strings = std::all_of(items->begin(), items->end(), [](const Value& v) { return v.is_string(); });
                if (!strings) return unknown("sorted of mixed values");
                std::sort(items->begin(), items->end(),
                          [](const Value& x, const Value& y) { return x.as_string() < y.as_string(); });
            }
            return Value::list(std::move(*items));
        }
        if ((f == "any" || f == "all") && a.size() == 1) {
            auto items = items_of(a[0]);
            if (!items) return unknown(fmt::format("{} of a value the linter does not model", f));
            bool unsure = false;
            for (const auto& x : *items) {
                auto t = truth(x);
                if (!t) unsure = true;
                else if (*t == (f == "any")) return Value::boolean(*t);
            }
            return unsure ? unknown(fmt::format("{} over unknown items", f)) : Value::boolean(f == "all");
        }
        if ((f == "min" || f == "max" || f == "sum") && !a.empty()) {
            std::vector<Value> items = a.size() == 1 ? items_of(a[0]).value_or(std::vector<Value>{}) : a;
            if (items.empty()) return unknown(fmt::format("{} of an empty or unknown sequence", f));
            Value best = f == "sum" ? Value::integer(0) : items[0];
            for (std::size_t i = f == "sum" ? 0 : 1; i < items.size(); ++i) {
                if (f == "sum") {
                    best = binary("+", best, items[i]);
                    continue;
                }
                auto lt = py_order("<", items[i], best);
                if (!lt) return unknown(fmt::format("{} of values the linter cannot order", f));
                if (*lt == (f == "min")) best = items[i];
            }
            return best;
        }
        if (f == "int" && a.size() == 1) {
            if (a[0].is_bool()) return Value::integer(a[0].as_bool());
            if (a[0].is_int()) return a[0];
            if (a[0].is_float()) return Value::integer(static_cast<std::int64_t>(a[0].as_number()));
            return unknown("int of a value the linter does not model");
        }
        if (f == "float" && a.size() == 1) {
            if (auto n = as_num(a[0])) return Value::floating(*n);
            return unknown("float of a value the linter does not model");
        }
        if (f == "bool" && a.size() == 1) return Value::boolean(a[0].truthy());
        if (f == "str" && a.size() == 1) return Value::string(py_str(a[0]));
        if (f == "repr" && a.size() == 1) return Value::string(py_repr(a[0]));
        if (f == "abs" && a.size() == 1) {
            if (a[0].is_int()) return Value::integer(std::abs(a[0].as_int()));
            if (a[0].is_float()) return Value::floating(std::abs(a[0].as_number()));
        }
        if (auto v = object_builtin(f, a)) return std::move(*v);
        if (f == "range" && !a.empty() && a.size() <= 2) {
            auto lo = a.size() == 2 ? as_num(a[0]) : std::optional<double>(0.0);
            auto hi = as_num(a.back());
            if (!lo || !hi || *hi - *lo > static_cast<double>(kMaxItems))
                return unknown("a range the linter does not follow");
            std::vector<Value> out;
            for (auto i = static_cast<std::int64_t>(*lo); i < static_cast<std::int64_t>(*hi); ++i)
                out.push_back(Value::integer(i));
            return Value::list(std::move(out));
        }
        if (f == "enumerate" && a.size() == 1) {
            auto items = items_of(a[0]);
            if (!items) return unknown("enumerate of a value the linter does not model");
            std::vector<Value> out;
            for (std::size_t i = 0; i < items->size(); ++i)
                out.push_back(Value::list({Value::integer(static_cast<std::int64_t>(i)), (*items)[i]}));
            return Value::list(std::move(out));
        }
        if (f == "zip" && a.size() >= 2) {
            std::vector<std::vector<Value>> cols;
            for (const auto& v : a) {
                auto items = items_of(v);
                if (!items) return unknown("zip of a value the linter does not model");
                cols.push_back(std::move(*items));
            }
            std::size_t n = cols[0].size();
            for (const auto& c : cols) n = std::min(n, c.size());
            std::vector<Value> out;
            for (std::size_t i = 0; i < n; ++i) {
                std::vector<Value> row;
                for (const auto& c : cols) row.push_back(c[i]);
                out.push_back(Value::list(std::move(row)));
            }
            return Value::list(std::move(out));
        }
        if (f == "\x01"
                 "enum" &&
            a.size() == 2 && is_type(a[0])) {  // Enum(value)
            const std::string cls = a[0].as_string().substr(6);
            auto en = program_.enums.find(cls);
            if (en != program_.enums.end()) {
                for (const auto& [m, v] : en->second.members) {
                    if (is_enum_member(a[1]) && enum_member_text(a[1]) == cls + "." + m) return a[1];
                    if (auto eq = py_eq(v, a[1]); eq && *eq)
                        return en->second.str_valued && v.is_string() ? v : Value::string(kEnumPrefix + cls + "." + m);
                }
                return unknown(fmt::format("{}({}) is no member (Python raises ValueError)", cls, py_repr(a[1])));
            }
        }
        return unknown(fmt::format("builtin {}", f));
    }

    // Methods of str, list and dict; the list mutators write back into the field or variable they were called on.
    Value method(const Expr& e) {
        const std::string& m = e.name;
        const Expr& target = e.kids[0];
        Value o = eval(target);
        std::vector<Value> a;
        for (std::size_t i = 1; i < e.kids.size(); ++i) a.push_back(eval(e.kids[i]));
        static const char* const mutators[] = {"append", "extend", "insert",  "remove", "clear",
                                               "pop",    "add",    "discard", "update"};
        const bool mutates = std::find(std::begin(mutators), std::end(mutators), m) != std::end(mutators);
        if (mutates) {
            Value updated = mutate(o, m, a);
            if (target.op == Op::Self) write_field(target.name, updated, line_);
            else if (target.op == Op::Var && local(target.name)) *local(target.name) = updated;
            return m == "pop" ? unknown("the item pop removes") : Value::null();
        }
        if (o.is_unknown()) return o;
        for (const auto& v : a)
            if (v.is_unknown()) return v;
        if (target.op == Op::Type && target.name == "dict" && m == "fromkeys") return dict_from_keys(a);
        if (o.is_string()) {
            const std::string& s = o.as_string();
            if ((m == "startswith" || m == "endswith") && a.size() == 1 && a[0].is_string()) {
                const std::string& p = a[0].as_string();
                if (p.size() > s.size()) return Value::boolean(false);
                return Value::boolean(m == "startswith" ? s.compare(0, p.size(), p) == 0
                                                        : s.compare(s.size() - p.size(), p.size(), p) == 0);
            }
            if (m == "lower" || m == "upper") {
                std::string r = s;
                for (char& c : r)
                    c = static_cast<char>(m == "lower" ? std::tolower(static_cast<unsigned char>(c))
                                                       : std::toupper(static_cast<unsigned char>(c)));
                return Value::string(r);
            }
            if (m == "strip" && a.empty()) {
                const auto b = s.find_first_not_of(" \t\n\r");
                if (b == std::string::npos) return Value::string("");
                return Value::string(s.substr(b, s.find_last_not_of(" \t\n\r") - b + 1));
            }
            if ((m == "split" || m == "rsplit") && a.size() == 1 && a[0].is_string() && !a[0].as_string().empty())
                return split(s, a[0].as_string(), -1, m == "rsplit");
            if ((m == "split" || m == "rsplit") && a.size() == 2 && a[0].is_string() && !a[0].as_string().empty() &&
                a[1].is_int())
                return split(s, a[0].as_string(), a[1].as_int(), m == "rsplit");
            if (m == "join" && a.size() == 1) {
                auto items = items_of(a[0]);
                if (!items) return unknown("join of a value the linter does not model");
                std::string r;
                for (std::size_t i = 0; i < items->size(); ++i) r += (i ? s : "") + py_str((*items)[i]);
                return Value::string(r);
            }
        }
        if (o.is_list()) {
            if (m == "count" && a.size() == 1) {
                std::int64_t n = 0;
                for (const auto& x : o.items()) {
                    auto eq = py_eq(x, a[0]);
                    if (!eq) return unknown("count over unknown items");
                    n += *eq;
                }
                return Value::integer(n);
            }
            if (m == "copy") return o;
            if (m == "index" && a.size() == 1) {
                for (std::size_t i = 0; i < o.items().size(); ++i)
                    if (auto eq = py_eq(o.items()[i], a[0]); eq && *eq)
                        return Value::integer(static_cast<std::int64_t>(i));
                return unknown("index of an item not found");
            }
        }
        if (o.is_map() && o.target().empty()) {
            if (m == "get" && !a.empty()) {
                if (a[0].is_string())
                    if (const Value* v = o.find(a[0].as_string())) return *v;
                return a.size() >= 2 ? a[1] : Value::null();  // the maps here have string keys only
            }
            if (m == "keys" || m == "values" || m == "items") {
                std::vector<Value> out;
                for (const auto& en : o.entries()) {
                    if (m == "keys") out.push_back(Value::string(en.key));
                    else if (m == "values") out.push_back(en.value);
                    else out.push_back(Value::list({Value::string(en.key), en.value}));
                }
                return Value::list(std::move(out));
            }
        }
        return unknown(fmt::format("method {} of {}", m, py_repr(o)));
    }

    // str.split / str.rsplit by a separator, at most `max` times (negative: every time) from the left or the right.
    static Value split(const std::string& s, const std::string& sep, std::int64_t max, bool from_right) {
        std::vector<std::string> parts;
        std::size_t from = 0;
        for (auto at = s.find(sep); at != std::string::npos; at = s.find(sep, from)) {
            parts.push_back(s.substr(from, at - from));
            from = at + sep.size();
        }
        parts.push_back(s.substr(from));
        // Joining back the pieces beyond `max` splits: the first ones from the left, the last ones from the right.
        while (max >= 0 && static_cast<std::int64_t>(parts.size()) > max + 1) {
            const std::size_t at = from_right ? 0 : parts.size() - 2;
            parts[at] += sep + parts[at + 1];
            parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
        }
        std::vector<Value> out;
        for (auto& p : parts) out.push_back(Value::string(std::move(p)));
        return Value::list(std::move(out));
    }

    // `dict.fromkeys(keys[, value])`, the idiom for a list without repeats in first-seen order: string keys only (the
    // maps here have string keys).
    static Value dict_from_keys(const std::vector<Value>& a) {
        auto keys = a.empty() || a.size() > 2 ? std::nullopt : items_of(a[0]);
        if (!keys) return unknown("dict.fromkeys of a value the linter does not model");
        Value out = Value::map();
        for (const auto& k : *keys) {
            if (!k.is_string()) return unknown("dict.fromkeys with keys that are not strings");
            if (!out.find(k.as_string())) out.set(k.as_string(), a.size() == 2 ? a[1] : Value::null());
        }
        return out;
    }

    static Value mutate(const Value& o, const std::string& m, const std::vector<Value>& a) {
        if (o.is_unknown()) return o;
        for (const auto& v : a)
            if (v.is_unknown()) return unknown(fmt::format("{} of an unknown value", m));
        if (!o.is_list()) return unknown(fmt::format("{} on a value the linter does not model", m));
        std::vector<Value> items = o.items();
        if ((m == "append" || m == "add") && a.size() == 1) {
            if (m == "add") {
                if (auto in = py_contains(o, a[0]); in && *in) return o;
            }
            items.push_back(a[0]);
        } else if ((m == "extend" || m == "update") && a.size() == 1) {
            auto more = items_of(a[0]);
            if (!more) return unknown("extends a list by unknown items");
            items.insert(items.end(), more->begin(), more->end());
            if (m == "update") items = unique_items(std::move(items));
        } else if ((m == "remove" || m == "discard") && a.size() == 1) {
            auto it = std::find_if(items.begin(), items.end(), [&](const Value& x) {
                auto e = py_eq(x, a[0]);
                return e && *e;
            });
            if (it != items.end()) items.erase(it);
        } else if (m == "clear") {
            items.clear();
        } else if (m == "insert" && a.size() == 2 && a[0].is_int()) {
            auto at = std::clamp<std::int64_t>(a[0].as_int(), 0, static_cast<std::int64_t>(items.size()));
            items.insert(items.begin() + at, a[1]);
        } else {
            return unknown(fmt::format("{} with arguments the linter does not model", m));
        }
        return Value::list(std::move(items));
    }
};

}  // namespace

std::optional<Outcome> run_steps(const Program& program, const std::function<const Value*(std::string_view)>& field,
                                 const JobFacts& facts) {
    if (program.steps.empty()) return std::nullopt;
    Executor ex(program, field, facts);
    return ex.run_steps();
}

std::optional<Outcome> run(const Program& program, std::string_view class_name,
                           const std::function<const Value*(std::string_view)>& field, const JobFacts& facts) {
    auto entry = program.entries.find(class_name);
    if (entry == program.entries.end()) return std::nullopt;
    auto fn = program.functions.find(entry->second);
    if (fn == program.functions.end()) return std::nullopt;
    Executor ex(program, field, facts);
    return ex.run(fn->second);
}

}  // namespace mbl::post_init
