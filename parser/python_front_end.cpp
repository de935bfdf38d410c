// The Python recipe front end: a recipe module becomes one config tree per recipe function, evaluated abstractly
// (pyeval/: tree-sitter syntax trees, an evaluator that never runs Python; parser/bridge/: what it models of Bridge).
// Comments (suppressions) and FieldEdits (fixes) work on the text as written (parser/python_edit.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "core/did_you_mean.hpp"
#include "core/input_errors.hpp"
#include "parser/bridge/bridge_host.hpp"
#include "parser/bridge/hf_models.hpp"
#include "parser/bridge/recipes.hpp"
#include "parser/bridge/source_root.hpp"
#include "parser/front_end.hpp"
#include "parser/python_edit.hpp"
#include "pyeval/import_graph.hpp"
#include "pyeval/interpreter.hpp"

namespace mbl {
namespace {

namespace fs = std::filesystem;

// What a recipe's outcome depends on inside its own module, as a number: the text and position of every top-level
// statement that is not a function (imports, constants, classes, code), and of the recipe's function and every
// top-level function it names, at any depth (identifiers and string literals count as naming: `getattr(module,
// "f")` too). Other modules are not in it: the cache that uses it is dropped when one of them changes. Lines and
// columns are in it because the outcome's diagnostics point at them.
class RecipeKeys {
public:
    explicit RecipeKeys(const py::Ast& a) : a_(a) {
        for (std::uint32_t i = 0; i < a.count(a.root); ++i) {
            const py::NodeId stmt = a.kid(a.root, i);
            py::NodeId def = stmt;
            if (a.kind(def) == py::Kind::DecoratedDefinition) def = a.field(def, py::Field::Definition);
            if (def != py::kNoNode && a.kind(def) == py::Kind::FunctionDefinition)
                functions_[std::string(a.source(a.field(def, py::Field::Name)))] = stmt;  // the last one wins
            else context_ = mix(context_, statement_hash(stmt));
        }
    }

    std::uint64_t key(const std::string& recipe) {
        auto start = functions_.find(recipe);
        if (start == functions_.end()) return mix(context_, 0);
        std::set<py::NodeId> included{start->second};
        std::vector<py::NodeId> todo{start->second};
        while (!todo.empty()) {
            const py::NodeId stmt = todo.back();
            todo.pop_back();
            for (const auto& name : names_in(stmt))
                if (auto f = functions_.find(name); f != functions_.end() && included.insert(f->second).second)
                    todo.push_back(f->second);
        }
        std::uint64_t k = context_;
        for (py::NodeId stmt : included) k = mix(k, statement_hash(stmt));  // a set: in source order
        return k;
    }

private:
    static std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
        return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
    }

    std::uint64_t statement_hash(py::NodeId n) const {
        const py::Node& node = a_[n];
        std::uint64_t h = std::hash<std::string_view>{}(a_.source(n));
        for (std::uint64_t v : {std::uint64_t{node.line}, std::uint64_t{a_.col(n)}}) h = mix(h, v);
        return h;
    }

    // The identifiers and string literal texts inside a statement, once per statement.
    const std::set<std::string>& names_in(py::NodeId stmt) {
        auto [it, fresh] = names_.try_emplace(stmt);
        if (!fresh) return it->second;
        std::vector<py::NodeId> todo{stmt};
        while (!todo.empty()) {
            const py::NodeId n = todo.back();
            todo.pop_back();
            if (a_.kind(n) == py::Kind::Identifier || a_.kind(n) == py::Kind::StringContent)
                it->second.insert(std::string(a_.source(n)));
            for (std::uint32_t i = 0; i < a_.count(n); ++i) todo.push_back(a_.kid(n, i));
        }
        return it->second;
    }

