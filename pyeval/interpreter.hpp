#pragma once
// The abstract evaluator: walks recipe and helper code over the syntax tree and computes values without running
// anything. What it cannot follow becomes an Unknown value with a reason. When a condition is unknown, both
// branches run and their effects are merged (a slot that ends up different becomes unknown).
//
// One Interp evaluates one recipe (or one module's top level) on one thread. Module globals are shared between
// threads and never written after their module is initialized: reading a mutable global makes a private copy.
//
// Interp's members live by concern: statements in interpreter.cpp, expressions and calls in eval.cpp, names and
// imports in scopes.cpp, classes and attributes in objects.cpp (the fields of dataclass chains in class_chain.cpp),
// branch journals and merging in branches.cpp, builtins in builtins*.cpp (builtins.hpp). What all evaluators of a
// source root share is the Project (project.hpp), with the Host it asks what a library outside the root does
// (host.hpp); values and their Python semantics are in values.hpp/.cpp.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/diagnostic.hpp"
#include "pyeval/host.hpp"
#include "pyeval/module_index.hpp"
#include "pyeval/project.hpp"
#include "pyeval/values.hpp"

namespace mbl::py {

enum class Flow : std::uint8_t { Normal, Return, Raise, Break, Continue };

struct Frame {
    Module* module = nullptr;
    std::shared_ptr<Env> locals;  // null at module level (globals are the scope)
    Chain chain;                  // the calls that led here
    std::string function;         // name, for messages
    std::optional<Val> result;    // merged return value
    Loc stmt;                     // the statement being executed (provenance of stores)
    int depth = 0;
    bool class_body = false;                   // a class body: its names are not visible to the methods
    std::shared_ptr<ClassObj> defining_class;  // the class of the running method (for super())
    Val self;                                  // its first argument
};

// A class a root dataclass takes fields from: a class of the root, or a class from outside it that the host
// describes (Host::described_class).
struct ChainClass {
    std::shared_ptr<ClassObj> tree;
    const ConfigClass* outside = nullptr;
};
// One field of such a chain, with the class whose declaration stands.
struct ChainField {
    std::string name;
    const DataField* tree = nullptr;
    const ClassObj* tree_owner = nullptr;
    const ClassField* outside = nullptr;
    const ConfigClass* outside_owner = nullptr;
};

struct CallArgs {
    std::vector<Val> pos;
    std::vector<std::pair<std::string, Val>> kw;
    std::vector<Loc> kw_locs;  // location of each keyword argument (provenance of constructor fields)
    std::string unknown;       // non-empty: *args / **kwargs whose contents are unknown
};

// The argument at position `pos`, else the first keyword argument named one of `names`; null when not given.
const Val* call_arg(const CallArgs& args, std::size_t pos, std::initializer_list<const char*> names = {});

class Interp {
public:
    Interp(Project& project, std::vector<Diagnostic>* diagnostics);

    // Runs `m`'s top level into its globals (used by Project::ensure_initialized).
    void run_module(Module* m, int import_depth);
    // Calls a recipe function with no arguments; `site` is where the recipe is defined.
    Val call_recipe(const Val& fn);
    // Runs the body of `m`'s `if __name__ == "__main__":` block (a job script) up to its first top-level statement
    // that is a call of one of `entry_points` (by the called name's last part) and returns that call's first
    // positional argument, or its `keyword` argument; unknown when no such statement is reached. The call itself is
    // not run. The host names the entry points.
    Val run_main_block(Module* m, NodeId body, const std::vector<std::string>& entry_points,
                       const std::string& keyword);
    // Whether the last run_main_block reached a call of an entry point (its config may still be unknown).
    bool reached_entry_point() const { return handed_.has_value(); }
    // A global of a module (initializing it first), copied for this evaluator.
    Val module_global(Module* m, const std::string& name);
    bool out_of_budget() const { return steps_ > project_.limits().max_steps; }
    // Why the budget was spent when it was not the step count (a memory limit), and where; empty otherwise.
    const std::string& budget_reason() const { return budget_reason_; }
    Loc budget_site() const { return budget_site_; }
    // The top-level statement of run_module's module that ran last (where a module's budget ran out).
    Loc module_statement() const { return module_ && module_stmt_ != kNoNode ? module_->loc(module_stmt_) : Loc{}; }
    // Charges `bytes` the evaluator is about to build into one value at `at`: false, with the recipe stopped as over
    // budget, past the limit for the recipe or, for a string (`one_value`), for one value (EvalLimits). A container's
    // size is bounded by max_items already.
    bool charge_bytes(std::size_t bytes, Loc at, bool one_value = true);
    // Work beyond the one step an operation counts: a dict compares a new key with each key it holds, so building a
    // dict of n keys costs n²/2 comparisons; one step per 16 of them keeps a 90,000-key comprehension in budget.
    void charge_comparisons(std::size_t n) { steps_ += static_cast<std::int64_t>(n / 16); }
    std::int64_t steps() const { return steps_; }

