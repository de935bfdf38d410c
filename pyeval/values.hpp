#pragma once
// Values of the abstract Python evaluator. Scalars are held inline; lists, dicts, instances, functions, classes and
// modules live on the heap behind shared pointers so that aliasing (`m = cfg.model; m.x = 1`) behaves as in Python.
// Anything the evaluator cannot work out is an Unknown value that carries the reason. Their Python semantics
// (truthiness, equality, printing) are in values.cpp.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/source_range.hpp"
#include "core/value.hpp"
#include "pyeval/ast.hpp"
#include "pyeval/object_registry.hpp"

namespace mbl::py {

class Module;
struct Env;

// How the reason of a value a call the evaluator does not follow may have changed begins (Interp::havoc): a config
// holding one is not resolved.
inline constexpr std::string_view kUnfollowedCall = "a call the linter does not follow may change it: ";

// A span in a module. `file` points at the module's display path, which lives as long as the module index.
struct Loc {
    const std::string* file = nullptr;
    std::uint32_t line = 0, col = 0, end_line = 0, end_col = 0;

    bool valid() const { return file != nullptr && line > 0; }
    SourceRange range() const {
        if (!valid()) return {};
        return {*file, static_cast<int>(line), static_cast<int>(col), static_cast<int>(end_line),
                static_cast<int>(end_col)};
    }
};

// One call on the way from a recipe to the line that set a value: where the call is and what it calls.
struct CallSite;
using Chain = std::shared_ptr<const CallSite>;
struct CallSite {
    Loc loc;
    std::string callee;
    Chain parent;
    int depth = 0;
};

// How a stored value got there: the statement (or keyword argument, or dataclass field) and the calls leading to it.
struct SetInfo {
    SetInfo() = default;
    SetInfo(Loc l, Chain c, Origin o = Origin::Recipe, std::shared_ptr<const std::string> d = nullptr)
        : loc(l), chain(std::move(c)), origin(o), detail(std::move(d)) {}
    Loc loc;
    Chain chain;
    Origin origin = Origin::Recipe;
    std::shared_ptr<const std::string> detail;  // "default of SomeConfig", where a host's fact comes from
    // Passed as a keyword argument of a constructor: a dataclass refuses a name it does not declare (TypeError),
    // where an attribute assignment of any name is accepted.
    bool keyword = false;
};

enum class ObjKind : std::uint8_t {
    List,
    Tuple,
    Set,
    Dict,
    Instance,
    Function,
    Class,
    Module,
    Method,
    Builtin,
    External,
    Partial,
    Host,
    FieldSpec,
    Property,
    LazyImport,
    Super,
};

// A heap value. It joins the registry of the evaluation that makes it (object_registry.hpp).
struct Object : std::enable_shared_from_this<Object> {
    explicit Object(ObjKind k);
    virtual ~Object();
    // Drops the references this object holds to other values.
    virtual void clear_refs() {}
    ObjKind kind;
    std::uint64_t epoch;
    ObjectRegistry* registry = nullptr;
};
using ObjPtr = std::shared_ptr<Object>;

class Val {
public:
    enum class K : std::uint8_t { None, Bool, Int, Float, Str, Obj, Unknown };

    static Val none(Loc at = {}) {
        Val v;
        v.at = at;
        return v;
    }
    static Val boolean(bool b, Loc at = {}) {
        Val v;
        v.k = K::Bool;
        v.b = b;
        v.at = at;
        return v;
    }
    static Val integer(std::int64_t i, Loc at = {}) {
        Val v;
        v.k = K::Int;
        v.i = i;
        v.at = at;
        return v;
    }
    static Val floating(double d, Loc at = {}) {
        Val v;
        v.k = K::Float;
        v.d = d;
        v.at = at;
        return v;
    }
    static Val str(std::string s, Loc at = {}) {
        Val v;
        v.k = K::Str;
        v.s = std::move(s);
        v.at = at;
        return v;
    }
    static Val obj(ObjPtr o, Loc at = {}) {
        Val v;
        v.k = K::Obj;
        v.o = std::move(o);
        v.at = at;
        return v;
    }
    // Reasons are kept short: in loops they would otherwise nest into ever longer texts.
    static constexpr std::size_t kMaxReason = 200;
    static Val unknown(std::string reason, Loc at = {}) {
        if (reason.size() > kMaxReason) {
            reason.resize(kMaxReason);
            reason += "...";
        }
        Val v;
        v.k = K::Unknown;
        v.s = std::move(reason);
        v.at = at;
        return v;
    }

