#include "parser/yaml_edit.hpp"

#include <fmt/format.h>

#include "core/line_index.hpp"
#include "parser/yaml_loader.hpp"

namespace mbl::yaml_edit {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_eol(std::string_view t, std::size_t i) { return i >= t.size() || t[i] == '\n' || t[i] == '\r'; }

// Past the closing quote of the quoted scalar opening at `i`; npos when it is not closed.
std::size_t skip_quoted(std::string_view t, std::size_t i) {
    const char q = t[i];
    for (std::size_t j = i + 1; j < t.size(); ++j) {
        if (q == '"' && t[j] == '\\') {
            ++j;
            continue;
        }
        if (t[j] == q) {
            if (q == '\'' && j + 1 < t.size() && t[j + 1] == '\'') {  // '' is an escaped quote
                ++j;
                continue;
            }
            return j + 1;
        }
    }
    return std::string_view::npos;
}

// A quote opens a quoted scalar only where a scalar can start: at the line's indentation or after one of : - ? [ { ,
bool scalar_can_start(std::string_view t, std::size_t i) {
    std::size_t j = i;
    while (j > 0 && is_blank(t[j - 1])) --j;
    if (j == 0 || t[j - 1] == '\n') return true;
    const char p = t[j - 1];
    return (p == ':' || p == '-' || p == '?') ? j < i : (p == '[' || p == '{' || p == ',');
}

bool comment_starts(std::string_view t, std::size_t i) {
    return t[i] == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(t[i - 1])));
}

