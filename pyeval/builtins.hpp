#pragma once
// The builtin functions and the methods of builtin values that the evaluator models: their identifiers, and the table
// of small functions that run them, grouped in files by the type they belong to:
//   builtins_functions.cpp   the builtin namespace (len, range, isinstance, getattr, ...)
//   builtins_str.cpp         methods of str
//   builtins_containers.cpp  methods of list, tuple, set and dict
// builtins.cpp holds the namespace, finds the method of a builtin value by name, and runs a call through the table
// (Builtin::Host through the host).
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace mbl::py {

enum class Builtin : std::uint16_t {
    // functions
    Len,
    Range,
    List,
    Tuple,
    Dict,
    Set,
    Frozenset,
    Sorted,
    Reversed,
    Min,
    Max,
    Sum,
    Abs,
    Int,
    Float,
    Str,
    Bool,
    Isinstance,
    Issubclass,
    Getattr,
    Setattr,
    Hasattr,
    Enumerate,
    Zip,
    Any,
    All,
    Round,
    Divmod,
    Print,
    Repr,
    Callable,
    Super,
    Type,
    Iter,
    Next,
    Map,
    Filter,
    Id,
    Hash,
    Vars,
    Open,
    Exception,
    Staticmethod,
    Classmethod,
    Property,
    Object,
    // a function the host made (host.hpp): the host runs it
    Host,
    // methods of str
    StrLower,
    StrUpper,
    StrStrip,
    StrLstrip,
    StrRstrip,
    StrSplit,
    StrJoin,
    StrReplace,
    StrStartswith,
    StrEndswith,
    StrFormat,
    StrTitle,
    StrCapitalize,
    // methods of list / tuple
    ListAppend,
    ListExtend,
    ListInsert,
    ListPop,
    ListRemove,
    ListIndex,
    ListCount,
    ListCopy,
    ListClear,
    ListSort,
    ListReverse,
    // methods of dict
    DictGet,
    DictItems,
    DictKeys,
    DictValues,
    DictUpdate,
    DictPop,
    DictSetdefault,
    DictCopy,
    DictClear,
    // methods of set
    SetAdd,
    SetUpdate,
    SetDiscard,
    SetUnion,
    Count  // the number of identifiers above, not a builtin
};

class Interp;
class Val;
struct Frame;
struct BuiltinObj;
struct CallArgs;
struct Loc;

// Runs one builtin: `b` is what was called (its id, its name and, for a method, the value it belongs to).
using BuiltinFn = Val (*)(Interp& in, Frame& f, BuiltinObj& b, CallArgs& args, Loc site);

// The values a builtin runs on: a method of str runs only on a string (anything else is not modelled).
enum class Receiver : std::uint8_t { Any, Str, Sequence /* list, tuple, set */, Dict };

struct BuiltinEntry {
    Builtin id;
    Receiver receiver;
    BuiltinFn fn;
};

// The entries of each group. An id in no group is not modelled: calling it gives an unknown that says so.
std::span<const BuiltinEntry> function_builtins();
std::span<const BuiltinEntry> str_builtins();
std::span<const BuiltinEntry> container_builtins();

// Helpers the groups share (builtins.cpp).
// Python's `<` between numbers or between strings; anything else clears `ok` (sorted, min, max, list.sort).
bool sortable_less(const Val& a, const Val& b, bool& ok);
// The items of the first argument; nullopt when there is none or its contents are unknown, with `error` set to the
// unknown the builtin returns.
std::optional<std::vector<Val>> first_arg_items(Interp& in, const CallArgs& args, Loc site, Val& error);

}  // namespace mbl::py