    bool is_none() const { return k == K::None; }
    bool is_bool() const { return k == K::Bool; }
    bool is_int() const { return k == K::Int || k == K::Bool; }  // Python bools are ints
    bool is_float() const { return k == K::Float; }
    bool is_number() const { return is_int() || is_float(); }
    bool is_str() const { return k == K::Str; }
    bool is_obj() const { return k == K::Obj; }
    bool is_obj(ObjKind kind) const { return k == K::Obj && o->kind == kind; }
    bool is_unknown() const { return k == K::Unknown; }
    // An unknown that may stand for an object the evaluator knows (the result of a call that received it, a merge
    // of branches holding different objects): writes through it cannot be redirected to a fresh object. When the
    // candidates are known, `o` holds them (a tuple) so that a write through the unknown can spoil them.
    bool may_alias() const { return k == K::Unknown && b; }
    std::int64_t as_int() const { return k == K::Bool ? (b ? 1 : 0) : i; }
    double as_number() const { return k == K::Float ? d : static_cast<double>(as_int()); }
    const std::string& reason() const { return s; }
    template <class T>
    T* as() const {
        return static_cast<T*>(o.get());
    }

    K k = K::None;
    bool b = false;
    std::int64_t i = 0;
    double d = 0.0;
    std::string s;  // string value, or the reason of an Unknown
    ObjPtr o;
    Loc at;  // where the value was written (a literal) or where it became unknown
};

// --- heap objects ---

struct SeqObj : Object {  // list, tuple, set (a set keeps insertion order and no duplicates)
    explicit SeqObj(ObjKind k) : Object(k) {}
    void clear_refs() override { items.clear(); }
    std::vector<Val> items;
    std::string unknown;  // non-empty: the contents are not known (the reason)
};

struct DictObj : Object {
    DictObj() : Object(ObjKind::Dict) {}
    void clear_refs() override { items.clear(); }
    std::vector<std::pair<Val, Val>> items;
    std::string unknown;
};

struct Attr {
    std::string name;
    Val value;
    SetInfo info;
};

struct ClassObj;

struct InstanceObj : Object {
    InstanceObj() : Object(ObjKind::Instance) {}
    void clear_refs() override {
        attrs.clear();
        cls.reset();
        created = SetInfo();
    }
    std::shared_ptr<ClassObj> cls;  // a class of the source root, or null for an external class
    std::string class_path;         // dotted name of the class (external or root qualified name)
    std::vector<Attr> attrs;
    bool takes_defaults = false;  // unset attributes take the host's defaults (Host::attr_default)
    std::string poisoned;         // non-empty: arbitrary attributes may have been changed (the reason)
    std::string opaque;           // non-empty: made for an unknown value; attributes not set since are unknown
    Loc opaque_at;                // where it became so, when a call the evaluator does not follow received it
    bool closed = false;          // its attributes are all it has (a config a host read from a file): a missing
                                  // one is absent (getattr's default, hasattr False), not unknown
    SetInfo created;              // where the object was made (for the provenance of defaults)

