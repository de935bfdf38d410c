#include "engine/recipe_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "core/did_you_mean.hpp"
#include "parser/input_errors.hpp"
#include "parser/python/hf_models.hpp"
#include "parser/python/interpreter.hpp"
#include "parser/python/recipes.hpp"
#include "rules/registry.hpp"

namespace mbl {

namespace fs = std::filesystem;

namespace {

const char* const kRecomputeFields[] = {"recompute_granularity", "recompute_method", "recompute_num_layers",
                                        "recompute_modules", "distribute_saved_activations"};

// The first unknown reason inside a value.
const Value* first_unknown(const Value& v) {
    if (v.is_unknown()) return &v;
    for (const auto& item : v.items())
        if (const Value* u = first_unknown(item)) return u;
    for (const auto& e : v.entries())
        if (const Value* u = first_unknown(e.value)) return u;
    return nullptr;
}

}  // namespace

RecipeTarget parse_recipe_target(const std::string& arg) {
    RecipeTarget t;
    auto sep = arg.find("::");
    t.file = arg.substr(0, sep);
    if (sep != std::string::npos) t.function = arg.substr(sep + 2);
    return t;
}

bool is_python_target(const std::string& arg) {
    const std::string file = parse_recipe_target(arg).file;
    return file.size() > 3 && file.compare(file.size() - 3, 3, ".py") == 0;
}

RecipeSession::RecipeSession(const Revision& revision, RecipeOptions options)
    : revision_(revision), options_(std::move(options)),
      hf_(std::make_unique<py::HfResolver>(options_.hf_configs, options_.hf_cache_dirs)) {}

RecipeSession::~RecipeSession() = default;

std::vector<std::string> RecipeSession::hf_errors() const { return hf_->errors(); }

py::Project& RecipeSession::project_for(const std::string& file) {
    std::error_code ec;
    std::string root = options_.root.empty() ? py::default_root(file) : options_.root;
    root = fs::weakly_canonical(fs::absolute(root, ec), ec).string();
    for (auto& p : projects_)
        if (p->index().root() == root) return *p;
    projects_.push_back(std::make_unique<py::Project>(root, revision_, *hf_));
    return *projects_.back();
}

std::vector<const py::RecipeInfo*> RecipeSession::collect(const std::vector<RecipeTarget>& targets,
                                                          std::vector<Diagnostic>& errors, int& files) {
    std::vector<const py::RecipeInfo*> out;
    std::set<std::pair<const py::Module*, std::string>> seen;
    std::set<const py::Module*> counted;
    // Parse every target file first, on all cores.
    std::vector<std::pair<py::Project*, py::Module*>> modules;
    for (const auto& target : targets) {
        py::Project& project = project_for(target.file);
        modules.emplace_back(&project, project.index().module_for_file(target.file, errors));
    }
    {
        std::atomic<size_t> next{0};
        auto parse = [&] {
            for (size_t i; (i = next.fetch_add(1)) < modules.size();)
                if (modules[i].second) modules[i].first->index().ensure_parsed(modules[i].second);
        };
        unsigned threads = options_.jobs > 0 ? static_cast<unsigned>(options_.jobs) : std::thread::hardware_concurrency();
        threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(modules.size())));
        std::vector<std::thread> pool;
        for (unsigned t = 1; t < threads; ++t) pool.emplace_back(parse);
        parse();
        for (auto& t : pool) t.join();
    }
    for (size_t ti = 0; ti < targets.size(); ++ti) {
        const auto& target = targets[ti];
        py::Module* m = modules[ti].second;
        if (!m) continue;
        if (counted.insert(m).second) ++files;
        if (m->syntax_error) {
            if (seen.insert({m, "\x01syntax"}).second) {
                errors.push_back(*m->syntax_error);
                reported_.insert(m->path);
            }
            continue;
        }
        std::vector<py::RecipeInfo> found = py::find_recipes(*m, !target.function.empty());
        if (!target.function.empty()) {
            found.erase(std::remove_if(found.begin(), found.end(),
                                       [&](const py::RecipeInfo& r) { return r.name != target.function; }),
                        found.end());
            if (found.empty()) {
                auto names = py::function_names(*m);
                if (std::find(names.begin(), names.end(), target.function) != names.end()) {
                    // Asked for by name: lint it even though it is not annotated as a recipe.
                    py::RecipeInfo r;
                    r.module = m;
                    r.name = target.function;
                    r.annotated = true;
                    const py::Ast& a = *m->ast;
                    for (std::uint32_t i = 0; i < a.count(a.root); ++i) {
                        py::NodeId def = a.kid(a.root, i);
                        if (a.kind(def) == py::Kind::DecoratedDefinition) def = a.field(def, py::Field::Definition);
                        if (def == py::kNoNode || a.kind(def) != py::Kind::FunctionDefinition) continue;
                        py::NodeId name = a.field(def, py::Field::Name);
                        if (a.source(name) == target.function) r.def = m->loc(name).range();
                    }
                    found.push_back(r);
                } else {
                    errors.push_back(input_error(InputError::UnknownTarget, SourceRange::whole_file(m->path),
                                                 fmt::format("{} has no top-level function \"{}\"{}", m->path,
                                                             target.function,
                                                             did_you_mean_suffix(target.function, names))));
                    continue;
                }
            }
        }
        for (auto& r : found) {
            if (!seen.insert({m, r.name}).second) continue;
            recipes_.push_back(std::make_unique<py::RecipeInfo>(std::move(r)));
            out.push_back(recipes_.back().get());
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const py::RecipeInfo* a, const py::RecipeInfo* b) {
        return std::tie(a->def.file, a->def.line) < std::tie(b->def.file, b->def.line);
    });
    return out;
}

