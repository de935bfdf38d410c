#include "engine/linter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "engine/validate.hpp"
#include "parser/input_errors.hpp"
#include "parser/yaml_loader.hpp"
#include "rules/registry.hpp"

namespace mbl {

namespace fs = std::filesystem;

std::optional<EffectiveModel> Linter::effective_model(Value root, const SourceRange& anchor,
                                                      std::vector<Diagnostic>& errors) const {
    for (auto& d : validate_config(root, *options_.revision)) errors.push_back(std::move(d));
    FinalizeResult fin = finalize(root, *options_.revision, anchor);
    for (auto& d : fin.errors) errors.push_back(std::move(d));
    return std::move(fin.model);
}

LintResult Linter::lint_tree(Value root, const SourceRange& anchor) {
    LintResult result;
    if (options_.prepare) options_.prepare(root, result.diagnostics);
    auto model = effective_model(std::move(root), anchor, result.diagnostics);
    if (model)
        for (auto& d : run_rules(*model, options_.rule_options)) result.diagnostics.push_back(std::move(d));
    sort_diagnostics(result.diagnostics);
    return result;
}

LintResult Linter::lint_yaml_text(const std::string& name, std::string_view text, bool explicit_input) {
    YamlLoadResult loaded = load_yaml(name, text);
    if (!loaded.ok()) {
        LintResult r;
        r.diagnostics = std::move(loaded.errors);
        return r;
    }
    if (!explicit_input && !looks_like_bridge_config(loaded.root)) {
        LintResult r;
        r.skipped = true;
        return r;
    }
    SourceRange anchor = SourceRange::point(name, 1, 1);
    if (const auto* e = loaded.root.find_entry("model"); e && e->key_range.valid()) anchor = e->key_range;
    return lint_tree(std::move(loaded.root), anchor);
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

static bool is_yaml(const fs::path& p) {
    auto ext = p.extension().string();
    return ext == ".yaml" || ext == ".yml" || ext == ".py";  // Python files hold recipes (engine/recipe_runner)
}

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
                if (it->is_regular_file(ec) && is_yaml(it->path())) found.push_back(it->path().string());
            }
            if (ec)
                errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(arg),
                                             fmt::format("cannot walk {}: {}", arg, ec.message())));
            std::sort(found.begin(), found.end());
            for (auto& f : found) out.push_back({std::move(f), false});
        } else if (fs::exists(arg, ec)) {
            out.push_back({arg, true});
        } else {
            errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(arg),
                                         fmt::format("{}: no such file or directory", arg)));
        }
    }
    return out;
}

}  // namespace mbl
