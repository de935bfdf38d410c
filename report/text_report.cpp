#include <fmt/format.h>

#include <algorithm>
#include <ostream>

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

std::string location(const SourceRange& r) {
    if (!r.valid()) return r.file;
    return fmt::format("{}:{}:{}", r.file, r.line, r.column);
}

// The source line and a caret under the range, as "   41 |   text" / "      |   ^~~~".
void excerpt(std::ostream& out, const SourceRange& r, const SourceManager& sources, const Palette& p, Severity sev) {
    if (!r.valid()) return;
    auto line = sources.line(r.file, r.line);
    if (!line) return;
    const std::string number = std::to_string(r.line);
    const std::string gutter(std::max<size_t>(number.size(), 4), ' ');
    out << p.paint("34", fmt::format(" {:>{}} | ", number, gutter.size())) << *line << '\n';
    const size_t start = static_cast<size_t>(std::max(r.column - 1, 0));
    size_t end = r.end_line == r.line ? static_cast<size_t>(std::max(r.end_column - 1, 0)) : line->size();
    end = std::min(end, line->size());
    if (end <= start) end = start + 1;
    std::string pad;
    for (size_t i = 0; i < start && i < line->size(); ++i) pad += (*line)[i] == '\t' ? '\t' : ' ';
    std::string marks(end - start, '~');  // (not "^" + string: GCC 12 warns falsely on that, -Wrestrict)
    marks.front() = '^';
    out << p.paint("34", fmt::format(" {} | ", gutter)) << pad << p.severity(sev, marks) << '\n';
}

}  // namespace

void write_text(std::ostream& out, const std::vector<Diagnostic>& diags, const SourceManager& sources,
                const TextStyle& style) {
    const Palette p{style.color};
    for (const auto& d : diags) {
        out << p.paint("1", location(d.range)) << ": " << p.severity(d.severity, severity_name(d.severity))
            << p.severity(d.severity, fmt::format("[{}]", d.code)) << ": " << d.message << '\n';
        excerpt(out, d.range, sources, p, d.severity);
        for (const auto& n : d.notes) {
            if (n.range.valid()) {
                out << "    " << p.paint("1", "note") << ": " << location(n.range) << ": " << n.message << '\n';
                excerpt(out, n.range, sources, p, Severity::Info);
            } else {
                out << "    " << p.paint("1", "note") << ": " << n.message << '\n';
            }
        }
        if (d.fix) out << "    " << p.paint("1;32", "help") << ": " << d.fix->title << '\n';
    }
}

std::string summary_line(const DiagnosticCounts& c, int files_checked) {
    const std::string files = fmt::format("{} file{}", files_checked, files_checked == 1 ? "" : "s");
    if (c.total() == 0) return fmt::format("no problems found ({} checked)", files);
    std::vector<std::string> parts;
    if (c.errors) parts.push_back(fmt::format("{} error{}", c.errors, c.errors == 1 ? "" : "s"));
    if (c.warnings) parts.push_back(fmt::format("{} warning{}", c.warnings, c.warnings == 1 ? "" : "s"));
    if (c.infos) parts.push_back(fmt::format("{} info{}", c.infos, c.infos == 1 ? "" : "s"));
    return fmt::format("{} problem{} ({}) in {} checked", c.total(), c.total() == 1 ? "" : "s", fmt::join(parts, ", "),
                       files);
}

}  // namespace mbl