// One forward pass over the text that knows quoted scalars, comments and flow brackets. Calls on_comment(begin, end)
// for each comment; returns the flow depth ({ and [ still open) at `stop` (or at the end).
template <typename OnComment>
int scan(std::string_view t, std::size_t stop, OnComment&& on_comment) {
    int depth = 0;
    for (std::size_t i = 0; i < t.size() && i < stop; ++i) {
        const char c = t[i];
        if ((c == '"' || c == '\'') && scalar_can_start(t, i)) {
            std::size_t end = skip_quoted(t, i);
            if (end == std::string_view::npos) return depth;
            i = end - 1;
        } else if (comment_starts(t, i)) {
            std::size_t end = i;
            while (!is_eol(t, end)) ++end;
            on_comment(i, end);
            i = end - 1;
        } else if ((c == '[' || c == '{') && (depth > 0 || scalar_can_start(t, i))) {
            ++depth;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return depth;
}

// Past the bracket that closes the one at `i`.
std::size_t matching_bracket(std::string_view t, std::size_t i) {
    int depth = 0;
    for (std::size_t j = i; j < t.size(); ++j) {
        const char c = t[j];
        if ((c == '"' || c == '\'') && scalar_can_start(t, j)) {
            std::size_t end = skip_quoted(t, j);
            if (end == std::string_view::npos) return end;
            j = end - 1;
        } else if (comment_starts(t, j)) {
            while (!is_eol(t, j + 1)) ++j;
        } else if (c == '[' || c == '{') {
            ++depth;
        } else if (c == ']' || c == '}') {
            if (--depth == 0) return j + 1;
        }
    }
    return std::string_view::npos;
}

// End of a plain scalar starting at `i`: stops at a comment, the line end, and in flow context at , ] }.
std::size_t plain_end(std::string_view t, std::size_t i, bool flow) {
    std::size_t j = i;
    while (!is_eol(t, j) && !(t[j] == '#' && j > i && is_blank(t[j - 1])) &&
           !(flow && (t[j] == ',' || t[j] == ']' || t[j] == '}')))
        ++j;
    while (j > i && is_blank(t[j - 1])) --j;
    return j;
}

// "\r\n" when the line starting at `line_begin` ends that way, else "\n".
std::string line_ending(std::string_view t, std::size_t line_begin) {
    const std::size_t nl = t.find('\n', line_begin);
    return nl != std::string_view::npos && nl > 0 && t[nl - 1] == '\r' ? "\r\n" : "\n";
}

std::size_t indent_of(std::string_view t, std::size_t line_begin) {
    std::size_t j = line_begin;
    while (j < t.size() && t[j] == ' ') ++j;
    return j - line_begin;
}

}  // namespace

std::vector<SourceComment> comments(std::string_view text) {
    std::vector<SourceComment> out;
    LineIndex lines(text);
    scan(text, text.size(), [&](std::size_t b, std::size_t e) { out.push_back(comment_at(text, lines, b, e)); });
    return out;
}

std::optional<EntrySpan> entry_at(std::string_view t, std::size_t key) {
    if (key >= t.size()) return std::nullopt;
    EntrySpan s;
    s.key_begin = key;
    s.flow = scan(t, key, [](std::size_t, std::size_t) {}) > 0;
    s.line_begin = key;
    while (s.line_begin > 0 && t[s.line_begin - 1] != '\n') --s.line_begin;
    if (!s.flow && t.substr(s.line_begin, key - s.line_begin).find_first_not_of(' ') != std::string_view::npos)
        return std::nullopt;  // `- key: v` or a key after other content: not a plain block entry
    if (s.flow) {
        std::size_t p = key;  // in flow style the key must follow { or , (possibly on an earlier line)
        while (p > 0 && std::isspace(static_cast<unsigned char>(t[p - 1]))) --p;
        if (p == 0 || (t[p - 1] != '{' && t[p - 1] != ',')) return std::nullopt;
    }

    // The key and its colon.
    std::size_t i = key;
    if (t[i] == '"' || t[i] == '\'') {
        i = skip_quoted(t, i);
        if (i == std::string_view::npos) return std::nullopt;
        while (i < t.size() && is_blank(t[i])) ++i;
        if (i >= t.size() || t[i] != ':') return std::nullopt;
    } else {
        while (!is_eol(t, i) &&
               !(t[i] == ':' && (is_eol(t, i + 1) || std::isspace(static_cast<unsigned char>(t[i + 1])) ||
                                 (s.flow && (t[i + 1] == ',' || t[i + 1] == '}')))))
            ++i;
        if (is_eol(t, i)) return std::nullopt;
    }
    s.colon = i;

    // The value.
    i = s.colon + 1;
    while (i < t.size() && is_blank(t[i])) ++i;
    if (is_eol(t, i) || t[i] == '#' || (!s.flow && (t[i] == '|' || t[i] == '>'))) {
        s.inline_value = false;
        s.value_begin = s.value_end = s.colon + 1;
        if (s.flow) return std::nullopt;  // `{a: }` and the like: nothing worth editing
    } else if (t[i] == '[' || t[i] == '{') {
        s.value_begin = i;
        s.value_end = matching_bracket(t, i);
    } else if ((t[i] == '"' || t[i] == '\'')) {
        s.value_begin = i;
        s.value_end = skip_quoted(t, i);
    } else {
        s.value_begin = i;
        s.value_end = plain_end(t, i, s.flow);
    }
    if (s.value_end == std::string_view::npos) return std::nullopt;

    if (s.flow) {
        s.entry_end = s.value_end;
        return s;
    }
    // A block entry runs over the following lines that are indented deeper than its key (or, for a block list
    // written at the key's own indentation, that start with "- "). Blank and comment lines in between belong to it,
    // those after its last line do not.
    LineIndex lines(t);
    const std::size_t key_indent = key - s.line_begin;
    int last = lines.line_of(s.inline_value ? s.value_end : s.colon);
    for (int l = last + 1; l <= lines.line_count(); ++l) {
        const std::size_t ls = lines.line_start(l), le = lines.line_end(l);
        if (ls >= t.size()) break;
        const std::size_t ind = indent_of(t, ls);
        const std::string_view rest = t.substr(ls + ind, le - ls - std::min(ind, le - ls));
        if (rest.empty() || rest[0] == '\t') continue;  // blank: undecided
        if (rest[0] == '#') {
            if (ind > key_indent) continue;  // comment inside the value: undecided
            break;
        }
        const bool list_item = rest[0] == '-' && (rest.size() == 1 || rest[1] == ' ');
        if (ind > key_indent || (ind == key_indent && list_item && !s.inline_value)) {
            last = l;
            continue;
        }
        break;
    }
    s.entry_end = lines.next_line_start(last);
    return s;
}

std::string render(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Null: return "null";
        case Value::Kind::Bool: return v.as_bool() ? "true" : "false";
        case Value::Kind::Int:
        case Value::Kind::Float: return v.display();
        case Value::Kind::String: {
            const std::string& s = v.as_string();
            const bool plain = !s.empty() && parse_yaml_plain_scalar(s).is_string() &&
                               s.find_first_of(":#,[]{}&*!|>'\"%@`") == std::string::npos && s.front() != ' ' &&
                               s.back() != ' ' && s.front() != '-' && s.front() != '?';
            if (plain) return s;
            std::string out = "\"";
            for (char c : s) {
                if (c == '"' || c == '\\') out += '\\';
                out += c;
            }
            return out + "\"";
        }
        case Value::Kind::List: {
            std::string out = "[";
            for (std::size_t i = 0; i < v.items().size(); ++i) out += (i ? ", " : "") + render(v.items()[i]);
            return out + "]";
        }
        default: return v.display();
    }
}

