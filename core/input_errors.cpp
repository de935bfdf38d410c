#include "core/input_errors.hpp"

#include <fmt/format.h>

#include <iterator>

#include "core/line_index.hpp"
#include "core/utf8.hpp"

namespace mbl {

namespace {

constexpr InputErrorInfo kInputErrors[] = {
#define INPUT_ERROR(kind, code, name, severity, summary, doc) \
    {InputError::kind, code, name, Severity::severity, summary, doc},
#include "core/input_errors.def"
#undef INPUT_ERROR
};

constexpr bool in_kind_order() {
    for (std::size_t k = 0; k < std::size(kInputErrors); ++k)
        if (static_cast<std::size_t>(kInputErrors[k].kind) != k) return false;
    return true;
}
static_assert(in_kind_order(), "core/input_errors.def: the table is indexed by kind");

}  // namespace

std::span<const InputErrorInfo> input_error_table() { return kInputErrors; }

const InputErrorInfo& input_error_info(InputError kind) { return kInputErrors[static_cast<std::size_t>(kind)]; }

const char* input_error_code(InputError kind) { return input_error_info(kind).code; }

const char* input_error_name(InputError kind) { return input_error_info(kind).name; }

Diagnostic input_error(InputError kind, SourceRange range, std::string message) {
    Diagnostic d;
    d.code = input_error_code(kind);
    d.name = input_error_name(kind);
    d.severity = input_error_info(kind).severity;
    d.range = std::move(range);
    d.message = std::move(message);
    return d;
}

Diagnostic unreadable_file(const std::string& path, std::string_view why) {
    return input_error(InputError::Unreadable, SourceRange::whole_file(path),
                       fmt::format("cannot read {}: {}", path, why));
}

std::optional<Diagnostic> encoding_error(const std::string& name, std::string_view text) {
    const auto bad = first_invalid_utf8(text);
    if (!bad) return std::nullopt;
    LineIndex lines(text);
    const int line = lines.line_of(*bad);
    const int column = lines.column_of(*bad);
    return input_error(InputError::Syntax, SourceRange{name, line, column, line, column + 1},
                       fmt::format("byte 0x{:02X} is not valid UTF-8; save the file as UTF-8",
                                   static_cast<unsigned char>(text[*bad])));
}

}  // namespace mbl
