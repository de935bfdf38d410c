#include "engine/linter.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>

#include "config/rule_selection.hpp"
#include "core/input_errors.hpp"
#include "core/paths.hpp"
#include "engine/mcore_trees.hpp"
#include "engine/validate.hpp"
#include "engine/walk.hpp"
#include "parser/front_end.hpp"
#include "parser/yaml_loader.hpp"
#include "pyeval/values.hpp"
#include "rules/registry.hpp"

namespace mbl {

namespace fs = std::filesystem;

EffectiveModel model_of_tree(Value root, const Revision& revision, const SourceRange& anchor,
                             std::vector<Diagnostic>& errors, const PrecisionLookup* precision,
                             std::string_view recipe) {
    for (auto& d : validate_config(root, revision)) errors.push_back(std::move(d));
    // The linted tree's own Bridge decides what its start-up checks, where the tree is a Bridge checkout.
    FinalizeResult fin = finalize(root, revision, anchor, precision, recipe, {}, bridge_checks_for_file(anchor.file));
    for (auto& d : fin.errors) errors.push_back(std::move(d));
    return std::move(fin.model);
}

// model_of_tree of a tree the caller keeps: copied only where the validation replaces a value in it.
static EffectiveModel model_of_kept_tree(const Value& root, const Revision& revision, const SourceRange& anchor,
                                         std::vector<Diagnostic>& errors, const PrecisionLookup* precision,
                                         std::string_view recipe) {
    std::vector<ValidationEdit> edits;
    for (auto& d : validate_config(root, revision, edits)) errors.push_back(std::move(d));
    std::optional<Value> edited;
    if (!edits.empty()) {
        edited = root;
        apply_validation_edits(*edited, std::move(edits));
    }
    FinalizeResult fin =
        finalize(edited ? *edited : root, revision, anchor, precision, recipe, {}, bridge_checks_for_file(anchor.file));
    for (auto& d : fin.errors) errors.push_back(std::move(d));
    return std::move(fin.model);
}

namespace {

constexpr FieldName kRecomputeFields[] = {field::recompute_granularity, field::recompute_method,
                                          field::recompute_num_layers, field::recompute_modules,
                                          field::distribute_saved_activations};

// The first unknown inside a value.
const Value* first_unknown(const Value& v) {
    if (v.is_unknown()) return &v;
    for (const auto& item : v.items())
        if (const Value* u = first_unknown(item)) return u;
    for (const auto& e : v.entries())
        if (const Value* u = first_unknown(e.value)) return u;
    return nullptr;
}

// Whether a YAML file lies in a Megatron Bridge checkout (a parent holds src/megatron/bridge): there, a config that
// is not a whole dump is an overlay on a recipe the linter is not told (run_recipe.py --config-file).
bool in_bridge_checkout(const std::string& file) {
    if (file.empty() || file[0] == '<') return false;
    std::error_code ec;
    fs::path dir = fs::absolute(file, ec).parent_path();
    for (int depth = 0; !dir.empty() && depth < 64; ++depth, dir = dir.parent_path()) {
        if (fs::is_directory(dir / "src" / "megatron" / "bridge", ec)) return true;
        if (dir == dir.parent_path()) break;
    }
    return false;
}

// A YAML file that names the recipe it is applied to (names_recipe): the config is that recipe's with the file over
// it, wherever the file lies.
bool names_its_recipe(const Value& root) {
    return root.is_map() && root.target().find("ConfigContainer") == std::string::npos &&
           std::any_of(root.entries().begin(), root.entries().end(), names_recipe);
}

// The model as a warning may see it when the config is an overlay on an unknown base: what the overlay does not set
// is the base recipe's, not Megatron Core's default (a provider's dropout 0, its experts).
EffectiveModel without_defaults(const EffectiveModel& model) {
    EffectiveModel out = model;
    auto unknown = std::make_shared<Value>(Value::map());
    if (model.defaults)
        for (const auto& e : model.defaults->entries())
            unknown->set(e.key,
                         Value::unknown("left to the recipe this overlay is applied to, which the linter is not told",
                                        e.value.prov()),
                         e.key_range);
    out.defaults = std::move(unknown);
    return out;
}

// One IN012 info per (place, reason): a model the linter could not follow is one line, not 400.
void report_unknowns(const EffectiveModel& model, const SourceRange& anchor, std::vector<Diagnostic>& out) {
    std::vector<std::tuple<SourceRange, std::string, std::vector<std::string>>> groups;
    model.for_each_field([&](const Value::Entry& e) {
        const Value* u = first_unknown(e.value);
        if (!u) return;
        const SourceRange at = u->prov().range.valid()        ? u->prov().range
                               : e.value.prov().range.valid() ? e.value.prov().range
                                                              : anchor;
        auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) {
            return std::get<1>(x) == u->unknown_reason() && std::get<0>(x).file == at.file &&
                   std::get<0>(x).line == at.line && std::get<0>(x).column == at.column;
        });
        if (g == groups.end()) groups.emplace_back(at, u->unknown_reason(), std::vector<std::string>{e.key});
        else std::get<2>(*g).push_back(e.key);
    });
    for (auto& [at, reason, fields] : groups) {
        std::string names;
        for (std::size_t k = 0; k < fields.size() && k < 4; ++k) names += (k ? ", model." : "model.") + fields[k];
        if (fields.size() > 4) names += fmt::format(" and {} more model fields", fields.size() - 4);
        out.push_back(input_error(
            InputError::NotResolved, at,
            fmt::format("{} {} not known statically: {}", names, fields.size() == 1 ? "is" : "are", reason)));
    }
}

