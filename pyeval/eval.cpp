// Expressions and calls of the abstract evaluator: private copies of shared values, iteration, literals, operators,
// comparisons, strings, subscripts, comprehensions and lambdas; arguments, and calls of functions of the source root
// with their parameters bound. Calls of classes and outside names go to objects.cpp, of builtins to builtins.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "pyeval/builtins.hpp"
#include "pyeval/interpreter.hpp"

namespace mbl::py {

// ---------------------------------------------------------------------------------------------------------------
// Copies of shared values

Val Interp::thaw(const Val& v) {
    if (!v.is_obj() || !copied_when_shared(v.o->kind)) return v;
    return thaw_inner(v);
}

Val Interp::thaw_inner(const Val& v) {
    if (auto it = thawed_.find(v.o.get()); it != thawed_.end()) {
        Val out = v;
        out.o = it->second;
        return out;
    }
    ObjPtr copy = copy_object(
        v.o, [this](const Object* src, const ObjPtr& c) { thawed_[src] = c; },
        [this](const Val& item) { return thaw(item); }, [](const SetInfo& info) { return info; });
    if (copy == v.o) return v;  // a builtin bound to nothing
    copy->epoch = 0;            // a copy stands for state that existed before any branch: always journaled
    Val out = v;
    out.o = copy;
    return out;
}

Val Interp::make_list(std::vector<Val> items, ObjKind kind, Loc at) {
    auto l = std::make_shared<SeqObj>(kind);
    if (!charge_bytes(items.size() * sizeof(Val), at, /*one_value=*/false)) {
        l->unknown = "the evaluation budget of the recipe is spent";
    } else if (limit_items(items.size())) {
        l->unknown = "the list is too long for the linter";
    } else {
        l->items = std::move(items);
    }
    return Val::obj(l, at);
}

std::optional<std::vector<Val>> Interp::iterate(const Val& v, std::string& reason) {
    if (v.is_unknown()) {
        reason = v.reason();
        return std::nullopt;
    }
    if (v.is_obj(ObjKind::List) || v.is_obj(ObjKind::Tuple) || v.is_obj(ObjKind::Set)) {
        auto* s = v.as<SeqObj>();
        if (!s->unknown.empty()) {
            reason = s->unknown;
            return std::nullopt;
        }
        return s->items;
    }
    if (v.is_obj(ObjKind::Dict)) {
        auto* d = v.as<DictObj>();
        if (!d->unknown.empty()) {
            reason = d->unknown;
            return std::nullopt;
        }
        std::vector<Val> keys;
        for (const auto& kv : d->items) keys.push_back(kv.first);
        return keys;
    }
    if (v.is_str()) {
        std::vector<Val> chars;
        for (char c : v.s) chars.push_back(Val::str(std::string(1, c), v.at));
        return chars;
    }
    reason = fmt::format("{}, which the linter cannot iterate", type_name(v));
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------------------------
// Expressions

Val Interp::eval(Frame& f, NodeId e) {
    if (e == kNoNode) return Val::none();
    if (++steps_ > project_.limits().max_steps) return Val::unknown("the evaluation budget of the recipe is spent");
    if (expr_depth_ >= project_.limits().max_expr_depth)
        return Val::unknown("the expression is nested too deeply", loc(f, e));
    if (++expr_depth_ > expr_depth_peak_) expr_depth_peak_ = expr_depth_;
    Val v = eval_inner(f, e);
    --expr_depth_;
    return v;
}

static std::optional<std::int64_t> parse_int(std::string_view text) {
    std::string digits;
    for (char c : text)
        if (c != '_') digits += c;
    if (digits.empty() || digits.back() == 'j' || digits.back() == 'J' || digits.back() == 'l' || digits.back() == 'L')
        return std::nullopt;
    int base = 10;
    std::string body = digits;
    if (digits.size() > 2 && digits[0] == '0') {
        char p = static_cast<char>(std::tolower(digits[1]));
        if (p == 'x') base = 16;
        else if (p == 'o') base = 8;
        else if (p == 'b') base = 2;
        if (base != 10) body = digits.substr(2);
    }
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(body.c_str(), &end, base);
    if (errno == ERANGE || !end || *end != '\0') return std::nullopt;
    return static_cast<std::int64_t>(v);
}

Val Interp::eval_inner(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    Loc at = loc(f, e);
    switch (a.kind(e)) {
        case Kind::Identifier: return lookup(f, std::string(a.source(e)), at);
        case Kind::Integer: {
            auto v = parse_int(a.source(e));
            return v ? Val::integer(*v, at) : Val::unknown("an integer literal the linter does not model", at);
        }
        case Kind::Float: return eval_float(a.source(e), at);
        case Kind::True: return Val::boolean(true, at);
        case Kind::False: return Val::boolean(false, at);
        case Kind::None: return Val::none(at);
        case Kind::Ellipsis: return Val::obj(std::make_shared<ExternalObj>("Ellipsis"), at);
        case Kind::String:
        case Kind::ConcatenatedString: return eval_string(f, e);
        case Kind::Attribute: {
            Val obj = eval(f, a.field(e, Field::Object));
            return get_attr(f, obj, std::string(a.source(a.field(e, Field::AttributeName))), at);
        }
        case Kind::Subscript: return eval_subscript(f, e);
        case Kind::Call: return eval_call(f, e);
        case Kind::List:
        case Kind::Tuple:
        case Kind::Set:
        case Kind::ExpressionList:
        case Kind::PatternList: return eval_sequence(f, e);
        case Kind::Dictionary: return eval_dict(f, e);
        case Kind::ParenthesizedExpression: {
            auto kids = a.named_kids(e);
            return kids.empty() ? Val::none(at) : eval(f, kids[0]);
        }
        case Kind::BinaryOperator: return eval_binary(f, e);
        case Kind::UnaryOperator: return eval_unary(f, e);
        case Kind::NotOperator: {
            auto t = truthy(eval(f, a.field(e, Field::Argument)));
            return t ? Val::boolean(!*t, at) : Val::unknown("the negated value is unknown", at);
        }
        case Kind::BooleanOperator: return eval_boolean(f, e);
        case Kind::ComparisonOperator: return eval_compare(f, e);
        case Kind::ConditionalExpression: return eval_conditional(f, e);
        case Kind::Lambda: return eval_lambda(f, e);
        case Kind::ListComprehension:
        case Kind::SetComprehension:
        case Kind::DictionaryComprehension:
        case Kind::GeneratorExpression: return eval_comprehension(f, e);
        case Kind::NamedExpression: {
            Val v = eval(f, a.field(e, Field::Value));
            bind(f, std::string(a.source(a.field(e, Field::Name))), v);
            return v;
        }
        case Kind::KeywordArgument: return eval(f, a.field(e, Field::Value));
        default:
            return Val::unknown(
                fmt::format("Python syntax the linter does not evaluate ({})", a.source(e).substr(0, 40)), at);
    }
}

Val Interp::eval_float(std::string_view literal, Loc at) {
    std::string text;
    for (char c : literal)
        if (c != '_') text += c;
    if (!text.empty() && (text.back() == 'j' || text.back() == 'J')) return Val::unknown("a complex number", at);
    return Val::floating(std::strtod(text.c_str(), nullptr), at);
}

Val Interp::eval_sequence(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    std::vector<Val> items;
    std::string unknown;
    collect_sequence(f, e, items, unknown);
    ObjKind kind = a.kind(e) == Kind::List ? ObjKind::List : a.kind(e) == Kind::Set ? ObjKind::Set : ObjKind::Tuple;
    if (kind == ObjKind::Set) {
        std::vector<Val> unique;
        for (auto& item : items) {
            bool dup = false;
            for (const auto& u : unique) dup |= py_equal(u, item) == true;
            if (!dup) unique.push_back(std::move(item));
        }
        items = std::move(unique);
    }
    Val out = make_list(std::move(items), kind, loc(f, e));
    if (!unknown.empty()) out.as<SeqObj>()->unknown = unknown;
    return out;
}

Val Interp::eval_dict(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    auto d = std::make_shared<DictObj>();
    for (NodeId k : a.named_kids(e)) {
        if (a.kind(k) == Kind::DictionarySplat) {
            splat_into(f, k, *d, loc(f, e));
            continue;
        }
        if (a.kind(k) != Kind::Pair) continue;
        Val key = eval(f, a.field(k, Field::Key));
        Val value = eval(f, a.field(k, Field::Value));
        if (key.is_unknown()) {
            d->unknown = "a key is unknown: " + key.reason();
            continue;
        }
        charge_comparisons(d->items.size());
        set_item(*d, std::move(key), std::move(value));
    }
    return Val::obj(d, loc(f, e));
}

void Interp::splat_into(Frame& f, NodeId splat, DictObj& d, Loc at) {
    Val src = eval(f, ast(f).first_named(splat));
    if (!src.is_obj(ObjKind::Dict) || !src.as<DictObj>()->unknown.empty()) {
        d.unknown = src.is_unknown() ? src.reason() : "unpacks a value that is not a known dict";
        return;
    }
    if (!charge_bytes(src.as<DictObj>()->items.size() * 2 * sizeof(Val), at, false) || out_of_budget()) {
        d.unknown = "the evaluation budget of the recipe is spent";
        return;
    }
    for (const auto& [key, value] : src.as<DictObj>()->items) {
        if (out_of_budget()) break;
        charge_comparisons(d.items.size());
        set_item(d, key, value);
    }
}

Val Interp::eval_unary(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    const Loc at = loc(f, e);
    Val v = eval(f, a.field(e, Field::Argument));
    std::string_view op = a.source(a.field(e, Field::Operator));
    if (v.is_unknown()) return v;
    if (op == "-") {
        if (v.is_int() && v.as_int() != INT64_MIN) return Val::integer(-v.as_int(), at);
        if (v.is_float()) return Val::floating(-v.d, at);
    } else if (op == "+") {
        if (v.is_number()) return v;
    } else if (op == "~" && v.is_int()) {
        return Val::integer(~v.as_int(), at);
    }
    return Val::unknown(fmt::format("unary {} on {}", op, type_name(v)), at);
}

Val Interp::eval_boolean(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    Val left = eval(f, a.field(e, Field::Left));
    std::string_view op = a.source(a.field(e, Field::Operator));
    auto t = truthy(left);
    if (t) {
        if ((op == "and" && !*t) || (op == "or" && *t)) return left;
        return eval(f, a.field(e, Field::Right));
    }
    Val right = eval(f, a.field(e, Field::Right));
    if (same_val(left, right)) return left;
    return Val::unknown(left.is_unknown() ? left.reason() : "an operand of `" + std::string(op) + "` is unknown",
                        loc(f, e));
}

Val Interp::eval_conditional(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    const Loc at = loc(f, e);
    auto kids = a.named_kids(e);
    if (kids.size() < 3) return Val::unknown("incomplete conditional expression", at);
    auto t = truthy(eval(f, kids[1]));
    if (t) return eval(f, *t ? kids[0] : kids[2]);
    Val x = eval(f, kids[0]), y = eval(f, kids[2]);
    if (same_val(x, y)) return x;
    return Val::unknown(fmt::format("depends on the condition at {}:{}", *at.file, at.line), at);
}

void Interp::collect_sequence(Frame& f, NodeId node, std::vector<Val>& out, std::string& unknown) {
    const Ast& a = ast(f);
    for (NodeId k : a.named_kids(node)) {
        Kind kind = a.kind(k);
        if (kind == Kind::ListSplat || kind == Kind::ListSplatPattern) {
            Val src = eval(f, a.first_named(k));
            std::string reason;
            auto items = iterate(src, reason);
            if (!items) {
                unknown = "unpacks " + reason;
                continue;
            }
            out.insert(out.end(), items->begin(), items->end());
        } else if (kind == Kind::Other && a.source(k).rfind("(*", 0) == 0) {
            unknown = "unpacks a parenthesized value";
        } else {
            out.push_back(eval(f, k));
        }
    }
}

// Appends `s` with its escapes decoded; the runs between backslashes are copied whole (a docstring has few or none).
static void append_decoded(std::string& out, std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const std::size_t slash = s.find('\\', i);
        if (slash == std::string_view::npos || slash + 1 == s.size()) {  // a backslash at the end stays one
            out.append(s.substr(i));
            return;
        }
        out.append(s.substr(i, slash - i));
        i = slash + 1;
        const char c = s[i];
        switch (c) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'r': out += '\r'; break;
            case '0': out += '\0'; break;
            case '\\': out += '\\'; break;
            case '\'': out += '\''; break;
            case '"': out += '"'; break;
            case '\n': break;  // line continuation inside a string
            case 'x':
                if (i + 2 < s.size()) {
                    out += static_cast<char>(std::strtol(std::string(s.substr(i + 1, 2)).c_str(), nullptr, 16));
                    i += 2;
                }
                break;
            default: out += '\\'; out += c;
        }
        ++i;
    }
}

