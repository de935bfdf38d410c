#pragma once
// Megatron Core's config classes at one revision: the dataclasses Megatron Bridge's model providers build on
// (TransformerConfig, MLATransformerConfig, ...), each field with its type, default and the line declaring it. The
// known revisions' classes are bundled (schemas/mcore/classes/, written by scripts/mcore_facts.py from Megatron-LM's
// source); a Megatron Core on disk is read at run time by the Python front end (parser/bridge/mcore_source.hpp).
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/value.hpp"

namespace mbl {

namespace post_init {
struct Program;
}

enum class FieldType { Bool, Int, Float, Str, List, Dict, Dtype, Callable, Any };
const char* field_type_name(FieldType t);
FieldType parse_field_type(std::string_view name);  // "int" -> Int; anything unknown -> Any
// Whether a value fits a schema field type (None and unknown values fit every type).
bool type_matches(const Value& v, FieldType t);

struct ClassField {
    std::string name;
    FieldType type = FieldType::Any;
    bool nullable = false;
    std::vector<std::string> values;     // the strings a Literal[...] annotation allows
    std::optional<Value> default_value;  // a default the source states as a literal (an enum member by its name)
    std::string expr;                    // a default the source computes (`torch.float32`), as written
    bool required = false;               // no default: the constructor needs it
    bool init = true;                    // field(init=False): not a constructor argument
    int line = 0;
};

struct ConfigClass {
    std::string name;
    std::string module;  // megatron.core.transformer.transformer_config
    std::string file;    // megatron/core/transformer/transformer_config.py, relative to the source root
    int line = 0;
    std::vector<std::string> bases;  // the names of its bases among the classes read
    std::vector<ClassField> fields;  // in declaration order

    const ClassField* field(std::string_view name) const;
};

// A field as a class sees it: the first declaration along the class's MRO.
struct ResolvedField {
    const ConfigClass* owner = nullptr;
    const ClassField* field = nullptr;
};

// A compiled check program, made on first use: a bundled revision's program takes longer to read than most files
// take to lint, and a run that asks about every revision (which ones accept a label) needs only one revision's.
class LazyProgram {
public:
    explicit LazyProgram(std::function<std::shared_ptr<const post_init::Program>()> make) : make_(std::move(make)) {}
    explicit LazyProgram(std::shared_ptr<const post_init::Program> made) : make_([made] { return made; }) {}
    const post_init::Program* get() const {
        std::call_once(once_, [this] { program_ = make_(); });
        return program_.get();
    }

private:
    std::function<std::shared_ptr<const post_init::Program>()> make_;
    mutable std::once_flag once_;
    mutable std::shared_ptr<const post_init::Program> program_;
};

class ClassFacts {
public:
    std::string commit;           // the Megatron-LM commit read ("" when not known: a tree read at run time)
    std::string root;             // the directory read at run time; "" for bundled facts
    std::string origin;           // one line for people: where these facts come from
    std::string package_version;  // megatron/core/package_info.py's version ("0.20.0", "0.17.0rc0"); "" if unknown
    std::vector<ConfigClass> classes;
    // The recompute vocabulary where TransformerConfig.__post_init__ states it (empty when it does not).
    std::vector<std::string> labels, default_modules;
    int labels_line = 0, default_modules_line = 0;
    std::string recompute_file;
    // The classes' __post_init__ checks and rewrites, compiled from the source (core/post_init.hpp); null when none
    // were read.
    std::shared_ptr<const LazyProgram> checks;
    const post_init::Program* check_program() const { return checks ? checks->get() : nullptr; }

    // Bundled facts: one file of schemas/mcore/classes/. Throws std::runtime_error on a malformed file.
    static ClassFacts from_json(const nlohmann::json& j);

    const ConfigClass* find(std::string_view name) const;
    // The class and its bases in Python's method resolution order (C3; a class whose bases cannot be linearized
    // falls back to depth-first order). Empty when the class is not known.
    std::vector<const ConfigClass*> mro(std::string_view name) const;
    ResolvedField lookup(std::string_view class_name, std::string_view field) const;
    // The fields of a class with its bases', base classes first (the dataclass constructor's order), each resolved.
    std::vector<ResolvedField> fields_of(std::string_view class_name) const;
    bool declares(std::string_view field) const { return index_.count(field) > 0; }  // by any class
    // The declaration that stands for a field in the revision as a whole: along TransformerConfig's MRO first, then
    // in the other classes; nullptr when no class declares it.
    ResolvedField any(std::string_view field) const;
    // Whether `c` (one of `classes`) is TransformerConfig or one of its bases: the classes whose defaults are the
    // revision's own.
    bool in_transformer_config_chain(const ConfigClass& c) const;
    // Builds the lookups behind declares(), any() and in_transformer_config_chain(); called once the classes are in
    // place.
    void index();
    // "megatron/core/transformer/transformer_config.py:553", or with the root for facts read at run time.
    std::string where(const ConfigClass& c, int line) const;

private:
    std::map<std::string, std::pair<std::size_t, std::size_t>, std::less<>> index_;  // field -> (class, field)
    std::vector<std::size_t> root_chain_;  // TransformerConfig's MRO, as positions in `classes`
};

// The class a dotted path from a recipe's imports names among `facts` ("megatron.core.transformer.
// MLATransformerConfig", re-exports included): the last component, when the path is inside megatron.core or
// megatron.training. nullptr otherwise.
const ConfigClass* config_class_for_path(const ClassFacts& facts, std::string_view dotted);

}  // namespace mbl