    const py::Ast& a_;
    std::uint64_t context_ = 0;
    std::map<std::string, py::NodeId> functions_;
    std::map<py::NodeId, std::set<std::string>> names_;
};

// What one run shares between the recipe modules it reads: the parsed and initialized modules of each source root
// (a helper imported by 100 recipe files is read once), the import graph of each root, and the Hugging Face lookups.
// A module whose text the run's SourceManager holds (an editor's unsaved buffer) is read from there, not from disk.
//
// The editor server keeps one state for its whole session, and --fix changes files as it goes
// (ParseContext::revalidate_state): before each document is linted, modules whose files changed since they were read
// are retired, with every loaded module that imports them, so an edit to a recipe re-reads that recipe alone and an
// edit to a helper what imports it.
class PythonState {
public:
    py::Project& project(const std::string& root, const Revision& revision,
                         const std::vector<std::string>& hf_config_paths) {
        // One resolver per set of config.json paths, kept: a project that another thread is evaluating with may
        // refer to it.
        std::unique_ptr<py::HfResolver>& hf = resolvers_[hf_config_paths];
        if (!hf) hf = std::make_unique<py::HfResolver>(hf_config_paths);
        for (auto& p : projects_)
            if (p.project->index().root() == root && &p.host->revision() == &revision && &p.host->hf() == hf.get())
                return *p.project;
        auto host = std::make_unique<py::BridgeHost>(revision, *hf);
        auto project = std::make_unique<py::Project>(root, *host, py::EvalLimits{}, buffers());
        projects_.push_back(Loaded{std::move(host), std::move(project), {}, {}});
        return *projects_.back().project;
    }

    py::ImportGraph& graph(const std::string& root) {
        auto& g = graphs_[root];
        if (!g) g = std::make_unique<py::ImportGraph>(root, buffers());
        return *g;
    }

    // The source root found for the files of `folder`, computed by `find` the first time.
    std::string source_root_of_folder(const std::string& folder, const std::function<std::string()>& find) {
        {
            std::lock_guard<std::mutex> lock(roots_mutex_);
            if (auto it = roots_by_folder_.find(folder); it != roots_by_folder_.end()) return it->second;
        }
        std::string root = find();
        std::lock_guard<std::mutex> lock(roots_mutex_);
        return roots_by_folder_.emplace(folder, std::move(root)).first->second;
    }

    // Every lookup of a buffer goes to the SourceManager of the current call (the editor server makes one per lint).
    void use_sources(const SourceManager& sources) { sources_ = &sources; }

    // Brings `project` up to date before `doc` (absolute path, its text) is linted: the document when its text
    // changed, and with `everything`, every module whose file changed (a stat each); what imports them goes too.
    // Returns the project to use, which is a new one when the retired modules hold too much text.
    py::Project& refresh(py::Project& project, py::ImportGraph& graph, const std::string& doc, const std::string& text,
                         bool everything) {
        if (everything) graph.revalidate();  // once per lint: dependencies() and dependents() trust it
        std::vector<py::Module*> stale;
        const auto modules = project.index().modules();
        for (py::Module* m : modules) {
            const py::Ast* ast = m->parsed_ast();  // other documents of the run may be parsing some meanwhile
            if (!ast) continue;
            if (m->fs_path == doc ? ast->text != text : everything && !project.index().is_current(*m))
                stale.push_back(m);
        }
        if (stale.empty()) return project;
        lookups_.clear();  // their answers may come from the changed modules
        // What imports a stale module, at any depth, read it at initialization: it is stale too.
        std::map<std::string, std::vector<py::Module*>> importers;
        for (py::Module* m : modules)
            if (m->parsed_ast() && !m->namespace_package)
                for (const auto& dep : graph.imports(m->fs_path)) importers[dep].push_back(m);
        // Kept outcomes: an edit to the document alone leaves its recipes to their keys (RecipeKeys) and drops those
        // of the modules that import it; any other change drops them all (a recipe may read any module, and not
        // only through the imports the graph sees).
        const bool document_alone = stale.size() == 1 && stale[0]->fs_path == doc;
        std::set<const py::Module*> retire(stale.begin(), stale.end());
        for (std::size_t i = 0; i < stale.size(); ++i)
            for (py::Module* m : importers[stale[i]->fs_path])
                if (retire.insert(m).second) stale.push_back(m);
        auto loaded = std::find_if(projects_.begin(), projects_.end(),
                                   [&](const Loaded& l) { return l.project.get() == &project; });
        if (project.index().retired_bytes() > kMaxRetiredBytes) {
            // Retired modules stay alive until their project ends (values of other modules may point into them).
            const std::string root = project.index().root();
            const Revision& revision = loaded->host->revision();
            auto hf = std::find_if(resolvers_.begin(), resolvers_.end(),
                                   [&](const auto& r) { return r.second.get() == &loaded->host->hf(); });
            loaded->project.reset();  // before its host, which it refers to (erase moves the later entries down)
            projects_.erase(loaded);
            return this->project(root, revision, hf->first);
        }
        if (!document_alone) loaded->outcomes.clear();
        for (const py::Module* m : retire) {
            loaded->module_diagnostics.erase(m->path);
            if (m->fs_path != doc) loaded->outcomes.erase(m->fs_path);
        }
        project.index().retire({retire.begin(), retire.end()});
        return project;
    }

