// The project shared by the evaluators of one source root: module initialization, the diagnostics it raises, and
// the defaults of model fields at the selected revision. The scan for the model bridges the tree registers is in
// bridge_api.cpp, with the rest of what the evaluator models of Bridge.
#include "pyeval/project.hpp"

#include <thread>

#include "pyeval/interpreter.hpp"

namespace mbl::py {

Project::Project(std::string root, const Revision& revision, const HfResolver& hf, EvalLimits limits,
                 ModuleIndex::Buffers buffers)
    : index_(std::move(root), std::move(buffers)), revision_(revision), hf_(hf), limits_(limits) {
    const Schema& schema = Schema::instance();
    for (const auto& name : schema.field_names())
        if (const FieldSpec* spec = schema.field(name); spec && schema.field_exists_at(*spec, revision_))
            model_field_names_.push_back(name);
    for (std::size_t i = 0; i < revision_.defaults.size(); ++i) default_index_.emplace(revision_.defaults[i].first, i);
}

std::vector<Diagnostic> Project::take_module_diagnostics() {
    std::lock_guard<std::mutex> lock(diag_mutex_);
    return std::move(module_diags_);
}

void Project::ensure_initialized(Module* m, int import_depth) {
    if (m->state.load(std::memory_order_acquire) == Module::Ready) return;
    index_.ensure_parsed(m);  // before the lock: other threads initialize other modules meanwhile
    std::lock_guard<std::recursive_mutex> lock(index_.init_mutex());
    if (m->state.load(std::memory_order_acquire) != Module::New) return;  // ready, or a cycle on this thread
    index_.ensure_parsed(m);
    m->state.store(Module::Initializing, std::memory_order_release);
    m->init_thread = std::this_thread::get_id();
    std::vector<Diagnostic> diags;
    if (m->syntax_error) {
        diags.push_back(*m->syntax_error);
    } else if (import_depth <= limits_.max_import_depth) {
        ObjectRegistry::Use shared(module_objects_);  // module globals outlive the recipe being evaluated
        Interp init(*this, &diags);
        init.run_module(m, import_depth + 1);
    }
    m->state.store(Module::Ready, std::memory_order_release);
    if (!diags.empty()) {
        std::lock_guard<std::mutex> dlock(diag_mutex_);
        for (auto& d : diags) module_diags_.push_back(std::move(d));
    }
}

std::optional<Val> Project::model_default(const std::string& field) const {
    if (auto it = default_index_.find(field); it != default_index_.end())
        return from_value(revision_.defaults[it->second].second, {});
    // A default the source names (`params_dtype = torch.float32`) is that name, as an outside object.
    if (revision_.classes)
        if (ResolvedField d = revision_.classes->lookup("TransformerConfig", field); d.field && !d.field->expr.empty())
            return Val::obj(std::make_shared<ExternalObj>(d.field->expr), Loc{});
    return std::nullopt;
}

}  // namespace mbl::py
