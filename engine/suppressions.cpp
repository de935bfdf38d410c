#include "engine/suppressions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <tuple>

#include "core/did_you_mean.hpp"
#include "core/input_errors.hpp"
#include "core/line_index.hpp"
#include "rules/registry.hpp"

namespace mbl {
namespace {

constexpr std::string_view kMarker = "mbridge-lint:";

bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_code_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

// Where `noqa` starts in a comment's text: at its start or right after a `#` inside it (`# type: ignore  # noqa`),
// in any case as ruff reads it; npos when it is not there.
std::size_t noqa_at(const std::string& t) {
    for (std::size_t i = 0; i + 4 <= t.size(); ++i) {
        std::size_t k = i;
        while (k > 0 && is_space(t[k - 1])) --k;
        if (k != 0 && t[k - 1] != '#') continue;
        bool match = true;
        for (std::size_t j = 0; j < 4 && match; ++j)
            match = std::tolower(static_cast<unsigned char>(t[i + j])) == "noqa"[j];
        if (match && (i + 4 == t.size() || !is_code_char(t[i + 4]))) return i;
    }
    return std::string::npos;
}

// A code of this linter in a noqa list (RC104, IN002); any other code belongs to another linter.
bool ours(const std::string& code) {
    return code.size() > 2 && (code.rfind("RC", 0) == 0 || code.rfind("IN", 0) == 0) &&
           std::all_of(code.begin() + 2, code.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// `# noqa: RC104, E501`: a suppression of the codes of ours it lists, on the comment's own line as ruff has it.
// nullopt when it lists none of ours (a bare `# noqa`, or only other linters' codes).
template <class At, class Fail, class Unknown>
std::optional<Suppression> read_noqa(const SourceComment& c, std::size_t hash, std::size_t q, At at, Fail fail,
                                     Unknown unknown_rule) {
    const std::string& t = c.text;
    std::size_t i = q + 4;
    while (i < t.size() && is_space(t[i])) ++i;
    if (i >= t.size() || t[i] != ':') return std::nullopt;
    ++i;
    Suppression s;
    s.comment = c;
    s.comment_begin = hash;
    s.comment_end = hash + 1 + t.size();
    s.line = c.line;
    s.noqa = true;
    s.ours_alone = t.find_first_not_of(" \t") == q;
    while (true) {
        while (i < t.size() && (is_space(t[i]) || t[i] == ',')) ++i;
        const std::size_t b = i;
        while (i < t.size() && std::isalnum(static_cast<unsigned char>(t[i]))) ++i;
        if (b == i) break;
        const std::string code = t.substr(b, i - b);
        if (!ours(code)) s.ours_alone = false;
        else if (code.rfind("IN", 0) == 0)
            fail(at(b, i), fmt::format("{} is an input error: the file cannot be used as written, so it cannot be "
                                       "suppressed; fix the input",
                                       code));
        else if (!find_rule(code)) unknown_rule(code, at(b, i));
        else s.codes.push_back(Suppression::Code{code, at(b, i), hash + 1 + b, hash + 1 + i, false});
    }
    if (i < t.size()) s.ours_alone = false;  // a reason or another comment follows the codes
    if (s.codes.empty()) return std::nullopt;
    return s;
}

// Reads the suppression comments of one file: `# noqa: CODES` and `# mbridge-lint: DIRECTIVE=CODES`.
class SuppressionReader {
public:
    SuppressionReader(const std::string& file, std::string_view text, const std::vector<SourceComment>& comments)
        : text_(text), lines_(text), comment_only_(static_cast<std::size_t>(lines_.line_count()) + 2, false) {
        set_.file = file;
        for (const auto& c : comments)
            if (c.own_line) comment_only_[static_cast<std::size_t>(c.line)] = true;
    }

    SuppressionSet read(const std::vector<SourceComment>& comments) {
        for (const auto& c : comments) read_comment(c);
        return std::move(set_);
    }

private:
    void read_comment(const SourceComment& c) {
        const std::size_t hash = lines_.offset(c.line, c.column);
        const std::string& t = c.text;
        std::size_t i = 0;
        while (i < t.size() && is_space(t[i])) ++i;
        const bool marked = t.compare(i, kMarker.size(), kMarker) == 0;
        if (const std::size_t q = noqa_at(t); q != std::string::npos && !marked) {
            auto at = [&](std::size_t b, std::size_t e) { return range(c, hash, b, e); };
            auto on_error = [&](SourceRange where, std::string message) { fail(std::move(where), std::move(message)); };
            auto on_unknown = [&](const std::string& code, SourceRange where) { unknown_rule(code, std::move(where)); };
            if (auto s = read_noqa(c, hash, q, at, on_error, on_unknown)) set_.suppressions.push_back(std::move(*s));
            return;
        }
        if (marked) read_directive(c, hash, i + kMarker.size());
    }

    // `mbridge-lint: DIRECTIVE=CODES`, from just after the marker.
    void read_directive(const SourceComment& c, std::size_t hash, std::size_t i) {
        const std::string& t = c.text;
        while (i < t.size() && is_space(t[i])) ++i;
        const std::size_t dir_begin = i;
        while (i < t.size() && is_code_char(t[i])) ++i;
        const std::string directive = t.substr(dir_begin, i - dir_begin);
        static const std::vector<std::string> directives{"disable", "disable-next-line", "disable-file"};
        if (directive != "disable" && directive != "disable-next-line" && directive != "disable-file") {
            fail(range(c, hash, dir_begin, i),
                 fmt::format("unknown mbridge-lint directive \"{}\"{}; use disable=CODES, disable-next-line=CODES "
                             "or disable-file=CODES",
                             directive, did_you_mean_suffix(directive, directives)));
            return;
        }
        while (i < t.size() && is_space(t[i])) ++i;
        if (i >= t.size() || t[i] != '=') {
            fail(range(c, hash, dir_begin, i),
                 fmt::format("\"{}\" needs the codes it applies to: {}=RC104 (or a rule name)", directive, directive));
            return;
        }
        Suppression s;
        s.comment = c;
        s.comment_begin = hash;
        s.comment_end = hash + 1 + t.size();
        if (directive == "disable-file") s.scope = Suppression::Scope::File;
        else if (directive == "disable-next-line" || c.own_line) s.line = next_code_line(c.line);
        else s.line = c.line;
        if (read_codes(c, hash, i + 1, s) && !s.codes.empty()) set_.suppressions.push_back(std::move(s));
    }

    // The directive's comma-separated codes, from just after `=`; false when one of them is wrong.
    bool read_codes(const SourceComment& c, std::size_t hash, std::size_t i, Suppression& s) {
        const std::string& t = c.text;
        bool ok = true;
        while (true) {
            while (i < t.size() && is_space(t[i])) ++i;
            const std::size_t b = i;
            while (i < t.size() && is_code_char(t[i])) ++i;
            if (b == i) {
                fail(range(c, hash, b, b), "expected a rule code such as RC104 after `=` or `,`");
                return false;
            }
            ok &= read_code(c, hash, b, i, s);
            std::size_t j = i;
            while (j < t.size() && is_space(t[j])) ++j;
            if (j < t.size() && t[j] == ',') {
                i = j + 1;
                continue;
            }
            if (j < t.size() && !(t.compare(j, 2, "--") == 0 || t[j] == '#')) {
                fail(range(c, hash, j, t.size()), "separate codes with commas; a reason after them starts with \"--\"");
                ok = false;
            }
            return ok;
        }
    }

    // One code of a directive, the text from b to e; false when it names no rule.
    bool read_code(const SourceComment& c, std::size_t hash, std::size_t b, std::size_t e, Suppression& s) {
        const std::string code = c.text.substr(b, e - b);
        const Rule* rule = find_rule(code);
        if (code.size() >= 2 && std::toupper(static_cast<unsigned char>(code[0])) == 'I' &&
            std::toupper(static_cast<unsigned char>(code[1])) == 'N' && !rule) {
            fail(range(c, hash, b, e), fmt::format("{} is an input error: the file cannot be used as written, so it "
                                                   "cannot be suppressed; fix the input",
                                                   code));
            return false;
        }
        if (!rule) {
            unknown_rule(code, range(c, hash, b, e));
            return false;
        }
        s.codes.push_back(Suppression::Code{code, range(c, hash, b, e), hash + 1 + b, hash + 1 + e, false});
        return true;
    }

    // Where an own-line directive applies: the next line holding code (0: none).
    int next_code_line(int after) const {
        for (int l = after + 1; l <= lines_.line_count(); ++l) {
            if (comment_only_[static_cast<std::size_t>(l)]) continue;
            const std::size_t b = lines_.line_start(l), e = lines_.line_end(l);
            if (text_.substr(b, e - b).find_first_not_of(" \t") != std::string_view::npos) return l;
        }
        return 0;
    }

    // The text from b to e of the comment whose `#` is at `hash`.
    SourceRange range(const SourceComment& c, std::size_t hash, std::size_t b, std::size_t e) const {
        const std::size_t off = hash + 1;
        return SourceRange{set_.file, c.line, lines_.column_of(off + b), c.line,
                           lines_.column_of(off + std::max(e, b + 1))};
    }

    void fail(SourceRange where, std::string message) {
        set_.errors.push_back(input_error(InputError::UnknownValue, std::move(where), std::move(message)));
    }

    void unknown_rule(const std::string& code, SourceRange where) {
        std::vector<std::string> candidates;
        for (const auto& r : all_rules()) {
            candidates.emplace_back(r->info().code);
            candidates.emplace_back(r->info().name);
        }
        fail(std::move(where), fmt::format("unknown rule \"{}\" in suppression{}; `mbridge-lint rules` lists them",
                                           code, did_you_mean_suffix(code, candidates)));
    }

    SuppressionSet set_;
    std::string_view text_;
    LineIndex lines_;
    std::vector<bool> comment_only_;
};

}  // namespace

SuppressionSet find_suppressions(const std::string& file, std::string_view text,
                                 const std::vector<SourceComment>& comments) {
    return SuppressionReader(file, text, comments).read(comments);
}

void apply_suppressions(std::vector<Diagnostic>& diags, SuppressionSet& set) {
    std::vector<Diagnostic> kept;
    for (auto& d : diags) {
        bool suppressed = false;
        if (d.range.file == set.file && !d.is_input_error()) {
            for (auto& s : set.suppressions) {
                if (s.scope == Suppression::Scope::Line) {
                    const int end = std::max(d.range.end_line, d.range.line);
                    if (!d.range.valid() || s.line < d.range.line || s.line > end) continue;
                }
                for (auto& c : s.codes) {
                    const Rule* rule = find_rule(c.code);
                    if (rule && rule->info().code == d.code) {
                        c.used = true;
                        suppressed = true;
                    }
                }
            }
        }
        if (!suppressed) kept.push_back(std::move(d));
    }
    diags = std::move(kept);
}

std::vector<Diagnostic> unused_suppressions(const SuppressionSet& set, std::string_view text) {
    std::vector<Diagnostic> out;
    LineIndex lines(text);
    const Rule* rule = find_rule(kUnusedSuppressionCode);
    for (const auto& s : set.suppressions) {
        std::size_t used = 0;
        for (const auto& c : s.codes) used += c.used ? 1 : 0;
        for (std::size_t k = 0; k < s.codes.size(); ++k) {
            const auto& c = s.codes[k];
            if (c.used) continue;
            Diagnostic d;
            d.code = std::string(kUnusedSuppressionCode);
            d.name = rule ? std::string(rule->info().name) : "unused-suppression";
            d.severity = Severity::Info;
            d.range = c.where;
            d.message = s.scope == Suppression::Scope::File
                            ? fmt::format("suppression of {} is unused: the file has no {} diagnostic", c.code, c.code)
                        : s.line == 0 ? fmt::format("suppression of {} is unused: no line follows it", c.code)
                                      : fmt::format("suppression of {} is unused: line {} has no {} diagnostic", c.code,
                                                    s.line, c.code);
            // The fix deletes the code, or the whole comment when nothing else in it is in use.
            Fix fix;
            fix.title = fmt::format("Remove unused suppression of {}", c.code);
            std::size_t b = 0, e = 0;
            if (used == 0 && s.ours_alone) {
                // Nothing in the comment is in use: remove all of it (each unused code's fix is the same edit).
                b = s.comment_begin;
                e = s.comment_end;
                if (s.comment.own_line) {
                    b = lines.line_start(s.comment.line);
                    e = lines.next_line_start(s.comment.line);
                } else {
                    while (b > 0 && (text[b - 1] == ' ' || text[b - 1] == '\t')) --b;
                }
            } else {
                std::tie(b, e) = list_element_removal(text, c.begin, c.end);
            }
            const SourceRange r{set.file, lines.line_of(b), lines.column_of(b), lines.line_of(e), lines.column_of(e)};
            fix.edits.push_back(TextEdit{r, ""});
            d.fix = std::move(fix);
            out.push_back(std::move(d));
        }
    }
    return out;
}

namespace {

// An empty range at `offset`: an insertion.
TextEdit insertion(const std::string& file, const LineIndex& lines, std::size_t offset, std::string text) {
    const int line = lines.line_of(offset), column = lines.column_of(offset);
    return TextEdit{SourceRange{file, line, column, line, column}, std::move(text)};
}

std::string_view line_ending(std::string_view text) {
    return text.find("\r\n") != std::string_view::npos ? "\r\n" : "\n";
}

bool names(const Suppression& s, std::string_view code) {
    const Rule* wanted = find_rule(code);
    return std::any_of(s.codes.begin(), s.codes.end(), [&](const Suppression::Code& c) {
        const Rule* rule = find_rule(c.code);
        return rule && rule == wanted;
    });
}

// `, CODE` or `,CODE` after the last code of a suppression: the list grows in the spelling it has.
TextEdit add_code(const std::string& file, const LineIndex& lines, const Suppression& s, std::string_view code) {
    return insertion(file, lines, s.codes.back().end, fmt::format("{}{}", s.noqa ? ", " : ",", code));
}

// Where the code list of a `noqa: CODES` comment ends (after its last code), whatever linters the codes belong to;
// nullopt when the comment has no such list (no noqa, or a bare `# noqa`).
std::optional<std::size_t> noqa_list_end(const std::string& t) {
    const std::size_t q = noqa_at(t);
    if (q == std::string::npos) return std::nullopt;
    std::size_t i = q + 4;
    while (i < t.size() && is_space(t[i])) ++i;
    if (i >= t.size() || t[i] != ':') return std::nullopt;
    std::optional<std::size_t> end;
    for (++i;;) {
        while (i < t.size() && (is_space(t[i]) || t[i] == ',')) ++i;
        const std::size_t b = i;
        while (i < t.size() && std::isalnum(static_cast<unsigned char>(t[i]))) ++i;
        if (b == i) return end;
        end = i;
    }
}

// The line's text before a comment on it, without trailing blanks.
std::string_view code_part(std::string_view line_text, const std::vector<SourceComment>& comments, int line) {
    for (const auto& c : comments)
        if (c.line == line) line_text = line_text.substr(0, static_cast<std::size_t>(c.column - 1));
    while (!line_text.empty() && is_space(line_text.back())) line_text.remove_suffix(1);
    return line_text;
}

}  // namespace

std::optional<TextEdit> suppress_on_line(const std::string& file, std::string_view text,
                                         const std::vector<SourceComment>& comments, int line, std::string_view code) {
    const LineIndex lines(text);
    const auto line_text = lines.line_text(line);
    if (!line_text || !find_rule(code)) return std::nullopt;
    const SuppressionSet set = find_suppressions(file, text, comments);
    for (const auto& s : set.suppressions)
        if (s.scope == Suppression::Scope::Line && s.line == line && names(s, code)) return std::nullopt;
    for (const auto& s : set.suppressions)
        if (s.scope == Suppression::Scope::Line && s.comment.line == line && !s.comment.own_line)
            return add_code(file, lines, s, code);
    for (const auto& c : comments)  // another linter's `# noqa: E501` takes our code too, as ruff writes it
        if (c.line == line && !c.own_line)
            if (const auto end = noqa_list_end(c.text))
                return insertion(file, lines, lines.offset(c.line, c.column) + 1 + *end, fmt::format(", {}", code));
    const std::string_view before_comment = code_part(*line_text, comments, line);
    const bool continued = !before_comment.empty() && before_comment.back() == '\\';
    const bool has_comment =
        std::any_of(comments.begin(), comments.end(), [&](const SourceComment& c) { return c.line == line; });
    if (!has_comment && !continued)
        return insertion(file, lines, lines.line_start(line) + before_comment.size(),
                         fmt::format("  # mbridge-lint: disable={}", code));
    // A line of its own above: not where the line above continues into this one.
    if (line > 1) {
        const std::string_view above = code_part(*lines.line_text(line - 1), comments, line - 1);
        if (!above.empty() && above.back() == '\\') return std::nullopt;
    }
    const std::size_t indent = line_text->find_first_not_of(" \t");
    return insertion(
        file, lines, lines.line_start(line),
        fmt::format("{}# mbridge-lint: disable-next-line={}{}", line_text->substr(0, indent), code, line_ending(text)));
}

std::optional<TextEdit> suppress_in_file(const std::string& file, std::string_view text,
                                         const std::vector<SourceComment>& comments, std::string_view code) {
    if (!find_rule(code)) return std::nullopt;
    const LineIndex lines(text);
    const SuppressionSet set = find_suppressions(file, text, comments);
    for (const auto& s : set.suppressions)
        if (s.scope == Suppression::Scope::File && names(s, code)) return std::nullopt;
    for (const auto& s : set.suppressions)
        if (s.scope == Suppression::Scope::File) return add_code(file, lines, s, code);
    // After a `#!` line and an encoding declaration, which must stay first (PEP 263: within the first two lines).
    int line = 1;
    auto starts = [&](int l, std::string_view what) {
        const auto t = lines.line_text(l);
        return t && t->substr(0, what.size()) == what;
    };
    auto encoding = [&](int l) {  // `# -*- coding: utf-8 -*-`, `# vim: set fileencoding=utf-8 :`
        const auto t = lines.line_text(l);
        const std::size_t first = t ? t->find_first_not_of(" \t\f") : std::string_view::npos;
        return first != std::string_view::npos && (*t)[first] == '#' &&
               (t->find("coding:") != std::string_view::npos || t->find("coding=") != std::string_view::npos);
    };
    if (starts(line, "#!")) ++line;
    if (line <= 2 && encoding(line)) ++line;
    const std::size_t at = line > lines.line_count() ? text.size() : lines.line_start(line);
    const bool needs_newline_first = at == text.size() && !text.empty() && text.back() != '\n';
    return insertion(file, lines, at,
                     fmt::format("{}# mbridge-lint: disable-file={}{}", needs_newline_first ? line_ending(text) : "",
                                 code, at == text.size() ? "" : line_ending(text)));
}

}  // namespace mbl