    // Diagnostics raised while initializing the modules `doc` imports (a helper's syntax error). A state that is
    // revalidated (kept for a session) reports them with every lint of an importer, not only the lint that
    // initialized the module.
    std::vector<Diagnostic> module_diagnostics(py::Project& project, py::ImportGraph& graph, const std::string& doc,
                                               bool revalidated) {
        std::vector<Diagnostic> taken = project.take_module_diagnostics();
        if (!revalidated) return taken;
        auto loaded = std::find_if(projects_.begin(), projects_.end(),
                                   [&](const Loaded& l) { return l.project.get() == &project; });
        for (auto& d : taken) loaded->module_diagnostics[d.range.file].push_back(std::move(d));
        std::vector<Diagnostic> out;
        if (loaded->module_diagnostics.empty()) return out;
        const std::set<std::string> imported = graph.dependencies(doc);
        for (const py::Module* m : project.index().modules())
            if (imported.count(m->fs_path) || m->fs_path == doc)
                if (auto it = loaded->module_diagnostics.find(m->path); it != loaded->module_diagnostics.end())
                    out.insert(out.end(), it->second.begin(), it->second.end());
        return out;
    }

    // The outcomes of a module's recipes kept from its last lint (revalidated state only), by recipe name.
    struct CachedOutcome {
        std::uint64_t key = 0;
        py::RecipeOutcome outcome;
    };
    std::map<std::string, CachedOutcome>& outcomes(py::Project& project, const std::string& module) {
        auto loaded = std::find_if(projects_.begin(), projects_.end(),
                                   [&](const Loaded& l) { return l.project.get() == &project; });
        return loaded->outcomes[module];
    }

    // Why some of these config.json paths cannot be read.
    const std::vector<std::string>& hf_errors(const std::vector<std::string>& hf_config_paths) {
        std::unique_ptr<py::HfResolver>& hf = resolvers_[hf_config_paths];
        if (!hf) hf = std::make_unique<py::HfResolver>(hf_config_paths);
        return hf->errors();
    }

    // Held around every call above: the documents of a run may be parsed on several threads at once.
    std::mutex& mutex() { return mutex_; }

    // The tree's mixed_precision lookup for configs of the ConfigContainer class defined in `config_module`, kept
    // while the project's modules do not change (answers are memoized).
    // Takes mutex(): it is asked from the threads that lint the configs. The lookup itself is thread-safe.
    std::shared_ptr<const PrecisionLookup> precision_lookup(const std::string& root, const Revision& revision,
                                                            const std::vector<std::string>& hf_config_paths,
                                                            const std::string& config_module) {
        std::lock_guard<std::mutex> lock(mutex_);
        py::Project& p = project(root, revision, hf_config_paths);
        auto& kept = lookups_[{&p, config_module}];
        if (!kept) kept = py::make_precision_lookup(p, config_module);
        return kept;
    }

private:
    // Text of retired modules (kept alive) past which a project is rebuilt: a few hundred edits of a large recipe.
    static constexpr std::size_t kMaxRetiredBytes = 32u << 20;