EvaluatedRecipe RecipeSession::evaluate(const py::RecipeInfo& recipe) {
    py::Project* project = nullptr;
    for (auto& p : projects_) {
        for (const py::Module* m : p->index().modules())
            if (m == recipe.module) project = p.get();
    }
    EvaluatedRecipe out;
    out.name = recipe.name;
    out.def = recipe.def;
    if (!project) return out;
    py::RecipeOutcome o = py::evaluate_recipe(*project, recipe);
    out.is_recipe = o.is_recipe;
    out.root = std::move(o.root);
    out.diagnostics = std::move(o.diagnostics);
    return out;
}

RecipeRunResult RecipeSession::lint(const std::vector<const py::RecipeInfo*>& recipes, const Linter& linter) {
    struct Slot {
        bool is_recipe = false;
        bool resolved = false;
        std::vector<Diagnostic> diagnostics;
    };
    std::vector<Slot> slots(recipes.size());
    // Which project each recipe belongs to (decided before the threads start).
    std::unordered_map<const py::Module*, py::Project*> owner;
    for (auto& p : projects_)
        for (const py::Module* m : p->index().modules()) owner[m] = p.get();
    std::vector<py::Project*> project_of(recipes.size(), nullptr);
    for (size_t i = 0; i < recipes.size(); ++i) project_of[i] = owner[recipes[i]->module];

    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i; (i = next.fetch_add(1)) < recipes.size();) {
            const py::RecipeInfo& r = *recipes[i];
            Slot& slot = slots[i];
            try {
                py::RecipeOutcome o = py::evaluate_recipe(*project_of[i], r);
                if (!o.is_recipe) continue;
                slot.is_recipe = true;
                std::vector<Diagnostic> diags = std::move(o.diagnostics);
                if (linter.options().prepare) linter.options().prepare(o.root, diags);
                auto model = linter.effective_model(std::move(o.root), r.def, diags);
                if (model) {
                    slot.resolved = true;
                    for (const char* f : kRecomputeFields) slot.resolved &= !(*model)[f].contains_unknown();
                    for (auto& d : run_rules(*model, linter.options().rule_options)) diags.push_back(std::move(d));
                    if (options_.show_unknowns) {
                        // One info per (place, reason): a model the linter could not follow is one line, not 400.
                        std::vector<std::tuple<SourceRange, std::string, std::vector<std::string>>> groups;
                        for (const auto& e : model->fields.entries()) {
                            const Value* u = first_unknown(e.value);
                            if (!u) continue;
                            SourceRange at = u->prov().range.valid() ? u->prov().range
                                             : e.value.prov().range.valid() ? e.value.prov().range
                                                                            : r.def;
                            auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) {
                                return std::get<1>(x) == u->unknown_reason() && std::get<0>(x).file == at.file &&
                                       std::get<0>(x).line == at.line && std::get<0>(x).column == at.column;
                            });
                            if (g == groups.end()) groups.emplace_back(at, u->unknown_reason(), std::vector<std::string>{e.key});
                            else std::get<2>(*g).push_back(e.key);
                        }
                        for (auto& [at, reason, fields] : groups) {
                            std::string names;
                            for (size_t k = 0; k < fields.size() && k < 4; ++k) names += (k ? ", model." : "model.") + fields[k];
                            if (fields.size() > 4) names += fmt::format(" and {} more model fields", fields.size() - 4);
                            Diagnostic d = input_error(InputError::NotResolved, at,
                                                       fmt::format("{} {} not known statically: {}", names,
                                                                   fields.size() == 1 ? "is" : "are", reason));
                            d.severity = Severity::Info;
                            diags.push_back(std::move(d));
                        }
                    }
                }
                for (auto& d : diags) {
                    if (d.range.file.rfind("<", 0) == 0) continue;  // an override: the same for every recipe
                    d.notes.insert(d.notes.begin(), Note{r.def, fmt::format("in recipe {}", r.name)});
                }
                slot.diagnostics = std::move(diags);
            } catch (const std::exception& e) {
                slot.is_recipe = true;
                Diagnostic d = input_error(InputError::LimitExceeded, r.def,
                                           fmt::format("recipe {} could not be evaluated: {}", r.name, e.what()));
                d.severity = Severity::Warning;
                slot.diagnostics.push_back(std::move(d));
            }
        }
    };
    unsigned threads = options_.jobs > 0 ? static_cast<unsigned>(options_.jobs) : std::thread::hardware_concurrency();
    threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(recipes.size())));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();

    RecipeRunResult result;
    std::vector<std::pair<std::string, std::vector<Diagnostic>>> per_recipe;
    for (size_t i = 0; i < recipes.size(); ++i) {
        if (!slots[i].is_recipe) continue;
        ++result.recipes;
        if (slots[i].resolved) ++result.resolved;
        else result.unresolved.emplace_back(recipes[i]->name, recipes[i]->def);
        per_recipe.emplace_back(recipes[i]->name, std::move(slots[i].diagnostics));
    }
    for (auto& d : module_diagnostics()) per_recipe.push_back({"", {std::move(d)}});
    result.diagnostics = merge_recipe_diagnostics(std::move(per_recipe));
    return result;
}

