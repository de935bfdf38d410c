#pragma once
// What the evaluators of one source root share: the module index, the revision and the Hugging Face resolver, the
// limits, module initialization (each module's top level runs once, under the index's lock) and the objects module
// top levels made.
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
#include "core/schema.hpp"
#include "parser/python/hf_models.hpp"
#include "parser/python/module_index.hpp"
#include "parser/python/values.hpp"

namespace mbl::py {

// How far one evaluation goes: past a limit a value becomes unknown, or the recipe stops as over budget.
struct EvalLimits {
    int max_call_depth = 40;             // nested Python calls (recursive helpers end here)
    int max_expr_depth = 150;            // nested expressions
    int max_import_depth = 48;           // nested module initializations
    std::int64_t max_steps = 1'000'000;  // evaluation steps per recipe
    std::size_t max_items = 100'000;     // elements of one list/dict/string built by the evaluator
    int max_while_iterations = 10'000;   // a `while` that runs longer stops the recipe as over budget
};

// Everything shared by the evaluators of one source root. Thread-safe.
class Project {
public:
    Project(std::string root, const Revision& revision, const HfResolver& hf, EvalLimits limits = {},
            ModuleIndex::Buffers buffers = {});

    ModuleIndex& index() { return index_; }
    const Revision& revision() const { return revision_; }
    const HfResolver& hf() const { return hf_; }
    const EvalLimits& limits() const { return limits_; }
    // Runs a module's top level once (thread-safe; an import cycle sees the partially initialized module).
    void ensure_initialized(Module* m, int import_depth);
    // A new evaluator id (Env ownership).
    std::uint64_t next_id() { return ++ids_; }
    // Default of a model field at the selected revision: TransformerConfig's (with its bases'), from Megatron Core's
    // config classes; nullopt when it has none the linter knows.
    std::optional<Val> model_default(const std::string& field) const;
    // The model fields that exist at the selected revision (schemas), sorted: the fields of Megatron Core's config
    // classes, which a provider built on them has.
    const std::vector<std::string>& model_field_names() const { return model_field_names_; }

    // A class of the tree registered as Megatron Bridge's model bridge for Hugging Face architectures
    // (`@...register_bridge(source=..., ...)`), found by a syntax scan of the tree's files.
    struct BridgeRegistration {
        std::string module;  // dotted module name
        std::string class_name;
        std::string source;  // the architecture as written: a string literal's text, or a name to evaluate
        bool source_is_literal = false;
    };
    // The registrations in the tree's files that mention `text` (every registering file when empty). The files are
    // listed once; each is parsed only when a lookup needs it. (bridge_api.cpp)
    std::vector<BridgeRegistration> model_bridges(std::string_view text);

    // Diagnostics raised while initializing modules (syntax errors in helpers, ...), collected once.
    std::vector<Diagnostic> take_module_diagnostics();

private:
    ModuleIndex index_;
    const Revision& revision_;
    std::map<std::string, std::size_t, std::less<>> default_index_;  // field -> position in revision_.defaults
    const HfResolver& hf_;
    EvalLimits limits_;
    std::vector<std::string> model_field_names_;
    std::atomic<std::uint64_t> ids_{0};
    std::once_flag bridge_files_listed_;
    std::vector<std::pair<std::string, std::string>> bridge_files_;  // path, text of files that register bridges
    std::mutex bridges_mutex_;
    std::map<std::string, std::vector<BridgeRegistration>> bridges_by_file_;
    // model_bridges' answers by `text`: every recipe of an architecture asks again, and each question would search
    // the text of every registering file.
    std::map<std::string, std::vector<BridgeRegistration>, std::less<>> bridges_by_text_;
    std::mutex diag_mutex_;
    std::vector<Diagnostic> module_diags_;
    // The objects module top levels made (written only under the module initialization lock); swept when the
    // project ends, before the modules that hold them.
    ObjectRegistry module_objects_;
};

}  // namespace mbl::py
