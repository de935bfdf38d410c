// The methods of str the evaluator models, one small function each; `b.self` is the string (the table runs them only
// on strings). title() and capitalize() are known names that are not modelled.
#include <algorithm>
#include <cctype>

#include "pyeval/builtins.hpp"
#include "pyeval/interpreter.hpp"

namespace mbl::py {

namespace {

Val str_lower(Interp&, Frame&, BuiltinObj& b, CallArgs&, Loc site) {
    std::string out = b.self.s;
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return Val::str(out, site);
}

Val str_upper(Interp&, Frame&, BuiltinObj& b, CallArgs&, Loc site) {
    std::string out = b.self.s;
    for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return Val::str(out, site);
}

Val str_title(Interp&, Frame&, BuiltinObj&, CallArgs&, Loc site) {
    return Val::unknown("str.title()/capitalize() is not modelled", site);
}

// strip(), lstrip(), rstrip()
Val str_strip(Interp&, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    const std::string& s = b.self.s;
    const Val* a0 = call_arg(args, 0);
    std::string chars = a0 && a0->is_str() ? a0->s : std::string(" \t\n\r\f\v");
    if (a0 && !a0->is_str() && !a0->is_none()) return Val::unknown("strip() of unknown characters", site);
    size_t start = 0, end = s.size();
    if (b.id != Builtin::StrRstrip)
        while (start < end && chars.find(s[start]) != std::string::npos) ++start;
    if (b.id != Builtin::StrLstrip)
        while (end > start && chars.find(s[end - 1]) != std::string::npos) --end;
    return Val::str(s.substr(start, end - start), site);
}

Val str_split(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    const std::string& s = b.self.s;
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    std::vector<Val> parts;
    if (!a0 || a0->is_none()) {
        size_t i = 0;
        while (i < s.size()) {
            while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
            size_t j = i;
            while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
            if (j > i) parts.push_back(Val::str(s.substr(i, j - i), site));
            i = j;
        }
    } else if (a0->is_str() && !a0->s.empty() && !a1) {
        size_t start = 0, pos;
        while ((pos = s.find(a0->s, start)) != std::string::npos) {
            parts.push_back(Val::str(s.substr(start, pos - start), site));
            start = pos + a0->s.size();
        }
        parts.push_back(Val::str(s.substr(start), site));
    } else {
        return Val::unknown("str.split() with arguments the linter does not model", site);
    }
    return in.make_list(std::move(parts), ObjKind::List, site);
}

Val str_join(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    Val error;
    auto items = first_arg_items(in, args, site, error);
    if (!items) return error;
    std::size_t size = 0;
    for (const auto& item : *items) size += item.is_str() ? item.s.size() + b.self.s.size() : 0;
    if (!in.charge_bytes(size, site)) return Val::unknown("the evaluation budget of the recipe is spent", site);
    std::string out;
    for (size_t i = 0; i < items->size(); ++i) {
        if (!(*items)[i].is_str()) return Val::unknown("join() of values that are not known strings", site);
        if (i) out += b.self.s;
        out += (*items)[i].s;
    }
    return Val::str(out, site);
}

Val str_replace(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    const std::string& s = b.self.s;
    const Val* a0 = call_arg(args, 0);
    const Val* a1 = call_arg(args, 1);
    if (!a0 || !a1 || !a0->is_str() || !a1->is_str() || a0->s.empty())
        return Val::unknown("replace() of unknown strings", site);
    // The result's size first: `s.replace("a", s)` doubles a string, and a chain of them would fill memory.
    std::size_t found = 0;
    for (size_t at = s.find(a0->s); at != std::string::npos; at = s.find(a0->s, at + a0->s.size())) ++found;
    if (!in.charge_bytes(s.size() - found * a0->s.size() + found * a1->s.size(), site))
        return Val::unknown("the evaluation budget of the recipe is spent", site);
    std::string out;
    size_t start = 0, pos;
    while ((pos = s.find(a0->s, start)) != std::string::npos) {
        out += s.substr(start, pos - start) + a1->s;
        start = pos + a0->s.size();
    }
    return Val::str(out + s.substr(start), site);
}

// startswith(), endswith(): one string or a tuple of them.
Val str_affix(Interp&, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    const std::string& s = b.self.s;
    const Val* a0 = call_arg(args, 0);
    if (!a0) return Val::unknown("missing argument", site);
    std::vector<Val> options;
    if (a0->is_obj(ObjKind::Tuple)) options = a0->as<SeqObj>()->items;
    else options.push_back(*a0);
    for (const auto& o : options) {
        if (!o.is_str()) return Val::unknown("startswith()/endswith() of an unknown string", site);
        bool hit = b.id == Builtin::StrStartswith
                       ? s.rfind(o.s, 0) == 0
                       : s.size() >= o.s.size() && s.compare(s.size() - o.s.size(), o.s.size(), o.s) == 0;
        if (hit) return Val::boolean(true, site);
    }
    return Val::boolean(false, site);
}

// format(): plain, numbered and named fields of known scalars, lists and tuples; no format specifications.
Val str_format(Interp& in, Frame&, BuiltinObj& b, CallArgs& args, Loc site) {
    const std::string& s = b.self.s;
    std::string out;
    size_t auto_index = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if ((c == '{' || c == '}') && i + 1 < s.size() && s[i + 1] == c) {
            out += c;
            ++i;
            continue;
        }
        if (c != '{') {
            out += c;
            continue;
        }
        size_t close = s.find('}', i);
        if (close == std::string::npos) return Val::unknown("a malformed format string", site);
        std::string field = s.substr(i + 1, close - i - 1);
        if (field.find_first_of(":!.[") != std::string::npos) return Val::unknown("a format specification", site);
        const Val* v = nullptr;
        if (field.empty()) v = call_arg(args, auto_index++);
        else if (std::all_of(field.begin(), field.end(), ::isdigit)) v = call_arg(args, std::stoul(field));
        else
            for (const auto& [k, kv] : args.kw)
                if (k == field) v = &kv;
        if (!v || v->is_unknown() || (v->is_obj() && !v->is_obj(ObjKind::List) && !v->is_obj(ObjKind::Tuple)))
            return Val::unknown("format() of an unknown value", site);
        out += py_str(*v);
        // Checked as it grows: a format string of many fields, each a long string, would fill memory first.
        if (out.size() > in.project().limits().max_value_bytes && !in.charge_bytes(out.size(), site))
            return Val::unknown("the evaluation budget of the recipe is spent", site);
        i = close;
    }
    if (!in.charge_bytes(out.size(), site)) return Val::unknown("the evaluation budget of the recipe is spent", site);
    return Val::str(out, site);
}

constexpr BuiltinEntry kStrEntries[] = {
    {Builtin::StrLower, Receiver::Str, str_lower},      {Builtin::StrUpper, Receiver::Str, str_upper},
    {Builtin::StrTitle, Receiver::Str, str_title},      {Builtin::StrCapitalize, Receiver::Str, str_title},
    {Builtin::StrStrip, Receiver::Str, str_strip},      {Builtin::StrLstrip, Receiver::Str, str_strip},
    {Builtin::StrRstrip, Receiver::Str, str_strip},     {Builtin::StrSplit, Receiver::Str, str_split},
    {Builtin::StrJoin, Receiver::Str, str_join},        {Builtin::StrReplace, Receiver::Str, str_replace},
    {Builtin::StrStartswith, Receiver::Str, str_affix}, {Builtin::StrEndswith, Receiver::Str, str_affix},
    {Builtin::StrFormat, Receiver::Str, str_format},
};

}  // namespace

std::span<const BuiltinEntry> str_builtins() { return kStrEntries; }

}  // namespace mbl::py