void RecipeSession::register_sources(SourceManager& sources) const {
    for (const auto& p : projects_)
        for (const py::Module* m : p->index().modules())
            if (m->ast && !m->namespace_package && !sources.text(m->path)) sources.add(m->path, m->ast->text);
}

std::vector<Diagnostic> RecipeSession::module_diagnostics() {
    std::vector<Diagnostic> out;
    for (auto& p : projects_)
        for (auto& d : p->take_module_diagnostics())
            if (!reported_.count(d.range.file)) out.push_back(std::move(d));
    return out;
}

std::vector<Diagnostic> merge_recipe_diagnostics(
    std::vector<std::pair<std::string, std::vector<Diagnostic>>> per_recipe) {
    std::vector<Diagnostic> out;
    std::vector<std::vector<std::string>> others;
    std::map<std::tuple<std::string, std::string, int, int, int, int, std::string>, size_t> index;
    for (auto& [recipe, diags] : per_recipe) {
        for (auto& d : diags) {
            auto key = std::make_tuple(d.code, d.range.file, d.range.line, d.range.column, d.range.end_line,
                                       d.range.end_column, d.message);
            auto it = index.find(key);
            if (it == index.end()) {
                index.emplace(key, out.size());
                out.push_back(std::move(d));
                others.emplace_back();
                continue;
            }
            auto& names = others[it->second];
            if (!recipe.empty() && std::find(names.begin(), names.end(), recipe) == names.end()) names.push_back(recipe);
        }
    }
    for (size_t i = 0; i < out.size(); ++i) {
        auto& names = others[i];
        // The first recipe is already named by the diagnostic's own note.
        if (!out[i].notes.empty() && out[i].notes.front().message.rfind("in recipe ", 0) == 0)
            names.erase(std::remove(names.begin(), names.end(), out[i].notes.front().message.substr(10)), names.end());
        if (names.empty()) continue;
        std::string list;
        for (size_t k = 0; k < names.size() && k < 5; ++k) list += (k ? ", " : "") + names[k];
        if (names.size() > 5) list += fmt::format(" and {} more", names.size() - 5);
        out[i].notes.push_back(Note{SourceRange{}, fmt::format("the same line also affects {} other recipe{}: {}", names.size(),
                                                    names.size() == 1 ? "" : "s", list)});
    }
    sort_diagnostics(out);
    return out;
}

}  // namespace mbl
