#include <nlohmann/json.hpp>
#include <ostream>

#include "report/report.hpp"

namespace mbl {

using json = nlohmann::ordered_json;

static json position(const SourceRange& r) {
    json j;
    j["file"] = r.file.empty() ? json(nullptr) : json(r.file);
    j["line"] = r.valid() ? json(r.line) : json(nullptr);
    j["column"] = r.valid() ? json(r.column) : json(nullptr);
    return j;
}

void write_json(std::ostream& out, const std::vector<Diagnostic>& diags, const std::vector<RevisionChoice>& revisions,
                const FileCounts& files) {
    DiagnosticCounts counts;
    json list = json::array();
    for (const auto& d : diags) {
        counts.add(d);
        json j = position(d.range);
        j["code"] = d.code;
        j["name"] = d.name;
        j["severity"] = severity_name(d.severity);
        j["end_line"] = d.range.valid() ? json(d.range.end_line) : json(nullptr);
        j["end_column"] = d.range.valid() ? json(d.range.end_column) : json(nullptr);
        j["message"] = d.message;
        json notes = json::array();
        for (const auto& n : d.notes) {
            json nj = position(n.range);
            nj["message"] = n.message;
            notes.push_back(std::move(nj));
        }
        j["notes"] = std::move(notes);
        if (d.fix)
            j["fix"] = {{"title", d.fix->title}, {"safe", d.fix->is_safe}, {"applicable", !d.fix->edits.empty()}};
        const std::string url = rule_doc_url(d.code);
        j["url"] = url.empty() ? json(nullptr) : json(url);
        list.push_back(std::move(j));
    }
    // Fields added within version 1 (schemas/output/check.schema.json): each diagnostic's `url` and fix `applicable`,
    // the summary's files and fixable counts.
    json doc;
    doc["kind"] = "check";  // the shape schemas/output/check.schema.json describes
    doc["version"] = 1;
    doc["diagnostics"] = std::move(list);
    const FixableCounts fixable = count_fixable(diags);
    doc["summary"] = {
        {"errors", counts.errors},        {"warnings", counts.warnings},
        {"infos", counts.infos},          {"files_checked", files.checked},
        {"files_skipped", files.skipped}, {"fixable", {{"safe", fixable.safe}, {"unsafe", fixable.unsafe}}}};
    if (!revisions.empty()) {
        json list_of_revisions = json::array();
        for (const auto& r : revisions) {
            json j;
            j["revision"] = r.revision ? json(r.revision->name) : json(nullptr);
            j["source"] = revision_source_name(r.source);
            j["reason"] = r.reason;
            j["checkout"] = r.checkout.empty() ? json(nullptr) : json(r.checkout);
            j["commit"] = r.commit.empty() ? json(nullptr) : json(r.commit);
            j["mcore_path"] = r.mcore_tree.empty() ? json(nullptr) : json(r.mcore_tree);
            j["facts"] = r.revision ? json(r.revision->facts_source()) : json(nullptr);
            list_of_revisions.push_back(std::move(j));
        }
        doc["revisions"] = std::move(list_of_revisions);
    }
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace mbl
