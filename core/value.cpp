#include "core/value.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace mbl {

void CallChain::prepend(const CallChain& outer) {
    if (outer.empty()) return;
    std::vector<ChainStep> steps(outer.begin(), outer.end());
    steps.insert(steps.end(), begin(), end());
    *this = CallChain(std::move(steps));
}

void CallChain::prepend(ChainStep step) {
    std::vector<ChainStep> steps{std::move(step)};
    steps.insert(steps.end(), begin(), end());
    *this = CallChain(std::move(steps));
}

const char* origin_name(Origin origin) {
    switch (origin) {
        case Origin::File: return "file";
        case Origin::Recipe: return "recipe";
        case Origin::Override: return "override";
        case Origin::Default: return "default";
        case Origin::Derived: return "derived";
    }
    return "unknown";
}

Value Value::null(Provenance p) {
    Value v;
    v.prov_ = std::move(p);
    return v;
}
Value Value::boolean(bool b, Provenance p) {
    Value v;
    v.kind_ = Kind::Bool;
    v.b_ = b;
    v.prov_ = std::move(p);
    return v;
}
Value Value::integer(std::int64_t i, Provenance p) {
    Value v;
    v.kind_ = Kind::Int;
    v.i_ = i;
    v.prov_ = std::move(p);
    return v;
}
Value Value::floating(double d, Provenance p) {
    Value v;
    v.kind_ = Kind::Float;
    v.d_ = d;
    v.prov_ = std::move(p);
    return v;
}
Value Value::string(std::string s, Provenance p) {
    Value v;
    v.kind_ = Kind::String;
    v.s_ = std::move(s);
    v.prov_ = std::move(p);
    return v;
}
Value Value::list(std::vector<Value> items, Provenance p) {
    Value v;
    v.kind_ = Kind::List;
    v.items_ = std::move(items);
    v.prov_ = std::move(p);
    return v;
}
Value Value::map(Provenance p) {
    Value v;
    v.kind_ = Kind::Map;
    v.prov_ = std::move(p);
    return v;
}
Value Value::unknown(std::string reason, Provenance p) {
    Value v;
    v.kind_ = Kind::Unknown;
    v.s_ = std::move(reason);
    v.prov_ = std::move(p);
    return v;
}

bool Value::contains_unknown() const {
    if (kind_ == Kind::Unknown) return true;
    for (const auto& item : items_)
        if (item.contains_unknown()) return true;
    for (const auto& e : entries_)
        if (e.value.contains_unknown()) return true;
    return false;
}

bool Value::truthy() const {
    switch (kind_) {
        case Kind::Null: return false;
        case Kind::Bool: return b_;
        case Kind::Int: return i_ != 0;
        case Kind::Float: return d_ != 0.0;
        case Kind::String: return !s_.empty();
        case Kind::List: return !items_.empty();
        case Kind::Map: return !entries_.empty();
        case Kind::Unknown: return false;
    }
    return false;
}

std::size_t Value::position_of(std::string_view key) const {
    if (index_.current(entries_.size())) {
        auto it = index_.positions->find(key);
        return it == index_.positions->end() ? entries_.size() : it->second;
    }
    for (std::size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].key == key) return i;
    return entries_.size();
}
std::size_t Value::indexed_position_of(std::string_view key) {
    if (entries_.size() >= kIndexedFrom && !index_.current(entries_.size())) {
        index_.positions = std::make_unique<KeyIndex::Positions>();
        for (std::size_t i = 0; i < entries_.size(); ++i) index_.positions->emplace(entries_[i].key, i);
    }
    return position_of(key);
}
const Value::Entry* Value::find_entry(std::string_view key) const {
    const std::size_t i = position_of(key);
    return i < entries_.size() ? &entries_[i] : nullptr;
}
const Value* Value::find(std::string_view key) const {
    const Entry* e = find_entry(key);
    return e ? &e->value : nullptr;
}
Value* Value::find(std::string_view key) {
    const std::size_t i = indexed_position_of(key);
    return i < entries_.size() ? &entries_[i].value : nullptr;
}
Value& Value::set(std::string key, Value value, SourceRange key_range) {
    kind_ = Kind::Map;
    if (const std::size_t i = indexed_position_of(key); i < entries_.size()) {
        Entry& e = entries_[i];
        e.value = std::move(value);
        if (key_range.valid()) e.key_range = std::move(key_range);
        return e.value;
    }
    // Keeps a built index current: the new key goes last.
    if (index_.current(entries_.size())) index_.positions->emplace(key, entries_.size());
    entries_.emplace_back(std::move(key), std::move(key_range), std::move(value));  // built in place: one move
    return entries_.back().value;
}
bool Value::erase(std::string_view key) {
    const std::size_t i = position_of(key);
    if (i == entries_.size()) return false;
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
    index_.positions.reset();
    return true;
}
std::string Value::target() const {
    const Value* t = find("_target_");
    return t && t->is_string() ? t->as_string() : std::string();
}

static std::string format_float(double d) {
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) return fmt::format("{:.1f}", d);
    return fmt::format("{}", d);
}

std::string Value::display() const {
    switch (kind_) {
        case Kind::Null: return "None";
        case Kind::Bool: return b_ ? "True" : "False";
        case Kind::Int: return std::to_string(i_);
        case Kind::Float: return format_float(d_);
        case Kind::String: return fmt::format("\"{}\"", s_);
        case Kind::Unknown: return "<unknown>";
        case Kind::List: {
            std::string out = "[";
            for (size_t i = 0; i < items_.size(); ++i) {
                if (i) out += ", ";
                out += items_[i].display();
            }
            return out + "]";
        }
        case Kind::Map: {
            std::string out = "{";
            for (size_t i = 0; i < entries_.size(); ++i) {
                if (i) out += ", ";
                out += fmt::format("{}: {}", entries_[i].key, entries_[i].value.display());
            }
            return out + "}";
        }
    }
    return "";
}

bool Value::same_as(const Value& o) const {
    if (kind_ != o.kind_) {
        if (is_number() && o.is_number()) return as_number() == o.as_number();
        return false;
    }
    switch (kind_) {
        case Kind::Null: return true;
        case Kind::Bool: return b_ == o.b_;
        case Kind::Int: return i_ == o.i_;
        case Kind::Float: return d_ == o.d_;
        case Kind::String:
        case Kind::Unknown: return s_ == o.s_;
        case Kind::List:
            if (items_.size() != o.items_.size()) return false;
            for (size_t i = 0; i < items_.size(); ++i)
                if (!items_[i].same_as(o.items_[i])) return false;
            return true;
        case Kind::Map:
            if (entries_.size() != o.entries_.size()) return false;
            for (const auto& e : entries_) {
                const Value* other = o.find(e.key);
                if (!other || !e.value.same_as(*other)) return false;
            }
            return true;
    }
    return false;
}

}  // namespace mbl
