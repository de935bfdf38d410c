#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "report/report.hpp"

namespace mbl {
namespace {

struct Palette {
    bool on;
    std::string paint(std::string_view code, std::string_view s) const {
        return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : std::string(s);
    }
    std::string severity(Severity sev, std::string_view s) const {
        switch (sev) {
            case Severity::Error: return paint("1;31", s);
            case Severity::Warning: return paint("1;33", s);
            case Severity::Info: return paint("1;36", s);
        }
        return std::string(s);
    }
};

// Text as a terminal or a CI log shows it: control characters (a key written "\e[2J" or "\n::error::..." in a config)
// are written as the visible \xNN, so that a file cannot clear the screen or forge lines of the log. Tabs stay.
bool is_control(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }
std::string shown(std::string_view text) {
    if (std::none_of(text.begin(), text.end(), [](char c) { return is_control(static_cast<unsigned char>(c)); }))
        return std::string(text);
    std::string out;
    for (const char c : text)
        if (is_control(static_cast<unsigned char>(c))) out += fmt::format("\\x{:02X}", static_cast<unsigned char>(c));
        else out += c;
    return out;
}

std::string location(const SourceRange& r) {
    if (!r.valid()) return shown(r.file);
    return fmt::format("{}:{}:{}", shown(r.file), r.line, r.column);
}

// The source line and a caret under the range, as "   41 |   text" / "      |   ^~~~".
void excerpt(std::ostream& out, const SourceRange& r, const SourceManager& sources, const Palette& p, Severity sev) {
    if (!r.valid()) return;
    auto line = sources.line(r.file, r.line);
    if (!line) return;
    const std::string number = std::to_string(r.line);
    const std::string gutter(std::max<size_t>(number.size(), 4), ' ');
    out << p.paint("34", fmt::format(" {:>{}} | ", number, gutter.size())) << shown(*line) << '\n';
    const size_t start = static_cast<size_t>(std::max(r.column - 1, 0));
    size_t end = r.end_line == r.line ? static_cast<size_t>(std::max(r.end_column - 1, 0)) : line->size();
    end = std::min(end, line->size());
    if (end <= start) end = start + 1;
    std::string pad;
    for (size_t i = 0; i < start && i < line->size(); ++i)
        pad += (*line)[i] == '\t' ? "\t" : is_control(static_cast<unsigned char>((*line)[i])) ? "    " : " ";
    std::string marks(end - start, '~');  // (not "^" + string: GCC 12 warns falsely on that, -Wrestrict)
    marks.front() = '^';
    out << p.paint("34", fmt::format(" {} | ", gutter)) << pad << p.severity(sev, marks) << '\n';
}

}  // namespace

// What --fix does with a fix: applies it, applies it only with --unsafe-fixes, or cannot apply it (the edit would
// have to guess the layout).
static const char* fix_safety(const Fix& fix) {
    if (fix.edits.empty()) return "fix by hand";
    return fix.is_safe ? "safe fix: --fix" : "unsafe fix: --fix --unsafe-fixes";
}

void write_text(std::ostream& out, const std::vector<Diagnostic>& diags, const SourceManager& sources,
                const TextStyle& style) {
    const Palette p{style.color};
    for (const auto& d : diags) {
        out << p.paint("1", location(d.range)) << ": " << p.severity(d.severity, severity_name(d.severity))
            << p.severity(d.severity, fmt::format("[{}]", d.code)) << ": " << shown(d.message) << '\n';
        excerpt(out, d.range, sources, p, d.severity);
        for (const auto& n : d.notes) {
            if (n.range.valid()) {
                out << "    " << p.paint("1", "note") << ": " << location(n.range) << ": " << shown(n.message) << '\n';
                excerpt(out, n.range, sources, p, Severity::Info);
            } else {
                out << "    " << p.paint("1", "note") << ": " << shown(n.message) << '\n';
            }
        }
        if (d.fix)
            out << "    " << p.paint("1;32", "help") << ": " << shown(d.fix->title) << " (" << fix_safety(*d.fix)
                << ")\n";
        if (style.links)
            if (const std::string url = rule_doc_url(d.code); !url.empty())
                out << "    " << p.paint("1", "docs") << ": " << url << '\n';
    }
}

void write_concise(std::ostream& out, const std::vector<Diagnostic>& diags, const TextStyle& style) {
    const Palette p{style.color};
    for (const auto& d : diags) {
        const bool fixable = d.fix && d.fix->is_safe && !d.fix->edits.empty();
        out << p.paint("1", location(d.range)) << ": " << p.severity(d.severity, severity_name(d.severity))
            << p.severity(d.severity, fmt::format("[{}]", d.code)) << ": " << (fixable ? "[*] " : "")
            << shown(d.message) << '\n';
    }
}

FixableCounts count_fixable(const std::vector<Diagnostic>& diags) {
    FixableCounts c;
    for (const auto& d : diags) {
        if (!d.fix || d.fix->edits.empty()) continue;
        ++(d.fix->is_safe ? c.safe : c.unsafe);
    }
    return c;
}

std::string fixable_line(const FixableCounts& c, bool unsafe_enabled) {
    const int with_fix = c.safe + (unsafe_enabled ? c.unsafe : 0);
    const int hidden = unsafe_enabled ? 0 : c.unsafe;
    if (with_fix == 0 && hidden == 0) return "";
    const std::string fix_flag = unsafe_enabled ? "--fix --unsafe-fixes" : "--fix";
    if (hidden == 0) return fmt::format("{} fixable with {}", with_fix, fix_flag);
    if (with_fix == 0) return fmt::format("{} fixable with --fix --unsafe-fixes", hidden);
    return fmt::format("{} fixable with --fix, {} more with --unsafe-fixes", with_fix, hidden);
}

namespace {

// "1 problem" / "2 problems"; every count a user reads goes through here.
std::string counted(int n, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

std::string fix_summary_line(int fixed, const std::vector<Diagnostic>& remaining, bool unsafe_enabled,
                             const std::string& not_applied) {
    const int left = static_cast<int>(remaining.size());
    if (fixed == 0 && left == 0) return "";
    const std::string head =
        fixed > 0 ? fmt::format("fixed {}", counted(fixed, "problem", "problems")) : "fixed nothing";
    if (left == 0) return head + ", none remain";
    std::set<std::string> codes;
    int unsafe = 0, pending = 0, without = 0;
    for (const auto& d : remaining) {
        codes.insert(d.code);
        if (!d.fix || d.fix->edits.empty()) ++without;
        else if (!d.fix->is_safe && !unsafe_enabled) ++unsafe;
        else ++pending;
    }
    std::vector<std::string> listed(codes.begin(), codes.end());
    constexpr std::size_t kCodesShown = 8;  // a walk over a large tree can leave dozens
    if (listed.size() > kCodesShown) {
        const auto more = static_cast<int>(listed.size() - kCodesShown);
        listed.resize(kCodesShown);
        listed.push_back(fmt::format("{} more {}", more, more == 1 ? "code" : "codes"));
    }
    std::vector<std::string> why;
    if (unsafe) why.push_back(fmt::format("{} fixable with --fix --unsafe-fixes", unsafe));
    if (pending)
        why.push_back(fmt::format("{} not applied{}", counted(pending, "fix", "fixes"),
                                  not_applied.empty() ? "" : fmt::format(" ({})", not_applied)));
    if (without) why.push_back(fmt::format("{} without an automatic fix", without));
    return fmt::format(
        "{}, {} {} ({}): {}", head, left,
        fixed > 0 ? (left == 1 ? "remains" : "remain") : (left == 1 ? "problem remains" : "problems remain"),
        fmt::join(listed, ", "), fmt::join(why, ", "));
}

std::string recipes_line(int recipes, int resolved, int architecture_known) {
    const double total = recipes > 0 ? recipes : 1;
    return fmt::format("{} evaluated; {} all five recompute fields ({:.1f}%); {} a known architecture ({:.1f}%)",
                       counted(recipes, "recipe", "recipes"), counted(resolved, "resolves", "resolve"),
                       100.0 * resolved / total, counted(architecture_known, "has", "have"),
                       100.0 * architecture_known / total);
}

namespace {

struct CodeStatistics {
    std::string code, name;
    int count = 0;
    bool fixable = true;  // every diagnostic of the code has a safe fix --fix applies
};

std::vector<CodeStatistics> statistics(const std::vector<Diagnostic>& diags) {
    std::map<std::string, CodeStatistics> by_code;
    for (const auto& d : diags) {
        CodeStatistics& s = by_code[d.code];
        s.code = d.code;
        s.name = d.name;
        ++s.count;
        s.fixable &= d.fix && d.fix->is_safe && !d.fix->edits.empty();
    }
    std::vector<CodeStatistics> out;
    for (auto& [code, s] : by_code) out.push_back(std::move(s));
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
    return out;
}

}  // namespace

void write_statistics(std::ostream& out, const std::vector<Diagnostic>& diags) {
    const auto stats = statistics(diags);
    std::size_t width = 1;
    for (const auto& s : stats) width = std::max(width, std::to_string(s.count).size());
    for (const auto& s : stats)
        out << fmt::format("{:>{}}  {}  {:<3} {}\n", s.count, width, s.code, s.fixable ? "[*]" : "", s.name);
}

void write_statistics_json(std::ostream& out, const std::vector<Diagnostic>& diags) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& s : statistics(diags))
        list.push_back({{"code", s.code}, {"name", s.name}, {"count", s.count}, {"fixable", s.fixable}});
    const nlohmann::ordered_json doc{{"kind", "statistics"}, {"version", 1}, {"statistics", std::move(list)}};
    out << doc.dump(2) << '\n';  // schemas/output/statistics.schema.json
}

std::string summary_line(const DiagnosticCounts& c, const FileCounts& files) {
    const std::string checked = files.checked == 0
                                    ? "no file checked"
                                    : fmt::format("{} file{} checked", files.checked, files.checked == 1 ? "" : "s");
    const std::string skipped = files.skipped == 0 ? ""
                                                   : fmt::format("{} skipped: not {}", files.skipped,
                                                                 files.skipped == 1 ? "a Bridge config or recipe"
                                                                                    : "Bridge configs or recipes");
    if (c.total() == 0) return fmt::format("no problems found ({}{}{})", checked, skipped.empty() ? "" : "; ", skipped);
    std::vector<std::string> parts;
    if (c.errors) parts.push_back(fmt::format("{} error{}", c.errors, c.errors == 1 ? "" : "s"));
    if (c.warnings) parts.push_back(fmt::format("{} warning{}", c.warnings, c.warnings == 1 ? "" : "s"));
    if (c.infos) parts.push_back(fmt::format("{} info{}", c.infos, c.infos == 1 ? "" : "s"));
    return fmt::format("{} problem{} ({}){}{}{}", c.total(), c.total() == 1 ? "" : "s", fmt::join(parts, ", "),
                       files.checked == 0 ? "; " : " in ", checked,
                       skipped.empty() ? "" : fmt::format(" ({})", skipped));
}

}  // namespace mbl