    Attr* find(std::string_view name) {
        for (auto& a : attrs)
            if (a.name == name) return &a;
        return nullptr;
    }
    const Attr* find(std::string_view name) const { return const_cast<InstanceObj*>(this)->find(name); }
};

struct Param {
    enum class Kind : std::uint8_t { Normal, KeywordOnly, VarArgs, VarKw };
    std::string name;
    Kind kind = Kind::Normal;
    std::optional<Val> default_value;
    Loc loc;
};

struct FunctionObj : Object {
    FunctionObj() : Object(ObjKind::Function) {}
    void clear_refs() override {
        params.clear();
        closure.reset();
    }
    Module* module = nullptr;
    NodeId def = kNoNode;   // function_definition or lambda
    NodeId body = kNoNode;  // block, or the lambda's expression
    std::string name;
    std::string qualname;  // module.name, for messages and exports
    std::vector<Param> params;
    std::shared_ptr<Env> closure;  // enclosing function scope, null at module level
    bool is_lambda = false;
    bool staticmethod = false, classmethod = false;
    std::weak_ptr<ClassObj> owner;  // the class whose body defined it (for super())
};

struct DataField {
    std::string name;
    std::optional<Val> default_value;
    std::optional<Val> factory;  // default_factory callable
    bool init = true;
    Loc loc;  // the field's line in the class body
};

struct ClassObj : Object {
    ClassObj() : Object(ObjKind::Class) {}
    void clear_refs() override {
        bases.clear();
        fields.clear();
        attrs.clear();
    }
    std::string name;
    std::string qualname;
    Module* module = nullptr;
    std::vector<Val> bases;                          // root classes or externals
    std::vector<DataField> fields;                   // own annotated fields, in order
    std::vector<std::pair<std::string, Val>> attrs;  // class attributes and methods
    bool dataclass = false;
    bool is_enum = false;
    Loc loc;