    py::ModuleIndex::Buffers buffers() {
        return [this](const std::string& path) { return sources_ ? sources_->text(path) : nullptr; };
    }

    struct Loaded {
        std::unique_ptr<py::BridgeHost> host;  // what `project` asks of Bridge; outlives it
        std::unique_ptr<py::Project> project;
        std::map<std::string, std::vector<Diagnostic>> module_diagnostics;     // by module path (revalidated state)
        std::map<std::string, std::map<std::string, CachedOutcome>> outcomes;  // by module file, then recipe
    };
    std::mutex mutex_;
    const SourceManager* sources_ = nullptr;
    std::map<std::vector<std::string>, std::unique_ptr<py::HfResolver>> resolvers_;  // by config.json paths
    std::vector<Loaded> projects_;
    std::map<std::string, std::unique_ptr<py::ImportGraph>> graphs_;  // by root
    std::map<std::pair<const py::Project*, std::string>, std::shared_ptr<const PrecisionLookup>> lookups_;
    std::mutex roots_mutex_;  // apart from mutex_: parse() finds a root before it takes mutex_
    std::map<std::string, std::string> roots_by_folder_;
};

// The source root of a file: --root (or the configuration's), else found from the file's folder (once per folder:
// finding it looks for src/megatron/bridge and __init__.py in every folder above).
std::string root_for(PythonState& state, const ParseContext& ctx, const std::string& file) {
    if (!ctx.root.empty()) return normalized_path(ctx.root);
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) return normalized_path(py::default_root(file));
    return state.source_root_of_folder(std::filesystem::path(file).parent_path().string(),
                                       [&] { return normalized_path(py::default_root(file)); });
}

PythonState& state_of(ParseContext& ctx, std::shared_ptr<PythonState>& local) {
    if (!ctx.state) {
        local = std::make_shared<PythonState>();
        return *local;
    }
    local = ctx.state->slot<PythonState>("python");
    return *local;
}

// The dotted module that defines a config's ConfigContainer class: from a dump's `_target_`, else Bridge's.
std::string config_module_of(const std::string& config_class) {
    const auto dot = config_class.rfind('.');
    return dot == std::string::npos ? std::string("megatron.bridge.training.config") : config_class.substr(0, dot);
}

// A source root's mixed_precision lookup as a config holds it: it keeps the run's Python state alive, and asks it
// for the lookup at each use (the editor server's state drops lookups whose modules changed).
class RootPrecisionLookup final : public PrecisionLookup {
public:
    RootPrecisionLookup(std::shared_ptr<PythonState> state, std::string root, const Revision& revision,
                        std::vector<std::string> hf_config_paths, std::string config_module)
        : state_(std::move(state)),
          root_(std::move(root)),
          revision_(revision),
          hf_(std::move(hf_config_paths)),
          module_(std::move(config_module)) {}

    Answer find(const std::string& name) const override {
        return state_->precision_lookup(root_, revision_, hf_, module_)->find(name);
    }

private:
    std::shared_ptr<PythonState> state_;
    std::string root_;
    const Revision& revision_;
    std::vector<std::string> hf_;
    std::string module_;
};

// Looks up the config's mixed_precision name while the front end still registers the files it read, so that output
// can quote the tree's lines the answer points into.
void preload_precision(const PrecisionLookup& lookup, const Value& root) {
    const Value* mp = root.find("mixed_precision");
    if (mp && mp->is_string()) (void)lookup.find(mp->as_string());
}

