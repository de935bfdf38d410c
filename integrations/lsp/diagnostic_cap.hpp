#pragma once
// The most diagnostics one document shows in the editor. A generated config with a typo on every line yields one
// diagnostic per line: published whole, 500,000 of them are 250 MB of JSON that the server builds and the editor
// draws for minutes. The editor gets the first N (in file order) and one summary in place of the rest, which says
// how many there are and of which severity; `check` still lists them all.
#include <cstddef>
#include <string>

#include "core/diagnostic.hpp"
#include "integrations/lsp/json_rpc.hpp"

namespace mbl::lsp {

// Enough for any real config (the Bridge recipes produce a handful per file), small enough to publish at once.
constexpr std::size_t kDefaultMaxDiagnostics = 1000;

// The diagnostics one document's list leaves out, gathered while the list is built.
class OmittedDiagnostics {
public:
    void add(Severity severity, const json& range, int count = 1);
    std::size_t count() const { return static_cast<std::size_t>(counts_.total()); }
    // The summary diagnostic at the first left-out one, with the severity of the most severe; null when none.
    json summary(std::size_t shown, const std::string& file_name) const;

private:
    DiagnosticCounts counts_;
    json first_range_;
};

// True for the summary diagnostic made by OmittedDiagnostics::summary.
bool is_omitted_summary(const json& diagnostic);

// Caps a published list (LSP diagnostics, possibly the union of several lints' lists, each with its own summary) to
// `max` diagnostics and one summary counting everything left out.
json cap_diagnostics(const json& diagnostics, std::size_t max, const std::string& file_name);

}  // namespace mbl::lsp
