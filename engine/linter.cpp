#include "engine/linter.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include "config/rule_selection.hpp"
#include "core/input_errors.hpp"
#include "core/paths.hpp"
#include "engine/validate.hpp"
#include "engine/walk.hpp"
#include "parser/front_end.hpp"
#include "pyeval/values.hpp"
#include "rules/registry.hpp"

namespace mbl {

namespace fs = std::filesystem;

std::optional<EffectiveModel> Linter::effective_model(Value root, const SourceRange& anchor,
                                                      std::vector<Diagnostic>& errors, const PrecisionLookup* precision,
                                                      std::string_view recipe) const {
    for (auto& d : validate_config(root, *options_.revision)) errors.push_back(std::move(d));
    FinalizeResult fin = finalize(root, *options_.revision, anchor, precision, recipe);
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

}  // namespace

LintResult Linter::lint_tree(Value root, const SourceRange& anchor, const PrecisionLookup* precision,
                             std::string_view recipe) {
    LintResult result;
    if (options_.prepare) options_.prepare(root, *options_.revision, result.diagnostics);
    auto model = effective_model(std::move(root), anchor, result.diagnostics, precision, recipe);
    if (model) {
        result.resolved = std::none_of(std::begin(kRecomputeFields), std::end(kRecomputeFields),
                                       [&](FieldName f) { return (*model)[f].contains_unknown(); });
        // A call the evaluator did not follow that received the config leaves fields it may have written unknown:
        // the recipe is not resolved, whichever fields they are.
        model->for_each_field([&](const Value::Entry& e) {
            const Value* u = first_unknown(e.value);
            if (u && u->unknown_reason().rfind(py::kUnfollowedCall, 0) == 0) result.resolved = false;
        });
        result.architecture_known = model->known({field::num_layers, field::hidden_size, field::num_attention_heads});
        const bool overlay = recipe.empty() && !model->full_dump && in_bridge_checkout(anchor.file);
        for (auto& d : rule_diagnostics(*model, options_.rule_options)) {
            const Rule* rule = find_rule(d.code);
            if (overlay && !(rule && rule->info().is_rejection()) && d.code != "RC000") continue;
            result.diagnostics.push_back(std::move(d));
        }
        // Megatron Core's rejections are judged on the overlay as written (its defaults are what an unset field is
        // if the base leaves it too); advice stands only on what the overlay itself sets.
        if (overlay)
            for (auto& d : rule_diagnostics(without_defaults(*model), options_.rule_options)) {
                const Rule* rule = find_rule(d.code);
                if ((rule && rule->info().is_rejection()) || d.code == "RC000") continue;
                result.diagnostics.push_back(std::move(d));
            }
        if (options_.show_unknowns) report_unknowns(*model, anchor, result.diagnostics);
    }
    sort_diagnostics(result.diagnostics);
    return result;
}

// `file.py::function` names one recipe of a file; a path that exists as written is taken whole.
static std::optional<InputFile> recipe_target(const std::string& arg) {
    std::error_code ec;
    const auto sep = arg.find("::");
    if (sep == std::string::npos || fs::exists(arg, ec) || !fs::is_regular_file(arg.substr(0, sep), ec))
        return std::nullopt;
    return InputFile{arg.substr(0, sep), true, arg.substr(sep + 2)};
}

// A named path that is neither a file nor a directory: a FIFO would block the read until some writer came, a device
// may never end. What the shell hands over as a pipe (`<(command)`, /dev/stdin) is read: it was made to be.
static std::optional<std::string> special_file(const std::string& path) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || fs::is_regular_file(st) || fs::is_directory(st)) return std::nullopt;
    if (path.rfind("/dev/fd/", 0) == 0 || path.rfind("/proc/self/fd/", 0) == 0 || path == "/dev/stdin")
        return std::nullopt;
    switch (st.type()) {
        case fs::file_type::fifo: return "a FIFO (named pipe)";
        case fs::file_type::socket: return "a socket";
        case fs::file_type::block:
        case fs::file_type::character: return "a device";
        default: return "not a regular file";
    }
}

// A named file that --force-exclude leaves out: it, or a directory above it inside the working directory, matches.
static bool named_file_excluded(const std::string& path, const WalkOptions& walk) {
    if (!walk.force_exclude || !walk.excluded) return false;
    if (walk.excluded(path)) return true;
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec);
    for (fs::path p = fs::absolute(path, ec).parent_path(); relative_to(p.string(), cwd.string()) && p != cwd;
         p = p.parent_path())
        if (walk.excluded(p.string())) return true;
    return false;
}

std::vector<InputFile> collect_inputs(const std::vector<std::string>& paths, std::vector<Diagnostic>& errors,
                                      const WalkOptions& walk) {
    std::vector<InputFile> out;
    std::map<std::string, std::size_t> seen;  // display path + function -> index in `out`
    auto add = [&](InputFile input) {
        auto [it, inserted] = seen.emplace(input.path + "::" + input.function, out.size());
        if (inserted) out.push_back(std::move(input));
        else out[it->second].explicit_input |= input.explicit_input;  // named and found by a walk: named
    };
    for (const auto& arg : paths) {
        std::error_code ec;
        if (fs::is_directory(arg, ec)) {
            std::vector<std::string> notes;
            for (auto& f : walk_directory(arg, walk, errors, notes)) add({std::move(f), false, {}});
            if (walk.notes) walk.notes->insert(walk.notes->end(), notes.begin(), notes.end());
        } else if (auto kind = special_file(arg)) {
            errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(arg),
                                         fmt::format("{} is {}; only regular files are read (pass - to read standard "
                                                     "input)",
                                                     arg, *kind)));
        } else if (fs::exists(arg, ec)) {
            if (!named_file_excluded(arg, walk)) add({display_path(arg), true, {}});
        } else if (auto target = recipe_target(arg)) {
            target->path = display_path(target->path);
            add(std::move(*target));
        } else {
            // A path that cannot be looked at (a folder above it unreadable) is not said to be missing.
            std::error_code why;
            (void)fs::symlink_status(arg, why);
            errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(arg),
                                         why && why != std::errc::no_such_file_or_directory
                                             ? fmt::format("cannot read: {}", why.message())
                                             : "no such file or directory"));
        }
    }
    return out;
}

}  // namespace mbl
