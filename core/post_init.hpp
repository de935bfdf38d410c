#pragma once
// Megatron Core's `__post_init__` checks as data, and the executor that runs them over an effective config.
//
// The program is compiled from Megatron Core's source (parser/bridge/mcore_checks.cpp: the bundled revisions through
// scripts/mcore_facts.py, a tree on disk at lint time by the same code): every statement of the config classes'
// `__post_init__` and the functions they call inside megatron/, in source order, with raises, asserts, field
// rewrites and warnings kept as they are. Nothing here is written by hand about what Megatron Core checks.
//
// The executor is three-valued: a value it cannot work out (a field the linter could not resolve, the Transformer
// Engine version, an environment variable, a call it cannot follow) is unknown; a branch on an unknown condition
// runs both ways and merges (a mapping entry by entry); a raise reached only through unknowns is reported as possible,
// never as certain. Unlike Python, a raise does not stop the run: later checks still run, so that every rejection is
// reported at once.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/value.hpp"

namespace mbl::post_init {

enum class Op : std::uint8_t {
    Const,    // constant (value)
    List,     // [kids]
    Tuple,    // (kids)
    Set,      // {kids}
    Dict,     // {k0: v0, ...}: kids alternate keys and values
    Self,     // self.<name>
    Var,      // a parameter or local <name>
    Attr,     // kids[0].<name>
    Not,      // not kids[0]
    And,      // kids[0] and kids[1] ...
    Or,       // kids[0] or kids[1] ...
    Cmp,      // kids[0] ops[0] kids[1] ops[1] kids[2] ...
    Bin,      // kids[0] <name> kids[1]
    Neg,      // -kids[0]
    Builtin,  // <name>(kids): len, isinstance, set, any, ...
    Method,   // kids[0].<name>(kids[1..])
    Call,     // a compiled function <name>(kids)
    IfExp,    // kids[1] if kids[0] else kids[2]
    Sub,      // kids[0][kids[1]]
    FStr,     // f-string: kids are the parts, each rendered with str()
    Comp,     // comprehension: <name> is list|set|gen|dict; kids[0] (and kids[1] for dict) the element, then
              // for each clause a ForIn (kids: iterable, then conditions; names: the targets)
    ForIn,    // one `for names in kids[0] if kids[1..]` clause of a comprehension
    Dtype,    // torch dtype <name>: float32, bfloat16, ...
    Ext,      // a fact outside the config: is_te_min_version(kids[0]), te_version
    Type,     // a class used as a value (isinstance's second argument): <name>
    Unknown,  // what the compiler does not follow; <name> says why, <kind> what kind of fact it needs
};

// The whole config a start-up step is given (Megatron Bridge's ConfigContainer): its attribute named in
// Program::sections is that section's object (`model` the model), any other attribute unknown (computed at start-up).
inline constexpr std::string_view kContainer = "\x01container";
// A field lookup of "\x01section:NAME" asks for the section itself: nullptr where the config does not say (its class
// default applies, unknown here), null where the config sets it to None, any other value where the config gives it.
inline constexpr std::string_view kSectionLookup = "\x01section:";
// An unknown statement naming this among its writes may change any config object (a call the linter does not follow
// on the container's sections): every field read after it is unknown.
inline constexpr std::string_view kWritesAll = "\x01all";

// Builtin `"\x01with"(obj, name, value)`: obj with its attribute `name` set to value (`self.cfg.name = value`).
inline constexpr std::string_view kWithBuiltin = "\x01with";
// A start-up step whose call the linter could not compile ("\x01unfollowed:ConfigContainer.name"): the whole config
// may change there.
inline constexpr std::string_view kUnfollowedStep = "\x01unfollowed:";
// Builtin `"\x01fields"(obj)`: `dataclasses.fields(obj)`, each field an object with its `name`.
inline constexpr std::string_view kFieldsBuiltin = "\x01"
                                                   "fields";
// A value the executor spells itself, an enum member or a type ("\x01enum:Class.member", "\x01type:Name"): not a
// value a config can hold as written.
inline bool is_executor_spelling(const Value& v) { return v.is_string() && v.as_string().rfind('\x01', 0) == 0; }

struct Expr {
    Op op = Op::Unknown;
    std::string name;                    // field, variable, attribute, operator, function, reason
    std::string kind;                    // Unknown: te | env | gpu | call | ...
    std::shared_ptr<const Value> value;  // Const (held apart: a program has tens of thousands of nodes, few constants)
    std::vector<Expr> kids;
    std::vector<std::string> ops;    // Cmp operators
    std::vector<std::string> names;  // ForIn targets
};

enum class St : std::uint8_t { If, Raise, Set, Let, Eval, Warn, For, Return, Break, Continue, Try, Unknown };

struct Stmt {
    St kind = St::Eval;
    int line = 0;
    std::string name;                // Set: field; Let: variable; Raise: exception type; Unknown: why
    std::vector<std::string> names;  // For / Let with several targets
    Expr e;                          // If: condition; Set/Let/Return: value; Raise/Warn: message; For: iterable
    std::vector<Stmt> body, orelse;  // If, For, Try (orelse: the handlers, run as a possibility)
    int site = -1;                   // Raise / Warn / Unknown: index into Program::sites
};

struct Function {
    std::string name;  // "TransformerConfig.__post_init__", "megatron.core.utils.is_te_min_version"
    std::string file;  // relative to the source root
    std::vector<std::string> params;
    std::vector<Expr> defaults;  // aligned with params; Op::Unknown with an empty name: no default
    std::vector<Stmt> body;
};

// A place where the config can be rejected (raise, assert), warned about, or where the linter's knowledge stops.
struct Site {
    enum class Kind : std::uint8_t { Raise, Warn, Unknown };
    Kind kind = Kind::Raise;
    std::string exception;  // ValueError, AssertionError, NotImplementedError, ...
    std::string file;       // relative to the source root
    int line = 0;
    std::string function;
    std::string text;                // the message's literal text, interpolations as {...}
    std::vector<std::string> reads;  // the config fields its guarding conditions read (source order, unique)
};

// An enum class the checks use: its members in order, with their values. Members of a str-valued enum compare equal
// to their value and are compiled as plain strings; the others are values of their own ("\x01enum:Class.member").
struct EnumClass {
    bool str_valued = false;
    std::vector<std::pair<std::string, Value>> members;
};

// One call of a start-up that runs several functions in turn over several config objects (Megatron Bridge's
// comm-overlap setup: `cfg.comm_overlap.finalize()`, then `cfg.comm_overlap.setup(cfg.model, cfg.optimizer,
// cfg.ddp)`). Each argument names the object passed: "" the model (its fields by their plain names), any other name a
// config section, whose attributes the field lookup sees as "<name>.<attribute>".
struct Step {
    std::string function;
    std::vector<std::string> args;  // kContainer: the whole config
    std::string file;               // where the start-up makes the call
    int line = 0;
    std::string when;  // a section the step runs only with (`if cfg.comm_overlap is not None:`)
};

// A class a config section may be an instance of (Megatron Bridge's dataset configs), for the config that names it (a
// dump's `_target_`, the class a recipe constructs): what isinstance, hasattr and a method call on the section need.
struct SectionClass {
    std::string section;                  // the section it is described for (its methods' `self`)
    std::vector<std::string> mro;         // the class and its bases in the tree, by their names (isinstance)
    std::vector<std::string> attributes;  // fields and methods its class body and bases' declare (hasattr)
    std::map<std::string, std::string, std::less<>> methods;  // a method the start-up calls -> its compiled function
};

// The fields a config section's class declares (a dataclass: its fields in declaration order, its bases' first), with
// the default each is constructed with: what `dataclasses.fields(section)` lists and what an attribute the config
// does not set holds. A default the source does not state as a literal (`field(default_factory=...)`, a required
// field) is an Op::Unknown expression.
struct SectionFields {
    std::string cls;  // "module.Class"
    std::vector<std::string> names;
    std::vector<Expr> defaults;  // aligned with names
    // False where a base class could not be read (one outside the tree without its sources): a name not listed may
    // still be a field.
    bool complete = true;
    std::string bases_from;  // where the bases' fields were read when not from the tree's own sources
};

struct RunMemo;
// What earlier runs of one program taught (post_init.cpp): every run's outcome is a function of the answers its field
// lookups gave, so a run whose answers match an earlier run's takes that run's state at the last start-up step the two
// agree on. A program's copy starts without one (the copy may be changed before it runs).
class RunMemoSlot {
public:
    RunMemoSlot();
    RunMemoSlot(const RunMemoSlot& /*other*/);
    RunMemoSlot& operator=(const RunMemoSlot& /*other*/);
    ~RunMemoSlot();
    RunMemo& get() const { return *memo_; }

private:
    std::unique_ptr<RunMemo> memo_;
};

struct Program {
    std::string commit;
    std::vector<Step> steps;            // a start-up's calls, in order (run_steps); empty for __post_init__ programs
    std::vector<std::string> sections;  // the container's sections (ConfigContainer's fields), for kContainer
    std::map<std::string, SectionClass, std::less<>> classes;  // "module.Class" -> what a section of that class is
    std::map<std::string, SectionFields, std::less<>> section_fields;  // a section the steps run on -> its fields
    std::map<std::string, EnumClass, std::less<>> enums;
    std::map<std::string, Function, std::less<>> functions;
    std::map<std::string, std::string, std::less<>> entries;  // class -> its __post_init__ (along the MRO)
    std::vector<Site> sites;
    RunMemoSlot memo;  // the runs so far (run, run_steps): filled as they run, never part of the program's meaning

