// Fuzz target: the YAML front end and everything after it (validation, effective model, every rule, the memory
// advice rules with a budget), at two Megatron Core revisions, and every report writer on what comes out: the
// writers quote source text, so malformed input must not break them either.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "core/schema.hpp"
#include "engine/linter.hpp"
#include "report/report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (const char* rev : {"0.14", "main"}) {
        mbl::SourceManager sources;
        mbl::LintOptions options{mbl::Schema::instance().revision(rev), {}};
        options.rule_options.gpu_memory_bytes = 80.0 * (1ull << 30);
        options.rule_options.te_version = mbl::Version::parse("2.4.0");
        mbl::Linter linter(options, sources);
        sources.add("fuzz.yaml", text);
        const auto result = linter.lint_yaml_text("fuzz.yaml", text);
        std::ostringstream out;
        mbl::write_text(out, result.diagnostics, sources, mbl::TextStyle{});
        mbl::write_json(out, result.diagnostics);
        mbl::write_sarif(out, result.diagnostics, sources, mbl::SarifOptions{"/fuzz"});
        mbl::write_github(out, result.diagnostics, "/fuzz");
    }
    return 0;
}