    // --- used by the builtins (the table of builtins.hpp) ---
    Val call(Frame& f, const Val& callee, CallArgs args, Loc site);
    Val get_attr(Frame& f, const Val& obj, const std::string& name, Loc at);
    bool set_attr(Frame& f, const Val& obj, const std::string& name, Val value, const SetInfo& info);
    // Python iteration: the items, or nullopt (with `reason`) when unknown.
    std::optional<std::vector<Val>> iterate(const Val& v, std::string& reason);
    Val make_list(std::vector<Val> items, ObjKind kind = ObjKind::List, Loc at = {});
    SetInfo store_info(Frame& f) const;
    void note_mutation(Object* container);  // journal a list/dict/set before changing it
    void poison(const Val& v, const std::string& reason);
    // A call the evaluator does not follow received `v`: every value reachable from it that the call could change
    // becomes unknown for `reason` (instances stay, their fields and defaults unknown until written again).
    void havoc(Frame& f, const Val& v, const std::string& reason, std::unordered_set<const Object*>& seen);
    void havoc_arguments(Frame& f, const CallArgs& args, const std::string& reason);
    // Marks an unknown as possibly one of `candidates` (objects, or unknowns that may be objects).
    static void mark_alias(Val& unknown, const std::vector<Val>& candidates);
    // A write through an unknown that may be a known object: those objects can no longer be trusted.
    void spoil_candidates(const Val& unknown, const std::string& reason);
    Project& project() { return project_; }
    Host& host() { return project_.host(); }
    // Evaluates an expression of the frame's module (a host reads decorator arguments with it).
    Val eval(Frame& f, NodeId e);
    void report(Diagnostic d);
    bool limit_items(std::size_t n) const { return n > project_.limits().max_items; }
    Val binary_op(const std::string& op, const Val& l, const Val& r, Loc at);
    // binary_op by the operands' types: nullopt when the operator does not apply to them.
    std::optional<Val> str_op(const std::string& op, const Val& l, const Val& r, Loc at);
    std::optional<Val> sequence_op(const std::string& op, const Val& l, const Val& r, Loc at);
    std::optional<Val> container_op(const std::string& op, const Val& l, const Val& r, Loc at);  // dict |, sets
    // Classes (objects.cpp): the class order, an attribute found along it (bound to `self` as Python binds it),
    // and issubclass (nullopt when an outside base class may decide).
    std::vector<std::shared_ptr<ClassObj>> mro(const std::shared_ptr<ClassObj>& cls) const;
    Val class_attr(Frame& f, const std::shared_ptr<ClassObj>& cls, const std::string& name, const Val* self, Loc at,
                   bool& found);
    std::optional<bool> is_subclass(const Val& cls, const Val& base) const;

    // branch journals and merging (branches.cpp)
    struct Slot;
    struct Journal;

private:
    friend class CallMemo;  // evaluates calls in an Interp of its own and copies what they made into this one
    struct BranchRunner;
    const Ast& ast(const Frame& f) const { return *f.module->ast; }
    Loc loc(const Frame& f, NodeId id) const { return f.module->loc(id); }

    // statements (interpreter.cpp)
    Flow exec_block(Frame& f, NodeId block);
    Flow exec_stmts(Frame& f, const std::vector<NodeId>& stmts, std::size_t from);
    Flow exec_stmt(Frame& f, NodeId stmt, const std::vector<NodeId>& rest, std::size_t next, bool& consumed_rest);
    Flow exec_if(Frame& f, NodeId stmt, const std::vector<NodeId>& rest, std::size_t next, bool& consumed_rest);
    Flow exec_for(Frame& f, NodeId stmt);
    Flow exec_while(Frame& f, NodeId stmt);
    Flow exec_try(Frame& f, NodeId stmt);
    Flow exec_match(Frame& f, NodeId stmt);
    void exec_assignment(Frame& f, NodeId node);
    void exec_aug_assignment(Frame& f, NodeId node);
    void exec_function_def(Frame& f, NodeId def, const std::vector<Val>& decorators);
    void exec_class_def(Frame& f, NodeId def, NodeId decorated);
    void exec_delete(Frame& f, NodeId node);
    void assign_target(Frame& f, NodeId target, Val value, const SetInfo& info);
    Val materialize(Frame& f, NodeId expr, const Val& unknown);

    // expressions and calls (eval.cpp)
    Val eval_inner(Frame& f, NodeId e);
    Val eval_float(std::string_view literal, Loc at);
    Val eval_sequence(Frame& f, NodeId e);                        // list, tuple, set displays
    Val eval_dict(Frame& f, NodeId e);                            // dict displays
    void splat_into(Frame& f, NodeId splat, DictObj& d, Loc at);  // {**src} in the dict display at `at`
    Val eval_unary(Frame& f, NodeId e);
    Val eval_boolean(Frame& f, NodeId e);      // and, or
    Val eval_conditional(Frame& f, NodeId e);  // x if c else y
    Val eval_call(Frame& f, NodeId e);
    Val eval_binary(Frame& f, NodeId e);
    Val eval_compare(Frame& f, NodeId e);
    Val eval_string(Frame& f, NodeId e);
    Val eval_subscript(Frame& f, NodeId e);
    Val eval_comprehension(Frame& f, NodeId e);
    Val eval_lambda(Frame& f, NodeId e);
    CallArgs eval_args(Frame& f, NodeId arglist);
    void collect_sequence(Frame& f, NodeId node, std::vector<Val>& out, std::string& unknown);
    // A private copy of a value another evaluator owns (a module global), made once per object.
    Val thaw(const Val& v);
    Val thaw_inner(const Val& v);
    Val call_inner(Frame& f, const Val& callee, CallArgs args, Loc site);
    Val call_function(Frame& caller, const std::shared_ptr<FunctionObj>& fn, CallArgs args, Loc site, const Val* self);