Val Interp::eval_string(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    Loc at = loc(f, e);
    if (a.kind(e) == Kind::ConcatenatedString) {
        std::string out;
        for (NodeId k : a.named_kids(e)) {
            Val part = eval_string(f, k);
            if (!part.is_str()) return part;
            out += part.s;
        }
        return Val::str(std::move(out), at);
    }
    std::string prefix;
    std::string out;
    bool raw = false, fstring = false;
    for (std::uint32_t i = 0; i < a.count(e); ++i) {
        NodeId k = a.kid(e, i);
        switch (a.kind(k)) {
            case Kind::StringStart: {
                for (char c : a.source(k)) {
                    if (c == '"' || c == '\'') break;
                    char l = static_cast<char>(std::tolower(c));
                    raw |= l == 'r';
                    fstring |= l == 'f';
                }
                break;
            }
            case Kind::StringContent: {
                const std::string_view source = a.source(k);
                if (!fstring) {
                    if (raw) out.append(source);
                    else append_decoded(out, source);
                    break;
                }
                std::string unescaped;
                for (size_t j = 0; j < source.size(); ++j) {
                    unescaped += source[j];
                    if ((source[j] == '{' || source[j] == '}') && j + 1 < source.size() && source[j + 1] == source[j])
                        ++j;
                }
                if (raw) out += unescaped;
                else append_decoded(out, unescaped);
                break;
            }
            case Kind::Interpolation: {
                if (a.field(k, Field::FormatSpec) != kNoNode || a.field(k, Field::Type) != kNoNode)
                    return Val::unknown("an f-string with a format specification", at);
                Val v = eval(f, a.field(k, Field::Expression));
                if (v.is_unknown()) return Val::unknown("an f-string with an unknown part: " + v.reason(), at);
                if (v.is_obj() && !v.is_obj(ObjKind::List) && !v.is_obj(ObjKind::Tuple) && !v.is_obj(ObjKind::Dict))
                    return Val::unknown("an f-string formatting an object", at);
                out += py_str(v);
                break;
            }
            default: break;
        }
    }
    if (limit_items(out.size())) return Val::unknown("the string is too long for the linter", at);
    if (!charge_bytes(out.size(), at)) return Val::unknown("the evaluation budget of the recipe is spent", at);
    return Val::str(std::move(out), at);
}

