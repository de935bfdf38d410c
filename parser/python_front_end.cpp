// The Python recipe front end: a recipe module becomes one config tree per recipe function, evaluated abstractly
// (parser/python/: tree-sitter syntax trees, an evaluator that never runs Python). Comments (suppressions) and
// FieldEdits (fixes) work on the text as written (parser/python_edit.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "core/did_you_mean.hpp"
#include "parser/front_end.hpp"
#include "parser/input_errors.hpp"
#include "parser/python/hf_models.hpp"
#include "parser/python/interpreter.hpp"
#include "parser/python/recipes.hpp"
#include "parser/python_edit.hpp"

namespace mbl {
namespace {

namespace fs = std::filesystem;

// What one run shares between the recipe modules it reads: the parsed and initialized modules of each source root
// (a helper imported by 100 recipe files is read once) and the Hugging Face lookups. A helper module whose text the
// run's SourceManager holds (an editor's unsaved buffer) is read from there instead of from disk.
class PythonState {
public:
    py::Project& project(const std::string& root_arg, const std::string& file, const Revision& revision,
                         const std::vector<std::string>& hf_config_paths, const SourceManager& sources) {
        if (!hf_ || hf_args_ != hf_config_paths) {
            hf_args_ = hf_config_paths;
            hf_ = std::make_unique<py::HfResolver>(hf_config_paths);
            projects_.clear();  // they refer to the resolver
        }
        std::error_code ec;
        const std::string root =
            fs::weakly_canonical(fs::absolute(root_arg.empty() ? py::default_root(file) : root_arg, ec), ec).string();
        for (auto& p : projects_)
            if (p->index().root() == root && &p->revision() == &revision) return *p;
        projects_.push_back(std::make_unique<py::Project>(
            root, revision, *hf_, py::EvalLimits{}, [&sources](const std::string& path) { return sources.text(path); }));
        return *projects_.back();
    }
    const std::vector<std::string>& hf_errors() const { return hf_->errors(); }

private:
    std::vector<std::string> hf_args_;
    std::unique_ptr<py::HfResolver> hf_;
    std::vector<std::unique_ptr<py::Project>> projects_;
};

PythonState& state_of(ParseContext& ctx, std::shared_ptr<PythonState>& local) {
    if (!ctx.state) {
        local = std::make_shared<PythonState>();
        return *local;
    }
    auto& slot = (*ctx.state)["python"];
    if (!slot) slot = std::make_shared<PythonState>();
    return *std::static_pointer_cast<PythonState>(slot);
}

// The recipes of a module, or just `function` (linted by name even when it is not recognisably a recipe).
std::vector<py::RecipeInfo> recipes_to_lint(py::Module& m, const std::string& function, std::vector<Diagnostic>& errors) {
    std::vector<py::RecipeInfo> found = py::find_recipes(m, !function.empty());
    if (function.empty()) return found;
    found.erase(std::remove_if(found.begin(), found.end(), [&](const py::RecipeInfo& r) { return r.name != function; }),
                found.end());
    if (!found.empty()) return found;
    const auto names = py::function_names(m);
    if (std::find(names.begin(), names.end(), function) == names.end()) {
        errors.push_back(input_error(InputError::UnknownTarget, SourceRange::whole_file(m.path),
                                     fmt::format("{} has no top-level function \"{}\"{}", m.path, function,
                                                 did_you_mean_suffix(function, names))));
        return {};
    }
    py::RecipeInfo r;
    r.module = &m;
    r.name = function;
    r.annotated = true;
    const py::Ast& a = *m.ast;
    for (std::uint32_t i = 0; i < a.count(a.root); ++i) {
        py::NodeId def = a.kid(a.root, i);
        if (a.kind(def) == py::Kind::DecoratedDefinition) def = a.field(def, py::Field::Definition);
        if (def == py::kNoNode || a.kind(def) != py::Kind::FunctionDefinition) continue;
        const py::NodeId name = a.field(def, py::Field::Name);
        if (a.source(name) == function) r.def = m.loc(name).range();
    }
    return {r};
}

// Evaluates the recipes on up to `jobs` threads (modules are shared read-only; see parser/python/interpreter.hpp).
std::vector<py::RecipeOutcome> evaluate_all(py::Project& project, const std::vector<py::RecipeInfo>& recipes, int jobs) {
    std::vector<py::RecipeOutcome> outcomes(recipes.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < recipes.size();) {
            try {
                outcomes[i] = py::evaluate_recipe(project, recipes[i]);
            } catch (const std::exception& e) {
                // The evaluator's limits are meant to stop everything first; this keeps one recipe from ending the run.
                Diagnostic d = input_error(InputError::LimitExceeded, recipes[i].def,
                                           fmt::format("recipe {} could not be evaluated: {}", recipes[i].name, e.what()));
                d.severity = Severity::Warning;
                outcomes[i].diagnostics.push_back(std::move(d));
            }
        }
    };
    unsigned threads = jobs > 0 ? static_cast<unsigned>(jobs) : std::max(1u, std::thread::hardware_concurrency());
    threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(recipes.size())));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    return outcomes;
}

