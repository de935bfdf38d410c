#include "parser/overrides.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/did_you_mean.hpp"
#include "core/input_errors.hpp"

namespace mbl {

std::string Override::dotted() const {
    std::string out;
    for (const auto& p : path) out += (out.empty() ? "" : ".") + p;
    return out;
}

namespace {

struct OverrideError {
    size_t pos;
    size_t len;
    std::string message;
};

// Recursive-descent reader of one override; positions are byte offsets into the text.
class Reader {
public:
    Reader(const std::string& name, std::string_view text) : name_(name), text_(text) {}

    Override read() {
        Override o;
        o.text = std::string(text_);
        o.range = range(0, text_.size());
        if (starts("++")) {
            o.kind = Override::Kind::ForceAdd;
            pos_ = 2;
        } else if (starts("+")) {
            o.kind = Override::Kind::Add;
            pos_ = 1;
        } else if (starts("~")) {
            o.kind = Override::Kind::Delete;
            pos_ = 1;
        }
        const size_t key_start = pos_;
        read_key(o.path);
        o.key_range = range(key_start, pos_);
        if (pos_ == text_.size()) {
            if (o.kind != Override::Kind::Delete)
                fail(pos_, 1, fmt::format("expected \"=\" and a value after \"{}\"", o.dotted()));
            return o;
        }
        if (text_[pos_] != '=') fail(pos_, 1, fmt::format("unexpected \"{}\" in the key; expected \"=\"", text_[pos_]));
        ++pos_;
        const size_t value_start = pos_;
        skip_ws();
        if (pos_ == text_.size()) {
            // `key=` sets the empty string, as in Hydra; `~key=` deletes whatever the value is.
            if (o.kind != Override::Kind::Delete) o.value = Value::string("", prov(value_start, value_start));
            return o;
        }
        o.value = element(0);
        skip_ws();
        if (pos_ < text_.size()) {
            if (text_[pos_] == ',')
                fail(pos_, 1, "a comma outside [] or {}: sweeps (a,b) are multirun syntax; write a list as [a,b]");
            fail(pos_, 1, fmt::format("unexpected \"{}\" after the value", text_[pos_]));
        }
        return o;
    }

private:
    bool starts(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }
    void skip_ws() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
    }
    [[noreturn]] void fail(size_t pos, size_t len, std::string message) const {
        throw OverrideError{pos, std::max<size_t>(len, 1), std::move(message)};
    }
    SourceRange range(size_t from, size_t to) const {
        return {name_, 1, static_cast<int>(from) + 1, 1, static_cast<int>(std::max(to, from + 1)) + 1};
    }
    Provenance prov(size_t from, size_t to) const {
        return Provenance::at(Origin::Override, range(from, to),
                              fmt::format("set by command-line override `{}`", text_));
    }
    static bool key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

    void read_key(std::vector<std::string>& path) {
        for (;;) {
            size_t start = pos_;
            while (pos_ < text_.size() && key_char(text_[pos_])) ++pos_;
            if (pos_ == start) {
                if (pos_ == text_.size()) fail(pos_, 1, "expected a key such as model.recompute_granularity");
                fail(pos_, 1,
                     fmt::format("unexpected \"{}\": a key is made of letters, digits, _ and -, separated "
                                 "by dots",
                                 text_[pos_]));
            }
            path.emplace_back(text_.substr(start, pos_ - start));
            if (pos_ < text_.size() && text_[pos_] == '.') {
                ++pos_;
                continue;
            }
            return;
        }
    }

    Value element(int depth) {
        if (depth > 64) fail(pos_, 1, "values nested more than 64 levels deep");
        skip_ws();
        if (pos_ >= text_.size()) fail(pos_, 1, "expected a value");
        char c = text_[pos_];
        if (c == '[') return list(depth);
        if (c == '{') return dict(depth);
        if (c == '\'' || c == '"') return quoted();
        return primitive(depth);
    }