    const Val* own_attr(std::string_view n) const {
        for (const auto& [k, v] : attrs)
            if (k == n) return &v;
        return nullptr;
    }
};

struct ModuleObj : Object {
    explicit ModuleObj(Module* m) : Object(ObjKind::Module), module(m) {}
    Module* module;
};

struct MethodObj : Object {  // a function bound to an instance (or class, for classmethods)
    MethodObj() : Object(ObjKind::Method) {}
    void clear_refs() override {
        self = Val();
        func = Val();
    }
    Val self;
    Val func;
};

enum class Builtin : std::uint16_t;

struct BuiltinObj : Object {  // a builtin function, or a method of a builtin value (`items.append`)
    BuiltinObj(Builtin i, std::string n) : Object(ObjKind::Builtin), id(i), name(std::move(n)) {}
    void clear_refs() override { self = Val(); }
    Builtin id;
    std::string name;
    Val self;
    std::uint16_t host_op = 0;  // Builtin::Host: which of the host's functions (host.hpp)
};

struct ExternalObj : Object {  // a name from outside the source root: never read, never run
    explicit ExternalObj(std::string p) : Object(ObjKind::External), path(std::move(p)) {}
    std::string path;
};

struct PartialObj : Object {  // functools.partial
    PartialObj() : Object(ObjKind::Partial) {}
    void clear_refs() override {
        func = Val();
        args.clear();
        kwargs.clear();
    }
    Val func;
    std::vector<Val> args;
    std::vector<std::pair<std::string, Val>> kwargs;
};

// An object a host made (host.hpp): the evaluator reads its attributes through the host and copies it never.
struct HostObj : Object {
    HostObj() : Object(ObjKind::Host) {}
};

struct FieldSpecObj : Object {  // dataclasses.field(default=..., default_factory=...)
    FieldSpecObj() : Object(ObjKind::FieldSpec) {}
    void clear_refs() override {
        default_value.reset();
        factory.reset();
    }
    std::optional<Val> default_value;
    std::optional<Val> factory;
    bool init = true;
};

// `from m import name` at module level: resolved when first read, so that importing a large package does not
// evaluate every module it re-exports.
struct LazyImportObj : Object {
    LazyImportObj(Module* importer, std::string mod, std::string n)
        : Object(ObjKind::LazyImport), from(importer), module(std::move(mod)), name(std::move(n)) {}
    Module* from;
    std::string module;  // absolute dotted name
    std::string name;
};

struct SuperObj : Object {  // super(): attribute lookup starts after `after` in the class order of `self`
    SuperObj() : Object(ObjKind::Super) {}
    void clear_refs() override {
        self = Val();
        after.reset();
    }
    Val self;  // an instance, or a class (in a classmethod)
    std::shared_ptr<ClassObj> after;
};

struct PropertyObj : Object {  // @property: the getter runs on attribute access
    PropertyObj() : Object(ObjKind::Property) {}
    void clear_refs() override { getter = Val(); }
    Val getter;
};

// Python truthiness; nullopt when it depends on something unknown.
std::optional<bool> truthy(const Val& v);
// Whether an evaluation that shares a value of this kind gets its own copy of it (Interp::thaw, CallMemo): the
// containers, instances and what binds one; functions, classes, modules and outside names are shared as they are.
bool copied_when_shared(ObjKind k);

// A copy of `o` (of a kind copied_when_shared) whose values are copied by `val` and whose provenance by `info`;
// `made(original, copy)` is told before the contents are copied, so that a cycle ends at the copy. A builtin bound to
// nothing is not copied (the answer is `o`); a method's function and a field's default factory are shared.
template <class Made, class MapVal, class MapInfo>
ObjPtr copy_object(const ObjPtr& o, Made&& made, MapVal&& val, MapInfo&& info) {
    switch (o->kind) {
        case ObjKind::List:
        case ObjKind::Tuple:
        case ObjKind::Set: {
            auto* src = static_cast<const SeqObj*>(o.get());
            auto c = std::make_shared<SeqObj>(src->kind);
            made(src, c);
            c->unknown = src->unknown;
            c->items.reserve(src->items.size());
            for (const auto& item : src->items) c->items.push_back(val(item));
            return c;
        }
        case ObjKind::Dict: {
            auto* src = static_cast<const DictObj*>(o.get());
            auto c = std::make_shared<DictObj>();
            made(src, c);
            c->unknown = src->unknown;
            c->items.reserve(src->items.size());
            for (const auto& [k, item] : src->items) c->items.emplace_back(val(k), val(item));
            return c;
        }
        case ObjKind::Instance: {
            auto* src = static_cast<const InstanceObj*>(o.get());
            auto c = std::make_shared<InstanceObj>();
            made(src, c);
            c->cls = src->cls;
            c->class_path = src->class_path;
            c->takes_defaults = src->takes_defaults;
            c->poisoned = src->poisoned;
            c->opaque = src->opaque;
            c->opaque_at = src->opaque_at;
            c->closed = src->closed;
            c->created = info(src->created);
            c->attrs.reserve(src->attrs.size());
            for (const auto& a : src->attrs) c->attrs.push_back(Attr{a.name, val(a.value), info(a.info)});
            return c;
        }
        case ObjKind::Partial: {
            auto* src = static_cast<const PartialObj*>(o.get());
            auto c = std::make_shared<PartialObj>();
            made(src, c);
            c->func = val(src->func);
            for (const auto& a : src->args) c->args.push_back(val(a));
            for (const auto& [k, a] : src->kwargs) c->kwargs.emplace_back(k, val(a));
            return c;
        }
        case ObjKind::Method: {
            auto* src = static_cast<const MethodObj*>(o.get());
            auto c = std::make_shared<MethodObj>();
            made(src, c);
            c->self = val(src->self);
            c->func = src->func;
            return c;
        }
        case ObjKind::Builtin: {
            auto* src = static_cast<const BuiltinObj*>(o.get());
            if (!src->self.is_obj()) return o;
            auto c = std::make_shared<BuiltinObj>(src->id, src->name);
            c->host_op = src->host_op;
            made(src, c);
            c->self = val(src->self);
            return c;
        }
        case ObjKind::FieldSpec: {
            auto* src = static_cast<const FieldSpecObj*>(o.get());
            auto c = std::make_shared<FieldSpecObj>();
            made(src, c);
            if (src->default_value) c->default_value = val(*src->default_value);
            c->factory = src->factory;
            c->init = src->init;
            return c;
        }
        default: return o;
    }
}
// Python `==`; nullopt when unknown.
std::optional<bool> py_equal(const Val& a, const Val& b);
// The index of the entry whose key == `key`; nullopt when none is.
std::optional<std::size_t> find_key(const DictObj& d, const Val& key);
// d[key] = value: an equal key keeps its place and the spelling it was first given (as in Python), else the entry is
// appended.
void set_item(DictObj& d, Val key, Val value);
// Structural sameness for merging branches: equal scalars, equal containers, the same object.
bool same_val(const Val& a, const Val& b);
// Short Python-like rendering for messages.
std::string repr(const Val& v, int depth = 0);
// Python's str() of a known scalar or container.
std::string py_str(const Val& v);
// "a list", "an instance of SomeConfig" ...
std::string type_name(const Val& v);
// A config Value (schemas, config.json facts) as an evaluator value; lists and maps become new objects.
Val from_value(const Value& v, Loc at);

}  // namespace mbl::py
