#include "json_schema.hpp"

#include <algorithm>
#include <regex>
#include <set>
#include <stdexcept>

namespace mbl::test {

using json = nlohmann::json;

namespace {

bool has_type(const json& v, const std::string& type) {
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "boolean") return v.is_boolean();
    if (type == "null") return v.is_null();
    if (type == "integer") return v.is_number_integer();
    if (type == "number") return v.is_number();
    return false;
}

bool format_ok(const std::string& format, const std::string& s) {
    static const std::regex uri(R"(^[A-Za-z][A-Za-z0-9+.\-]*:[^\s"<>\\^`{|}]*$)");
    static const std::regex reference(R"(^[^\s"<>\\^`{|}]*$)");
    static const std::regex percent(R"(%(?![0-9A-Fa-f]{2}))");
    static const std::regex date_time(R"(^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$)");
    if (format == "uri") return std::regex_match(s, uri) && !std::regex_search(s, percent);
    if (format == "uri-reference") return std::regex_match(s, reference) && !std::regex_search(s, percent);
    if (format == "date-time") return std::regex_match(s, date_time);
    return true;  // other formats are annotations in draft 4
}

const std::set<std::string> kUnimplemented{"maxLength",     "minLength",    "maxItems",     "additionalItems",
                                           "allOf",         "not",          "dependencies", "multipleOf",
                                           "maxProperties", "minProperties"};

}  // namespace

bool JsonSchemaValidator::uses_unimplemented_keyword(const json& schema) {
    if (schema.is_array())
        return std::any_of(schema.begin(), schema.end(), [](const json& s) { return uses_unimplemented_keyword(s); });
    if (!schema.is_object()) return false;
    for (const auto& [key, value] : schema.items()) {
        if (kUnimplemented.count(key)) return true;
        if (key == "properties" || key == "patternProperties" || key == "definitions") {
            for (const auto& [name, sub] : value.items())
                if (uses_unimplemented_keyword(sub)) return true;
        } else if (key != "enum" && uses_unimplemented_keyword(value)) {
            return true;
        }
    }
    return false;
}

std::vector<std::string> JsonSchemaValidator::validate(const json& instance) const {
    std::vector<std::string> errors;
    check(root_, instance, "$", errors, 0);
    return errors;
}