std::vector<TextEdit> field_edit(const std::string& file, const FieldEdit& edit, const EditSite& site,
                                 std::string_view t, const LineIndex& lines) {
    if (!site.entry.valid()) return {};
    auto range_of = [&](std::size_t b, std::size_t e) {
        return SourceRange{file, lines.line_of(b), lines.column_of(b), lines.line_of(e), lines.column_of(e)};
    };
    auto replace = [&](std::size_t b, std::size_t e, std::string text) {
        return std::vector<TextEdit>{TextEdit{range_of(b, e), std::move(text)}};
    };
    const std::size_t key = lines.offset(site.entry.line, site.entry.column);
    auto span = entry_at(t, key);
    if (!span) return {};
    const Value new_value = parse_yaml_value(edit.new_value);

    if (site.value == nullptr) {
        // Insert the field as a sibling right after the entry at `site.entry`.
        if (edit.op != FieldEdit::Op::Set) return {};
        const std::string entry = fmt::format("{}: {}", site.field, render(new_value));
        if (span->flow) return replace(span->entry_end, span->entry_end, ", " + entry);
        const std::string indent(span->key_begin - span->line_begin, ' ');
        const std::string eol = line_ending(t, span->line_begin);
        const bool needs_newline = span->entry_end == t.size() && !t.empty() && t.back() != '\n';
        return replace(span->entry_end, span->entry_end, (needs_newline ? eol : "") + indent + entry + eol);
    }

    // The key written at the site must be the field the edit is about.
    std::string_view written = t.substr(span->key_begin, span->colon - span->key_begin);
    while (!written.empty() && is_blank(written.back())) written.remove_suffix(1);
    if (written.size() >= 2 && (written.front() == '"' || written.front() == '\''))
        written = written.substr(1, written.size() - 2);
    if (written != site.field) return {};

    switch (edit.op) {
        case FieldEdit::Op::Remove: {
            if (span->flow) {
                auto [b, e] = list_element_removal(t, span->key_begin, span->value_end);
                return replace(b, e, "");
            }
            // Removing the only entry of a block mapping would turn the mapping into null.
            if (site.siblings <= 1) return {};
            return replace(span->line_begin, span->entry_end, "");
        }
        case FieldEdit::Op::Set: {
            if (span->inline_value) return replace(span->value_begin, span->value_end, render(new_value));
            std::size_t end = span->entry_end;  // the value spans the following lines: replace them all
            if (end > span->colon && t[end - 1] == '\n') --end;
            if (end > span->colon && t[end - 1] == '\r') --end;
            std::string value = " ";  // (not `" " + render(...)`: GCC 12 warns falsely on that, bug 105329)
            value += render(new_value);
            return replace(span->colon + 1, end, std::move(value));
        }
        case FieldEdit::Op::ReplaceItem: {
            if (!site.value->is_list() || edit.item_index < 0 ||
                static_cast<std::size_t>(edit.item_index) >= site.value->items().size())
                return {};
            const Value& item = site.value->items()[static_cast<std::size_t>(edit.item_index)];
            const SourceRange& r = item.prov().range;
            if (!r.valid() || !item.is_string()) return {};
            const std::size_t b = lines.offset(r.line, r.column), e = lines.offset(r.end_line, r.end_column);
            std::string_view token = t.substr(b, e - b);
            const bool quoted =
                token.size() >= 2 && (token.front() == '"' || token.front() == '\'') && token.back() == token.front();
            std::string_view inner = quoted ? token.substr(1, token.size() - 2) : token;
            if (inner != item.as_string()) return {};  // the token is not plainly the item: do not guess
            if (quoted && edit.new_value.find_first_of("\"'\\") == std::string::npos)
                return replace(b, e, token.front() + edit.new_value + token.front());
            return replace(b, e, render(Value::string(edit.new_value)));
        }
    }
    return {};
}

}  // namespace mbl::yaml_edit
