#include "engine/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/did_you_mean.hpp"
#include "core/input_errors.hpp"

namespace mbl {

namespace {

const char* kind_words(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::Null: return "None";
        case Value::Kind::Bool: return "a boolean";
        case Value::Kind::Int: return "an integer";
        case Value::Kind::Float: return "a number";
        case Value::Kind::String: return "a string";
        case Value::Kind::List: return "a list";
        case Value::Kind::Map: return "a mapping";
        case Value::Kind::Unknown: return "unknown";
    }
    return "a value";
}

const char* type_words(FieldType t) {
    switch (t) {
        case FieldType::Bool: return "true or false";
        case FieldType::Int: return "an integer";
        case FieldType::Float: return "a number";
        case FieldType::Str: return "a string";
        case FieldType::List: return "a list";
        case FieldType::Dict: return "a mapping";
        case FieldType::Dtype: return "a dtype such as torch.bfloat16";
        case FieldType::Callable: return "a function name";
        case FieldType::Any: return "any value";
    }
    return "a value";
}

// Where the facts behind a missing field come from: a tree read at run time is named; the facts of a revision that
// stands in for a Megatron Core nobody read (a commit no revision records) do not prove that a field is missing
// there, so the error becomes a warning.
void note_facts(Diagnostic& d, const Revision& rev) {
    if (rev.classes && !rev.classes->root.empty())
        d.notes.push_back(
            Note{SourceRange{}, fmt::format("Megatron Core's config classes were {}", rev.classes->origin)});
    if (!rev.approximate) return;
    d.severity = Severity::Warning;
    d.notes.push_back(Note{SourceRange{}, fmt::format("not proven: {}", rev.facts_note)});
}

// What Megatron Bridge does with a YAML key its config object lacks, whether the file is an overlay
// (--config-file: training/utils/omegaconf_utils.py, _apply_overrides, "not found in config object ... Skipping.") or a
// dump loaded by instantiate() (LENIENT by default: megatron/training/config/instantiate_utils.py,
// _filter_kwargs_for_target, "Dropping unexpected config keys"): it logs a warning and goes on. So such a key is no
// rejection, and never an error here.
constexpr const char* kSkipped =
    "Megatron Bridge skips a key its config object lacks (it logs a warning): the value has no effect";

void validate_model_map(const Value& model, const Revision& rev, std::vector<Diagnostic>& out,
                        std::vector<ValidationEdit>& edits, std::vector<std::size_t>& path) {
    const Schema& schema = Schema::instance();
    static const NameMatcher field_names(schema.field_names());  // prepared once: a file may hold thousands of typos
    // A dump whose model class the linter does not know (a fork's provider): its fields are its class's business.
    const std::string target = model.target();
    const bool unknown_class = !target.empty() && !schema.knows_model_class(target, rev);
    for (std::size_t i = 0; i < model.entries().size(); ++i) {
        const Value::Entry& e = model.entries()[i];
        const auto replace = [&](Value v) {
            path.push_back(i);
            edits.push_back(ValidationEdit{path, std::move(v)});
            path.pop_back();
        };
        if (!e.key.empty() && e.key[0] == '_') continue;  // _target_, _builder_, _partial_
        if (e.key == "transformer" && e.value.is_map()) {
            path.push_back(i);
            validate_model_map(e.value, rev, out, edits, path);  // builder configs nest TransformerConfig fields here
            path.pop_back();
            continue;
        }
        SourceRange at = e.key_range.valid() ? e.key_range : e.value.prov().range;
        const FieldSpec* known = schema.field(e.key);
        if (unknown_class && (!known || !schema.field_exists_at(*known, rev))) {
            replace(Value::unknown(fmt::format("a field of {}, a class mbridge-lint does not know", target),
                                   e.value.prov()));
            continue;
        }
        if (!known) {
            // Likely a typo when a field has a close name; otherwise a field of a model class the linter does not
            // know (a provider's own), which stays unknown (IN012 with --show-unknowns).
            const std::string suffix = field_names.suffix(e.key);
            if (!suffix.empty()) {
                Diagnostic d =
                    input_error(InputError::UnknownKey, at, fmt::format("unknown model field \"{}\"{}", e.key, suffix));
                d.severity = Severity::Warning;
                d.notes.push_back(Note{SourceRange{}, kSkipped});
                note_facts(d, rev);
                out.push_back(std::move(d));
            }
            replace(Value::unknown("not a field of TransformerConfig or of a Bridge provider the linter knows",
                                   e.value.prov()));
            continue;
        }
        if (!schema.field_exists_at(*known, rev)) {
            // The history is of the bundled revisions; the classes in use may have been read from a tree at another
            // commit under this revision's name. Then the history would contradict the verdict: say which is which.
            const Revision* first = schema.revision(known->first);
            const Revision* last = schema.revision(known->last);
            const bool history_has_it =
                first && last && first->order <= rev.order && rev.order <= last->order &&
                std::find(known->not_in.begin(), known->not_in.end(), rev.name) == known->not_in.end();
            const std::string why =
                history_has_it ? fmt::format("the config classes read from {} do not declare it, though the bundled "
                                             "Megatron Core {} does",
                                             rev.facts_source(), rev.name)
                               : schema.field_history(*known);
            Diagnostic d = input_error(InputError::UnknownKey, at,
                                       fmt::format("model field \"{}\" has no effect in Megatron Core {} ({}); pass "
                                                   "--mcore for the revision the job runs if it is not this one",
                                                   e.key, rev.name, why));
            d.severity = Severity::Warning;
            d.notes.push_back(Note{SourceRange{}, kSkipped});
            note_facts(d, rev);
            out.push_back(std::move(d));
            replace(Value::unknown("field not in this revision", e.value.prov()));
            continue;
        }
        const FieldTypeAt f = schema.field_type_at(*known, rev);
        if (!type_matches(e.value, f.type)) {
            Diagnostic d = input_error(InputError::WrongType, e.value.prov().range.valid() ? e.value.prov().range : at,
                                       fmt::format("model field \"{}\" must be {}, but it is {} ({})", e.key,
                                                   type_words(f.type), kind_words(e.value), e.value.display()));
            if (f.type == FieldType::List && e.value.is_string())
                d.notes.push_back(
                    Note{SourceRange{}, fmt::format("write a list: {}: [{}]", e.key, e.value.as_string())});
            out.push_back(std::move(d));
            replace(Value::unknown("wrong type", e.value.prov()));
        }
    }
}

}  // namespace

