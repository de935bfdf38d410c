#pragma once
// A JSON value of a measurement or verdict file as a config Value (scalars and lists: what config fields hold).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/value.hpp"

namespace mbl::test {

inline Value value_from_json(const nlohmann::json& j) {
    if (j.is_boolean()) return Value::boolean(j.get<bool>());
    if (j.is_number_integer()) return Value::integer(j.get<std::int64_t>());
    if (j.is_number()) return Value::floating(j.get<double>());
    if (j.is_string()) return Value::string(j.get<std::string>());
    if (j.is_array()) {
        std::vector<Value> items;
        for (const auto& x : j) items.push_back(value_from_json(x));
        return Value::list(std::move(items));
    }
    return Value::null();
}

}  // namespace mbl::test
