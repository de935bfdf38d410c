#pragma once
// The names of the effective model's fields. The build generates the list (build/generated/model_fields.def, by
// cmake/ModelFields.cmake) from the fields of Megatron Core's config classes at every known revision
// (schemas/mcore/classes/fields.json), of Megatron Bridge's model classes (schemas/bridge/model_fields.json) and the
// fields a mixed_precision config copies onto the model (schemas/precision.json); this header turns it into one constant per field, mbl::field::recompute_method.
// Rules read the model through these constants, so a misspelt field name does not compile.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace mbl {

// Every field name, sorted.
inline constexpr std::string_view kModelFieldNames[] = {
#define MBL_MODEL_FIELD(NAME) #NAME,
#include "model_fields.def"
#undef MBL_MODEL_FIELD
};

constexpr bool is_model_field(std::string_view name) {
    return std::binary_search(std::begin(kModelFieldNames), std::end(kModelFieldNames), name);
}

// A field name that is known to be a field of the effective model.
class FieldName {
public:
    // Checked at compile time: FieldName("recompute_methd") does not compile.
    consteval explicit FieldName(std::string_view name) : name_(name) {
        if (!is_model_field(name))
            throw "not a field of Megatron Core or Bridge (schemas/mcore/classes, schemas/bridge)";  // not a constant expression
    }
    // A name known only at run time (a revision's enum, a key from the config): nullopt when no field has it.
    static std::optional<FieldName> find(std::string_view name) {
        auto it = std::lower_bound(std::begin(kModelFieldNames), std::end(kModelFieldNames), name);
        if (it == std::end(kModelFieldNames) || *it != name) return std::nullopt;
        return FieldName(*it, Checked{});
    }
    // A name the linter's own data gives (a revision's enum): std::logic_error when no field has it.
    static FieldName named(std::string_view name) {
        if (auto f = find(name)) return *f;
        throw std::logic_error(
            fmt::format("\"{}\" is not a field of the effective model (schemas/mcore/classes, schemas/bridge)", name));
    }

    constexpr std::string_view str() const { return name_; }
    friend constexpr bool operator==(FieldName a, FieldName b) { return a.name_ == b.name_; }

private:
    struct Checked {};
    constexpr FieldName(std::string_view name, Checked) : name_(name) {}
    std::string_view name_;
};

namespace field {
#define MBL_MODEL_FIELD(NAME) inline constexpr FieldName NAME{#NAME};
#include "model_fields.def"
#undef MBL_MODEL_FIELD
}  // namespace field

}  // namespace mbl

template <>
struct fmt::formatter<mbl::FieldName> : fmt::formatter<std::string_view> {
    auto format(mbl::FieldName name, fmt::format_context& ctx) const {
        return fmt::formatter<std::string_view>::format(name.str(), ctx);
    }
};