bool names_recipe(const Value::Entry& section) {
    const auto& sections = Schema::instance().config_sections();
    if (!section.value.is_map() || std::find(sections.begin(), sections.end(), section.key) != sections.end())
        return false;
    const std::string target = section.value.target();
    const std::string function = target.substr(target.rfind('.') + 1);
    if (function.ends_with("_config") || target.find(".recipes.") != std::string::npos) return true;
    // By its name in Bridge's recipe package, as run_recipe.py's --recipe takes it (`recipe: {name: ..._config}`).
    const Value* name = section.value.find("name");
    return name && name->is_string() && name->as_string().ends_with("_config") &&
           name->as_string().find_first_of(" /") == std::string::npos;
}

std::vector<Diagnostic> validate_config(const Value& root, const Revision& rev, std::vector<ValidationEdit>& edits) {
    std::vector<Diagnostic> out;
    if (!root.is_map()) return out;
    const auto& sections = Schema::instance().config_sections();
    for (const auto& e : root.entries()) {
        if (std::find(sections.begin(), sections.end(), e.key) != sections.end() || names_recipe(e)) continue;
        // A near miss is almost surely a typo that drops the section; anything else may be a section of a newer
        // Bridge. Either way Bridge skips it (kSkipped), so it is a warning.
        Diagnostic d = input_error(InputError::UnknownKey, e.key_range,
                                   fmt::format("unknown top-level section \"{}\"{}; it is not checked", e.key,
                                               did_you_mean_suffix(e.key, sections)));
        d.severity = Severity::Warning;
        d.notes.push_back(Note{SourceRange{}, kSkipped});
        out.push_back(std::move(d));
    }
    const Value::Entry* model = root.find_entry("model");
    if (model) {
        std::vector<std::size_t> path{static_cast<std::size_t>(model - root.entries().data())};
        if (model->value.is_map()) {
            validate_model_map(model->value, rev, out, edits, path);
        } else if (!model->value.is_null() && !model->value.is_unknown()) {
            out.push_back(input_error(InputError::WrongType, model->value.prov().range,
                                      fmt::format("model must be a mapping of TransformerConfig fields, but it is {}",
                                                  kind_words(model->value))));
            edits.push_back(ValidationEdit{std::move(path), Value::map(model->value.prov())});
        }
    }
    return out;
}

void apply_validation_edits(Value& root, std::vector<ValidationEdit> edits) {
    for (auto& edit : edits) {
        Value* at = &root;
        for (const std::size_t i : edit.path) at = &at->entries()[i].value;
        *at = std::move(edit.value);
    }
}

std::vector<Diagnostic> validate_config(Value& root, const Revision& rev) {
    std::vector<ValidationEdit> edits;
    std::vector<Diagnostic> out = validate_config(std::as_const(root), rev, edits);
    apply_validation_edits(root, std::move(edits));
    return out;
}

}  // namespace mbl
