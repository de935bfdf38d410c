#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/model_fields.hpp"
#include "core/source_range.hpp"

namespace mbl {

enum class Severity { Error, Warning, Info };
const char* severity_name(Severity s);

struct Note {
    SourceRange range;  // may be invalid: a plain note
    std::string message;
};

// A change to a model field (the config's `model` section), independent of the source language; front ends turn it
// into text edits.
struct FieldEdit {
    enum class Op { Remove, Set, ReplaceItem };
    Op op = Op::Set;
    FieldName field;        // field::recompute_num_layers
    std::string new_value;  // Python/YAML literal text for Set and ReplaceItem
    int item_index = -1;    // for ReplaceItem
};

struct TextEdit {
    SourceRange range;  // bytes replaced (end exclusive); an empty range inserts
    std::string replacement;
};

// A fix is kept apart from the problem message: the message says what is wrong, the title what the fix does.
struct Fix {
    std::string title;
    std::vector<FieldEdit> field_edits;  // what the rule wants changed
    std::vector<TextEdit> edits;         // the same as text edits, filled in by the front end that read the file
    bool is_safe = true;                 // unsafe fixes change what the run does and need --unsafe-fixes
    std::vector<SourceRange> anchors;    // the entries the edits replace or follow (engine/fixes.cpp)

    // A fix that leaves what the run does as it is: --fix applies it.
    static Fix safe(std::string title, std::vector<FieldEdit> field_edits) {
        return Fix{std::move(title), std::move(field_edits), {}, true, {}};
    }
    // A fix that changes what the run does (the method of a recompute, its scope): only --unsafe-fixes applies it.
    static Fix unsafe(std::string title, std::vector<FieldEdit> field_edits) {
        return Fix{std::move(title), std::move(field_edits), {}, false, {}};
    }
};

struct Diagnostic {
    std::string code;  // stable: RC004, or IN002 for unusable input
    std::string name;  // kebab-case: full-recompute-without-method
    Severity severity = Severity::Error;
    SourceRange range;
    std::string message;
    std::vector<Note> notes;
    std::optional<Fix> fix;
    // An error rule's diagnostic decided by fewer raise sites than the rule names (fragments of their messages, '|'
    // between them; rules/megatron_raises.cpp); empty: the rule's own RuleInfo::raise_text.
    std::string_view raise_text;

    bool is_input_error() const { return code.rfind("IN", 0) == 0; }
};

struct DiagnosticCounts {
    int errors = 0, warnings = 0, infos = 0;
    void add(const Diagnostic& d);
    int total() const { return errors + warnings + infos; }
};

// Stable order for output: file, line, column, code.
void sort_diagnostics(std::vector<Diagnostic>& diags);

}  // namespace mbl
