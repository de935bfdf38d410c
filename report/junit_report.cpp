// JUnit XML, the test-report format CI systems display (GitLab's `artifacts:reports:junit`, Jenkins, Azure): one test
// suite per file, a failed test case per diagnostic, a passed one per checked file without diagnostics.
#include <fmt/format.h>

#include <map>
#include <ostream>
#include <pugixml.hpp>
#include <string_view>

#include "core/paths.hpp"
#include "report/report.hpp"

namespace mbl {

namespace {

// XML 1.0 has no way to write most control characters, not even as character references, nor U+FFFE / U+FFFF, and
// a document must be UTF-8 as declared: each such character is written as the visible text \xNN (or U+FFFD for a
// byte that is not UTF-8), so the report stays well-formed whatever a file name or a message holds.
std::string xml_text(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (b < 0x80) {
            if (b < 0x20 && b != '\t' && b != '\n' && b != '\r') out += fmt::format("\\x{:02X}", b);
            else out += static_cast<char>(b);
            ++i;
            continue;
        }
        const std::size_t length = b >= 0xF5 ? 0 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 ? 2 : 0;
        bool encoded = length > 0 && i + length <= s.size();  // a well-formed sequence
        char32_t c = encoded ? b & (0x7F >> length) : 0;
        for (std::size_t k = 1; encoded && k < length; ++k) {
            const auto next = static_cast<unsigned char>(s[i + k]);
            encoded = (next & 0xC0) == 0x80;
            c = (c << 6) | (next & 0x3F);
        }
        encoded = encoded && !(length == 3 && c < 0x800) && !(length == 4 && (c < 0x10000 || c > 0x10FFFF)) &&
                  !(c >= 0xD800 && c <= 0xDFFF);
        if (encoded && c != 0xFFFE && c != 0xFFFF) out.append(s.substr(i, length));
        else out += "\uFFFD";
        i += encoded ? length : 1;  // a malformed byte is replaced alone, so the text after it is kept
    }
    return out;
}

void add_failure(pugi::xml_node suite, const Diagnostic& d, const std::string& file) {
    pugi::xml_node c = suite.append_child("testcase");
    c.append_attribute("name") = xml_text(fmt::format("{} {}", d.code, d.name)).c_str();
    c.append_attribute("classname") = xml_text(file).c_str();
    c.append_attribute("file") = xml_text(file).c_str();
    if (d.range.valid()) c.append_attribute("line") = d.range.line;
    pugi::xml_node failure = c.append_child("failure");
    failure.append_attribute("message") = xml_text(d.message).c_str();
    failure.append_attribute("type") = severity_name(d.severity);
    std::string body =
        d.range.valid() ? fmt::format("line {}, column {}: {}", d.range.line, d.range.column, d.message) : d.message;
    for (const auto& n : d.notes)
        body += n.range.valid() ? fmt::format("\nnote: {}:{}: {}", n.range.file, n.range.line, n.message)
                                : fmt::format("\nnote: {}", n.message);
    if (d.fix) body += fmt::format("\nhelp: {}", d.fix->title);
    if (const std::string url = rule_doc_url(d.code); !url.empty()) body += "\ndocs: " + url;
    failure.text() = xml_text(body).c_str();
}

void add_pass(pugi::xml_node suite, const std::string& file) {
    pugi::xml_node c = suite.append_child("testcase");
    c.append_attribute("name") = "mbridge-lint";
    c.append_attribute("classname") = xml_text(file).c_str();
    c.append_attribute("file") = xml_text(file).c_str();
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

    pugi::xml_document doc;
    pugi::xml_node declaration = doc.append_child(pugi::node_declaration);
    declaration.append_attribute("version") = "1.0";
    declaration.append_attribute("encoding") = "UTF-8";
    pugi::xml_node suites = doc.append_child("testsuites");
    suites.append_attribute("name") = "mbridge-lint";
    suites.append_attribute("tests") = static_cast<unsigned long long>(tests);
    suites.append_attribute("failures") = static_cast<unsigned long long>(diags.size());
    suites.append_attribute("errors") = 0;
    for (const auto& [file, found] : by_file) {
        pugi::xml_node suite = suites.append_child("testsuite");
        suite.append_attribute("name") = xml_text(file).c_str();
        suite.append_attribute("tests") = static_cast<unsigned long long>(std::max<std::size_t>(1, found.size()));
        suite.append_attribute("failures") = static_cast<unsigned long long>(found.size());
        suite.append_attribute("errors") = 0;
        if (found.empty()) add_pass(suite, file);
        for (const Diagnostic* d : found) add_failure(suite, *d, file);
    }
    doc.save(out, "  ");
}

}  // namespace mbl
