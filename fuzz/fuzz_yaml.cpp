// Fuzz target: the YAML front end and everything around and after it (the session's suppressions and rule
// selection, validation, effective model, every rule, the memory advice rules with a budget), at two Megatron Core
// revisions, and every report writer on what comes out: the writers quote source text, so malformed input must not
// break them either.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "engine/lint_session.hpp"
#include "report/report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (const char* rev : {"0.14", "main"}) {
        mbl::SourceManager sources;
        mbl::SessionOptions options{.mcore = rev, .te_version = "2.4.0", .gpu_memory_bytes = 80.0 * (1ull << 30)};
        // In memory, in a folder that does not exist: no configuration file governs it.
        const std::string path = "/nonexistent/mbridge-lint-fuzz/fuzz.yaml";
        sources.add(path, text);
        mbl::LintSession session(options, sources);
        const auto result = session.lint(path);
        std::ostringstream out;
        mbl::write_text(out, result.diagnostics, sources, mbl::TextStyle{});
        mbl::write_json(out, result.diagnostics);
        mbl::write_sarif(out, result.diagnostics, sources, mbl::SarifOptions{"/fuzz"});
        mbl::write_github(out, result.diagnostics, "/fuzz");
    }
    return 0;
}
