// Python semantics of evaluator values: truthiness, equality, sameness (for merging branches), printing and type
// names for messages; and config values (schemas, config.json facts) as evaluator values.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "pyeval/values.hpp"

namespace mbl::py {

bool copied_when_shared(ObjKind k) {
    switch (k) {
        case ObjKind::List:
        case ObjKind::Tuple:
        case ObjKind::Set:
        case ObjKind::Dict:
        case ObjKind::Instance:
        case ObjKind::Partial:
        case ObjKind::Method:
        case ObjKind::Builtin:
        case ObjKind::FieldSpec: return true;
        default: return false;
    }
}

std::optional<bool> truthy(const Val& v) {
    switch (v.k) {
        case Val::K::None: return false;
        case Val::K::Bool: return v.b;
        case Val::K::Int: return v.i != 0;
        case Val::K::Float: return v.d != 0.0;
        case Val::K::Str: return !v.s.empty();
        case Val::K::Unknown: return std::nullopt;
        case Val::K::Obj: break;
    }
    switch (v.o->kind) {
        case ObjKind::List:
        case ObjKind::Tuple:
        case ObjKind::Set: {
            auto* s = v.as<SeqObj>();
            if (!s->unknown.empty()) return s->items.empty() ? std::nullopt : std::optional<bool>(true);
            return !s->items.empty();
        }
        case ObjKind::Dict: {
            auto* d = v.as<DictObj>();
            if (!d->unknown.empty()) return d->items.empty() ? std::nullopt : std::optional<bool>(true);
            return !d->items.empty();
        }
        case ObjKind::External:
        case ObjKind::LazyImport: return std::nullopt;
        default: return true;
    }
}

std::optional<bool> py_equal(const Val& a, const Val& b) {
    if (a.is_unknown() || b.is_unknown()) return std::nullopt;
    if (a.is_obj(ObjKind::External) || b.is_obj(ObjKind::External)) {
        if (a.is_obj(ObjKind::External) && b.is_obj(ObjKind::External) &&
            a.as<ExternalObj>()->path == b.as<ExternalObj>()->path)
            return true;
        return std::nullopt;
    }
    if (a.is_none() || b.is_none()) return a.is_none() && b.is_none();
    if (a.is_number() && b.is_number()) {
        if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
        return a.as_number() == b.as_number();
    }
    if (a.is_str() || b.is_str()) return a.is_str() && b.is_str() && a.s == b.s;
    if (!a.is_obj() || !b.is_obj()) return false;
    if (a.o == b.o) return true;
    const bool seq_a = a.is_obj(ObjKind::List) || a.is_obj(ObjKind::Tuple) || a.is_obj(ObjKind::Set);
    const bool seq_b = b.is_obj(ObjKind::List) || b.is_obj(ObjKind::Tuple) || b.is_obj(ObjKind::Set);
    if (seq_a && seq_b) {
        if (a.o->kind != b.o->kind) return false;
        auto* x = a.as<SeqObj>();
        auto* y = b.as<SeqObj>();
        if (!x->unknown.empty() || !y->unknown.empty()) return std::nullopt;
        if (x->items.size() != y->items.size()) return false;
        bool unknown = false;
        for (size_t i = 0; i < x->items.size(); ++i) {
            auto eq = py_equal(x->items[i], y->items[i]);
            if (!eq) unknown = true;
            else if (!*eq) return false;
        }
        return unknown ? std::nullopt : std::optional<bool>(true);
    }
    if (a.is_obj(ObjKind::Dict) && b.is_obj(ObjKind::Dict)) {
        auto* x = a.as<DictObj>();
        auto* y = b.as<DictObj>();
        if (!x->unknown.empty() || !y->unknown.empty()) return std::nullopt;
        if (x->items.size() != y->items.size()) return false;
        for (const auto& [k, v] : x->items) {
            bool found = false;
            for (const auto& [k2, v2] : y->items)
                if (py_equal(k, k2) == true) {
                    auto eq = py_equal(v, v2);
                    if (!eq) return std::nullopt;
                    if (!*eq) return false;
                    found = true;
                }
            if (!found) return false;
        }
        return true;
    }
    if (a.is_obj(ObjKind::Instance) && b.is_obj(ObjKind::Instance)) return std::nullopt;  // dataclass __eq__
    return false;
}

std::optional<std::size_t> find_key(const DictObj& d, const Val& key) {
    for (std::size_t i = 0; i < d.items.size(); ++i)
        if (py_equal(d.items[i].first, key) == true) return i;
    return std::nullopt;
}

void set_item(DictObj& d, Val key, Val value) {
    if (auto i = find_key(d, key)) d.items[*i].second = std::move(value);
    else d.items.emplace_back(std::move(key), std::move(value));
}

bool same_val(const Val& a, const Val& b) {
    if (a.k != b.k) {
        if (a.is_number() && b.is_number() && !a.is_float() && !b.is_float())
            return a.as_int() == b.as_int() && a.k == b.k;
        return false;
    }
    switch (a.k) {
        case Val::K::None: return true;
        case Val::K::Bool: return a.b == b.b;
        case Val::K::Int: return a.i == b.i;
        case Val::K::Float: return a.d == b.d || (std::isnan(a.d) && std::isnan(b.d));
        case Val::K::Str: return a.s == b.s;
        case Val::K::Unknown: return a.s == b.s;
        case Val::K::Obj: break;
    }
    if (a.o == b.o) return true;
    if (a.o->kind != b.o->kind) return false;
    switch (a.o->kind) {
        case ObjKind::List:
        case ObjKind::Tuple:
        case ObjKind::Set: {
            auto* x = a.as<SeqObj>();
            auto* y = b.as<SeqObj>();
            if (x->unknown != y->unknown || x->items.size() != y->items.size()) return false;
            for (size_t i = 0; i < x->items.size(); ++i)
                if (!same_val(x->items[i], y->items[i])) return false;
            return true;
        }
        case ObjKind::Dict: {
            auto* x = a.as<DictObj>();
            auto* y = b.as<DictObj>();
            if (x->unknown != y->unknown || x->items.size() != y->items.size()) return false;
            for (size_t i = 0; i < x->items.size(); ++i)
                if (!same_val(x->items[i].first, y->items[i].first) ||
                    !same_val(x->items[i].second, y->items[i].second))
                    return false;
            return true;
        }
        case ObjKind::External: return a.as<ExternalObj>()->path == b.as<ExternalObj>()->path;
        case ObjKind::Builtin:
            return a.as<BuiltinObj>()->id == b.as<BuiltinObj>()->id &&
                   a.as<BuiltinObj>()->host_op == b.as<BuiltinObj>()->host_op &&
                   same_val(a.as<BuiltinObj>()->self, b.as<BuiltinObj>()->self);
        default: return false;
    }
}

static std::string float_str(double d) {
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    if (std::isnan(d)) return "nan";
    std::string s = fmt::format("{}", d);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
}

constexpr std::size_t kMaxReprBytes = 65536;

std::string repr(const Val& v, int depth) {
    if (depth > 6) return "...";
    switch (v.k) {
        case Val::K::None: return "None";
        case Val::K::Bool: return v.b ? "True" : "False";
        case Val::K::Int: return std::to_string(v.i);
        case Val::K::Float: return float_str(v.d);
        case Val::K::Str: return fmt::format("\"{}\"", v.s);
        case Val::K::Unknown: return "<unknown>";
        case Val::K::Obj: break;
    }
    switch (v.o->kind) {
        case ObjKind::List:
        case ObjKind::Tuple:
        case ObjKind::Set: {
            auto* s = v.as<SeqObj>();
            std::string out = v.o->kind == ObjKind::List ? "[" : v.o->kind == ObjKind::Tuple ? "(" : "{";
            // At most 20 items, 6 levels and about kMaxReprBytes: a list that holds itself 20 times over at each
            // level would otherwise write 20^6 items.
            size_t i = 0;
            for (; i < s->items.size() && i < 20 && out.size() < kMaxReprBytes; ++i) {
                if (i) out += ", ";
                out += repr(s->items[i], depth + 1);
            }
            if (s->items.size() > i) out += ", ...";
            if (v.o->kind == ObjKind::Tuple && s->items.size() == 1) out += ",";
            out += v.o->kind == ObjKind::List ? "]" : v.o->kind == ObjKind::Tuple ? ")" : "}";
            return out;
        }
        case ObjKind::Dict: {
            auto* d = v.as<DictObj>();
            std::string out = "{";
            size_t i = 0;
            for (; i < d->items.size() && i < 20 && out.size() < kMaxReprBytes; ++i) {
                if (i) out += ", ";
                out += repr(d->items[i].first, depth + 1) + ": " + repr(d->items[i].second, depth + 1);
            }
            if (d->items.size() > i) out += ", ...";
            return out + "}";
        }
        case ObjKind::Instance: {
            auto* inst = v.as<InstanceObj>();
            std::string name = inst->class_path;
            if (auto dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
            return fmt::format("{}(...)", name.empty() ? "object" : name);
        }
        case ObjKind::External: return v.as<ExternalObj>()->path;
        case ObjKind::Function: return v.as<FunctionObj>()->qualname;
        case ObjKind::Class: return v.as<ClassObj>()->qualname;
        default: return "<object>";
    }
}

std::string py_str(const Val& v) {
    if (v.is_str()) return v.s;
    if (v.is_float()) return float_str(v.d);
    if (v.is_obj(ObjKind::List) || v.is_obj(ObjKind::Tuple) || v.is_obj(ObjKind::Dict)) {
        std::string r = repr(v);
        std::replace(r.begin(), r.end(), '"', '\'');
        return r;
    }
    return repr(v);
}

std::string type_name(const Val& v) {
    switch (v.k) {
        case Val::K::None: return "None";
        case Val::K::Bool: return "a boolean";
        case Val::K::Int: return "an integer";
        case Val::K::Float: return "a number";
        case Val::K::Str: return "a string";
        case Val::K::Unknown: return "an unknown value";
        case Val::K::Obj: break;
    }
    switch (v.o->kind) {
        case ObjKind::List: return "a list";
        case ObjKind::Tuple: return "a tuple";
        case ObjKind::Set: return "a set";
        case ObjKind::Dict: return "a dict";
        case ObjKind::Instance: {
            std::string name = v.as<InstanceObj>()->class_path;
            if (auto dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
            return "an instance of " + (name.empty() ? std::string("an outside class") : name);
        }
        case ObjKind::Function: return "function " + v.as<FunctionObj>()->name;
        case ObjKind::Class: return "class " + v.as<ClassObj>()->name;
        case ObjKind::Module: return "a module";
        case ObjKind::External: return v.as<ExternalObj>()->path + " (outside the source root)";
        case ObjKind::Builtin: return "builtin " + v.as<BuiltinObj>()->name;
        default: return "an object";
    }
}

Val from_value(const Value& v, Loc at) {
    switch (v.kind()) {
        case Value::Kind::Null: return Val::none(at);
        case Value::Kind::Bool: return Val::boolean(v.as_bool(), at);
        case Value::Kind::Int: return Val::integer(v.as_int(), at);
        case Value::Kind::Float: return Val::floating(v.as_number(), at);
        case Value::Kind::String: return Val::str(v.as_string(), at);
        case Value::Kind::List: {
            auto l = std::make_shared<SeqObj>(ObjKind::List);
            for (const auto& item : v.items()) l->items.push_back(from_value(item, at));
            return Val::obj(l, at);
        }
        case Value::Kind::Map: {
            auto d = std::make_shared<DictObj>();
            for (const auto& e : v.entries()) d->items.emplace_back(Val::str(e.key, at), from_value(e.value, at));
            return Val::obj(d, at);
        }
        case Value::Kind::Unknown: return Val::unknown(v.unknown_reason(), at);
    }
    return Val::none(at);
}

}  // namespace mbl::py
