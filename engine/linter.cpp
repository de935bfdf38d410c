#include "engine/linter.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "core/input_errors.hpp"
#include "engine/validate.hpp"
#include "parser/front_end.hpp"
#include "rules/registry.hpp"

namespace mbl {

namespace fs = std::filesystem;

std::optional<EffectiveModel> Linter::effective_model(const Value& root, const SourceRange& anchor,
                                                      std::vector<Diagnostic>& errors) const {
    for (auto& d : validate_config(root, *options_.revision)) errors.push_back(std::move(d));
    FinalizeResult fin = finalize(root, *options_.revision, anchor);
    for (auto& d : fin.errors) errors.push_back(std::move(d));
    return std::move(fin.model);
}

namespace {

const char* const kRecomputeFields[] = {"recompute_granularity", "recompute_method", "recompute_num_layers",
                                        "recompute_modules", "distribute_saved_activations"};

// The first unknown inside a value.
const Value* first_unknown(const Value& v) {
    if (v.is_unknown()) return &v;
    for (const auto& item : v.items())
        if (const Value* u = first_unknown(item)) return u;
    for (const auto& e : v.entries())
        if (const Value* u = first_unknown(e.value)) return u;
    return nullptr;
}

// One IN012 info per (place, reason): a model the linter could not follow is one line, not 400.
void report_unknowns(const EffectiveModel& model, const SourceRange& anchor, std::vector<Diagnostic>& out) {
    std::vector<std::tuple<SourceRange, std::string, std::vector<std::string>>> groups;
    for (const auto& e : model.fields.entries()) {
        const Value* u = first_unknown(e.value);
        if (!u) continue;
        const SourceRange at = u->prov().range.valid()        ? u->prov().range
                               : e.value.prov().range.valid() ? e.value.prov().range
                                                              : anchor;
        auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) {
            return std::get<1>(x) == u->unknown_reason() && std::get<0>(x).file == at.file &&
                   std::get<0>(x).line == at.line && std::get<0>(x).column == at.column;
        });
        if (g == groups.end()) groups.emplace_back(at, u->unknown_reason(), std::vector<std::string>{e.key});
        else std::get<2>(*g).push_back(e.key);
    }
    for (auto& [at, reason, fields] : groups) {
        std::string names;
        for (std::size_t k = 0; k < fields.size() && k < 4; ++k) names += (k ? ", model." : "model.") + fields[k];
        if (fields.size() > 4) names += fmt::format(" and {} more model fields", fields.size() - 4);
        Diagnostic d = input_error(
            InputError::NotResolved, at,
            fmt::format("{} {} not known statically: {}", names, fields.size() == 1 ? "is" : "are", reason));
        d.severity = Severity::Info;
        out.push_back(std::move(d));
    }
}

}  // namespace

LintResult Linter::lint_tree(const Value& root, const SourceRange& anchor) {
    LintResult result;
    std::optional<Value> prepared;  // a copy only when there is something to apply: a recipe's tree is large
    if (options_.prepare) {
        prepared = root;
        options_.prepare(*prepared, *options_.revision, result.diagnostics);
    }
    auto model = effective_model(prepared ? *prepared : root, anchor, result.diagnostics);
    if (model) {
        result.resolved = std::none_of(std::begin(kRecomputeFields), std::end(kRecomputeFields),
                                       [&](const char* f) { return (*model)[f].contains_unknown(); });
        result.architecture_known = model->known({"num_layers", "hidden_size", "num_attention_heads"});
        for (auto& d : run_rules(*model, options_.rule_options)) result.diagnostics.push_back(std::move(d));
        if (options_.show_unknowns) report_unknowns(*model, anchor, result.diagnostics);
    }
    sort_diagnostics(result.diagnostics);
    return result;
}

LintResult Linter::lint_yaml_text(const std::string& name, std::string_view text, bool explicit_input) {
    ParseContext ctx{.sources = sources_};
    ParseResult parsed = front_end_for(".yaml")->parse(name, text, /*allow_skip=*/!explicit_input, ctx);
    LintResult r;
    r.skipped = parsed.skipped;
    r.diagnostics = std::move(parsed.errors);
    if (!r.diagnostics.empty() || parsed.configs.empty()) return r;
    return lint_tree(std::move(parsed.configs.front().root), parsed.configs.front().anchor);
}

