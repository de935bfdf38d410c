#pragma once
// Output formats for diagnostics. Text is for people (file:line:col, severity[CODE], the source line and a caret,
// notes); JSON is a stable machine format documented in the README.
#include <iosfwd>
#include <string>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/source_manager.hpp"

namespace mbl {

struct TextStyle {
    bool color = false;
};

void write_text(std::ostream& out, const std::vector<Diagnostic>& diags, const SourceManager& sources,
                const TextStyle& style);
// "2 problems (1 error, 1 warning)" / "no problems found".
std::string summary_line(const DiagnosticCounts& counts, int files_checked);

void write_json(std::ostream& out, const std::vector<Diagnostic>& diags);

}  // namespace mbl