// The five recompute fields are known, and no call the evaluator did not follow received the config (it may have
// written any field).
bool recompute_resolved(const EffectiveModel& model) {
    if (std::any_of(std::begin(kRecomputeFields), std::end(kRecomputeFields),
                    [&](FieldName f) { return model[f].contains_unknown(); }))
        return false;
    bool resolved = true;
    model.for_each_field([&](const Value::Entry& e) {
        const Value* u = first_unknown(e.value);
        if (u && u->unknown_reason().rfind(py::kUnfollowedCall, 0) == 0) resolved = false;
    });
    return resolved;
}

// The rules' diagnostics. On an overlay (a YAML file that is not a whole dump, applied to a recipe the linter is not
// told) a field the overlay leaves alone is the recipe's, not Megatron Core's default: a rejection whose check reads
// one (moe_act recompute where the recipe's provider turns moe_grouped_gemm on) is possible, a warning saying what it
// depends on (RuleOptions::overlay), and advice stands only on what the overlay itself sets.
void add_rule_diagnostics(const EffectiveModel& model, const RuleOptions& options, bool overlay,
                          std::vector<Diagnostic>& out) {
    auto rejection = [](const Diagnostic& d) {
        const Rule* rule = find_rule(d.code);
        return (rule && rule->info().is_rejection()) || d.code == "RC000";
    };
    RuleOptions judged = options;
    judged.overlay = overlay;
    for (auto& d : rule_diagnostics(model, judged))
        if (!overlay || rejection(d)) out.push_back(std::move(d));
    if (overlay)
        for (auto& d : rule_diagnostics(without_defaults(model), judged))
            if (!rejection(d)) out.push_back(std::move(d));
}

// An unsafe fix is advice for this config. Where Megatron Core's compiled checks certainly reject the config it
// would make, and not the config as written (RC109's "set recompute_granularity to selective" switching on "moe"
// recompute under a CUDA-graphed router), it is no fix: the diagnostic stands, its fix is left to a person, and a
// note says why. The memory advice tests its options the same way (memory/estimate.cpp, rejection_of).
void withhold_rejected_fixes(const EffectiveModel& model, std::vector<Diagnostic>& diags) {
    for (auto& d : diags) {
        if (!d.fix || d.fix->is_safe || d.fix->field_edits.empty() ||
            !std::all_of(d.fix->field_edits.begin(), d.fix->field_edits.end(),
                         [](const FieldEdit& e) { return e.op == FieldEdit::Op::Set; }))
            continue;
        const std::string why = rejection_after(model, [&](EffectiveModel& written) {
            for (const auto& e : d.fix->field_edits) written.set(e.field, parse_yaml_value(e.new_value));
        });
        if (why.empty()) continue;
        d.notes.push_back(
            Note{SourceRange{}, fmt::format("no automatic fix: with it, Megatron Core {} would reject the "
                                            "config: {}",
                                            model.revision->name, why)});
        d.fix->field_edits.clear();
    }
}

}  // namespace

LintResult lint_tree(const LintOptions& options, const Value& root, const SourceRange& anchor,
                     const PrecisionLookup* precision, std::string_view recipe) {
    LintResult result;
    const bool names_recipe = recipe.empty() && names_its_recipe(root);
    std::optional<Value> prepared;
    if (options.prepare) {
        prepared = root;
        options.prepare(*prepared, *options.revision, result.diagnostics);
    }
    const EffectiveModel model = model_of_kept_tree(prepared ? *prepared : root, *options.revision, anchor,
                                                    result.diagnostics, precision, recipe);
    result.resolved = recompute_resolved(model);
    result.architecture_known = model.known({field::num_layers, field::hidden_size, field::num_attention_heads});
    const bool overlay = recipe.empty() && !model.full_dump && (names_recipe || in_bridge_checkout(anchor.file));
    add_rule_diagnostics(model, options.rule_options, overlay, result.diagnostics);
    withhold_rejected_fixes(model, result.diagnostics);
    if (options.show_unknowns) report_unknowns(model, anchor, result.diagnostics);
    sort_diagnostics(result.diagnostics);
    return result;
}

}  // namespace mbl
