#pragma once
// What the evaluators of one source root share: the module index, the host (host.hpp), the limits, module
// initialization (each module's top level runs once, under the index's lock) and the objects module top levels made.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/limits.hpp"
#include "pyeval/module_index.hpp"
#include "pyeval/values.hpp"

namespace mbl::py {

class Host;

// How far one evaluation goes: past a limit a value becomes unknown, or the recipe stops as over budget. The
// defaults are the run's limits (core/limits.hpp, `--limit python-...`).
struct EvalLimits {
    int max_call_depth = as_int(Limit::PythonCallDepth);      // nested Python calls (recursive helpers end here)
    int max_expr_depth = as_int(Limit::PythonExprDepth);      // nested expressions
    int max_import_depth = as_int(Limit::PythonImportDepth);  // nested module initializations
    std::int64_t max_steps = static_cast<std::int64_t>(limit(Limit::PythonSteps));  // per recipe, per module
    std::size_t max_items = limit(Limit::PythonItems);  // elements of one list/dict/string built by the evaluator
    int max_while_iterations = as_int(Limit::PythonWhileIterations);  // longer stops the recipe as over budget
    // Memory, charged where strings and containers grow (a string's characters, a container's slots): one value
    // larger than max_value_bytes, or more than max_total_bytes built by one recipe, stops the recipe as over budget.
    // A doubling chain (`s = s.replace("a", s)`, `d = {**d, **d2}`) reaches them in a few dozen steps.
    std::size_t max_value_bytes = limit(Limit::PythonValueBytes);
    std::size_t max_total_bytes = limit(Limit::PythonTotalBytes);

private:
    static int as_int(Limit l) { return static_cast<int>(limit(l)); }  // each is at most INT_MAX (limits.cpp)
};

// Everything shared by the evaluators of one source root. Thread-safe.
class Project {
public:
    // `host` answers for what lies outside the source root; it must outlive the project.
    Project(std::string root, Host& host, EvalLimits limits = {}, ModuleIndex::Buffers buffers = {});

    ModuleIndex& index() { return index_; }
    Host& host() const { return host_; }
    const EvalLimits& limits() const { return limits_; }
    // Runs a module's top level once (thread-safe; an import cycle sees the partially initialized module).
    void ensure_initialized(Module* m, int import_depth);
    // A new evaluator id (Env ownership).
    std::uint64_t next_id() { return ++ids_; }
    // Diagnostics raised while initializing modules (syntax errors in helpers, ...), collected once.
    std::vector<Diagnostic> take_module_diagnostics();

private:
    ModuleIndex index_;
    Host& host_;
    EvalLimits limits_;
    std::atomic<std::uint64_t> ids_{0};
    std::mutex diag_mutex_;
    std::vector<Diagnostic> module_diags_;
    // The objects module top levels made (written only under the module initialization lock); swept when the
    // project ends, before the modules that hold them.
    ObjectRegistry module_objects_;
};

}  // namespace mbl::py