const json& JsonSchemaValidator::resolve(const std::string& ref) const {
    if (ref.empty() || ref[0] != '#') throw std::runtime_error("only same-document references are supported: " + ref);
    std::string pointer;
    // Percent-decoding (URI fragment) before the JSON pointer's own ~0 / ~1 escapes.
    for (size_t i = 1; i < ref.size(); ++i) {
        if (ref[i] == '%' && i + 2 < ref.size()) {
            pointer += static_cast<char>(std::stoi(ref.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            pointer += ref[i];
        }
    }
    return root_.at(json::json_pointer(pointer));
}

void JsonSchemaValidator::check(const json& s, const json& v, const std::string& path, std::vector<std::string>& errors,
                                int depth) const {
    if (depth > 200) {
        errors.push_back(path + ": schema nesting too deep");
        return;
    }
    if (!s.is_object()) {
        errors.push_back(path + ": schema is not an object");
        return;
    }
    auto fail = [&](const std::string& what) { errors.push_back(path + ": " + what); };
    if (s.contains("$ref")) {  // draft 4: a reference replaces its siblings
        check(resolve(s["$ref"].get<std::string>()), v, path, errors, depth + 1);
        return;
    }
    for (const auto& [key, rule] : s.items()) {
        if (key == "type") {
            bool ok = false;
            if (rule.is_string()) ok = has_type(v, rule);
            else
                for (const auto& t : rule) ok |= has_type(v, t);
            if (!ok) fail("expected type " + rule.dump() + ", got " + v.type_name());
        } else if (key == "enum") {
            bool found = false;
            for (const auto& e : rule) found |= (e == v);
            if (!found) fail(v.dump() + " is not one of " + rule.dump());
        } else if (key == "required") {
            if (v.is_object())
                for (const auto& name : rule)
                    if (!v.contains(name.get<std::string>())) fail("missing required property " + name.dump());
        } else if (key == "properties") {
            if (v.is_object())
                for (const auto& [name, sub] : rule.items())
                    if (v.contains(name)) check(sub, v[name], path + "." + name, errors, depth + 1);
        } else if (key == "patternProperties") {
            if (v.is_object())
                for (const auto& [pattern, sub] : rule.items())
                    for (const auto& [name, item] : v.items())
                        if (std::regex_search(name, std::regex(pattern)))
                            check(sub, item, path + "." + name, errors, depth + 1);
        } else if (key == "additionalProperties") {
            if (!v.is_object()) continue;
            // The names neither listed in properties nor matching a patternProperties pattern.
            for (const auto& [name, item] : v.items()) {
                if (s.contains("properties") && s["properties"].contains(name)) continue;
                bool patterned = false;
                if (s.contains("patternProperties"))
                    for (const auto& [pattern, sub] : s["patternProperties"].items())
                        patterned |= std::regex_search(name, std::regex(pattern));
                if (patterned) continue;
                if (!rule.is_boolean()) check(rule, item, path + "." + name, errors, depth + 1);
                else if (!rule.get<bool>()) fail("property \"" + name + "\" is not allowed");
            }
        } else if (key == "items") {
            if (!v.is_array()) continue;
            if (rule.is_array()) {
                for (size_t i = 0; i < v.size() && i < rule.size(); ++i)
                    check(rule[i], v[i], path + "[" + std::to_string(i) + "]", errors, depth + 1);
            } else {
                for (size_t i = 0; i < v.size(); ++i)
                    check(rule, v[i], path + "[" + std::to_string(i) + "]", errors, depth + 1);
            }
        } else if (key == "minItems") {
            if (v.is_array() && v.size() < rule.get<size_t>()) fail("fewer than " + rule.dump() + " items");
        } else if (key == "uniqueItems") {
            if (v.is_array() && rule.get<bool>())
                for (size_t i = 0; i < v.size(); ++i)
                    for (size_t j = i + 1; j < v.size(); ++j)
                        if (v[i] == v[j])
                            fail("items " + std::to_string(i) + " and " + std::to_string(j) + " are equal");
        } else if (key == "minimum" || key == "maximum") {
            if (!v.is_number()) continue;
            const double limit = rule.get<double>(), x = v.get<double>();
            const bool exclusive = s.value(key == "minimum" ? "exclusiveMinimum" : "exclusiveMaximum", false);
            const bool ok =
                key == "minimum" ? (exclusive ? x > limit : x >= limit) : (exclusive ? x < limit : x <= limit);
            if (!ok) fail(v.dump() + " violates " + key + " " + rule.dump());
        } else if (key == "exclusiveMinimum" || key == "exclusiveMaximum") {
            continue;  // read with minimum / maximum
        } else if (key == "pattern") {
            if (v.is_string() && !std::regex_search(v.get<std::string>(), std::regex(rule.get<std::string>())))
                fail(v.dump() + " does not match " + rule.dump());
        } else if (key == "format") {
            if (v.is_string() && !format_ok(rule, v.get<std::string>()))
                fail(v.dump() + " is not a valid " + rule.dump());
        } else if (key == "anyOf" || key == "oneOf") {
            int matched = 0;
            for (const auto& sub : rule) {
                std::vector<std::string> sub_errors;
                check(sub, v, path, sub_errors, depth + 1);
                matched += sub_errors.empty() ? 1 : 0;
            }
            if (key == "anyOf" && matched == 0) fail("matches none of anyOf");
            if (key == "oneOf" && matched != 1)
                fail("matches " + std::to_string(matched) + " of oneOf, not exactly one");
        } else if (kUnimplemented.count(key)) {
            fail("unsupported schema keyword \"" + key + "\"");
        }  // anything else is an annotation (description, default, ...) or not a keyword at all
    }
}

}  // namespace mbl::test