    static Program from_json(const nlohmann::json& j);  // throws std::runtime_error on a malformed file
    nlohmann::json to_json() const;
};

// What the linter knows of the job outside its config; nullopt: unknown.
struct JobFacts {
    std::optional<std::string> te_version;     // the installed Transformer Engine (--te-version)
    std::optional<std::string> torch_version;  // the installed PyTorch
};

struct Event {
    const Site* site = nullptr;
    bool certain = false;        // reached on a path whose every condition is known
    std::string message;         // the message as Megatron Core builds it ("" when it could not be built)
    std::string why_uncertain;   // for a possible one: the unknown it depends on
    const Step* step = nullptr;  // run_steps: the start-up step that reached it
};

struct Rewrite {
    std::string field;
    Value before, after;  // `after` is unknown where the rewrite depends on an unknown
    std::string file;
    int line = 0;
    // Written after a raise the config reaches for certain: the job never gets there (the executor goes on to report
    // every rejection at once).
    bool after_rejection = false;
    std::string step_section;  // run_steps: the section whose start-up step wrote it ("" for the whole config's)
};

struct Outcome {
    std::vector<Event> events;      // in the order reached
    std::vector<Rewrite> rewrites;  // each field's last write, in the order first written
    // run_steps: the same, as they stood when the start-up's whole-config step (ConfigContainer.validate) began.
    std::optional<std::vector<Rewrite>> rewrites_before_validation;
    bool out_of_budget = false;
};

// Runs `class_name`'s __post_init__ over the fields `field` looks up (nullptr: the config has no such field, read as
// None). nullopt when the program has no entry for the class. `field` answers a name the same way for the whole run,
// with a value that outlives it: the executor keeps its answers.
std::optional<Outcome> run(const Program& program, std::string_view class_name,
                           const std::function<const Value*(std::string_view)>& field, const JobFacts& facts);

// Runs the program's steps in order over the objects they name (`field` looks up "name" for the model and
// "section.name" for a section's attribute). nullopt when the program has no steps.
std::optional<Outcome> run_steps(const Program& program, const std::function<const Value*(std::string_view)>& field,
                                 const JobFacts& facts);

}  // namespace mbl::post_init
