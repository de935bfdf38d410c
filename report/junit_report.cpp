// JUnit XML, the test-report format CI systems display (GitLab's `artifacts:reports:junit`, Jenkins, Azure): one test
// suite per file, a failed test case per diagnostic, a passed one per checked file without diagnostics.
#include <fmt/format.h>
#include <tinyxml2.h>

#include <map>
#include <ostream>

#include "core/paths.hpp"
#include "report/report.hpp"

namespace mbl {

namespace {

void write_failure(tinyxml2::XMLPrinter& xml, const Diagnostic& d, const std::string& file) {
    xml.OpenElement("testcase");
    xml.PushAttribute("name", fmt::format("{} {}", d.code, d.name).c_str());
    xml.PushAttribute("classname", file.c_str());
    xml.PushAttribute("file", file.c_str());
    if (d.range.valid()) xml.PushAttribute("line", d.range.line);
    xml.OpenElement("failure");
    xml.PushAttribute("message", d.message.c_str());
    xml.PushAttribute("type", severity_name(d.severity));
    std::string body =
        d.range.valid() ? fmt::format("line {}, column {}: {}", d.range.line, d.range.column, d.message) : d.message;
    for (const auto& n : d.notes)
        body += n.range.valid() ? fmt::format("\nnote: {}:{}: {}", n.range.file, n.range.line, n.message)
                                : fmt::format("\nnote: {}", n.message);
    if (d.fix) body += fmt::format("\nhelp: {}", d.fix->title);
    if (const std::string url = rule_doc_url(d.code); !url.empty()) body += "\ndocs: " + url;
    xml.PushText(body.c_str());
    xml.CloseElement();
    xml.CloseElement();
}

void write_pass(tinyxml2::XMLPrinter& xml, const std::string& file) {
    xml.OpenElement("testcase");
    xml.PushAttribute("name", "mbridge-lint");
    xml.PushAttribute("classname", file.c_str());
    xml.PushAttribute("file", file.c_str());
    xml.CloseElement();
}

}  // namespace

void write_junit(std::ostream& out, const std::vector<Diagnostic>& diags, const std::vector<std::string>& files_checked,
                 const std::string& base_dir) {
    auto shown = [&](const std::string& file) { return relative_to(file, base_dir).value_or(file); };
    std::map<std::string, std::vector<const Diagnostic*>> by_file;  // sorted by file name
    for (const auto& f : files_checked) by_file[shown(f)];
    for (const auto& d : diags) by_file[shown(d.range.file)].push_back(&d);
    std::size_t tests = 0;
    for (const auto& [file, found] : by_file) tests += std::max<std::size_t>(1, found.size());

    tinyxml2::XMLPrinter xml;
    xml.PushHeader(false, true);
    xml.OpenElement("testsuites");
    xml.PushAttribute("name", "mbridge-lint");
    xml.PushAttribute("tests", static_cast<int64_t>(tests));
    xml.PushAttribute("failures", static_cast<int64_t>(diags.size()));
    xml.PushAttribute("errors", 0);
    for (const auto& [file, found] : by_file) {
        xml.OpenElement("testsuite");
        xml.PushAttribute("name", file.c_str());
        xml.PushAttribute("tests", static_cast<int64_t>(std::max<std::size_t>(1, found.size())));
        xml.PushAttribute("failures", static_cast<int64_t>(found.size()));
        xml.PushAttribute("errors", 0);
        if (found.empty()) write_pass(xml, file);
        for (const Diagnostic* d : found) write_failure(xml, *d, file);
        xml.CloseElement();
    }
    xml.CloseElement();
    out << xml.CStr();
}

}  // namespace mbl
