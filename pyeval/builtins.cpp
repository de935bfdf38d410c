// The builtin namespace (the names every module sees without importing them), the methods of builtin values found by
// name for their receiver, and a builtin call run through the table of builtins.hpp (the functions are in the
// builtins_*.cpp files, one per type).
#include "pyeval/builtins.hpp"

#include <fmt/format.h>

#include <array>
#include <unordered_map>

#include "pyeval/interpreter.hpp"

namespace mbl::py {

// ---------------------------------------------------------------------------------------------------------------
// The builtin namespace

const Val* builtin_global(const std::string& name) {
    static const std::unordered_map<std::string, Val> table = [] {
        std::unordered_map<std::string, Val> t;
        auto add = [&](const char* n, Builtin id) { t.emplace(n, Val::obj(std::make_shared<BuiltinObj>(id, n))); };
        add("len", Builtin::Len);
        add("range", Builtin::Range);
        add("list", Builtin::List);
        add("tuple", Builtin::Tuple);
        add("dict", Builtin::Dict);
        add("set", Builtin::Set);
        add("frozenset", Builtin::Frozenset);
        add("sorted", Builtin::Sorted);
        add("reversed", Builtin::Reversed);
        add("min", Builtin::Min);
        add("max", Builtin::Max);
        add("sum", Builtin::Sum);
        add("abs", Builtin::Abs);
        add("int", Builtin::Int);
        add("float", Builtin::Float);
        add("str", Builtin::Str);
        add("bool", Builtin::Bool);
        add("isinstance", Builtin::Isinstance);
        add("issubclass", Builtin::Issubclass);
        add("getattr", Builtin::Getattr);
        add("setattr", Builtin::Setattr);
        add("hasattr", Builtin::Hasattr);
        add("enumerate", Builtin::Enumerate);
        add("zip", Builtin::Zip);
        add("any", Builtin::Any);
        add("all", Builtin::All);
        add("round", Builtin::Round);
        add("divmod", Builtin::Divmod);
        add("print", Builtin::Print);
        add("repr", Builtin::Repr);
        add("callable", Builtin::Callable);
        add("super", Builtin::Super);
        add("type", Builtin::Type);
        add("iter", Builtin::Iter);
        add("next", Builtin::Next);
        add("map", Builtin::Map);
        add("filter", Builtin::Filter);
        add("id", Builtin::Id);
        add("hash", Builtin::Hash);
        add("vars", Builtin::Vars);
        add("open", Builtin::Open);
        add("staticmethod", Builtin::Staticmethod);
        add("classmethod", Builtin::Classmethod);
        add("property", Builtin::Property);
        add("object", Builtin::Object);
        for (const char* e : {"Exception", "BaseException", "ValueError", "TypeError", "KeyError", "IndexError",
                              "RuntimeError", "NotImplementedError", "AssertionError", "ImportError",
                              "ModuleNotFoundError", "AttributeError", "OSError", "FileNotFoundError", "StopIteration",
                              "Warning", "UserWarning", "DeprecationWarning", "FutureWarning"})
            add(e, Builtin::Exception);
        t.emplace("NotImplemented", Val::obj(std::make_shared<ExternalObj>("NotImplemented")));
        t.emplace("__file__", Val::unknown("the file path at run time"));
        return t;
    }();
    auto it = table.find(name);
    return it == table.end() ? nullptr : &it->second;
}

Val Interp::builtin_method(const Val& self, const std::string& name, Loc at) {
    static const std::unordered_map<std::string, Builtin> str_methods = {{"lower", Builtin::StrLower},
                                                                         {"upper", Builtin::StrUpper},
                                                                         {"strip", Builtin::StrStrip},
                                                                         {"lstrip", Builtin::StrLstrip},
                                                                         {"rstrip", Builtin::StrRstrip},
                                                                         {"split", Builtin::StrSplit},
                                                                         {"join", Builtin::StrJoin},
                                                                         {"replace", Builtin::StrReplace},
                                                                         {"startswith", Builtin::StrStartswith},
                                                                         {"endswith", Builtin::StrEndswith},
                                                                         {"format", Builtin::StrFormat},
                                                                         {"title", Builtin::StrTitle},
                                                                         {"capitalize", Builtin::StrCapitalize}};
    static const std::unordered_map<std::string, Builtin> list_methods = {
        {"append", Builtin::ListAppend}, {"extend", Builtin::ListExtend},  {"insert", Builtin::ListInsert},
        {"pop", Builtin::ListPop},       {"remove", Builtin::ListRemove},  {"index", Builtin::ListIndex},
        {"count", Builtin::ListCount},   {"copy", Builtin::ListCopy},      {"clear", Builtin::ListClear},
        {"sort", Builtin::ListSort},     {"reverse", Builtin::ListReverse}};
    static const std::unordered_map<std::string, Builtin> dict_methods = {{"get", Builtin::DictGet},
                                                                          {"items", Builtin::DictItems},
                                                                          {"keys", Builtin::DictKeys},
                                                                          {"values", Builtin::DictValues},
                                                                          {"update", Builtin::DictUpdate},
                                                                          {"pop", Builtin::DictPop},
                                                                          {"setdefault", Builtin::DictSetdefault},
                                                                          {"copy", Builtin::DictCopy},
                                                                          {"clear", Builtin::DictClear}};
    static const std::unordered_map<std::string, Builtin> set_methods = {
        {"add", Builtin::SetAdd},        {"update", Builtin::SetUpdate}, {"discard", Builtin::SetDiscard},
        {"remove", Builtin::SetDiscard}, {"union", Builtin::SetUnion},   {"copy", Builtin::ListCopy}};
    const std::unordered_map<std::string, Builtin>* table = nullptr;
    if (self.is_str()) table = &str_methods;
    else if (self.is_obj(ObjKind::List)) table = &list_methods;
    else if (self.is_obj(ObjKind::Tuple)) {
        if (name != "index" && name != "count") table = nullptr;
        else table = &list_methods;
    } else if (self.is_obj(ObjKind::Dict)) table = &dict_methods;
    else if (self.is_obj(ObjKind::Set)) table = &set_methods;
    if (table)
        if (auto it = table->find(name); it != table->end()) {
            auto b = std::make_shared<BuiltinObj>(it->second, name);
            b->self = self;
            return Val::obj(b, at);
        }
    if (self.is_str() || self.is_number() || self.is_bool())
        return Val::unknown(fmt::format("method .{}() of {} is not modelled", name, type_name(self)), at);
    return Val::unknown(fmt::format("attribute .{} of {} is not modelled", name, type_name(self)), at);
}

bool sortable_less(const Val& a, const Val& b, bool& ok) {
    if (a.is_number() && b.is_number()) return a.as_number() < b.as_number();
    if (a.is_str() && b.is_str()) return a.s < b.s;
    ok = false;
    return false;
}

std::optional<std::vector<Val>> first_arg_items(Interp& in, const CallArgs& args, Loc site, Val& error) {
    const Val* a0 = call_arg(args, 0);
    if (!a0) {
        error = Val::unknown("missing argument", site);
        return std::nullopt;
    }
    std::string reason;
    auto items = in.iterate(*a0, reason);
    if (!items) error = Val::unknown(reason, site);
    return items;
}

namespace {

// The table by id, built from the groups once; an id without a function is not modelled.
const BuiltinEntry& builtin_entry(Builtin id) {
    static const auto table = [] {
        std::array<BuiltinEntry, static_cast<std::size_t>(Builtin::Count)> t{};
        for (auto group : {function_builtins(), str_builtins(), container_builtins()})
            for (const BuiltinEntry& e : group) t[static_cast<std::size_t>(e.id)] = e;
        return t;
    }();
    return table[static_cast<std::size_t>(id)];
}

bool runs_on(Receiver receiver, const Val& self) {
    switch (receiver) {
        case Receiver::Any: return true;
        case Receiver::Str: return self.is_str();
        case Receiver::Sequence:
            return self.is_obj(ObjKind::List) || self.is_obj(ObjKind::Tuple) || self.is_obj(ObjKind::Set);
        case Receiver::Dict: return self.is_obj(ObjKind::Dict);
    }
    return false;
}

}  // namespace

Val Interp::call_builtin(Frame& f, BuiltinObj& b, CallArgs& args, Loc site) {
    if (b.id == Builtin::Host) return host().call_host_function(*this, f, b, args, site);
    const BuiltinEntry& entry = builtin_entry(b.id);
    if (entry.fn && runs_on(entry.receiver, b.self)) return entry.fn(*this, f, b, args, site);
    return Val::unknown(fmt::format("{}() is not modelled", b.name), site);
}

}  // namespace mbl::py
