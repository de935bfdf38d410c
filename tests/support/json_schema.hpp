#pragma once
// A JSON Schema (draft 4) validator for the keywords the SARIF 2.1.0 schema uses, written for the tests because
// Debian ships no C++ JSON Schema validator. Keywords: type, enum, properties, patternProperties,
// additionalProperties, required, items, minItems, uniqueItems, minimum/maximum (with draft-4 exclusive flags),
// pattern, format (uri, uri-reference, date-time), anyOf, oneOf, $ref (JSON pointers into the same document);
// annotations and non-keywords are ignored. A draft-4 keyword it does not implement (maxLength, allOf, not, ...) is
// reported as an error, so a schema it cannot check never passes.
// It is checked against the official JSON-Schema-Test-Suite (Debian package json-schema-test-suite).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mbl::test {

class JsonSchemaValidator {
public:
    explicit JsonSchemaValidator(nlohmann::json schema) : root_(std::move(schema)) {}
    // "path: problem" for every violation; empty when the instance is valid.
    std::vector<std::string> validate(const nlohmann::json& instance) const;
    // True when `schema` (anywhere inside) uses a draft-4 keyword this validator does not implement.
    static bool uses_unimplemented_keyword(const nlohmann::json& schema);

private:
    void check(const nlohmann::json& schema, const nlohmann::json& value, const std::string& path,
               std::vector<std::string>& errors, int depth) const;
    const nlohmann::json& resolve(const std::string& ref) const;
    nlohmann::json root_;
};

}  // namespace mbl::test
