#include "report/config_yaml.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <ostream>

namespace mbl {
namespace {

std::string where(const SourceRange& r) {
    if (!r.valid()) return {};
    if (r.file.rfind("<", 0) == 0) return r.file;  // <override N>
    return fmt::format("{}:{}", r.file, r.line);
}

bool selected(const std::string& path, const std::vector<std::string>& only) {
    if (only.empty()) return true;
    for (const auto& f : only) {
        if (path.rfind(f, 0) == 0) return true;        // the entry is under the filter
        if (f.rfind(path + ".", 0) == 0) return true;  // an ancestor of what the filter names
    }
    return false;
}

bool any_selected(const Value& v, const std::string& path, const std::vector<std::string>& only) {
    if (only.empty()) return true;
    for (const auto& f : only)
        if (path.rfind(f, 0) == 0) return true;
    if (!v.is_map()) return false;
    for (const auto& e : v.entries())
        if (selected(path + "." + e.key, only) && any_selected(e.value, path + "." + e.key, only)) return true;
    return false;
}

// Strings that YAML would read as something else are quoted.
bool needs_quotes(const std::string& s) {
    if (s.empty()) return true;
    static const char* words[] = {"null",  "Null", "NULL", "~",  "true", "True", "TRUE", "false", "False",
                                  "FALSE", "yes",  "no",   "on", "off",  "Yes",  "No",   "On",    "Off"};
    for (const char* w : words)
        if (s == w) return true;
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    return end && *end == '\0';
}

bool is_scalar(const Value& v) { return !v.is_map() && !v.is_list(); }

// The shortest text that reads back as the same double (0.1, not yaml-cpp's 0.10000000000000001), written so that
// YAML 1.1 readers (PyYAML, so OmegaConf) see a float: a '.' in every number, .inf and .nan spelt as YAML spells them.
std::string float_text(double d) {
    if (std::isnan(d)) return ".nan";
    if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
    std::string s = fmt::format("{}", d);
    if (s.find('.') == std::string::npos) {
        const auto e = s.find('e');
        s.insert(e == std::string::npos ? s.size() : e, ".0");
    }
    return s;
}

class Writer {
public:
    Writer(YAML::Emitter& out, const EffectiveModel& model, const std::vector<std::string>& only)
        : out_(out), model_(model), only_(only) {}

    void scalar(const Value& v) {
        switch (v.kind()) {
            case Value::Kind::Null: out_ << YAML::Null; break;
            case Value::Kind::Bool: out_ << YAML::TrueFalseBool << v.as_bool(); break;
            case Value::Kind::Int: out_ << v.as_int(); break;
            case Value::Kind::Float: out_ << float_text(v.as_number()); break;
            case Value::Kind::String:
                if (needs_quotes(v.as_string())) out_ << YAML::DoubleQuoted << v.as_string();
                else out_ << v.as_string();
                break;
            case Value::Kind::Unknown:
                out_ << YAML::LocalTag("unknown") << YAML::DoubleQuoted << v.unknown_reason();
                break;
            default: out_ << YAML::Null; break;
        }
    }

