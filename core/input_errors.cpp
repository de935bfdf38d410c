#include "core/input_errors.hpp"

#include <fmt/format.h>

#include "core/line_index.hpp"
#include "core/utf8.hpp"

namespace mbl {

const char* input_error_code(InputError kind) {
    switch (kind) {
        case InputError::Unreadable: return "IN001";
        case InputError::Syntax: return "IN002";
        case InputError::NotAMapping: return "IN003";
        case InputError::UnknownKey: return "IN004";
        case InputError::WrongType: return "IN005";
        case InputError::DuplicateKey: return "IN006";
        case InputError::BadOverride: return "IN007";
        case InputError::LimitExceeded: return "IN008";
        case InputError::UnknownTarget: return "IN009";
        case InputError::UnknownModel: return "IN010";
        case InputError::UnknownValue: return "IN011";
        case InputError::NotResolved: return "IN012";
    }
    return "IN000";
}

const char* input_error_name(InputError kind) {
    switch (kind) {
        case InputError::Unreadable: return "unreadable-file";
        case InputError::Syntax: return "syntax-error";
        case InputError::NotAMapping: return "not-a-mapping";
        case InputError::UnknownKey: return "unknown-key";
        case InputError::WrongType: return "wrong-type";
        case InputError::DuplicateKey: return "duplicate-key";
        case InputError::BadOverride: return "bad-override";
        case InputError::LimitExceeded: return "limit-exceeded";
        case InputError::UnknownTarget: return "unknown-target";
        case InputError::UnknownModel: return "unknown-model";
        case InputError::UnknownValue: return "unknown-value";
        case InputError::NotResolved: return "not-resolved";
    }
    return "input-error";
}

Diagnostic input_error(InputError kind, SourceRange range, std::string message) {
    Diagnostic d;
    d.code = input_error_code(kind);
    d.name = input_error_name(kind);
    d.severity = Severity::Error;
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
