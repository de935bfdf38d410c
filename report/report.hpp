#pragma once
// Output formats for diagnostics. Text is for people (file:line:col, severity[CODE], the source line and a caret,
// notes); JSON is a stable machine format documented in docs/user-guide.md.
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/revision_detection.hpp"
#include "core/source_manager.hpp"

namespace mbl {

struct TextStyle {
    bool color = false;
};

void write_text(std::ostream& out, const std::vector<Diagnostic>& diags, const SourceManager& sources,
                const TextStyle& style);
// "2 problems (1 error, 1 warning)" / "no problems found".
std::string summary_line(const DiagnosticCounts& counts, int files_checked);

// `revisions`: the Megatron Core revisions the run used and why, each once (the "revisions" field).
void write_json(std::ostream& out, const std::vector<Diagnostic>& diags,
                const std::vector<RevisionChoice>& revisions = {});

// SARIF 2.1.0 (report/sarif_report.cpp): one run, every rule's metadata, relative URIs against `base_dir` (files
// outside it get absolute file: URIs), partialFingerprints that survive line shifts, fixes as artifactChanges.
struct SarifOptions {
    std::string base_dir;  // absolute; usually the repository root (the current directory)
};
void write_sarif(std::ostream& out, const std::vector<Diagnostic>& diags, const SourceManager& sources,
                 const SarifOptions& options);

// GitHub Actions workflow commands (report/github_report.cpp): one `::error file=...,line=...::message` line per
// diagnostic, paths relative to `base_dir`, notes folded into the message.
void write_github(std::ostream& out, const std::vector<Diagnostic>& diags, const std::string& base_dir);

// The documentation page of a rule (docs/rules.md anchor), for SARIF helpUri and LSP codeDescription; "" for
// codes without a page (input errors).
std::string rule_doc_url(std::string_view code);

}  // namespace mbl
