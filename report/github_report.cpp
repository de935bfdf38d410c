// GitHub Actions workflow commands: each diagnostic becomes an annotation on the pull request's diff.
#include <fmt/format.h>

#include <ostream>

#include "core/paths.hpp"
#include "report/report.hpp"

namespace mbl {
namespace {

// Escapes from GitHub's workflow-command syntax: the message needs % CR LF escaped, property values also : and ,.
std::string escape(std::string_view s, bool property) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '%': out += "%25"; break;
            case '\r': out += "%0D"; break;
            case '\n': out += "%0A"; break;
            case ':': out += property ? "%3A" : ":"; break;
            case ',': out += property ? "%2C" : ","; break;
            default: out += c;
        }
    }
    return out;
}

}  // namespace

void write_github(std::ostream& out, const std::vector<Diagnostic>& diags, const std::string& base_dir) {
    for (const auto& d : diags) {
        const char* command = d.severity == Severity::Error     ? "error"
                              : d.severity == Severity::Warning ? "warning"
                                                                : "notice";
        std::vector<std::string> props;
        if (!d.range.file.empty())
            props.push_back("file=" + escape(relative_to(d.range.file, base_dir).value_or(d.range.file), true));
        if (d.range.valid()) {
            props.push_back(fmt::format("line={}", d.range.line));
            props.push_back(fmt::format("col={}", d.range.column));
            if (d.range.end_line > 0) {
                props.push_back(fmt::format("endLine={}", d.range.end_line));
                if (d.range.end_line == d.range.line) props.push_back(fmt::format("endColumn={}", d.range.end_column));
            }
        }
        props.push_back("title=" + escape(fmt::format("mbridge-lint {} {}", d.code, d.name), true));
        std::string message = d.message;
        for (const auto& n : d.notes) {
            message += "\nnote: ";
            if (n.range.valid())
                message +=
                    fmt::format("{}:{}: ", relative_to(n.range.file, base_dir).value_or(n.range.file), n.range.line);
            message += n.message;
        }
        if (d.fix) message += "\nhelp: " + d.fix->title;
        if (const std::string url = rule_doc_url(d.code); !url.empty()) message += "\nsee " + url;
        out << "::" << command << ' ' << fmt::format("{}", fmt::join(props, ",")) << "::" << escape(message, false)
            << '\n';
    }
}

}  // namespace mbl
