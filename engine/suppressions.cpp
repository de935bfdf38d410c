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

}  // namespace

SuppressionSet find_suppressions(const std::string& file, std::string_view text,
                                 const std::vector<SourceComment>& comments) {
    SuppressionSet set;
    set.file = file;
    LineIndex lines(text);
    // Lines holding code: where an own-line directive applies to.
    std::vector<bool> comment_only(static_cast<std::size_t>(lines.line_count()) + 2, false);
    for (const auto& c : comments)
        if (c.own_line) comment_only[static_cast<std::size_t>(c.line)] = true;
    auto next_code_line = [&](int after) {
        for (int l = after + 1; l <= lines.line_count(); ++l) {
            if (comment_only[static_cast<std::size_t>(l)]) continue;
            const std::size_t b = lines.line_start(l), e = lines.line_end(l);
            if (text.substr(b, e - b).find_first_not_of(" \t") != std::string_view::npos) return l;
        }
        return 0;
    };

    for (const auto& c : comments) {
        const std::size_t hash = lines.offset(c.line, c.column);
        std::size_t i = 0;
        const std::string& t = c.text;
        auto at = [&](std::size_t b, std::size_t e) {
            const std::size_t off = hash + 1;
            return SourceRange{file, c.line, lines.column_of(off + b), c.line,
                               lines.column_of(off + std::max(e, b + 1))};
        };
        auto fail = [&](SourceRange where, std::string message) {
            set.errors.push_back(input_error(InputError::UnknownValue, std::move(where), std::move(message)));
        };
        auto unknown_rule = [&](const std::string& code, SourceRange where) {
            std::vector<std::string> candidates;
            for (const auto& r : all_rules()) {
                candidates.emplace_back(r->info().code);
                candidates.emplace_back(r->info().name);
            }
            fail(where, fmt::format("unknown rule \"{}\" in suppression{}; `mbridge-lint rules` lists them", code,
                                    did_you_mean_suffix(code, candidates)));
        };
        while (i < t.size() && is_space(t[i])) ++i;
        if (const std::size_t q = noqa_at(t); q != std::string::npos && t.compare(i, kMarker.size(), kMarker) != 0) {
            if (auto s = read_noqa(c, hash, q, at, fail, unknown_rule)) set.suppressions.push_back(std::move(*s));
            continue;
        }
        if (t.compare(i, kMarker.size(), kMarker) != 0) continue;
        i += kMarker.size();
        while (i < t.size() && is_space(t[i])) ++i;
        const std::size_t dir_begin = i;
        while (i < t.size() && is_code_char(t[i])) ++i;
        const std::string directive = t.substr(dir_begin, i - dir_begin);
        static const std::vector<std::string> directives{"disable", "disable-next-line", "disable-file"};
        if (directive != "disable" && directive != "disable-next-line" && directive != "disable-file") {
            fail(at(dir_begin, i), fmt::format("unknown mbridge-lint directive \"{}\"{}; use disable=CODES, "
                                               "disable-next-line=CODES or disable-file=CODES",
                                               directive, did_you_mean_suffix(directive, directives)));
            continue;
        }
        while (i < t.size() && is_space(t[i])) ++i;
        if (i >= t.size() || t[i] != '=') {
            fail(at(dir_begin, i),
                 fmt::format("\"{}\" needs the codes it applies to: {}=RC104 (or a rule name)", directive, directive));
            continue;
        }
        ++i;
        Suppression s;
        s.comment = c;
        s.comment_begin = hash;
        s.comment_end = hash + 1 + t.size();
        if (directive == "disable-file") s.scope = Suppression::Scope::File;
        else if (directive == "disable-next-line" || c.own_line) s.line = next_code_line(c.line);
        else s.line = c.line;

        bool ok = true;
        while (true) {
            while (i < t.size() && is_space(t[i])) ++i;
            const std::size_t b = i;
            while (i < t.size() && is_code_char(t[i])) ++i;
            if (b == i) {
                fail(at(b, b), "expected a rule code such as RC104 after `=` or `,`");
                ok = false;
                break;
            }
            const std::string code = t.substr(b, i - b);
            const Rule* rule = find_rule(code);
            if (code.size() >= 2 && std::toupper(static_cast<unsigned char>(code[0])) == 'I' &&
                std::toupper(static_cast<unsigned char>(code[1])) == 'N' && !rule) {
                fail(at(b, i), fmt::format("{} is an input error: the file cannot be used as written, so it cannot be "
                                           "suppressed; fix the input",
                                           code));
                ok = false;
            } else if (!rule) {
                unknown_rule(code, at(b, i));
                ok = false;
            } else {
                s.codes.push_back(Suppression::Code{code, at(b, i), hash + 1 + b, hash + 1 + i, false});
            }
            std::size_t j = i;
            while (j < t.size() && is_space(t[j])) ++j;
            if (j < t.size() && t[j] == ',') {
                i = j + 1;
                continue;
            }
            if (j < t.size() && !(t.compare(j, 2, "--") == 0 || t[j] == '#')) {
                fail(at(j, t.size()), "separate codes with commas; a reason after them starts with \"--\"");
                ok = false;
            }
            break;
        }
        if (ok && !s.codes.empty()) set.suppressions.push_back(std::move(s));
    }
    return set;
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

}  // namespace mbl
