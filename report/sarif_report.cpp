// SARIF 2.1.0 output (OASIS Static Analysis Results Interchange Format), the format GitHub code scanning ingests.
#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/paths.hpp"
#include "report/fingerprint.hpp"
#include "report/report.hpp"
#include "rules/registry.hpp"
#include "version.hpp"

namespace mbl {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kFingerprintKey = "mbridgeLint/v1";

// Byte column -> Unicode code point column (SARIF columnKind unicodeCodePoints), 1-based.
int code_point_column(const SourceManager& sources, const std::string& file, int line, int byte_column) {
    auto text = sources.line(file, line);
    if (!text || byte_column < 1) return byte_column;
    int col = 1;
    const size_t limit = std::min(static_cast<size_t>(byte_column - 1), text->size());
    for (size_t i = 0; i < limit; ++i)
        if ((static_cast<unsigned char>((*text)[i]) & 0xC0) != 0x80) ++col;
    if (static_cast<size_t>(byte_column - 1) > text->size()) col += byte_column - 1 - static_cast<int>(text->size());
    return col;
}

class SarifWriter {
public:
    SarifWriter(const SourceManager& sources, const SarifOptions& options)
        : sources_(sources), options_(options), fingerprints_(sources, options.base_dir) {}

    json artifact(const std::string& file) const {
        if (auto rel = relative_to(file, options_.base_dir))
            return {{"uri", uri_encode_path(*rel)}, {"uriBaseId", "%SRCROOT%"}};
        std::error_code ec;
        return {{"uri", "file://" + uri_encode_path(fs::absolute(file, ec).lexically_normal().generic_string())}};
    }

    json region(const SourceRange& r) const {
        json j;
        j["startLine"] = r.line;
        j["startColumn"] = code_point_column(sources_, r.file, r.line, r.column);
        if (r.end_line >= r.line && r.end_line > 0) {
            j["endLine"] = r.end_line;
            j["endColumn"] = std::max(code_point_column(sources_, r.file, r.end_line, r.end_column),
                                      r.end_line == r.line ? static_cast<int>(j["startColumn"]) : 1);
        }
        return j;
    }

    json location(const SourceRange& r) const {
        json physical;
        physical["artifactLocation"] = artifact(r.file);
        if (r.valid()) physical["region"] = region(r);
        return {{"physicalLocation", std::move(physical)}};
    }

    std::string fingerprint(const Diagnostic& d) { return fingerprints_.next(d); }

    json write(const std::vector<Diagnostic>& diags) {
        // Every rule, in registry order, then the input-error codes the run produced: ruleIndex stays stable.
        json rules = json::array();
        std::map<std::string, int> index;
        for (const auto& r : all_rules()) {
            const RuleInfo& i = r->info();
            index[std::string(i.code)] = static_cast<int>(rules.size());
            json rule{{"id", i.code},
                      {"name", i.name},
                      {"shortDescription", {{"text", i.summary}}},
                      {"fullDescription", {{"text", i.summary}}},
                      {"help", {{"text", i.doc}, {"markdown", i.doc}}}};
            if (const std::string url = rule_doc_url(i.code); !url.empty()) rule["helpUri"] = url;
            rule["defaultConfiguration"] = {{"level", level(i.severity)}};
            rule["properties"] = {{"tags", json::array({i.is_rejection() ? "megatron-core-rejection" : "advice"})}};
            rules.push_back(std::move(rule));
        }
        for (const auto& d : diags) {
            if (!d.is_input_error() || index.count(d.code)) continue;
            index[d.code] = static_cast<int>(rules.size());
            json rule{{"id", d.code},
                      {"name", d.name},
                      {"shortDescription", {{"text", fmt::format("input error: {}", d.name)}}}};
            if (const std::string url = rule_doc_url(d.code); !url.empty()) rule["helpUri"] = url;
            rule["defaultConfiguration"] = {{"level", "error"}};
            rule["properties"] = {{"tags", json::array({"input-error"})}};
            rules.push_back(std::move(rule));
        }

        json results = json::array();
        for (const auto& d : diags) {
            json r;
            r["ruleId"] = d.code;
            if (auto it = index.find(d.code); it != index.end()) r["ruleIndex"] = it->second;
            r["level"] = level(d.severity);
            std::string text = d.message;
            for (const auto& n : d.notes) text += "\nnote: " + n.message;
            if (d.fix) text += "\nhelp: " + d.fix->title;
            r["message"] = {{"text", text}};
            r["locations"] = json::array({location(d.range)});
            json related = json::array();
            int id = 1;
            for (const auto& n : d.notes) {
                if (!n.range.valid()) continue;
                json l = location(n.range);
                l["id"] = id++;
                l["message"] = {{"text", n.message}};
                related.push_back(std::move(l));
            }
            if (!related.empty()) r["relatedLocations"] = std::move(related);
            r["partialFingerprints"] = {{kFingerprintKey, fingerprint(d)}};
            if (d.fix && !d.fix->edits.empty()) {
                std::map<std::string, json> by_file;
                for (const auto& e : d.fix->edits) {
                    json replacement;
                    replacement["deletedRegion"] = region(e.range);
                    if (!e.replacement.empty()) replacement["insertedContent"] = {{"text", e.replacement}};
                    by_file[e.range.file].push_back(std::move(replacement));
                }
                json changes = json::array();
                for (auto& [file, replacements] : by_file)
                    changes.push_back(
                        {{"artifactLocation", artifact(file)}, {"replacements", std::move(replacements)}});
                r["fixes"] =
                    json::array({{{"description", {{"text", d.fix->title + (d.fix->is_safe ? "" : " (unsafe)")}}},
                                  {"artifactChanges", std::move(changes)}}});
            }
            results.push_back(std::move(r));
        }

        json driver{
            {"name", "mbridge-lint"}, {"version", MBRIDGE_LINT_VERSION}, {"semanticVersion", MBRIDGE_LINT_VERSION}};
        if (!rules_page_url().empty()) driver["informationUri"] = rules_page_url();
        driver["rules"] = std::move(rules);
        std::string base = fs::path(options_.base_dir).lexically_normal().generic_string();
        if (base.empty() || base.back() != '/') base += '/';
        json run{{"tool", {{"driver", std::move(driver)}}},
                 {"originalUriBaseIds", {{"%SRCROOT%", {{"uri", "file://" + uri_encode_path(base)}}}}},
                 {"columnKind", "unicodeCodePoints"},
                 {"results", std::move(results)}};
        return json{
            {"$schema", "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"},
            {"version", "2.1.0"},
            {"runs", json::array({std::move(run)})}};
    }

private:
    static const char* level(Severity s) {
        switch (s) {
            case Severity::Error: return "error";
            case Severity::Warning: return "warning";
            case Severity::Info: return "note";
        }
        return "none";
    }

    const SourceManager& sources_;
    const SarifOptions& options_;
    Fingerprints fingerprints_;
};

}  // namespace

void write_sarif(std::ostream& out, const std::vector<Diagnostic>& diags, const SourceManager& sources,
                 const SarifOptions& options) {
    SarifWriter writer(sources, options);
    out << writer.write(diags).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace mbl