    // names, scopes and imports (scopes.cpp)
    Val lookup(Frame& f, const std::string& name, Loc at);
    void bind(Frame& f, const std::string& name, Val v);
    void bind_local(Env& env, const std::string& name, Val v);
    Env& scope(Frame& f);
    Val import_module(Frame& f, const std::string& dotted, Loc at);
    Val module_attr(Frame& f, Module* m, const std::string& name, Loc at);
    std::string resolve_relative(Frame& f, NodeId relative_import);
    void exec_import(Frame& f, NodeId node);
    void exec_import_from(Frame& f, NodeId node);

    // classes, instances and calls to names from outside the source root (objects.cpp)
    Val instantiate(Frame& f, const std::shared_ptr<ClassObj>& cls, CallArgs args, Loc site);
    Val external_call(Frame& f, const Val& callee, CallArgs args, Loc site);  // callee: an ExternalObj
    // Whether instances of `cls` (or of the outside class `path`) take the host's defaults (Host::defaults_class).
    bool takes_defaults(const std::shared_ptr<ClassObj>& cls, const std::string& path) const;
    // Attribute lookup in `classes` (a class order), bound to `self` as Python binds methods, properties, enums.
    Val lookup_in(Frame& f, const std::vector<std::shared_ptr<ClassObj>>& classes, const std::string& name,
                  const Val* self, const std::shared_ptr<ClassObj>& owner, Loc at, bool& found);
    // Dataclass introspection (dataclasses.fields, __dataclass_fields__, is_dataclass): the field names of a class,
    // or nullopt when an outside base class may add fields the linter does not know.
    std::optional<std::vector<std::string>> dataclass_field_names(const std::shared_ptr<ClassObj>& cls) const;
    // The classes a root class takes its fields from, the host's described classes included (class_chain.cpp).
    std::vector<ChainClass> field_chain(const std::shared_ptr<ClassObj>& cls) const;
    std::vector<ChainField> chain_fields(const std::vector<ChainClass>& chain) const;

    // builtins (builtins.cpp)
    Val builtin_method(const Val& self, const std::string& name, Loc at);
    Val call_builtin(Frame& f, BuiltinObj& b, CallArgs& args, Loc site);

    // branches (branches.cpp)
    // Runs each branch from the same state and merges the outcomes. `rest`: the statements after the branching one
    // in its block, run once after the branches that fall through (`consumed_rest` then says they ran).
    Flow run_branches(Frame& f, Loc where, const std::vector<std::function<Flow()>>& branches,
                      const std::vector<NodeId>* rest, std::size_t next, bool& consumed_rest);
    void record(const Slot& s);
    // Journal a change about to be made to an attribute of an instance, or to a name of a scope.
    void note_attr_write(const Val& instance, const std::string& name);
    void note_var_write(Env& env, const std::string& name);

    Project& project_;
    std::vector<Diagnostic>* diagnostics_;
    std::uint64_t id_;
    std::int64_t steps_ = 0;
    std::size_t bytes_ = 0;  // charged by charge_bytes
    std::string budget_reason_;
    Loc budget_site_;
    const Frame* module_frame_ = nullptr;  // run_module's frame while it runs
    Module* module_ = nullptr;
    NodeId module_stmt_ = kNoNode;
    int expr_depth_ = 0;
    int expr_depth_peak_ = 0;  // the deepest expr_depth_ reached (CallMemo)
    int import_depth_ = 0;
    std::unordered_map<const Object*, ObjPtr> thawed_;
    std::vector<Journal*> journals_;
    // While run_main_block runs: the entry points whose call hands the config over, in the block or in a function it
    // calls (a script's main()); once one is reached, what it was handed, and every frame unwinds (hand_over).
    const std::vector<std::string>* entry_points_ = nullptr;
    std::string entry_keyword_;
    std::optional<Val> handed_;
    // Whether statement `s` is a call of an entry point: if so, evaluates what it hands over into handed_.
    bool hand_over(Frame& f, NodeId s);
};

// The parameters of a `def` or `lambda` (`params` may be kNoNode); defaults are evaluated by `eval_default`.
std::vector<Param> read_params(const Ast& a, NodeId params, const std::function<Val(NodeId)>& eval_default);

// One of two values: the value when both are the same, else an unknown that names the condition at `where`.
Val merge_vals(const Val& a, const Val& b, Loc where);

// The last component of a dotted name: `C` of `a.b.C` (scopes.cpp).
std::string last_component(std::string_view dotted);

// The builtin namespace (len, range, isinstance, ...).
const Val* builtin_global(const std::string& name);

}  // namespace mbl::py