static std::optional<std::int64_t> checked(std::int64_t a, std::int64_t b, char op) {
    std::int64_t r = 0;
    bool overflow = false;
    switch (op) {
        case '+': overflow = __builtin_add_overflow(a, b, &r); break;
        case '-': overflow = __builtin_sub_overflow(a, b, &r); break;
        case '*': overflow = __builtin_mul_overflow(a, b, &r); break;
        default: return std::nullopt;
    }
    if (overflow) return std::nullopt;
    return r;
}

static std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

constexpr const char* kIntegerOverflow = "an integer too large for the linter";

static Val integer_power(std::int64_t x, std::int64_t y, Loc at) {
    if (y < 0) return Val::floating(std::pow(double(x), double(y)), at);
    std::int64_t result = 1;
    for (std::int64_t i = 0; i < y; ++i) {
        auto v = checked(result, x, '*');
        if (!v) return Val::unknown(kIntegerOverflow, at);
        result = *v;
        if (result == 0 || result == 1) break;
    }
    return Val::integer(result, at);
}

// Python's integer arithmetic, in 64 bits: what overflows them is unknown.
static std::optional<Val> integer_op(const std::string& op, std::int64_t x, std::int64_t y, Loc at) {
    if (op == "+" || op == "-" || op == "*") {
        auto v = checked(x, y, op[0]);
        return v ? Val::integer(*v, at) : Val::unknown(kIntegerOverflow, at);
    }
    if (op == "/") return y == 0 ? Val::unknown("division by zero", at) : Val::floating(double(x) / double(y), at);
    if ((op == "//" || op == "%") && x == INT64_MIN && y == -1) return Val::unknown(kIntegerOverflow, at);
    if (op == "//") return y == 0 ? Val::unknown("division by zero", at) : Val::integer(floor_div(x, y), at);
    if (op == "%") return y == 0 ? Val::unknown("division by zero", at) : Val::integer(x - floor_div(x, y) * y, at);
    if (op == "**") return integer_power(x, y, at);
    if (op == "&") return Val::integer(x & y, at);
    if (op == "|") return Val::integer(x | y, at);
    if (op == "^") return Val::integer(x ^ y, at);
    if (op == "<<") {
        if (y < 0 || y > 62 || x > (INT64_MAX >> y) || x < -(INT64_MAX >> y)) return Val::unknown(kIntegerOverflow, at);
        return Val::integer(static_cast<std::int64_t>(static_cast<std::uint64_t>(x) << y), at);
    }
    if (op == ">>")
        return y < 0 ? Val::unknown("negative shift", at) : Val::integer(x >> std::min<std::int64_t>(y, 63), at);
    return std::nullopt;
}

static std::optional<Val> float_op(const std::string& op, double x, double y, Loc at) {
    if (op == "+") return Val::floating(x + y, at);
    if (op == "-") return Val::floating(x - y, at);
    if (op == "*") return Val::floating(x * y, at);
    if (op == "/") return y == 0 ? Val::unknown("division by zero", at) : Val::floating(x / y, at);
    if (op == "//") return y == 0 ? Val::unknown("division by zero", at) : Val::floating(std::floor(x / y), at);
    if (op == "%") return y == 0 ? Val::unknown("division by zero", at) : Val::floating(x - std::floor(x / y) * y, at);
    if (op == "**") return Val::floating(std::pow(x, y), at);
    return std::nullopt;
}

Val Interp::binary_op(const std::string& op, const Val& l, const Val& r, Loc at) {
    if (l.is_unknown()) return Val::unknown(l.reason(), l.at.valid() ? l.at : at);
    if (r.is_unknown()) return Val::unknown(r.reason(), r.at.valid() ? r.at : at);
    if (l.is_int() && r.is_int())
        if (auto v = integer_op(op, l.as_int(), r.as_int(), at)) return *v;
    if (l.is_number() && r.is_number())
        if (auto v = float_op(op, l.as_number(), r.as_number(), at)) return *v;
    if (auto v = str_op(op, l, r, at)) return *v;
    if (auto v = sequence_op(op, l, r, at)) return *v;
    if (auto v = container_op(op, l, r, at)) return *v;
    return Val::unknown(fmt::format("`{}` between {} and {}", op, type_name(l), type_name(r)), at);
}

