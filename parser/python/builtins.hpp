#pragma once
// Identifiers of the builtin functions and of the methods of builtin values that the evaluator models.
#include <cstdint>

namespace mbl::py {

enum class Builtin : std::uint16_t {
    // functions
    Len, Range, List, Tuple, Dict, Set, Frozenset, Sorted, Reversed, Min, Max, Sum, Abs, Int, Float, Str, Bool,
    Isinstance, Issubclass, Getattr, Setattr, Hasattr, Enumerate, Zip, Any, All, Round, Divmod, Print, Repr,
    Callable, Super, Type, Iter, Next, Map, Filter, Id, Hash, Vars, Open, Exception, Staticmethod, Classmethod,
    Property, Object,
    // Megatron Bridge entry points the linter models instead of reading
    HfFromPretrained, HfFromConfig, HfAutoConfig, HfToProvider, HfGetModelConfig, HfToTextProvider,
    // methods of str
    StrLower, StrUpper, StrStrip, StrLstrip, StrRstrip, StrSplit, StrJoin, StrReplace, StrStartswith, StrEndswith,
    StrFormat, StrTitle, StrCapitalize,
    // methods of list / tuple
    ListAppend, ListExtend, ListInsert, ListPop, ListRemove, ListIndex, ListCount, ListCopy, ListClear, ListSort,
    ListReverse,
    // methods of dict
    DictGet, DictItems, DictKeys, DictValues, DictUpdate, DictPop, DictSetdefault, DictCopy, DictClear,
    // methods of set
    SetAdd, SetUpdate, SetDiscard, SetUnion,
};

}  // namespace mbl::py
