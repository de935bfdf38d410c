#include "core/diagnostic.hpp"

#include <algorithm>
#include <tuple>

namespace mbl {

const char* severity_name(Severity s) {
    switch (s) {
        case Severity::Error: return "error";
        case Severity::Warning: return "warning";
        case Severity::Info: return "info";
    }
    return "error";
}

void DiagnosticCounts::add(const Diagnostic& d) {
    switch (d.severity) {
        case Severity::Error: ++errors; break;
        case Severity::Warning: ++warnings; break;
        case Severity::Info: ++infos; break;
    }
}

void sort_diagnostics(std::vector<Diagnostic>& diags) {
    std::stable_sort(diags.begin(), diags.end(), [](const Diagnostic& a, const Diagnostic& b) {
        return std::tie(a.range.file, a.range.line, a.range.column, a.code, a.message) <
               std::tie(b.range.file, b.range.line, b.range.column, b.code, b.message);
    });
}

}  // namespace mbl
