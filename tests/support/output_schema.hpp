#pragma once
// Validates what a command printed against its contract, schemas/output/<name>.schema.json, with Debian's
// python3-jsonschema (tests/support/validate_json.py): a JSON Schema validator is not written here.
#include <filesystem>
#include <fstream>
#include <string>

#include "run.hpp"
#include "temp_dir.hpp"

namespace mbl::test {

// "" when `json_text` satisfies the schema; otherwise the violations, one per line (or why it could not be checked).
inline std::string output_schema_violations(const std::string& name, const std::string& json_text) {
    const std::string root = std::filesystem::path(MBRIDGE_LINT_TEST_DATA).parent_path().string();
    TempDir dir;
    const std::string instance = dir / "output.json";
    std::ofstream(instance) << json_text;
    const RunResult r = run_shell(std::string(MBRIDGE_LINT_PYTHON3) + " " + root + "/tests/support/validate_json.py " +
                                  root + "/schemas/output/" + name + ".schema.json " + instance);
    if (r.code == 0) return "";
    return r.out.empty() ? "validate_json.py exited with " + std::to_string(r.code) : r.out;
}

}  // namespace mbl::test
