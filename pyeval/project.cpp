// The project shared by the evaluators of one source root: module initialization and the diagnostics it raises.
#include "pyeval/project.hpp"

#include <fmt/format.h>

#include <thread>

#include "core/input_errors.hpp"

#include "pyeval/interpreter.hpp"

namespace mbl::py {

Project::Project(std::string root, Host& host, EvalLimits limits, ModuleIndex::Buffers buffers)
    : index_(std::move(root), std::move(buffers)), host_(host), limits_(limits) {}

std::vector<Diagnostic> Project::take_module_diagnostics() {
    std::lock_guard<std::mutex> lock(diag_mutex_);
    return std::move(module_diags_);
}

void Project::ensure_initialized(Module* m, int import_depth) {
    if (m->state.load(std::memory_order_acquire) == Module::Ready) return;
    index_.ensure_parsed(m);  // before the lock: other threads initialize other modules meanwhile
    // While another thread initializes modules, this one parses documents the run will need rather than wait.
    std::unique_lock<std::recursive_mutex> lock(index_.init_mutex(), std::try_to_lock);
    while (!lock.owns_lock() && index_.parse_expected()) lock.try_lock();
    if (!lock.owns_lock()) lock.lock();
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
        // Names the top level defines after this point are unknown: an error, or a hostile module (a huge literal
        // at its top) would pass a CI gate with its recipes silently unknown.
        if (init.out_of_budget()) {
            const Loc at = init.budget_site().valid() ? init.budget_site() : init.module_statement();
            const std::string why =
                init.budget_reason().empty()
                    ? fmt::format("took more than {} steps (--limit python-steps)", limits_.max_steps)
                    : "stopped: " + init.budget_reason();
            diags.push_back(input_error(
                InputError::LimitExceeded, at.valid() ? at.range() : SourceRange::point(m->path, 1, 1),
                fmt::format("evaluating the top level of module {} {}; what it defines from here on is not known",
                            m->name, why)));
        }
    }
    m->state.store(Module::Ready, std::memory_order_release);
    if (!diags.empty()) {
        std::lock_guard<std::mutex> dlock(diag_mutex_);
        for (auto& d : diags) module_diags_.push_back(std::move(d));
    }
}

}  // namespace mbl::py