// str + str, str * int.
std::optional<Val> Interp::str_op(const std::string& op, const Val& l, const Val& r, Loc at) {
    if (l.is_str() && r.is_str() && op == "+") {
        if (limit_items(l.s.size() + r.s.size())) return Val::unknown("the string is too long for the linter", at);
        if (!charge_bytes(l.s.size() + r.s.size(), at))
            return Val::unknown("the evaluation budget of the recipe is spent", at);
        return Val::str(l.s + r.s, at);
    }
    if (op != "*" || !((l.is_str() && r.is_int()) || (l.is_int() && r.is_str()))) return std::nullopt;
    const std::string& s = l.is_str() ? l.s : r.s;
    std::int64_t n = l.is_str() ? r.as_int() : l.as_int();
    if (n <= 0) return Val::str("", at);
    if (limit_items(s.size() * static_cast<std::size_t>(n)) || n > 1'000'000)
        return Val::unknown("the string is too long for the linter", at);
    if (!charge_bytes(s.size() * static_cast<std::size_t>(n), at))
        return Val::unknown("the evaluation budget of the recipe is spent", at);
    std::string out;
    for (std::int64_t i = 0; i < n; ++i) out += s;
    return Val::str(std::move(out), at);
}

// list + list, tuple + tuple, list * int, tuple * int.
std::optional<Val> Interp::sequence_op(const std::string& op, const Val& l, const Val& r, Loc at) {
    auto seq = [](const Val& v) { return v.is_obj(ObjKind::List) || v.is_obj(ObjKind::Tuple); };
    if (seq(l) && seq(r) && op == "+" && l.o->kind == r.o->kind) {
        auto* x = l.as<SeqObj>();
        auto* y = r.as<SeqObj>();
        if (!x->unknown.empty() || !y->unknown.empty())
            return Val::unknown(!x->unknown.empty() ? x->unknown : y->unknown, at);
        std::vector<Val> items = x->items;
        items.insert(items.end(), y->items.begin(), y->items.end());
        return make_list(std::move(items), l.o->kind, at);
    }
    if (op != "*" || !((seq(l) && r.is_int()) || (l.is_int() && seq(r)))) return std::nullopt;
    const Val& s = seq(l) ? l : r;
    std::int64_t n = seq(l) ? r.as_int() : l.as_int();
    auto* x = s.as<SeqObj>();
    if (!x->unknown.empty()) return Val::unknown(x->unknown, at);
    if (n <= 0) return make_list({}, s.o->kind, at);
    if (limit_items(x->items.size() * static_cast<std::size_t>(std::min<std::int64_t>(n, 1'000'000'000))) ||
        n > 1'000'000)
        return Val::unknown("the list is too long for the linter", at);
    std::vector<Val> items;
    items.reserve(x->items.size() * static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) items.insert(items.end(), x->items.begin(), x->items.end());
    return make_list(std::move(items), s.o->kind, at);
}

// dict | dict; set | set, set & set, set - set.
std::optional<Val> Interp::container_op(const std::string& op, const Val& l, const Val& r, Loc at) {
    if (l.is_obj(ObjKind::Dict) && r.is_obj(ObjKind::Dict) && op == "|") {
        auto d = std::make_shared<DictObj>();
        auto* x = l.as<DictObj>();
        auto* y = r.as<DictObj>();
        d->unknown = !x->unknown.empty() ? x->unknown : y->unknown;
        d->items = x->items;
        for (const auto& [k, v] : y->items) set_item(*d, k, v);
        return Val::obj(d, at);
    }
    if (!l.is_obj(ObjKind::Set) || !r.is_obj(ObjKind::Set) || (op != "|" && op != "&" && op != "-"))
        return std::nullopt;
    auto* x = l.as<SeqObj>();
    auto* y = r.as<SeqObj>();
    if (!x->unknown.empty() || !y->unknown.empty()) return Val::unknown("a set with unknown contents", at);
    auto in = [](const SeqObj* s, const Val& v) {
        for (const auto& i : s->items)
            if (py_equal(i, v) == true) return true;
        return false;
    };
    std::vector<Val> items;
    if (op == "|") {
        items = x->items;
        for (const auto& v : y->items)
            if (!in(x, v)) items.push_back(v);
    } else {
        for (const auto& v : x->items)
            if (in(y, v) == (op == "&")) items.push_back(v);
    }
    return make_list(std::move(items), ObjKind::Set, at);
}

Val Interp::eval_binary(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    Val l = eval(f, a.field(e, Field::Left));
    Val r = eval(f, a.field(e, Field::Right));
    return binary_op(std::string(a.source(a.field(e, Field::Operator))), l, r, loc(f, e));
}

static std::optional<bool> compare(const std::string& op, const Val& l, const Val& r) {
    if (op == "==") return py_equal(l, r);
    if (op == "!=") {
        auto eq = py_equal(l, r);
        return eq ? std::optional<bool>(!*eq) : std::nullopt;
    }
    if (op == "is" || op == "is not") {
        std::optional<bool> same;
        if (l.is_unknown() || r.is_unknown()) same = std::nullopt;
        else if (l.is_none() || r.is_none()) same = l.is_none() && r.is_none();
        else if (l.is_obj() && r.is_obj())
            same = l.o == r.o                                                     ? std::optional<bool>(true)
                   : (l.is_obj(ObjKind::External) || r.is_obj(ObjKind::External)) ? std::nullopt
                                                                                  : std::optional<bool>(false);
        else if (l.is_bool() && r.is_bool()) same = l.b == r.b;
        else same = py_equal(l, r);
        if (!same) return std::nullopt;
        return op == "is" ? *same : !*same;
    }
    if (op == "in" || op == "not in") {
        std::optional<bool> found;
        if (r.is_str() && l.is_str()) {
            found = r.s.find(l.s) != std::string::npos;
        } else if (r.is_obj(ObjKind::List) || r.is_obj(ObjKind::Tuple) || r.is_obj(ObjKind::Set) ||
                   r.is_obj(ObjKind::Dict)) {
            bool unknown = false;
            found = false;
            auto check = [&](const Val& item) {
                auto eq = py_equal(item, l);
                if (!eq) unknown = true;
                else if (*eq) found = true;
            };
            if (r.is_obj(ObjKind::Dict)) {
                auto* d = r.as<DictObj>();
                unknown |= !d->unknown.empty();
                for (const auto& kv : d->items) check(kv.first);
            } else {
                auto* s = r.as<SeqObj>();
                unknown |= !s->unknown.empty();
                for (const auto& item : s->items) check(item);
            }
            if (!*found && unknown) found = std::nullopt;
        }
        if (!found) return std::nullopt;
        return op == "in" ? *found : !*found;
    }
    if (l.is_number() && r.is_number()) {
        double x = l.as_number(), y = r.as_number();
        if (op == "<") return x < y;
        if (op == "<=") return x <= y;
        if (op == ">") return x > y;
        if (op == ">=") return x >= y;
    }
    if (l.is_str() && r.is_str()) {
        if (op == "<") return l.s < r.s;
        if (op == "<=") return l.s <= r.s;
        if (op == ">") return l.s > r.s;
        if (op == ">=") return l.s >= r.s;
    }
    return std::nullopt;
}

Val Interp::eval_compare(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    Loc at = loc(f, e);
    std::vector<NodeId> operands;
    std::vector<std::string> ops;
    for (std::uint32_t i = 0; i < a.count(e); ++i) {
        NodeId k = a.kid(e, i);
        if (a.kind(k) == Kind::Operator) {
            std::string op;
            for (char c : a.source(k)) {
                if (c == ' ' || c == '\t' || c == '\n') {
                    if (!op.empty() && op.back() != ' ') op += ' ';
                } else {
                    op += c;
                }
            }
            ops.push_back(op);
        } else {
            operands.push_back(k);
        }
    }
    if (operands.empty()) return Val::unknown("empty comparison", at);
    Val left = eval(f, operands[0]);
    bool unknown = false;
    std::string reason;
    for (size_t i = 0; i < ops.size() && i + 1 < operands.size(); ++i) {
        Val right = eval(f, operands[i + 1]);
        auto r = compare(ops[i], left, right);
        if (!r) {
            unknown = true;
            if (reason.empty())
                reason = left.is_unknown()    ? left.reason()
                         : right.is_unknown() ? right.reason()
                                              : "a comparison the linter cannot decide";
        } else if (!*r) {
            return Val::boolean(false, at);
        }
        left = std::move(right);
    }
    if (unknown) return Val::unknown(reason, at);
    return Val::boolean(true, at);
}

// Splits a slice's text at its top-level colons and tells which part each expression fills.
static std::array<NodeId, 3> slice_parts(const Ast& a, NodeId slice) {
    std::array<NodeId, 3> parts{kNoNode, kNoNode, kNoNode};
    std::string_view text = a.source(slice);
    std::vector<std::uint32_t> colons;
    int depth = 0;
    char quote = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (quote) {
            if (c == quote) quote = 0;
            continue;
        }
        if (c == '"' || c == '\'') quote = c;
        else if (c == '(' || c == '[' || c == '{') ++depth;
        else if (c == ')' || c == ']' || c == '}') --depth;
        else if (c == ':' && depth == 0) colons.push_back(a[slice].start + static_cast<std::uint32_t>(i));
    }
    for (NodeId k : a.named_kids(slice)) {
        size_t part = 0;
        while (part < colons.size() && a[k].start > colons[part]) ++part;
        if (part < 3) parts[part] = k;
    }
    return parts;
}

Val Interp::eval_subscript(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    Loc at = loc(f, e);
    Val container = eval(f, a.field(e, Field::Value));
    std::vector<NodeId> subs;
    for (std::uint32_t i = 0; i < a.count(e); ++i)
        if (a[a.kid(e, i)].field == Field::Subscript) subs.push_back(a.kid(e, i));
    if (subs.empty()) return Val::unknown("empty subscript", at);
    // Generic aliases (Optional[int], Base[T]) stand for the class itself.
    if (container.is_obj(ObjKind::Class) || container.is_obj(ObjKind::External)) return container;
    if (container.is_unknown()) return container;
    if (subs.size() == 1 && a.kind(subs[0]) == Kind::Slice) {
        auto parts = slice_parts(a, subs[0]);
        std::optional<std::int64_t> bounds[3];
        for (int i = 0; i < 3; ++i) {
            if (parts[i] == kNoNode) continue;
            Val b = eval(f, parts[i]);
            if (b.is_none()) continue;
            if (!b.is_int()) return Val::unknown("a slice with unknown bounds", at);
            bounds[i] = b.as_int();
        }
        std::int64_t step = bounds[2].value_or(1);
        if (step == 0) return Val::unknown("a slice step of zero", at);
        auto take = [&](std::int64_t n, const std::function<void(std::int64_t)>& emit) {
            auto norm = [&](std::optional<std::int64_t> v, std::int64_t dflt) {
                if (!v) return dflt;
                std::int64_t x = *v < 0 ? *v + n : *v;
                if (step > 0) return std::clamp<std::int64_t>(x, 0, n);
                return std::clamp<std::int64_t>(x, -1, n - 1);
            };
            std::int64_t start = norm(bounds[0], step > 0 ? 0 : n - 1);
            std::int64_t stop = norm(bounds[1], step > 0 ? n : -1);
            for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) emit(i);
        };
        if (container.is_str()) {
            std::string out;
            take(static_cast<std::int64_t>(container.s.size()), [&](std::int64_t i) { out += container.s[size_t(i)]; });
            return Val::str(std::move(out), at);
        }
        if (container.is_obj(ObjKind::List) || container.is_obj(ObjKind::Tuple)) {
            auto* s = container.as<SeqObj>();
            if (!s->unknown.empty()) return Val::unknown(s->unknown, at);
            std::vector<Val> out;
            take(static_cast<std::int64_t>(s->items.size()),
                 [&](std::int64_t i) { out.push_back(s->items[size_t(i)]); });
            return make_list(std::move(out), container.o->kind, at);
        }
        return Val::unknown(fmt::format("slicing {}", type_name(container)), at);
    }
    Val key;
    if (subs.size() == 1) {
        key = eval(f, subs[0]);
    } else {
        std::vector<Val> items;
        for (NodeId s : subs) items.push_back(eval(f, s));
        key = make_list(std::move(items), ObjKind::Tuple, at);
    }
    if (key.is_unknown()) return Val::unknown(key.reason(), at);
    if (container.is_obj(ObjKind::Dict)) {
        auto* d = container.as<DictObj>();
        for (const auto& [k, v] : d->items) {
            auto eq = py_equal(k, key);
            if (!eq) return Val::unknown("a dict key comparison the linter cannot decide", at);
            if (*eq) return v;
        }
        if (!d->unknown.empty()) return Val::unknown(d->unknown, at);
        return Val::unknown(fmt::format("the key {} is not in the dict", repr(key)), at);
    }
    if ((container.is_obj(ObjKind::List) || container.is_obj(ObjKind::Tuple)) && key.is_int()) {
        auto* s = container.as<SeqObj>();
        if (!s->unknown.empty()) return Val::unknown(s->unknown, at);
        std::int64_t n = static_cast<std::int64_t>(s->items.size());
        std::int64_t i = key.as_int() < 0 ? key.as_int() + n : key.as_int();
        if (i < 0 || i >= n) return Val::unknown("index out of range", at);
        return s->items[static_cast<size_t>(i)];
    }
    if (container.is_str() && key.is_int()) {
        std::int64_t n = static_cast<std::int64_t>(container.s.size());
        std::int64_t i = key.as_int() < 0 ? key.as_int() + n : key.as_int();
        if (i < 0 || i >= n) return Val::unknown("index out of range", at);
        return Val::str(std::string(1, container.s[static_cast<size_t>(i)]), at);
    }
    return Val::unknown(fmt::format("indexing {}", type_name(container)), at);
}

Val Interp::eval_comprehension(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    Loc at = loc(f, e);
    NodeId body = a.field(e, Field::Body);
    std::vector<NodeId> clauses;
    for (NodeId k : a.named_kids(e))
        if (a.kind(k) == Kind::ForInClause || a.kind(k) == Kind::IfClause) clauses.push_back(k);
    Frame inner = f;
    inner.locals = std::make_shared<Env>();
    inner.locals->owner = id_;
    inner.locals->parent = f.locals;
    inner.class_body = false;
    std::vector<Val> items;
    std::vector<std::pair<Val, Val>> pairs;
    std::string failure;
    const bool is_dict = a.kind(e) == Kind::DictionaryComprehension;
    std::function<void(size_t)> gen = [&](size_t i) {
        if (!failure.empty()) return;
        if (out_of_budget()) {
            failure = "the evaluation budget of the recipe is spent";
            return;
        }
        if (i == clauses.size()) {
            if (is_dict) {
                Val k = eval(inner, a.field(body, Field::Key));
                if (k.is_unknown()) {
                    failure = k.reason();
                    return;
                }
                pairs.emplace_back(k, eval(inner, a.field(body, Field::Value)));
            } else {
                items.push_back(eval(inner, body));
            }
            if (limit_items(items.size() + pairs.size())) failure = "too many elements for the linter";
            return;
        }
        NodeId c = clauses[i];
        if (a.kind(c) == Kind::ForInClause) {
            std::string reason;
            // Only the first iterable is evaluated outside the comprehension's scope.
            Val src = eval(i == 0 ? f : inner, a.field(c, Field::Right));
            auto values = iterate(src, reason);
            if (!values) {
                failure = reason;
                return;
            }
            SetInfo info = store_info(inner);
            for (auto& v : *values) {
                assign_target(inner, a.field(c, Field::Left), v, info);
                gen(i + 1);
                if (!failure.empty()) return;
            }
        } else {
            auto kids = a.named_kids(c);
            auto t = kids.empty() ? std::optional<bool>(true) : truthy(eval(inner, kids[0]));
            if (!t) {
                failure = "a filter condition is unknown";
                return;
            }
            if (*t) gen(i + 1);
        }
    };
    gen(0);
    if (!failure.empty()) return Val::unknown("a comprehension over " + failure, at);
    if (is_dict) {
        auto d = std::make_shared<DictObj>();
        if (!charge_bytes(pairs.size() * 2 * sizeof(Val), at, /*one_value=*/false))
            return Val::unknown("the evaluation budget of the recipe is spent", at);
        for (auto& [k, v] : pairs) {
            if (out_of_budget()) return Val::unknown("the evaluation budget of the recipe is spent", at);
            charge_comparisons(d->items.size());
            set_item(*d, std::move(k), std::move(v));
        }
        return Val::obj(d, at);
    }
    ObjKind kind = a.kind(e) == Kind::SetComprehension      ? ObjKind::Set
                   : a.kind(e) == Kind::GeneratorExpression ? ObjKind::Tuple
                                                            : ObjKind::List;
    return make_list(std::move(items), kind, at);
}

Val Interp::eval_lambda(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    auto fn = std::make_shared<FunctionObj>();
    fn->module = f.module;
    fn->def = e;
    fn->body = a.field(e, Field::Body);
    fn->name = "<lambda>";
    fn->qualname = f.module->name + ".<lambda>";
    fn->is_lambda = true;
    fn->closure = f.class_body ? (f.locals ? f.locals->parent : nullptr) : f.locals;
    fn->params = read_params(a, a.field(e, Field::Parameters), [&](NodeId d) { return eval(f, d); });
    return Val::obj(fn, loc(f, e));
}

// ---------------------------------------------------------------------------------------------------------------
// Calls

const Val* call_arg(const CallArgs& args, std::size_t pos, std::initializer_list<const char*> names) {
    if (pos < args.pos.size()) return &args.pos[pos];
    for (const auto& [k, v] : args.kw)
        for (const char* n : names)
            if (k == n) return &v;
    return nullptr;
}

CallArgs Interp::eval_args(Frame& f, NodeId arglist) {
    CallArgs args;
    if (arglist == kNoNode) return args;
    const Ast& a = ast(f);
    if (a.kind(arglist) == Kind::GeneratorExpression) {
        args.pos.push_back(eval(f, arglist));
        return args;
    }
    for (NodeId k : a.named_kids(arglist)) {
        switch (a.kind(k)) {
            case Kind::KeywordArgument:
                args.kw.emplace_back(std::string(a.source(a.field(k, Field::Name))), eval(f, a.field(k, Field::Value)));
                args.kw_locs.push_back(loc(f, k));
                break;
            case Kind::ListSplat: {
                std::string reason;
                auto items = iterate(eval(f, a.first_named(k)), reason);
                if (items) args.pos.insert(args.pos.end(), items->begin(), items->end());
                else args.unknown = "*args " + reason;
                break;
            }
            case Kind::DictionarySplat: {
                Val d = eval(f, a.first_named(k));
                if (d.is_obj(ObjKind::Dict) && d.as<DictObj>()->unknown.empty()) {
                    for (const auto& [key, value] : d.as<DictObj>()->items) {
                        if (!key.is_str()) {
                            args.unknown = "**kwargs with a key that is not a string";
                            continue;
                        }
                        args.kw.emplace_back(key.s, value);
                        args.kw_locs.push_back(loc(f, k));
                    }
                } else {
                    args.unknown = d.is_unknown() ? "**kwargs: " + d.reason() : "**kwargs of an unknown mapping";
                }
                break;
            }
            default: args.pos.push_back(eval(f, k)); break;
        }
    }
    return args;
}

Val Interp::eval_call(Frame& f, NodeId e) {
    const Ast& a = ast(f);
    Val callee = eval(f, a.field(e, Field::Function));
    CallArgs args = eval_args(f, a.field(e, Field::Arguments));
    return call(f, callee, std::move(args), loc(f, e));
}

Val Interp::call(Frame& f, const Val& callee, CallArgs args, Loc site) {
    // An unknown result of a call that received objects may be one of them.
    auto mutable_obj = [](const Val& v) {
        return v.is_obj(ObjKind::Instance) || v.is_obj(ObjKind::List) || v.is_obj(ObjKind::Dict) ||
               v.is_obj(ObjKind::Set) || v.may_alias();
    };
    std::vector<Val> passed;
    for (const auto& v : args.pos)
        if (mutable_obj(v)) passed.push_back(v);
    for (const auto& [_, v] : args.kw)
        if (mutable_obj(v)) passed.push_back(v);
    if (callee.is_obj(ObjKind::Method) && mutable_obj(callee.as<MethodObj>()->self))
        passed.push_back(callee.as<MethodObj>()->self);
    if (callee.is_obj(ObjKind::Builtin) && mutable_obj(callee.as<BuiltinObj>()->self))
        passed.push_back(callee.as<BuiltinObj>()->self);
    Val out = call_inner(f, callee, std::move(args), site);
    if (out.is_unknown() && !passed.empty()) mark_alias(out, passed);
    return out;
}

Val Interp::call_inner(Frame& f, const Val& callee, CallArgs args, Loc site) {
    if (out_of_budget()) return Val::unknown("the evaluation budget of the recipe is spent", site);
    if (callee.is_unknown()) {
        havoc_arguments(f, args, fmt::format("{}something unknown ({})", kUnfollowedCall, callee.reason()));
        return Val::unknown(callee.reason().rfind("calls something unknown", 0) == 0
                                ? callee.reason()
                                : "calls something unknown: " + callee.reason(),
                            site);
    }
    if (!callee.is_obj()) return Val::unknown(fmt::format("calls {}", type_name(callee)), site);
    switch (callee.o->kind) {
        case ObjKind::Function: {
            // Functions of the source root are followed.
            return call_function(f, std::static_pointer_cast<FunctionObj>(callee.o), std::move(args), site, nullptr);
        }
        case ObjKind::Method: {
            auto* m = callee.as<MethodObj>();
            if (m->func.is_obj(ObjKind::Function)) {
                auto fn = std::static_pointer_cast<FunctionObj>(m->func.o);
                Val self = m->self;
                return call_function(f, fn, std::move(args), site, &self);
            }
            return call(f, m->func, std::move(args), site);
        }
        case ObjKind::Class: return instantiate(f, std::static_pointer_cast<ClassObj>(callee.o), std::move(args), site);
        case ObjKind::Builtin: return call_builtin(f, *callee.as<BuiltinObj>(), args, site);
        case ObjKind::External: return external_call(f, callee, std::move(args), site);
        case ObjKind::Partial: {
            auto* p = callee.as<PartialObj>();
            CallArgs merged;
            merged.pos = p->args;
            merged.pos.insert(merged.pos.end(), args.pos.begin(), args.pos.end());
            merged.kw = p->kwargs;
            merged.kw_locs.assign(p->kwargs.size(), site);
            for (size_t i = 0; i < args.kw.size(); ++i) {
                merged.kw.push_back(args.kw[i]);
                merged.kw_locs.push_back(i < args.kw_locs.size() ? args.kw_locs[i] : site);
            }
            merged.unknown = args.unknown;
            return call(f, p->func, std::move(merged), site);
        }
        default: return Val::unknown(fmt::format("calls {}", type_name(callee)), site);
    }
}

Val Interp::call_recipe(const Val& fn) {
    if (!fn.is_obj(ObjKind::Function)) return Val::unknown("not a function");
    auto func = std::static_pointer_cast<FunctionObj>(fn.o);
    Frame top;
    top.module = func->module;
    top.depth = -1;  // the recipe's own frame is depth 0 and has no call chain
    return call_function(top, func, {}, func->module->loc(func->def), nullptr);
}

// The argument a top-level statement `entry(x, ...)` / `obj.entry(keyword=x, ...)` hands over, for `entry` among
// `entry_points`: its first positional argument, else its `keyword` argument; kNoNode for any other statement.
static NodeId handed_argument(const Ast& a, NodeId s, const std::vector<std::string>& entry_points,
                              const std::string& keyword) {
    if (a.kind(s) != Kind::ExpressionStatement) return kNoNode;
    const auto kids = a.named_kids(s);
    if (kids.size() != 1 || a.kind(kids[0]) != Kind::Call) return kNoNode;
    const std::string_view callee = a.source(a.field(kids[0], Field::Function));
    const auto dot = callee.rfind('.');
    const std::string_view name = dot == std::string_view::npos ? callee : callee.substr(dot + 1);
    if (std::find(entry_points.begin(), entry_points.end(), name) == entry_points.end()) return kNoNode;
    const NodeId args = a.field(kids[0], Field::Arguments);
    if (args == kNoNode) return kNoNode;
    for (NodeId k : a.named_kids(args)) {
        if (a.kind(k) != Kind::KeywordArgument) return k;
        if (a.source(a.field(k, Field::Name)) == keyword) return a.field(k, Field::Value);
    }
    return kNoNode;
}

bool Interp::hand_over(Frame& f, NodeId s) {
    const NodeId config = handed_argument(ast(f), s, *entry_points_, entry_keyword_);
    if (config == kNoNode) return false;
    // A copy of the config as it stands here: unwinding through a branch (a statement after `if args.x: return` runs
    // as one) restores what the branch wrote, and the config handed over keeps it.
    std::unordered_map<const Object*, ObjPtr> saved;
    saved.swap(thawed_);
    Val copy = thaw(eval(f, config));
    saved.swap(thawed_);
    if (copy.is_obj()) copy.o->epoch = next_epoch();
    handed_ = std::move(copy);
    return true;
}

Val Interp::run_main_block(Module* m, NodeId body, const std::vector<std::string>& entry_points,
                           const std::string& keyword) {
    handed_.reset();
    project_.ensure_initialized(m, import_depth_);
    if (!m->ast || body == kNoNode) return Val::unknown("no __main__ block");
    Frame f;
    f.module = m;
    f.locals = std::make_shared<Env>();  // its names are module globals in Python; here the block's own, read first
    f.locals->owner = id_;
    f.function = "__main__";
    f.depth = 0;
    const Ast& a = *m->ast;
    f.stmt = m->loc(body);
    std::vector<NodeId> stmts;
    for (std::uint32_t i = 0; i < a.count(body); ++i) stmts.push_back(a.kid(body, i));
    // The block runs as Python runs it, into the functions it calls (a script's `main()`, `main(args)` inside a `try`,
    // main() calling train(args)), up to the first statement, at any depth, that calls an entry point.
    entry_points_ = &entry_points;
    entry_keyword_ = keyword;
    struct Reset {
        const std::vector<std::string>*& points;
        ~Reset() { points = nullptr; }
    } reset{entry_points_};
    for (std::size_t i = 0; i < stmts.size(); ++i) {
        bool consumed = false;
        const Flow flow = exec_stmt(f, stmts[i], stmts, i + 1, consumed);
        if (handed_) return *handed_;
        if (out_of_budget()) {
            if (!budget_site_.valid()) budget_site_ = loc(f, stmts[i]);  // the block's statement that spent it
            return Val::unknown("the evaluation budget of the recipe is spent", f.stmt);
        }
        if (consumed || flow != Flow::Normal) break;
    }
    return Val::unknown("the __main__ block reaches no call of its entry point", f.stmt);
}

Val Interp::call_function(Frame& caller, const std::shared_ptr<FunctionObj>& fn, CallArgs args, Loc site,
                          const Val* self) {
    const int depth = caller.depth + 1;
    if (depth > project_.limits().max_call_depth) {
        const std::string reason = fmt::format("calls nested deeper than {} (a recursive helper?) at {}",
                                               project_.limits().max_call_depth, fn->qualname);
        for (const auto& v : args.pos) poison(v, reason);
        for (const auto& [_, v] : args.kw) poison(v, reason);
        if (self) poison(*self, reason);
        return Val::unknown(reason, site);
    }
    project_.ensure_initialized(fn->module, import_depth_);
    Frame f;
    f.module = fn->module;
    f.locals = std::make_shared<Env>();
    f.locals->owner = id_;
    f.locals->parent = fn->closure;
    f.function = fn->name;
    f.depth = depth;
    if (depth == 0) {
        f.chain = nullptr;
    } else {
        auto step = std::make_shared<CallSite>();
        step->loc = site;
        step->callee = fn->name;
        step->parent = caller.chain;
        step->depth = caller.chain ? caller.chain->depth + 1 : 1;
        f.chain = step;
    }
    f.stmt = site;
    // Bind the arguments.
    std::vector<Val> pos;
    if (self && !fn->staticmethod) pos.push_back(*self);
    pos.insert(pos.end(), args.pos.begin(), args.pos.end());
    std::vector<bool> kw_used(args.kw.size(), false);
    size_t next_pos = 0;
    const std::string missing_reason = args.unknown.empty() ? std::string() : "may come from " + args.unknown;
    for (const Param& p : fn->params) {
        switch (p.kind) {
            case Param::Kind::Normal:
            case Param::Kind::KeywordOnly: {
                std::optional<Val> v;
                if (p.kind == Param::Kind::Normal && next_pos < pos.size()) v = pos[next_pos++];
                for (size_t i = 0; !v && i < args.kw.size(); ++i)
                    if (!kw_used[i] && args.kw[i].first == p.name) {
                        v = args.kw[i].second;
                        kw_used[i] = true;
                    }
                if (!v && !missing_reason.empty())
                    v = Val::unknown(fmt::format("argument \"{}\" {}", p.name, missing_reason), site);
                if (!v && p.default_value) v = thaw(*p.default_value);
                if (!v) v = Val::unknown(fmt::format("argument \"{}\" of {} is not given", p.name, fn->name), site);
                f.locals->set(p.name, std::move(*v));
                break;
            }
            case Param::Kind::VarArgs: {
                std::vector<Val> rest(pos.begin() + static_cast<std::ptrdiff_t>(std::min(next_pos, pos.size())),
                                      pos.end());
                next_pos = pos.size();
                Val t = make_list(std::move(rest), ObjKind::Tuple, site);
                if (!args.unknown.empty()) t.as<SeqObj>()->unknown = args.unknown;
                f.locals->set(p.name, std::move(t));
                break;
            }
            case Param::Kind::VarKw: {
                auto d = std::make_shared<DictObj>();
                for (size_t i = 0; i < args.kw.size(); ++i)
                    if (!kw_used[i]) {
                        d->items.emplace_back(Val::str(args.kw[i].first, site), args.kw[i].second);
                        kw_used[i] = true;
                    }
                if (!args.unknown.empty()) d->unknown = args.unknown;
                f.locals->set(p.name, Val::obj(d, site));
                break;
            }
        }
    }
    if (auto owner = fn->owner.lock()) {  // a method: what super() needs
        f.defining_class = owner;
        if (!fn->params.empty())
            if (const Val* first = f.locals->find(fn->params.front().name)) f.self = *first;
    }
    if (fn->is_lambda) return eval(f, fn->body);
    Flow flow = exec_block(f, fn->body);
    if (out_of_budget()) return Val::unknown("the evaluation budget of the recipe is spent", site);
    if (flow == Flow::Raise)
        return Val::unknown(fmt::format("{} raises an exception on this path (line {})", fn->name, f.stmt.line),
                            f.stmt);
    if (flow == Flow::Return) return f.result ? *f.result : Val::none();
    // Fell off the end: an implicit `return None`, merged with any earlier return.
    if (f.result) return merge_vals(*f.result, Val::none(), f.stmt);
    return Val::none(site);
}

}  // namespace mbl::py
