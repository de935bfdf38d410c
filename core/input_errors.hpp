#pragma once
// Diagnostics for input the linter cannot use (exit code 2), or could not see into. One code per kind of problem.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/diagnostic.hpp"

namespace mbl {

// One kind per input-error code, in code order (core/input_errors.def).
enum class InputError {
#define INPUT_ERROR(kind, code, name, severity, summary, doc) kind,
#include "core/input_errors.def"
#undef INPUT_ERROR
};

// Everything about one input-error code: its entry of core/input_errors.def.
struct InputErrorInfo {
    InputError kind;
    const char* code;  // IN004
    const char* name;  // unknown-key
    Severity severity;
    std::string_view summary;  // one line, for `mbridge-lint rules`
    std::string_view doc;      // markdown, in the rules' sections
};

// Every input-error code, in code order.
std::span<const InputErrorInfo> input_error_table();
const InputErrorInfo& input_error_info(InputError kind);
const char* input_error_code(InputError kind);
const char* input_error_name(InputError kind);
// A diagnostic of `kind`, with the code's severity.
Diagnostic input_error(InputError kind, SourceRange range, std::string message);
// IN001 for a file that cannot be read, `why` being what the reader said.
Diagnostic unreadable_file(const std::string& path, std::string_view why);

// IN002 at the first byte that is not UTF-8, or nullopt for a valid text. Every front end calls it first.
std::optional<Diagnostic> encoding_error(const std::string& name, std::string_view text);

}  // namespace mbl
