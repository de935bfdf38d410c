#include "parser/python_edit.hpp"

#include <cctype>
#include <optional>

#include "core/line_index.hpp"
#include "parser/yaml_loader.hpp"

namespace mbl::python_edit {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Past the end of the string literal whose opening quote is at `i` (prefixes such as r/f/b are plain identifier
// characters before it and need no handling). Unterminated single-line strings end at the line end.
std::size_t skip_string(std::string_view t, std::size_t i) {
    const char q = t[i];
    const bool triple = i + 2 < t.size() && t[i + 1] == q && t[i + 2] == q;
    for (std::size_t j = i + (triple ? 3 : 1); j < t.size(); ++j) {
        if (t[j] == '\\') {
            ++j;
            continue;
        }
        if (!triple && t[j] == '\n') return j;
        if (t[j] == q && (!triple || (j + 2 < t.size() && t[j + 1] == q && t[j + 2] == q))) return j + (triple ? 3 : 1);
    }
    return t.size();
}

// Walks [b, e) outside strings and comments; calls f(i, depth) for each code character.
template <typename F>
void walk_code(std::string_view t, std::size_t b, std::size_t e, F&& f) {
    int depth = 0;
    for (std::size_t i = b; i < e; ++i) {
        const char c = t[i];
        if (c == '"' || c == '\'') {
            i = skip_string(t, i) - 1;
            continue;
        }
        if (c == '#') {
            while (i < e && t[i] != '\n') ++i;
            continue;
        }
        if (c == '(' || c == '[' || c == '{') ++depth;
        if (c == ')' || c == ']' || c == '}') --depth;
        if (!f(i, depth)) return;
    }
}

// The `=` signs of [b, e) at bracket depth 0 that are assignments (not ==, <=, >=, !=, :=, +=, ...).
std::vector<std::size_t> assignment_signs(std::string_view t, std::size_t b, std::size_t e) {
    std::vector<std::size_t> out;
    walk_code(t, b, e, [&](std::size_t i, int depth) {
        if (t[i] != '=' || depth != 0) return true;
        const char prev = i > b ? t[i - 1] : ' ';
        const char next = i + 1 < e ? t[i + 1] : ' ';
        if (next == '=' || std::string_view("=<>!:+-*/%&|^@").find(prev) != std::string_view::npos) return true;
        out.push_back(i);
        return true;
    });
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// The part of a line before any comment, trimmed.
std::string_view code_of_line(std::string_view t, const LineIndex& lines, int line) {
    const std::size_t b = lines.line_start(line), e = lines.line_end(line);
    std::size_t end = e;
    for (std::size_t i = b; i < e; ++i) {
        if (t[i] == '"' || t[i] == '\'') {
            i = skip_string(t, i) - 1;
            continue;
        }
        if (t[i] == '#') {
            end = i;
            break;
        }
    }
    return trim(t.substr(b, end - b));
}

std::size_t indent_of(std::string_view t, const LineIndex& lines, int line) {
    const std::size_t b = lines.line_start(line);
    std::size_t i = b;
    while (i < t.size() && is_blank(t[i])) ++i;
    return i - b;
}

// A statement `target = value` or a keyword argument `name=value`, found from its provenance range.
struct Binding {
    std::size_t begin = 0, end = 0;  // the whole statement / argument, without trailing spaces
    std::size_t eq = 0;              // its `=`
    std::size_t value_begin = 0, value_end = 0;
    bool keyword = false;  // a keyword argument inside a call
    std::string target;    // text before the `=`, trimmed
};

std::optional<Binding> binding_at(std::string_view t, const LineIndex& lines, const SourceRange& r) {
    Binding bd;
    bd.begin = lines.offset(r.line, r.column);
    bd.end = r.end_line > 0 ? lines.offset(r.end_line, r.end_column) : lines.line_end(r.line);
    if (bd.end <= bd.begin) return std::nullopt;
    while (bd.end > bd.begin && std::isspace(static_cast<unsigned char>(t[bd.end - 1]))) --bd.end;
    auto signs = assignment_signs(t, bd.begin, bd.end);
    if (signs.size() != 1) return std::nullopt;  // chained (a = b = v), augmented or no assignment: do not guess
    bd.eq = signs[0];
    bd.target = std::string(trim(t.substr(bd.begin, bd.eq - bd.begin)));
    bd.value_begin = bd.eq + 1;
    while (bd.value_begin < bd.end && is_blank(t[bd.value_begin])) ++bd.value_begin;
    bd.value_end = bd.end;
    if (bd.value_begin >= bd.value_end || bd.target.empty()) return std::nullopt;
    bool identifier = true;
    for (char c : bd.target) identifier &= is_ident(c);
    std::size_t p = bd.begin;
    while (p > 0 && std::isspace(static_cast<unsigned char>(t[p - 1]))) --p;
    bd.keyword = identifier && p > 0 && (t[p - 1] == '(' || t[p - 1] == ',');
    if (!bd.keyword) {
        // A statement must stand on its own lines: nothing but indentation before, nothing but a comment after.
        if (trim(t.substr(lines.line_start(r.line), bd.begin - lines.line_start(r.line))).size() != 0)
            return std::nullopt;
        const int last = lines.line_of(bd.end);
        std::string_view after = trim(t.substr(bd.end, lines.line_end(last) - bd.end));
        if (!after.empty() && after.front() != '#') return std::nullopt;
    }
    return bd;
}

// The string literal [b, e) holds exactly `content`: returns its quote character, or 0.
char plain_string_literal(std::string_view token, const std::string& content) {
    std::string_view s = trim(token);
    if (s.size() < 2) return 0;
    const char q = s.front();
    if ((q != '"' && q != '\'') || s.back() != q) return 0;
    std::string_view inner = s.substr(1, s.size() - 2);
    if (inner != content || inner.find_first_of("\\\"'") != std::string_view::npos) return 0;
    return q;
}

}  // namespace

std::vector<SourceComment> comments(std::string_view t) {
    std::vector<SourceComment> out;
    LineIndex lines(t);
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] == '"' || t[i] == '\'') {
            i = skip_string(t, i) - 1;
            continue;
        }
        if (t[i] != '#') continue;
        std::size_t e = i;
        while (e < t.size() && t[e] != '\n' && t[e] != '\r') ++e;
        out.push_back(comment_at(t, lines, i, e));
        i = e;
    }
    return out;
}

