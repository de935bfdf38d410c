#include "report/upgrade_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "report/report.hpp"

namespace mbl {

namespace {

std::string recipe_list(const std::vector<std::string>& recipes) {
    std::string list;
    for (std::size_t i = 0; i < recipes.size() && i < 5; ++i) list += (i ? ", " : "") + recipes[i];
    if (recipes.size() > 5) list += fmt::format(" and {} more", recipes.size() - 5);
    return list;
}

std::string counts_words(const DiagnosticCounts& c) {
    if (c.total() == 0) return "no problems";
    std::vector<std::string> parts;
    if (c.errors) parts.push_back(fmt::format("{} error{}", c.errors, c.errors == 1 ? "" : "s"));
    if (c.warnings) parts.push_back(fmt::format("{} warning{}", c.warnings, c.warnings == 1 ? "" : "s"));
    if (c.infos) parts.push_back(fmt::format("{} info{}", c.infos, c.infos == 1 ? "" : "s"));
    return fmt::format("{} problem{} ({})", c.total(), c.total() == 1 ? "" : "s", fmt::join(parts, ", "));
}

}  // namespace

void write_upgrade_text(std::ostream& out, const RevisionDiff& diff, const UpgradeReportHeader& h) {
    out << fmt::format("Megatron Core {} -> {}: what changes, per recipe and config\n", h.from, h.to);
    int appear = 0, disappear = 0, severity = 0;
    for (const auto& c : diff.changes) {
        const Diagnostic& d = c.diagnostic;
        const std::string where =
            d.range.valid() ? fmt::format("{}:{}:{}", d.range.file, d.range.line, d.range.column) : d.range.file;
        std::string what;
        switch (c.kind) {
            case RevisionChange::Kind::Appears:
                ++appear;
                what = fmt::format("appears at {}: {}[{}]", h.to, severity_name(*c.after), d.code);
                break;
            case RevisionChange::Kind::Disappears:
                ++disappear;
                what = fmt::format("disappears at {}: {}[{}]", h.to, severity_name(*c.before), d.code);
                break;
            case RevisionChange::Kind::Severity:
                ++severity;
                what = fmt::format("{} -> {} at {}: [{}]", severity_name(*c.before), severity_name(*c.after), h.to,
                                   d.code);
                break;
        }
        out << fmt::format("{}: {} {}\n", where, what, d.message);
        if (!c.recipes.empty())
            out << fmt::format("    in {} recipe{}: {}\n", c.recipes.size(), c.recipes.size() == 1 ? "" : "s",
                               recipe_list(c.recipes));
    }
    if (diff.changes.empty()) out << fmt::format("no changes: {} and {} report the same problems", h.from, h.to);
    else
        out << fmt::format("{} change{} ({} appear, {} disappear, {} change severity)", diff.changes.size(),
                           diff.changes.size() == 1 ? "" : "s", appear, disappear, severity);
    out << fmt::format(" in {} file{} checked; {}: {}; {}: {}\n", h.files_checked, h.files_checked == 1 ? "" : "s",
                       h.from, counts_words(diff.from), h.to, counts_words(diff.to));
    if (diff.new_errors > 0)
        out << fmt::format("{} has {} error{} that {} has not\n", h.to, diff.new_errors,
                           diff.new_errors == 1 ? "" : "s", h.from);
}

void write_upgrade_json(std::ostream& out, const RevisionDiff& diff, const UpgradeReportHeader& h) {
    using json = nlohmann::ordered_json;
    auto severity = [](const std::optional<Severity>& s) { return s ? json(severity_name(*s)) : json(nullptr); };
    auto counts = [](const DiagnosticCounts& c) {
        return json{{"errors", c.errors}, {"warnings", c.warnings}, {"infos", c.infos}};
    };
    json changes = json::array();
    for (const auto& c : diff.changes) {
        const Diagnostic& d = c.diagnostic;
        json j;
        j["change"] = change_kind_name(c.kind);
        j["file"] = d.range.file.empty() ? json(nullptr) : json(d.range.file);
        j["line"] = d.range.valid() ? json(d.range.line) : json(nullptr);
        j["column"] = d.range.valid() ? json(d.range.column) : json(nullptr);
        j["code"] = d.code;
        j["name"] = d.name;
        j["before"] = severity(c.before);
        j["after"] = severity(c.after);
        j["message"] = d.message;
        j["recipes"] = c.recipes;
        changes.push_back(std::move(j));
    }
    json doc;
    doc["kind"] = "upgrade";  // not check's shape: schemas/output/upgrade.schema.json
    doc["version"] = 1;
    doc["upgrade"] = {{"from", h.from}, {"to", h.to}};
    doc["changes"] = std::move(changes);
    doc["summary"] = {
        {"files_checked", h.files_checked}, {"from", counts(diff.from)},     {"to", counts(diff.to)},
        {"changes", diff.changes.size()},   {"new_errors", diff.new_errors}, {"new_warnings", diff.new_warnings}};
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace mbl