    Value list(int depth) {
        const size_t start = pos_++;
        std::vector<Value> items;
        skip_ws();
        if (pos_ < text_.size() && text_[pos_] == ']') {
            ++pos_;
            return Value::list({}, prov(start, pos_));
        }
        for (;;) {
            items.push_back(element(depth + 1));
            skip_ws();
            if (pos_ >= text_.size()) fail(start, 1, "this [ is never closed");
            if (text_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (text_[pos_] == ']') {
                ++pos_;
                return Value::list(std::move(items), prov(start, pos_));
            }
            fail(pos_, 1, fmt::format("unexpected \"{}\" in a list; expected \",\" or \"]\"", text_[pos_]));
        }
    }

    Value dict(int depth) {
        const size_t start = pos_++;
        Value m = Value::map(Provenance{});
        skip_ws();
        if (pos_ < text_.size() && text_[pos_] == '}') {
            ++pos_;
            m.set_prov(prov(start, pos_));
            return m;
        }
        for (;;) {
            skip_ws();
            size_t key_start = pos_;
            std::string key;
            if (pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"')) {
                key = quoted().as_string();
            } else {
                while (pos_ < text_.size() && (key_char(text_[pos_]) || text_[pos_] == '.')) ++pos_;
                key = std::string(text_.substr(key_start, pos_ - key_start));
            }
            if (key.empty()) fail(pos_, 1, "expected a key in the dict");
            skip_ws();
            if (pos_ >= text_.size() || text_[pos_] != ':') fail(pos_, 1, "expected \":\" after the dict key");
            ++pos_;
            Value v = element(depth + 1);
            if (m.find(key)) fail(key_start, key.size(), fmt::format("duplicate key \"{}\" in the dict", key));
            m.set(key, std::move(v), range(key_start, key_start + key.size()));
            skip_ws();
            if (pos_ >= text_.size()) fail(start, 1, "this { is never closed");
            if (text_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (text_[pos_] == '}') {
                ++pos_;
                m.set_prov(prov(start, pos_));
                return m;
            }
            fail(pos_, 1, fmt::format("unexpected \"{}\" in a dict; expected \",\" or \"}}\"", text_[pos_]));
        }
    }

    Value quoted() {
        const size_t start = pos_;
        const char q = text_[pos_++];
        std::string out;
        while (pos_ < text_.size() && text_[pos_] != q) {
            if (text_[pos_] == '\\' && pos_ + 1 < text_.size() && (text_[pos_ + 1] == q || text_[pos_ + 1] == '\\'))
                ++pos_;
            out += text_[pos_++];
        }
        if (pos_ >= text_.size()) fail(start, 1, "this quoted string is never closed");
        ++pos_;
        return Value::string(std::move(out), prov(start, pos_));
    }

    Value primitive(int) {
        const size_t start = pos_;
        // An unquoted value runs to the next structural character; inner spaces belong to it.
        while (pos_ < text_.size()) {
            char c = text_[pos_];
            if (c == ',' || c == ']' || c == '}' || c == '[' || c == '{' || c == '=' || c == '\'' || c == '"') break;
            if (c == '(') fail(pos_, 1, "functions such as choice() or range() are Hydra sweep syntax, not values");
            if (c == '\\') fail(pos_, 1, "a backslash in an unquoted value; quote the value");
            ++pos_;
        }
        size_t end = pos_;
        while (end > start && (text_[end - 1] == ' ' || text_[end - 1] == '\t')) --end;
        if (end == start)
            fail(start, 1,
                 pos_ < text_.size() ? fmt::format("unexpected \"{}\"; expected a value", text_[pos_])
                                     : "expected a value");
        std::string word(text_.substr(start, end - start));
        Provenance p = prov(start, end);
        std::string lower = word;
        for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (lower == "null") return Value::null(p);
        if (lower == "true") return Value::boolean(true, p);
        if (lower == "false") return Value::boolean(false, p);
        // Numbers as Hydra reads them: [+-] digits with optional underscores; floats with . or exponent; inf; nan.
        std::string digits;
        for (char ch : word)
            if (ch != '_') digits += ch;
        auto is_int = [&] {
            size_t i = (digits[0] == '+' || digits[0] == '-') ? 1 : 0;
            if (i >= digits.size()) return false;
            for (size_t j = i; j < digits.size(); ++j)
                if (!std::isdigit(static_cast<unsigned char>(digits[j]))) return false;
            return !(digits.size() - i > 1 && digits[i] == '0');
        };
        if (!digits.empty() && is_int()) {
            errno = 0;
            long long v = std::strtoll(digits.c_str(), nullptr, 10);
            if (errno != ERANGE) return Value::integer(v, p);
        }
        std::string l2 = lower;
        l2.erase(std::remove(l2.begin(), l2.end(), '_'), l2.end());
        if (l2 == "inf" || l2 == "+inf") return Value::floating(INFINITY, p);
        if (l2 == "-inf") return Value::floating(-INFINITY, p);
        if (l2 == "nan") return Value::floating(NAN, p);
        if (!digits.empty() && digits.find_first_of(".eE") != std::string::npos) {
            char* end_ptr = nullptr;
            double v = std::strtod(digits.c_str(), &end_ptr);
            if (end_ptr && *end_ptr == '\0' &&
                std::isdigit(static_cast<unsigned char>(digits.back() == '.' ? digits[0] : digits.back())))
                return Value::floating(v, p);
        }
        return Value::string(std::move(word), p);
    }

    std::string name_;
    std::string_view text_;
    size_t pos_ = 0;
};

const Value* model_default(const Revision& rev, const std::string& field) {
    for (const auto& [name, v] : rev.defaults)
        if (name == field) return &v;
    return nullptr;
}

}  // namespace

OverrideParse parse_override(const std::string& source_name, std::string_view text) {
    OverrideParse out;
    Reader reader(source_name, text);
    try {
        out.override = reader.read();
    } catch (const OverrideError& e) {
        SourceRange r{source_name, 1, static_cast<int>(e.pos) + 1, 1, static_cast<int>(e.pos + e.len) + 1};
        Diagnostic d = input_error(InputError::BadOverride, r, fmt::format("malformed override: {}", e.message));
        d.notes.push_back(Note{SourceRange{}, "overrides are written key=value, +key=value, ++key=value or ~key, e.g. "
                                              "model.recompute_granularity=full"});
        out.error = std::move(d);
    }
    return out;
}

namespace {

// The map an override's last key goes into, made where the key's section is declared or the override forces it;
// null (with an error unless an unknown value stands in the way) when there is none.
Value* override_parent(Value& root, const Override& o, std::vector<Diagnostic>& errors) {
    const auto& sections = Schema::instance().config_sections();
    Value* parent = &root;
    for (size_t i = 0; i + 1 < o.path.size(); ++i) {
        Value* next = parent->find(o.path[i]);
        const bool declared = i == 0 && std::find(sections.begin(), sections.end(), o.path[i]) != sections.end();
        if (!next || next->is_null()) {
            if (!declared && o.kind != Override::Kind::ForceAdd) {
                std::string prefix;
                for (size_t j = 0; j <= i; ++j) prefix += (j ? "." : "") + o.path[j];
                errors.push_back(
                    input_error(InputError::UnknownKey, o.key_range,
                                fmt::format("cannot override {}: the config has no key \"{}\"{}", o.dotted(), prefix,
                                            i == 0 ? did_you_mean_suffix(o.path[0], sections) : "")));
                return nullptr;
            }
            Provenance p = o.value ? o.value->prov() : Provenance::at(Origin::Override, o.range);
            parent = &parent->set(o.path[i], Value::map(p), o.key_range);
            continue;
        }
        if (next->is_unknown()) return nullptr;
        if (!next->is_map()) {
            errors.push_back(input_error(
                InputError::BadOverride, o.key_range,
                fmt::format("cannot override {}: {} is {}, not a mapping", o.dotted(), o.path[i], next->display())));
            return nullptr;
        }
        parent = next;
    }
    return parent;
}

// What an override's last key is in the config and the schema.
struct OverrideKey {
    Value* current;          // the value there, or null
    const FieldSpec* field;  // a model field the linter knows, or null
    bool top, in_model;      // a section of the config; a key of `model`
    bool declared;           // the config or the schema has the key
};

OverrideKey override_key(Value& parent, const Override& o, const Revision& revision) {
    const Schema& schema = Schema::instance();
    const auto& sections = schema.config_sections();
    const std::string& key = o.path.back();
    OverrideKey k;
    k.top = o.path.size() == 1;
    k.in_model = o.path.size() == 2 && o.path[0] == "model";
    k.current = parent.find(key);
    k.field = k.in_model ? schema.field(key) : nullptr;
    // A model key that is no field the linter knows and close to none may be a field of the provider class the job
    // builds (its own, such as Llama 3.1's scale_factor), which Hydra accepts: only a near miss of a known field is
    // taken for a typo.
    const bool provider_field = k.in_model && !k.field && close_matches(key, schema.field_names(), 1).empty();
    k.declared = k.current || (k.top && std::find(sections.begin(), sections.end(), key) != sections.end()) ||
                 (k.field && schema.field_exists_at(*k.field, revision)) || provider_field ||
                 (!k.top && !k.in_model);  // fields of other sections are not known to the linter
    return k;
}

// `~key` or `~key=value`: Hydra deletes a key the config has (with that value, when one is given).
void delete_key(Value& parent, const Override& o, const OverrideKey& k, const Revision& revision,
                std::vector<Diagnostic>& errors) {
    const Value* effective = k.current;
    if (!effective && k.in_model) effective = model_default(revision, o.path.back());
    if (!k.declared || (!k.current && !(k.in_model && k.field))) {
        errors.push_back(input_error(InputError::UnknownKey, o.key_range,
                                     fmt::format("cannot delete {}: the config has no such key", o.dotted())));
        return;
    }
    if (effective && effective->is_null()) {
        errors.push_back(input_error(InputError::BadOverride, o.key_range,
                                     fmt::format("cannot delete {}: its value is None", o.dotted())));
        return;
    }
    if (o.value && effective && !effective->is_unknown() && !effective->same_as(*o.value)) {
        errors.push_back(input_error(InputError::BadOverride, o.range,
                                     fmt::format("cannot delete {}: its value is {}, not {}", o.dotted(),
                                                 effective->display(), o.value->display())));
        return;
    }
    parent.erase(o.path.back());
}

void apply_override(Value& parent, const Override& o, const Revision& revision, std::vector<Diagnostic>& errors) {
    const Schema& schema = Schema::instance();
    const std::string& key = o.path.back();
    const OverrideKey k = override_key(parent, o, revision);
    switch (o.kind) {
        case Override::Kind::Set:
            if (!k.declared) {
                std::string hint = k.top ? did_you_mean_suffix(key, schema.config_sections())
                                         : did_you_mean_suffix(key, schema.field_names());
                Diagnostic d = input_error(
                    InputError::UnknownKey, o.key_range,
                    fmt::format("cannot override {}: the config has no key \"{}\"{}", o.dotted(), key, hint));
                d.notes.push_back(Note{SourceRange{}, fmt::format("to add a new key write +{}", o.text)});
                errors.push_back(std::move(d));
                return;
            }
            parent.set(key, *o.value, o.key_range);
            return;
        case Override::Kind::Add:
            if (k.current || (k.in_model && k.field) || (k.top && k.declared)) {
                Diagnostic d = input_error(InputError::BadOverride, o.key_range,
                                           fmt::format("cannot add {}: the config already has it", o.dotted()));
                d.notes.push_back(Note{
                    SourceRange{}, fmt::format("to replace it write {} or ++{}", o.text.substr(1), o.text.substr(1))});
                errors.push_back(std::move(d));
                return;
            }
            parent.set(key, *o.value, o.key_range);
            return;
        case Override::Kind::ForceAdd: parent.set(key, *o.value, o.key_range); return;
        case Override::Kind::Delete: delete_key(parent, o, k, revision, errors); return;
    }
}

}  // namespace

void apply_overrides(Value& root, const std::vector<Override>& overrides, const Revision& revision,
                     std::vector<Diagnostic>& errors) {
    for (const Override& o : overrides) {
        if (!root.is_map()) return;
        if (Value* parent = override_parent(root, o, errors)) apply_override(*parent, o, revision, errors);
    }
}

void merge_config_tree(Value& root, const Value& file_tree) {
    if (!file_tree.is_map()) return;
    if (!root.is_map()) {
        root = file_tree;
        return;
    }
    for (const auto& e : file_tree.entries()) {
        Value* existing = root.find(e.key);
        if (existing && existing->is_map() && e.value.is_map()) {
            merge_config_tree(*existing, e.value);
            continue;
        }
        root.set(e.key, e.value, e.key_range);
    }
}

}  // namespace mbl
