#include "integrations/lsp/diagnostic_cap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace mbl::lsp {

namespace {

// LSP DiagnosticSeverity: 1 error, 2 warning, 3 information.
Severity from_lsp(const json& severity) {
    const int s = severity.is_number_integer() ? severity.get<int>() : 1;
    return s == 1 ? Severity::Error : s == 2 ? Severity::Warning : Severity::Info;
}

std::string plural(int n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

std::string count_words(const DiagnosticCounts& c) {
    std::vector<std::string> parts;
    if (c.errors) parts.push_back(plural(c.errors, "error"));
    if (c.warnings) parts.push_back(plural(c.warnings, "warning"));
    if (c.infos) parts.push_back(plural(c.infos, "info"));
    return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

void OmittedDiagnostics::add(Severity severity, const json& range, int count) {
    if (count <= 0) return;
    if (counts_.total() == 0) first_range_ = range;
    (severity == Severity::Error     ? counts_.errors
     : severity == Severity::Warning ? counts_.warnings
                                     : counts_.infos) += count;
}

json OmittedDiagnostics::summary(std::size_t shown, const std::string& file_name) const {
    if (counts_.total() == 0) return nullptr;
    const int severity = counts_.errors ? 1 : counts_.warnings ? 2 : 3;
    const std::string message =
        fmt::format("{} more problem{} in this file not shown ({}): the editor shows the first {} (mbridge-lint lsp "
                    "--max-diagnostics); `mbridge-lint check {}` lists them all",
                    counts_.total(), counts_.total() == 1 ? "" : "s", count_words(counts_), shown, file_name);
    return {{"range", first_range_},
            {"severity", severity},
            {"source", "mbridge-lint"},
            {"message", message},
            {"data",
             {{"omitted", {{"errors", counts_.errors}, {"warnings", counts_.warnings}, {"infos", counts_.infos}}}}}};
}

bool is_omitted_summary(const json& d) { return d.is_object() && d.contains("data") && d["data"].contains("omitted"); }

json cap_diagnostics(const json& diagnostics, std::size_t max, const std::string& file_name) {
    json shown = json::array();
    OmittedDiagnostics omitted;
    for (const auto& d : diagnostics) {
        if (!is_omitted_summary(d)) {
            if (shown.size() < max) shown.push_back(d);
            else omitted.add(from_lsp(d["severity"]), d["range"]);
            continue;
        }
        // An earlier summary: what it counts stays left out.
        const json& counts = d["data"]["omitted"];
        const std::pair<const char*, Severity> kinds[] = {
            {"errors", Severity::Error}, {"warnings", Severity::Warning}, {"infos", Severity::Info}};
        for (const auto& [key, severity] : kinds) omitted.add(severity, d["range"], counts.value(key, 0));
    }
    if (json summary = omitted.summary(max, file_name); !summary.is_null()) shown.push_back(std::move(summary));
    return shown;
}

}  // namespace mbl::lsp
