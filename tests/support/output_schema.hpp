#pragma once
// Validates JSON against a JSON Schema with Debian's python3-jsonschema (tests/support/validate_json.py): what a command
// printed against its contract (schemas/output/<name>.schema.json), SARIF logs against the OASIS schema. A JSON
// Schema validator is not written here.
#include <filesystem>
#include <fstream>
#include <string>

#include "run.hpp"
#include "temp_dir.hpp"

namespace mbl::test {

// "" when `json_text` satisfies the JSON Schema in the file `schema_path`; otherwise the violations, one per line (or
// why it could not be checked). Formats (uri, date-time, ...) are checked too.
inline std::string schema_violations(const std::string& schema_path, const std::string& json_text) {
    const std::string root = std::filesystem::path(MBRIDGE_LINT_TEST_DATA).parent_path().string();
    TempDir dir;
    const std::string instance = dir / "instance.json";
    std::ofstream(instance) << json_text;
    const RunResult r = run_shell(std::string(MBRIDGE_LINT_PYTHON3) + " " + root + "/tests/support/validate_json.py " +
                                  schema_path + " " + instance);
    if (r.code == 0) return "";
    return r.out.empty() ? "validate_json.py exited with " + std::to_string(r.code) : r.out;
}

// The same against an output's contract, schemas/output/<name>.schema.json.
inline std::string output_schema_violations(const std::string& name, const std::string& json_text) {
    const std::string root = std::filesystem::path(MBRIDGE_LINT_TEST_DATA).parent_path().string();
    return schema_violations(root + "/schemas/output/" + name + ".schema.json", json_text);
}

// The same against the OASIS SARIF 2.1.0 schema (tests/data/sarif/).
inline std::string sarif_violations(const std::string& json_text) {
    return schema_violations(std::string(MBRIDGE_LINT_TEST_DATA) + "/data/sarif/sarif-schema-2.1.0.json", json_text);
}

}  // namespace mbl::test