// Makes the text of every module read quotable in output (a diagnostic may point into any helper).
void register_sources(py::Project& project, SourceManager& sources) {
    for (const py::Module* m : project.index().modules())
        if (m->ast && !m->namespace_package && !sources.text(m->path)) sources.add(m->path, m->ast->text);
}

class PythonFrontEnd final : public FrontEnd {
public:
    std::string_view language() const override { return "python"; }
    bool handles(std::string_view path) const override { return path.ends_with(".py"); }

    ParseResult parse(const std::string& name, std::string_view text, bool allow_skip, ParseContext& ctx) const override {
        ParseResult result;
        if (auto bad = encoding_error(name, text)) {
            result.errors.push_back(std::move(*bad));
            return result;
        }
        std::shared_ptr<PythonState> local;
        PythonState& state = state_of(ctx, local);
        const Revision& revision = ctx.revision ? *ctx.revision : *Schema::instance().revision(Schema::instance().default_revision());
        py::Project& project = state.project(ctx.root, name, revision, ctx.hf_config_paths, ctx.sources);
        for (const auto& e : state.hf_errors())
            // Named after the option, not the file: reported once however many recipe files the run reads.
            result.errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file("--hf-config"), e));
        if (!result.errors.empty()) return result;

        const std::string owned(text);
        py::Module* m = project.index().module_for_file(name, result.errors, &owned);
        if (!m) return result;
        if (m->syntax_error) {
            result.errors.push_back(*m->syntax_error);
            register_sources(project, ctx.sources);
            return result;
        }
        const std::vector<py::RecipeInfo> recipes = recipes_to_lint(*m, ctx.function, result.errors);
        std::vector<py::RecipeOutcome> outcomes = evaluate_all(project, recipes, ctx.jobs);
        for (std::size_t i = 0; i < recipes.size(); ++i) {
            if (!outcomes[i].is_recipe) continue;  // a *_config helper that returns no config
            ParsedConfig config;
            config.label = recipes[i].name;
            config.anchor = recipes[i].def;
            config.root = std::move(outcomes[i].root);
            config.findings = std::move(outcomes[i].diagnostics);
            result.configs.push_back(std::move(config));
        }
        if (result.configs.empty() && result.errors.empty()) {
            if (allow_skip) {
                result.skipped = true;
                return result;
            }
            // Named on purpose but nothing to check: say so rather than pass it.
            result.errors.push_back(input_error(
                InputError::UnknownTarget, SourceRange::whole_file(name),
                fmt::format("{} defines no recipe (a top-level function annotated -> ConfigContainer, or named *_config "
                            "and returning a config)",
                            name)));
        }
        // Syntax errors in imported helpers: their recipes' values from there are unknown, and the user should know.
        for (auto& d : project.take_module_diagnostics()) result.errors.push_back(std::move(d));
        register_sources(project, ctx.sources);
        return result;
    }

    std::vector<SourceComment> comments(std::string_view text) const override { return python_edit::comments(text); }
    std::vector<TextEdit> field_edit(const FieldEdit& edit, const EditSite& site, std::string_view text,
                                     const LineIndex& lines) const override {
        return python_edit::field_edit(site.entry.file, edit, site, text, lines);
    }

    // Every module the document's recipes read while being evaluated (imports at any depth, inside functions too).
    std::vector<std::string> dependencies(const std::string& path, std::string_view text, ParseContext& ctx) const override {
        ParseContext own{.sources = ctx.sources, .hf_config_paths = ctx.hf_config_paths, .root = ctx.root, .revision = ctx.revision, .jobs = 1};
        std::shared_ptr<PythonState> local;
        PythonState& state = state_of(own, local);
        const Revision& revision = ctx.revision ? *ctx.revision : *Schema::instance().revision(Schema::instance().default_revision());
        py::Project& project = state.project(ctx.root, path, revision, ctx.hf_config_paths, ctx.sources);
        std::vector<Diagnostic> ignored;
        const std::string owned(text);
        py::Module* m = project.index().module_for_file(path, ignored, &owned);
        if (!m || m->syntax_error) return {};
        auto recipes = recipes_to_lint(*m, {}, ignored);
        (void)evaluate_all(project, recipes, 1);
        project.ensure_initialized(m, 0);
        std::vector<std::string> out;
        for (const py::Module* dep : project.index().modules())
            if (dep != m && !dep->namespace_package) out.push_back(dep->fs_path);
        return out;
    }
};

}  // namespace

std::unique_ptr<FrontEnd> make_python_front_end() { return std::make_unique<PythonFrontEnd>(); }

}  // namespace mbl