LintResult Linter::lint_file(const std::string& path, bool explicit_input) {
    std::string error;
    const std::string* text = sources_.load(path, &error);
    if (!text) {
        LintResult r;
        r.diagnostics.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(path),
                                            fmt::format("cannot read {}: {}", path, error)));
        return r;
    }
    return lint_yaml_text(path, *text, explicit_input);
}

// `file.py::function` names one recipe of a file; a path that exists as written is taken whole.
static std::optional<InputFile> recipe_target(const std::string& arg) {
    std::error_code ec;
    const auto sep = arg.find("::");
    if (sep == std::string::npos || fs::exists(arg, ec) || !fs::is_regular_file(arg.substr(0, sep), ec))
        return std::nullopt;
    return InputFile{arg.substr(0, sep), true, arg.substr(sep + 2)};
}

std::optional<EffectiveModel> Linter::effective_model_of(const std::string& input, std::vector<Diagnostic>& errors) {
    const auto target = recipe_target(input);
    const std::string path = target ? target->path : input;
    const std::string function = target ? target->function : std::string();
    std::string error;
    const std::string* text = sources_.load(path, &error);
    if (!text) {
        errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(path),
                                     fmt::format("cannot read {}: {}", path, error)));
        return std::nullopt;
    }
    ParseContext ctx{.sources = sources_, .revision = options_.revision, .function = function};
    const FrontEnd* fe = front_end_for(path);
    if (!fe) fe = front_end_for(".yaml");
    ParseResult parsed = fe->parse(path, *text, /*allow_skip=*/false, ctx);
    for (auto& d : parsed.errors) errors.push_back(std::move(d));
    if (!errors.empty()) return std::nullopt;
    if (parsed.configs.size() != 1) {
        // One model per estimate: say which targets there are instead of picking one.
        std::vector<std::string> names;
        for (const auto& c : parsed.configs) names.push_back(path + "::" + c.label);
        errors.push_back(input_error(
            InputError::UnknownTarget, SourceRange::whole_file(path),
            parsed.configs.empty() ? fmt::format("{} defines no recipe (a function returning ConfigContainer)", path)
                                   : fmt::format("{} defines {} recipes; name one: {}", path, parsed.configs.size(),
                                                 fmt::join(names, ", "))));
        return std::nullopt;
    }
    ParsedConfig& config = parsed.configs.front();
    for (auto& d : config.findings) errors.push_back(std::move(d));
    if (options_.prepare) options_.prepare(config.root, *options_.revision, errors);
    return effective_model(std::move(config.root), config.anchor, errors);
}

// A file some front end reads (YAML configs, Python recipes).
static bool is_config_source(const fs::path& p) { return front_end_for(p.string()) != nullptr; }

std::vector<InputFile> collect_inputs(const std::vector<std::string>& paths, std::vector<Diagnostic>& errors) {
    std::vector<InputFile> out;
    for (const auto& arg : paths) {
        std::error_code ec;
        if (fs::is_directory(arg, ec)) {
            std::vector<std::string> found;
            fs::recursive_directory_iterator it(arg, fs::directory_options::skip_permission_denied, ec), end;
            for (; !ec && it != end; it.increment(ec)) {
                const auto name = it->path().filename().string();
                if (it->is_directory(ec) && !name.empty() && name[0] == '.') {
                    it.disable_recursion_pending();  // .git, .venv, ...
                    continue;
                }
                if (it->is_regular_file(ec) && is_config_source(it->path())) found.push_back(it->path().string());
            }
            if (ec)
                errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(arg),
                                             fmt::format("cannot walk {}: {}", arg, ec.message())));
            std::sort(found.begin(), found.end());
            for (auto& f : found) out.push_back({std::move(f), false, {}});
        } else if (fs::exists(arg, ec)) {
            out.push_back({arg, true, {}});
        } else if (auto target = recipe_target(arg)) {
            out.push_back(std::move(*target));
        } else {
            errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(arg),
                                         fmt::format("{}: no such file or directory", arg)));
        }
    }
    return out;
}

}  // namespace mbl
