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
    bool links = true;  // a `docs:` line with the diagnostic's documentation link
};

// `full` text: file:line:col, severity[CODE], the source line and a caret, notes, the fix (`help:`, with its safety)
// and the documentation link.
void write_text(std::ostream& out, const std::vector<Diagnostic>& diags, const SourceManager& sources,
                const TextStyle& style);
// `concise` text: one line per diagnostic, `[*]` before the message when --fix would fix it.
void write_concise(std::ostream& out, const std::vector<Diagnostic>& diags, const TextStyle& style);

// What a run looked at: the files checked, and those a walk found but skipped (not Bridge configs or recipes).
struct FileCounts {
    int checked = 0;
    int skipped = 0;
};
// "2 problems (1 error, 1 warning) in 3 files checked (1 skipped: not a config or recipe)" / "no problems found (...)".
std::string summary_line(const DiagnosticCounts& counts, const FileCounts& files);
// The fixes --fix would apply, and those --unsafe-fixes adds: "2 fixable with --fix, 1 more with --unsafe-fixes";
// "" when none is. `unsafe_enabled`: --unsafe-fixes was given, so unsafe fixes count as fixable with --fix.
struct FixableCounts {
    int safe = 0;    // applied by --fix
    int unsafe = 0;  // applied by --fix --unsafe-fixes
};
FixableCounts count_fixable(const std::vector<Diagnostic>& diags);
std::string fixable_line(const FixableCounts& fixable, bool unsafe_enabled);
// After --fix, what was fixed and what is left, and why each problem left was not fixed: "fixed 2 problems,
// 1 remains (RC005): 1 fixable with --fix --unsafe-fixes"; "fixed 1 problem, none remain"; "" when nothing was
// fixed nor is left. `not_applied` says why fixes that --fix could have applied were not ("" when unknown).
std::string fix_summary_line(int fixed, const std::vector<Diagnostic>& remaining, bool unsafe_enabled,
                             const std::string& not_applied);
// "2 recipes evaluated; 1 resolves all five recompute fields (50.0%); 2 have a known architecture (100.0%)".
std::string recipes_line(int recipes, int resolved, int architecture_known);

// --statistics: one line per code, most frequent first: count, code, `[*]` when all its fixes are safe, name.
void write_statistics(std::ostream& out, const std::vector<Diagnostic>& diags);
void write_statistics_json(std::ostream& out, const std::vector<Diagnostic>& diags);

// `revisions`: the Megatron Core revisions the run used and why, each once (the "revisions" field). `files`: the
// summary's file counts.
void write_json(std::ostream& out, const std::vector<Diagnostic>& diags,
                const std::vector<RevisionChoice>& revisions = {}, const FileCounts& files = {});

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

// GitLab Code Quality (report/gitlab_report.cpp): a JSON array of issues with description, check_name, a fingerprint
// that survives line shifts, severity and location (path relative to `base_dir`, lines).
void write_gitlab(std::ostream& out, const std::vector<Diagnostic>& diags, const SourceManager& sources,
                  const std::string& base_dir);

// JUnit XML (report/junit_report.cpp): a test suite per file; each diagnostic a failed test case, each checked file
// without diagnostics a passed one.
void write_junit(std::ostream& out, const std::vector<Diagnostic>& diags, const std::vector<std::string>& files_checked,
                 const std::string& base_dir);

// The documentation of a rule or input-error code (report/doc_links.cpp): the docs/rules.md anchor, under the page
// rules_page_url() names; "" for unknown codes or when no page is known.
std::string rule_doc_url(std::string_view code);
// The MBRIDGE_LINT_DOCS_URL environment variable, else the build setting of that name (a packager's web copy of
// docs/rules.md); else the copy installed beside the binary, else the source tree's, as a file: URL; "" when neither
// is there.
const std::string& rules_page_url();

}  // namespace mbl