std::string render(const Value& v) {
    if (v.is_string()) {
        std::string out = "\"";
        for (char c : v.as_string()) {
            if (c == '"' || c == '\\') out += '\\';
            out += c;
        }
        return out + "\"";
    }
    if (v.is_list()) {
        std::string out = "[";
        for (std::size_t i = 0; i < v.items().size(); ++i) out += (i ? ", " : "") + render(v.items()[i]);
        return out + "]";
    }
    return v.display();  // None, True/False, numbers
}

std::vector<TextEdit> field_edit(const std::string& file, const FieldEdit& edit, const EditSite& site,
                                 std::string_view t, const LineIndex& lines) {
    if (!site.entry.valid()) return {};
    auto replace = [&](std::size_t b, std::size_t e, std::string text) {
        SourceRange r{file, lines.line_of(b), lines.column_of(b), lines.line_of(e), lines.column_of(e)};
        return std::vector<TextEdit>{TextEdit{r, std::move(text)}};
    };
    auto bd = binding_at(t, lines, site.entry);
    if (!bd) return {};
    const Value new_value = parse_yaml_value(edit.new_value);

    if (site.value == nullptr) {
        // Insert the field next to the sibling binding at `site.entry`.
        if (edit.op != FieldEdit::Op::Set) return {};
        if (bd->keyword) return replace(bd->end, bd->end, ", " + site.field + "=" + render(new_value));
        const std::size_t dot = bd->target.rfind('.');
        if (dot == std::string::npos) return {};
        const int line = lines.line_of(bd->end);
        const std::size_t at = lines.next_line_start(line);
        const std::string indent(t.substr(lines.line_start(site.entry.line), indent_of(t, lines, site.entry.line)));
        const std::size_t nl = t.find('\n', lines.line_start(line));
        const std::string eol = nl != std::string_view::npos && nl > 0 && t[nl - 1] == '\r' ? "\r\n" : "\n";
        const bool needs_newline = at == t.size() && !t.empty() && t.back() != '\n';
        return replace(at, at,
                       (needs_newline ? eol : "") + indent + bd->target.substr(0, dot + 1) + site.field + " = " +
                           render(new_value) + eol);
    }

    // The binding must name the field the edit is about.
    const std::string& target = bd->target;
    if (!(target == site.field ||
          (target.size() > site.field.size() &&
           target.compare(target.size() - site.field.size(), std::string::npos, site.field) == 0 &&
           target[target.size() - site.field.size() - 1] == '.')))
        return {};

    switch (edit.op) {
        case FieldEdit::Op::Remove: {
            if (bd->keyword) {
                auto [b, e] = list_element_removal(t, bd->begin, bd->end);
                return replace(b, e, "");
            }
            const int first = site.entry.line, last = lines.line_of(bd->end);
            // The only statement of a block (after `if ...:`, `def ...:`) cannot go: the block would be empty.
            int prev = first - 1;
            while (prev >= 1 && code_of_line(t, lines, prev).empty()) --prev;
            int next = last + 1;
            while (next <= lines.line_count() && code_of_line(t, lines, next).empty()) ++next;
            const std::size_t ind = indent_of(t, lines, first);
            const bool opens_block = prev >= 1 && code_of_line(t, lines, prev).ends_with(":");
            const bool block_ends = next > lines.line_count() || indent_of(t, lines, next) < ind;
            if (opens_block && block_ends) return {};
            return replace(lines.line_start(first), lines.next_line_start(last), "");
        }
        case FieldEdit::Op::Set: return replace(bd->value_begin, bd->value_end, render(new_value));
        case FieldEdit::Op::ReplaceItem: {
            if (!site.value->is_list() || edit.item_index < 0 ||
                static_cast<std::size_t>(edit.item_index) >= site.value->items().size())
                return {};
            const Value& item = site.value->items()[static_cast<std::size_t>(edit.item_index)];
            if (!item.is_string()) return {};
            const SourceRange& r = item.prov().range;
            // The item's own range, when the recipe front end recorded one that is just the literal.
            if (r.valid() && (r.line != site.entry.line || r.column != site.entry.column)) {
                const std::size_t b = lines.offset(r.line, r.column), e = lines.offset(r.end_line, r.end_column);
                if (char q = plain_string_literal(t.substr(b, e - b), item.as_string()))
                    return replace(b, e, q + edit.new_value + q);
                return {};
            }
            // Otherwise the value must be a list literal; find its item by position.
            if (t[bd->value_begin] != '[') return {};
            std::vector<std::pair<std::size_t, std::size_t>> items;
            std::size_t start = bd->value_begin + 1;
            bool closed = false;
            walk_code(t, bd->value_begin, bd->value_end, [&](std::size_t i, int depth) {
                if (depth == 1 && t[i] == ',') {
                    items.emplace_back(start, i);
                    start = i + 1;
                } else if (depth == 0 && t[i] == ']') {
                    items.emplace_back(start, i);
                    closed = true;
                    return false;
                }
                return true;
            });
            if (!closed || static_cast<std::size_t>(edit.item_index) >= items.size()) return {};
            auto [b, e] = items[static_cast<std::size_t>(edit.item_index)];
            while (b < e && std::isspace(static_cast<unsigned char>(t[b]))) ++b;
            while (e > b && std::isspace(static_cast<unsigned char>(t[e - 1]))) --e;
            if (char q = plain_string_literal(t.substr(b, e - b), item.as_string()))
                return replace(b, e, q + edit.new_value + q);
            return {};
        }
    }
    return {};
}

}  // namespace mbl::python_edit
