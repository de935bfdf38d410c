#pragma once
// A Megatron Core tree on disk as the readers of parser/bridge see it: modules parsed on demand, with what their
// import statements bind and their top-level classes, functions and assignments. Shared by the config-class reader
// (mcore_source.cpp) and the check compiler (mcore_checks.cpp).
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "core/config_classes.hpp"
#include "pyeval/ast.hpp"

namespace mbl::py {

std::string compact(std::string_view s);  // source text without blanks or line continuations
std::string last_part(std::string_view dotted);
std::string unescape(std::string_view s);  // a Python string literal's backslash escapes, the common ones

// One module of the tree: its syntax tree and what its import statements bind.
struct SourceModule {
    std::string name;  // dotted
    std::string path;  // relative to the root
    bool package = false;
    Ast ast;
    std::map<std::string, std::pair<std::string, std::string>> imported;  // local name -> (module, name or "")
    std::map<std::string, NodeId> classes;                                // top-level class definitions
    std::map<std::string, NodeId> functions;                              // top-level function definitions
    std::map<std::string, NodeId> assigned;  // top-level `NAME = value`: the value (the last one)

    std::string package_name() const { return package ? name : name.substr(0, name.rfind('.')); }
};

// The module a `from ... import` statement of `m` names, relative imports resolved against `m`'s package.
std::string imported_module(const SourceModule& m, NodeId import_from);

class TreeReader {
public:
    explicit TreeReader(std::filesystem::path root) : root_(std::move(root)) {}

    const SourceModule* module(const std::string& name);
    // The module and class node defining `class_name` as `module_name` sees it, following imports.
    std::pair<const SourceModule*, NodeId> find_class(const std::string& module_name, const std::string& class_name,
                                                      int depth = 0);
    // The same for a top-level function or assignment (`what` is 'f' or '='): the module and the node.
    std::pair<const SourceModule*, NodeId> find_def(const std::string& module_name, const std::string& name, char what,
                                                    int depth = 0);
    bool is_enum_class(const SourceModule& m, const std::string& name);

private:
    void read_imports(SourceModule& m);
    std::filesystem::path root_;
    std::map<std::string, std::unique_ptr<SourceModule>> modules_;
};

// Compiles the `__post_init__` of every class of `facts` (and what it calls inside the tree) into a check program
// (core/post_init.hpp). Nothing is run.
std::shared_ptr<const post_init::Program> compile_post_init(TreeReader& tree, const ClassFacts& facts);

// Compiles what Megatron Bridge's start-up (training/config.py `runtime_config_update`) does with the config sections of
// a Bridge tree (`tree` rooted at its src/): each call it makes on a section when the section is set
// (`cfg.mixed_precision.setup(cfg.model, cfg.optimizer, cfg.ddp)`, `cfg.comm_overlap.finalize()`), and each method
// of the whole config it calls (`cfg.validate()`), becomes a step of the program (post_init::Program::steps), in the
// start-up's order, the methods and what they call compiled like __post_init__; each section's class fields with
// their defaults (a base class outside the tree read from `outside`, Megatron Core's sources, where given). Nothing
// is run. Null, with `why`, when the tree has no such start-up.
std::shared_ptr<const post_init::Program> compile_bridge_startup(TreeReader& tree, std::string commit, std::string& why,
                                                                 TreeReader* outside = nullptr);

}  // namespace mbl::py
