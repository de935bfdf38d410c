#pragma once
// The config tree. Every node carries the provenance of the line that set it, so any diagnostic can point
// there. Front ends (YAML, Python recipes, overrides) build it; rules only ever see this type.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/source_range.hpp"

namespace mbl {

enum class Origin {
    File,      // written in a YAML config file
    Recipe,    // assigned in a Python recipe
    Override,  // a command-line override
    Default,   // the Megatron Core / Bridge default of the selected revision
    Derived,   // computed from other values (mixed_precision recipe, Megatron's __post_init__, ...)
};

const char* origin_name(Origin origin);

// A step of the chain that led to a value (recipe -> helper -> line); rendered as notes.
struct ChainStep {
    SourceRange range;
    std::string message;
};

// The steps that led to a value, outermost first. Every field one call sets carries the same chain and config values
// are copied often, so the steps are shared and immutable; an edit makes a new list.
class CallChain {
public:
    CallChain() = default;
    explicit CallChain(std::vector<ChainStep> steps)
        : steps_(steps.empty() ? nullptr : std::make_shared<const std::vector<ChainStep>>(std::move(steps))) {}

    bool empty() const { return size() == 0; }
    std::size_t size() const { return steps_ ? steps_->size() : 0; }
    const ChainStep* begin() const { return steps_ ? steps_->data() : nullptr; }
    const ChainStep* end() const { return begin() + size(); }
    const ChainStep& operator[](std::size_t i) const { return (*steps_)[i]; }
    const ChainStep& back() const { return steps_->back(); }
    // `outer` then this chain's steps.
    void prepend(const CallChain& outer);
    void prepend(ChainStep step);
    void clear() { steps_.reset(); }

private:
    std::shared_ptr<const std::vector<ChainStep>> steps_;
};

struct Provenance {
    Origin origin = Origin::Default;
    SourceRange range;   // the statement or entry that set the value
    std::string detail;  // human words: "default of Megatron Core 0.20.dev", "mixed_precision recipe ...", ...
    CallChain chain;

    static Provenance at(Origin origin, SourceRange range, std::string detail = {}) {
        Provenance p;
        p.origin = origin;
        p.range = std::move(range);
        p.detail = std::move(detail);
        return p;
    }
    static Provenance default_of(std::string detail) { return at(Origin::Default, {}, std::move(detail)); }
};

class Value {
public:
    enum class Kind { Null, Bool, Int, Float, String, List, Map, Unknown };
    struct Entry;

    Value() = default;
    static Value null(Provenance p = {});
    static Value boolean(bool b, Provenance p = {});
    static Value integer(std::int64_t i, Provenance p = {});
    static Value floating(double d, Provenance p = {});
    static Value string(std::string s, Provenance p = {});
    static Value list(std::vector<Value> items, Provenance p = {});
    static Value map(Provenance p = {});
    // A value the front end could not work out; `reason` says why. Rules never fire on unknown values.
    static Value unknown(std::string reason, Provenance p = {});

    Kind kind() const { return kind_; }
    bool is_null() const { return kind_ == Kind::Null; }
    bool is_bool() const { return kind_ == Kind::Bool; }
    bool is_int() const { return kind_ == Kind::Int; }
    bool is_float() const { return kind_ == Kind::Float; }
    bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float; }
    bool is_string() const { return kind_ == Kind::String; }
    bool is_list() const { return kind_ == Kind::List; }
    bool is_map() const { return kind_ == Kind::Map; }
    bool is_unknown() const { return kind_ == Kind::Unknown; }
    // True when this value or anything inside it is unknown.
    bool contains_unknown() const;

    bool as_bool() const { return b_; }
    std::int64_t as_int() const { return i_; }
    double as_number() const { return kind_ == Kind::Int ? static_cast<double>(i_) : d_; }
    const std::string& as_string() const { return s_; }
    const std::string& unknown_reason() const { return s_; }
    const std::vector<Value>& items() const { return items_; }
    std::vector<Value>& items() { return items_; }

    // Python truthiness of a known value (None, False, 0, "", [] are false).
    bool truthy() const;

    // Map access; entries keep their source order.
    const std::vector<Entry>& entries() const { return entries_; }
    // The entries to change in place; the key index is rebuilt on the next lookup.
    std::vector<Entry>& entries() {
        index_.positions.reset();
        return entries_;
    }
    const Value* find(std::string_view key) const;
    Value* find(std::string_view key);
    const Entry* find_entry(std::string_view key) const;
    // Inserts or replaces; a replaced entry keeps its position.
    Value& set(std::string key, Value value, SourceRange key_range = {});
    bool erase(std::string_view key);
    // `_target_` of a Bridge dump mapping, or "".
    std::string target() const;

    const Provenance& prov() const { return prov_; }
    Provenance& prov() { return prov_; }
    void set_prov(Provenance p) { prov_ = std::move(p); }

    // Short Python-like rendering for messages: "full", 3, True, None, ["core_attn", "mlp"].
    std::string display() const;
    // Deep structural equality, provenance ignored.
    bool same_as(const Value& other) const;

private:
    Kind kind_ = Kind::Null;
    bool b_ = false;
    std::int64_t i_ = 0;
    double d_ = 0.0;
    std::string s_;
    std::vector<Value> items_;
    std::vector<Entry> entries_;
    Provenance prov_;

    // Where each key of a large map sits, so that filling a map with many keys is not quadratic (a config with
    // thousands of keys, all of them typos). Built by the changing calls (set, erase, the mutable find), so that
    // values shared between threads are only ever read; dropped when the entries may change behind it (the mutable
    // entries()); a copy starts without one.
    struct KeyIndex {
        KeyIndex() = default;
        KeyIndex(const KeyIndex&) {}
        KeyIndex(KeyIndex&&) noexcept = default;
        KeyIndex& operator=(const KeyIndex&) {
            positions.reset();
            return *this;
        }
        KeyIndex& operator=(KeyIndex&&) noexcept = default;
        // Current when it has as many keys as the map has entries.
        bool current(std::size_t entries) const { return positions && positions->size() == entries; }
        struct Hash {  // looks a key up by string_view, without making a string
            using is_transparent = void;
            std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
        };
        using Positions = std::unordered_map<std::string, std::size_t, Hash, std::equal_to<>>;
        std::unique_ptr<Positions> positions;  // null: none
    };
    KeyIndex index_;
    static constexpr std::size_t kIndexedFrom = 32;         // smaller maps are searched in order
    std::size_t position_of(std::string_view key) const;    // entries_.size() when absent
    std::size_t indexed_position_of(std::string_view key);  // the same, building the index of a large map
};

struct Value::Entry {
    Entry() = default;
    // Each part moved or copied straight into place (Value::set builds a new entry inside the vector).
    template <class K, class R, class V>
    Entry(K&& k, R&& r, V&& v) : key(std::forward<K>(k)), key_range(std::forward<R>(r)), value(std::forward<V>(v)) {}

    std::string key;
    SourceRange key_range;
    Value value;
};

}  // namespace mbl