    void value(const Value& v, const std::string& path) {
        if (v.is_map()) {
            out_ << YAML::BeginMap;
            for (const auto& e : v.entries()) {
                const std::string child = path + "." + e.key;
                if (!selected(child, only_) || !any_selected(e.value, child, only_)) continue;
                out_ << YAML::Key << e.key << YAML::Value;
                value(e.value, child);
            }
            out_ << YAML::EndMap;
            return;
        }
        if (v.is_list()) {
            bool flat = true;
            for (const auto& item : v.items()) flat &= is_scalar(item);
            if (flat) out_ << YAML::Flow;
            out_ << YAML::BeginSeq;
            for (const auto& item : v.items()) {
                if (is_scalar(item)) scalar(item);
                else value(item, path);
            }
            out_ << YAML::EndSeq;
            if (flat) out_ << YAML::Comment(provenance_comment(v, model_));
            return;
        }
        scalar(v);
        out_ << YAML::Comment(provenance_comment(v, model_));
    }

private:
    YAML::Emitter& out_;
    const EffectiveModel& model_;
    const std::vector<std::string>& only_;
};

}  // namespace

std::string provenance_comment(const Value& v, const EffectiveModel& model) {
    const Provenance& p = v.prov();
    std::string at = where(p.range);
    std::string text;
    switch (p.origin) {
        case Origin::Default: {
            // The revision's own defaults say no more than the revision; a class's default names the class.
            const std::string rev = model.revision ? model.revision->name : "";
            const bool plain = p.detail.empty() || p.detail == fmt::format("default of Megatron Core {}", rev);
            if (at.empty()) text = plain ? fmt::format("default (Megatron Core {})", rev) : p.detail;
            else text = plain ? fmt::format("default, {}", at) : fmt::format("{}, {}", p.detail, at);
            break;
        }
        case Origin::Override: text = at.empty() ? "override" : fmt::format("override, {}", at); break;
        case Origin::Derived:
            text = at;
            if (!p.detail.empty()) text += (text.empty() ? "" : ": ") + p.detail;
            break;
        case Origin::File:
        case Origin::Recipe:
            text = at;
            if (!p.detail.empty() && p.range.file.rfind("<", 0) != 0) text += (text.empty() ? "" : ": ") + p.detail;
            break;
    }
    for (const auto& step : p.chain)
        text +=
            fmt::format(", via {} at {}", step.message.substr(0, step.message.find(" is called")), where(step.range));
    if (text.empty()) text = "set at run time";
    return text;
}

// What Megatron Core's __post_init__ (compiled from its source) writes over the config: the value it runs with, with the
// value the config holds and the line that rewrote it. A rewrite that depends on what the linter does not know is not
// shown as a value.
static void show_rewrites(const EffectiveModel& model, Value& fields) {
    if (!model.post_init || !fields.is_map()) return;
    const std::string rev = model.revision ? model.revision->name : "";
    for (const auto& r : model.post_init->rewrites) {
        if (r.after.is_unknown() || r.after.is_null()) continue;
        const Value* written = fields.find(r.field);
        if (written && written->same_as(r.after)) continue;
        Value after = r.after;
        // The executor's own spelling of an enum member or dtype ("\x01" "enum:Class.member") reads as Python's.
        if (post_init::is_executor_spelling(after))
            after = Value::string(after.as_string().substr(after.as_string().find(':') + 1));
        after.prov() = written ? written->prov() : Provenance{};
        after.prov().origin = Origin::Derived;
        after.prov().chain.clear();
        after.prov().detail = fmt::format("Megatron Core {} rewrites {} to this ({}:{})", rev,
                                          written ? written->display() : "the unset field", r.file, r.line);
        fields.set(r.field, std::move(after));
    }
}

static void collect_paths(const Value& v, const std::string& path, std::vector<std::string>& out) {
    out.push_back(path);
    if (v.is_map())
        for (const auto& e : v.entries()) collect_paths(e.value, path + "." + e.key, out);
}

std::vector<std::string> shown_paths(const Value& root, const EffectiveModel& model) {
    std::vector<std::string> out;
    collect_paths(model.all_fields(), "model", out);
    if (root.is_map())
        for (const auto& e : root.entries())
            if (e.key != "model") collect_paths(e.value, e.key, out);
    return out;
}

void write_config_yaml(std::ostream& out, const Value& root, const EffectiveModel& model,
                       const ConfigYamlOptions& options) {
    YAML::Emitter e;
    e.SetIndent(2);
    if (!options.title.empty()) e << YAML::Comment(options.title) << YAML::Newline;
    if (!options.facts.empty()) e << YAML::Comment(options.facts) << YAML::Newline;
    Writer w(e, model, options.only);
    // The model section is the effective model: what Megatron Core's TransformerConfig will see.
    Value shown = Value::map();
    Value effective = model.all_fields();
    show_rewrites(model, effective);
    shown.set("model", std::move(effective));
    if (root.is_map())
        for (const auto& entry : root.entries())
            if (entry.key != "model") shown.set(entry.key, entry.value, entry.key_range);
    bool any = false;
    for (const auto& entry : shown.entries())
        any |= selected(entry.key, options.only) && any_selected(entry.value, entry.key, options.only);
    if (!any) {
        e << YAML::BeginMap << YAML::EndMap;
    } else {
        e << YAML::BeginMap;
        for (const auto& entry : shown.entries()) {
            if (!selected(entry.key, options.only) || !any_selected(entry.value, entry.key, options.only)) continue;
            e << YAML::Key << entry.key << YAML::Value;
            w.value(entry.value, entry.key);
        }
        e << YAML::EndMap;
    }
    out << e.c_str() << '\n';
}

}  // namespace mbl