// What the text says of a top-level `def`'s return annotation, from its parameter list's `(` at `open`: whether it
// names ConfigContainer, or Unsure where the signature is not plain enough to read without the parser (a string or a
// comment inside it, brackets that do not close before a line that starts a new statement). Each scan stops at such a
// line, so a file is read about once however many `def`s it holds.
enum class Annotation { Names, Other, Unsure };
Annotation container_annotation(std::string_view text, std::size_t open) {
    // A line break followed by a line that starts at column 0 with anything but a closing bracket (a formatter puts
    // the `)` of a signature that spans lines there).
    auto new_statement = [&](std::size_t at) {
        if (text[at] != '\n' || at + 1 >= text.size()) return false;
        const char next = text[at + 1];
        return next != ' ' && next != '\t' && next != '\n' && next != ')' && next != ']' && next != '}';
    };
    int depth = 0;
    std::size_t at = open;
    for (; at < text.size(); ++at) {  // the parameter list
        const char c = text[at];
        if (c == '"' || c == '\'' || c == '#' || new_statement(at)) return Annotation::Unsure;
        if (c == '(' || c == '[' || c == '{') ++depth;
        if ((c == ')' || c == ']' || c == '}') && --depth == 0) break;
    }
    if (at >= text.size()) return Annotation::Unsure;
    for (++at; at < text.size() && !new_statement(at) &&
               (text[at] == ' ' || text[at] == '\t' || text[at] == '\\' || text[at] == '\n');)
        ++at;
    if (at < text.size() && text[at] == ':') return Annotation::Other;
    if (text.substr(at, 2) != "->") return Annotation::Unsure;
    const std::size_t start = at + 2;
    for (at = start; at < text.size(); ++at) {  // the annotation, up to the `:` that ends the signature
        const char c = text[at];
        if (c == '#' || new_statement(at)) return Annotation::Unsure;
        if (c == '(' || c == '[' || c == '{') ++depth;
        if (c == ')' || c == ']' || c == '}') --depth;
        if (c == ':' && depth == 0) break;
    }
    if (at >= text.size()) return Annotation::Unsure;
    return text.substr(start, at - start).find("ConfigContainer") != std::string_view::npos ? Annotation::Names
                                                                                            : Annotation::Other;
}

// Whether a module's text can hold a recipe candidate (py::find_recipes): a top-level function annotated with
// ConfigContainer, or named *_config. Directory walks skip the others without parsing them: at a repository root most
// Python files are library code, tests and scripts, and tests name ConfigContainer without defining recipes (on
// Megatron Bridge 067f987's tree, 160 test files, a third of the text the walk parsed). Where the text is not plain
// enough to tell, the file is parsed.
bool may_define_recipe(std::string_view text) {
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    const bool names_container = text.find("ConfigContainer") != std::string_view::npos;
    // Line breaks other than "\n" (Python reads a lone "\r" as one): whether a `def` starts a line is not read here.
    if (names_container && text.find('\r') != std::string_view::npos) return true;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        std::string_view line = text.substr(at, end - at);
        const std::size_t line_start = at;
        at = end + 1;
        std::size_t keyword = 0;
        if (line.starts_with("async ")) keyword = line.find_first_not_of(" \t", 6);
        if (keyword == std::string_view::npos || line.substr(keyword, 3) != "def" || line.size() < keyword + 4 ||
            (line[keyword + 3] != ' ' && line[keyword + 3] != '\t'))
            continue;
        const std::size_t name_start = line.find_first_not_of(" \t", keyword + 3);
        if (name_start == std::string_view::npos) continue;
        const std::size_t name_end = line.find_first_of("( \t:", name_start);
        if (line.substr(name_start, name_end - name_start).ends_with("_config")) return true;
        if (!names_container) continue;
        const std::size_t open = line.find('(', name_start);  // on the `def`'s line in any valid signature
        if (open == std::string_view::npos) return true;
        if (container_annotation(text, line_start + open) != Annotation::Other) return true;
    }
    return false;
}

