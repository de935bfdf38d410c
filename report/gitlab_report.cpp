// GitLab Code Quality report: the JSON array GitLab reads from a job's `artifacts:reports:codequality` file
// (the Code Climate issue subset GitLab documents: description, check_name, fingerprint, severity, location).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "core/paths.hpp"
#include "report/fingerprint.hpp"
#include "report/report.hpp"

namespace mbl {

namespace {

// GitLab's severities are info, minor, major, critical and blocker; a Megatron Core rejection fails the job.
const char* gitlab_severity(Severity s) {
    switch (s) {
        case Severity::Error: return "critical";
        case Severity::Warning: return "minor";
        case Severity::Info: return "info";
    }
    return "info";
}

}  // namespace

void write_gitlab(std::ostream& out, const std::vector<Diagnostic>& diags, const SourceManager& sources,
                  const std::string& base_dir) {
    using json = nlohmann::ordered_json;
    Fingerprints fingerprints(sources, base_dir);
    json issues = json::array();
    for (const auto& d : diags) {
        std::string description = fmt::format("{} {}", d.code, d.message);
        if (d.fix) description += fmt::format(" (help: {})", d.fix->title);
        const int begin = d.range.valid() ? d.range.line : 1;
        json issue;
        issue["type"] = "issue";
        issue["description"] = description;
        issue["check_name"] = fmt::format("{} {}", d.code, d.name);
        issue["fingerprint"] = fingerprints.next(d);
        issue["severity"] = gitlab_severity(d.severity);
        issue["location"] = {{"path", relative_to(d.range.file, base_dir).value_or(d.range.file)},
                             {"lines", {{"begin", begin}, {"end", std::max(begin, d.range.end_line)}}}};
        issues.push_back(std::move(issue));
    }
    out << issues.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace mbl
