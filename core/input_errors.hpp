#pragma once
// Diagnostics for input the linter cannot use (exit code 2). One code per kind of problem.
#include <optional>
#include <string>
#include <string_view>

#include "core/diagnostic.hpp"

namespace mbl {

enum class InputError {
    Unreadable,     // IN001 unreadable-file
    Syntax,         // IN002 syntax-error
    NotAMapping,    // IN003 not-a-mapping
    UnknownKey,     // IN004 unknown-key
    WrongType,      // IN005 wrong-type
    DuplicateKey,   // IN006 duplicate-key
    BadOverride,    // IN007 bad-override
    LimitExceeded,  // IN008 limit-exceeded
    UnknownTarget,  // IN009 unknown-target (recipe function or file not found)
    UnknownModel,   // IN010 unknown-model (architecture could not be found)
    UnknownValue,   // IN011 unknown-value (a name the linter must look up, e.g. a mixed_precision recipe)
    NotResolved,    // IN012 not-resolved (a value a recipe computes in a way the linter cannot follow; info)
};

const char* input_error_code(InputError kind);
const char* input_error_name(InputError kind);
Diagnostic input_error(InputError kind, SourceRange range, std::string message);
// IN001 for a file that cannot be read, `why` being what the reader said.
Diagnostic unreadable_file(const std::string& path, std::string_view why);

// IN002 at the first byte that is not UTF-8, or nullopt for a valid text. Every front end calls it first.
std::optional<Diagnostic> encoding_error(const std::string& name, std::string_view text);

}  // namespace mbl