// The recipes of a module, or just `function` (linted by name even when it is not recognisably a recipe).
std::vector<py::RecipeInfo> recipes_to_lint(py::Module& m, const std::string& function,
                                            std::vector<Diagnostic>& errors) {
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

// Evaluates the recipes on up to `jobs` threads (modules are shared read-only; see pyeval/interpreter.hpp).
std::vector<py::RecipeOutcome> evaluate_all(py::Project& project, const Revision& revision,
                                            const std::vector<py::RecipeInfo>& recipes, int jobs) {
    py::read_counters().recipes_evaluated += recipes.size();
    std::vector<py::RecipeOutcome> outcomes(recipes.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < recipes.size();) {
            try {
                outcomes[i] = py::evaluate_recipe(project, revision, recipes[i]);
            } catch (const std::exception& e) {
                // The evaluator's limits are meant to stop everything first; this keeps one recipe from ending the run.
                Diagnostic d =
                    input_error(InputError::LimitExceeded, recipes[i].def,
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

// Evaluates the recipes whose key (RecipeKeys) changed since `cache` was filled, and takes the others from it: an edit
// inside one function re-evaluates the recipes that reach it, an edit above a function every recipe below it.
std::vector<py::RecipeOutcome> evaluate_changed(py::Project& project, const Revision& revision, const py::Module& m,
                                                const std::vector<py::RecipeInfo>& recipes, int jobs,
                                                std::map<std::string, PythonState::CachedOutcome>& cache) {
    RecipeKeys keys(*m.ast);
    std::vector<std::uint64_t> key(recipes.size());
    std::vector<std::size_t> stale;
    std::vector<py::RecipeInfo> todo;
    for (std::size_t i = 0; i < recipes.size(); ++i) {
        key[i] = keys.key(recipes[i].name);
        auto it = cache.find(recipes[i].name);
        if (it != cache.end() && it->second.key == key[i]) continue;
        stale.push_back(i);
        todo.push_back(recipes[i]);
    }
    std::vector<py::RecipeOutcome> fresh = evaluate_all(project, revision, todo, jobs);
    for (std::size_t j = 0; j < stale.size(); ++j) cache[recipes[stale[j]].name] = {key[stale[j]], std::move(fresh[j])};
    std::vector<py::RecipeOutcome> out;
    for (const auto& r : recipes) out.push_back(cache[r.name].outcome);
    return out;
}

// Makes the text of every module read quotable in output (a diagnostic may point into any helper).
void register_sources(py::Project& project, SourceManager& sources) {
    for (const py::Module* m : project.index().modules())
        if (m->parsed_ast() && !m->namespace_package)
            sources.add_new(m->path, std::shared_ptr<const std::string>(m->ast, &m->ast->text));  // shared, not copied
}

class PythonFrontEnd final : public FrontEnd {
public:
    std::string_view language() const override { return "python"; }
    bool handles(std::string_view path) const override { return path.ends_with(".py"); }

    ParseResult parse(const std::string& name, std::string_view text, bool allow_skip,
                      ParseContext& ctx) const override {
        ParseResult result;
        if (auto bad = encoding_error(name, text)) {
            result.errors.push_back(std::move(*bad));
            return result;
        }
        if (allow_skip && ctx.function.empty() && !may_define_recipe(text)) {
            result.skipped = true;
            return result;
        }
        std::shared_ptr<PythonState> local;
        PythonState& state = state_of(ctx, local);
        const Revision& revision =
            ctx.revision ? *ctx.revision : *Schema::instance().revision(Schema::instance().default_revision());
        const std::string root = root_for(state, ctx, name);
        const std::string owned(text);
        const std::string doc = normalized_path(name);
        std::unique_lock<std::mutex> bookkeeping(state.mutex());  // the modules themselves are thread-safe
        state.use_sources(ctx.sources);
        py::ImportGraph& graph = state.graph(root);
        py::Project& project =
            state.refresh(state.project(root, revision, ctx.hf_config_paths), graph, doc, owned, ctx.revalidate_state);
        for (const auto& e : state.hf_errors(ctx.hf_config_paths))
            // Named after the option, not the file: reported once however many recipe files the run reads.
            result.errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file("--hf-config"), e));
        bookkeeping.unlock();
        if (!result.errors.empty()) return result;

        py::Module* m = project.index().module_for_file(name, result.errors, &owned);
        if (!m) return result;
        if (m->syntax_error) {
            result.errors.push_back(*m->syntax_error);
            register_sources(project, ctx.sources);
            return result;
        }
        const std::vector<py::RecipeInfo> recipes = recipes_to_lint(*m, ctx.function, result.errors);
        std::vector<py::RecipeOutcome> outcomes =
            ctx.revalidate_state
                ? evaluate_changed(project, revision, *m, recipes, ctx.jobs, state.outcomes(project, m->fs_path))
                : evaluate_all(project, revision, recipes, ctx.jobs);
        auto keep = [&](const py::RecipeInfo& recipe, py::RecipeOutcome& outcome) {
            if (!outcome.is_recipe) return;  // a *_config helper that returns no config
            ParsedConfig config;
            config.label = recipe.name;
            config.anchor = recipe.def;
            config.root = std::move(outcome.root);
            config.findings = std::move(outcome.diagnostics);
            config.precision = std::make_shared<RootPrecisionLookup>(
                local, root, revision, ctx.hf_config_paths,
                outcome.config_module.empty() ? config_module_of("") : outcome.config_module);
            preload_precision(*config.precision, config.root);
            result.configs.push_back(std::move(config));
        };
        for (std::size_t i = 0; i < recipes.size(); ++i) keep(recipes[i], outcomes[i]);
        // A job script named on its own (`check train.py`) that defines no recipe function: the config its
        // `if __name__ == "__main__":` block hands to pretrain() or finetune() is its recipe. A directory walk leaves
        // such scripts alone (examples and launchers, most of them reading their overrides from the command line).
        std::optional<py::RecipeInfo> main_block;
        if (result.configs.empty() && result.errors.empty() && !allow_skip && ctx.function.empty())
            main_block = py::find_main_block(*m);
        if (main_block) {
            std::vector<py::RecipeOutcome> main_outcome = evaluate_all(project, revision, {*main_block}, 1);
            keep(*main_block, main_outcome.front());
        }
        if (result.configs.empty() && result.errors.empty()) {
            if (allow_skip) {
                result.skipped = true;
                return result;
            }
            // Named on purpose but nothing to check: say so rather than pass it.
            result.errors.push_back(input_error(
                InputError::UnknownTarget, SourceRange::whole_file(name),
                fmt::format(
                    "{} defines no recipe (a top-level function annotated -> ConfigContainer, or named *_config "
                    "and returning a config){}",
                    name,
                    main_block ? ", and its `if __name__ == \"__main__\":` block reaches no call of pretrain(), "
                                 "finetune() or distill() that hands it a config"
                               : "")));
        }
        // Syntax errors in imported helpers: their recipes' values from there are unknown, and the user should know.
        bookkeeping.lock();
        for (auto& d : state.module_diagnostics(project, graph, doc, ctx.revalidate_state))
            result.errors.push_back(std::move(d));
        bookkeeping.unlock();
        register_sources(project, ctx.sources);
        return result;
    }

    void name_document(const std::string& name, ParseContext& ctx) const override {
        if (!ctx.state) return;  // nothing is shared between documents
        std::shared_ptr<PythonState> local;
        PythonState& state = state_of(ctx, local);
        const Revision& revision =
            ctx.revision ? *ctx.revision : *Schema::instance().revision(Schema::instance().default_revision());
        std::lock_guard<std::mutex> bookkeeping(state.mutex());
        state.use_sources(ctx.sources);
        py::ModuleIndex& index = state.project(root_for(state, ctx, name), revision, ctx.hf_config_paths).index();
        py::Module* m = index.name_document(name);
        if (m && ctx.function.empty()) index.expect(m, may_define_recipe);
    }

    std::vector<SourceComment> comments(std::string_view text) const override { return python_edit::comments(text); }
    std::vector<TextEdit> field_edit(const FieldEdit& edit, const EditSite& site, std::string_view text,
                                     const LineIndex& lines) const override {
        return python_edit::field_edit(site.entry.file, edit, site, text, lines);
    }

    // The modules the document imports, at any depth, from the import statements (pyeval/import_graph.hpp).
    std::vector<std::string> dependencies(const std::string& path, std::string_view, ParseContext& ctx) const override {
        std::shared_ptr<PythonState> local;
        PythonState& state = state_of(ctx, local);
        state.use_sources(ctx.sources);
        py::ImportGraph& graph = state.graph(root_for(state, ctx, path));
        const auto found = graph.dependencies(normalized_path(path));
        return {found.begin(), found.end()};
    }

    // The files of the source root that import the module, at any depth.
    std::vector<std::string> dependents(const std::string& path, ParseContext& ctx) const override {
        std::shared_ptr<PythonState> local;
        PythonState& state = state_of(ctx, local);
        state.use_sources(ctx.sources);
        py::ImportGraph& graph = state.graph(root_for(state, ctx, path));
        const auto found = graph.dependents({normalized_path(path)});
        return {found.begin(), found.end()};
    }

    // The importers inside the module's top-level package (src/megatron/bridge for any module of Bridge; the
    // module's own directory for one outside packages): scripts, tutorials and tests elsewhere in the root import
    // the package too, but they are not its recipes. Test files (what pytest collects) are left out wherever they
    // are: they build broken configs on purpose.
    std::vector<std::string> brought_by(const std::string& path, ParseContext& ctx) const override {
        const std::string scope = package_tree(normalized_path(path)) + "/";
        std::vector<std::string> out;
        for (auto& d : dependents(path, ctx))
            if (d.starts_with(scope) && !is_test_file(d)) out.push_back(std::move(d));
        return out;
    }

private:
    // The directory of a file's top-level package: the highest directory of the chain holding __init__.py files.
    static std::string package_tree(const std::string& file) {
        std::error_code ec;
        fs::path top = fs::path(file).parent_path();
        for (fs::path d = top; fs::exists(d / "__init__.py", ec) && d != d.parent_path(); d = d.parent_path()) top = d;
        return top.string();
    }

    static bool is_test_file(const std::string& path) {
        const std::string name = fs::path(path).filename().string();
        return name == "conftest.py" || (name.starts_with("test_") && name.ends_with(".py")) ||
               name.ends_with("_test.py");
    }
};

}  // namespace

std::unique_ptr<FrontEnd> make_python_front_end() { return std::make_unique<PythonFrontEnd>(); }

std::shared_ptr<const PrecisionLookup> tree_precision_lookup(const std::string& file, const Value& root,
                                                             ParseContext& ctx) {
    std::shared_ptr<PythonState> state;
    state_of(ctx, state);
    state->use_sources(ctx.sources);
    const Revision& revision =
        ctx.revision ? *ctx.revision : *Schema::instance().revision(Schema::instance().default_revision());
    const std::string source_root = root_for(*state, ctx, file);
    auto lookup = std::make_shared<RootPrecisionLookup>(state, source_root, revision, ctx.hf_config_paths,
                                                        config_module_of(root.target()));
    const Value* mp = root.find("mixed_precision");
    if (mp && mp->is_string()) {
        preload_precision(*lookup, root);
        register_sources(state->project(source_root, revision, ctx.hf_config_paths), ctx.sources);
    }
    return lookup;
}

}  // namespace mbl
