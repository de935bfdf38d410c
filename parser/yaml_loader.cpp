#include "parser/yaml_loader.hpp"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "core/input_errors.hpp"
#include "core/limits.hpp"
#include "core/line_index.hpp"
#include "core/source_manager.hpp"

namespace mbl {
namespace {

// End (exclusive, 0-based) of the meaningful content of a line: trailing spaces and a `# comment` removed.
size_t content_end(std::string_view line) {
    char quote = 0;
    size_t end = line.size();
    for (size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (quote) {
            if (c == quote) quote = 0;
            continue;
        }
        if (c == '"' || c == '\'') quote = c;
        else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
            end = i;
            break;
        }
    }
    while (end > 0 && (line[end - 1] == ' ' || line[end - 1] == '\t')) --end;
    return end;
}

// End (exclusive, 0-based) of the scalar token starting at `col`.
size_t token_end(std::string_view line, size_t col) {
    if (col >= line.size()) return col;
    char q = line[col];
    if (q == '"' || q == '\'') {
        for (size_t i = col + 1; i < line.size(); ++i) {
            if (q == '"' && line[i] == '\\') {
                ++i;
                continue;
            }
            if (line[i] == q) return i + 1;
        }
        return line.size();
    }
    size_t end = col;
    while (end < line.size() && line[end] != ',' && line[end] != ']' && line[end] != '}' &&
           !(line[end] == '#' && end > 0 && line[end - 1] == ' '))
        ++end;
    while (end > col && line[end - 1] == ' ') --end;
    return end;
}

// Whether a YAML string holds an OmegaConf interpolation: `${` not escaped by a backslash.
bool has_interpolation(std::string_view s) {
    for (std::size_t at = s.find("${"); at != std::string_view::npos; at = s.find("${", at + 2))
        if (at == 0 || s[at - 1] != '\\') return true;
    return false;
}

class Converter {
public:
    Converter(const std::string& file, std::string_view text, Origin origin)
        : file_(file), text_(text), lines_(text), origin_(origin) {}

    std::vector<Diagnostic> errors;

    // content_end of a line, found once: a flow mapping of 100,000 entries on one line asks for it at each entry.
    size_t line_content_end(int line, std::string_view text) const {
        auto [it, fresh] = content_ends_.try_emplace(line, 0);
        if (fresh) it->second = content_end(text);
        return it->second;
    }

    SourceRange range_at(const YAML::Mark& m, size_t end_col0) const {
        return SourceRange{file_, m.line + 1, m.column + 1, m.line + 1, static_cast<int>(end_col0) + 1};
    }
    // The span of a scalar token that starts at `m`.
    SourceRange token_range(const YAML::Mark& m) const {
        auto line = lines_.line_text(m.line + 1);
        size_t end = line ? token_end(*line, static_cast<size_t>(m.column)) : static_cast<size_t>(m.column) + 1;
        if (end <= static_cast<size_t>(m.column)) end = m.column + 1;
        return range_at(m, end);
    }
    // The span of a mapping key starting at `m` (up to the `:` that ends it).
    SourceRange key_range(const YAML::Mark& m) const {
        auto line = lines_.line_text(m.line + 1);
        size_t col = static_cast<size_t>(m.column);
        if (!line || col >= line->size()) return range_at(m, col + 1);
        if ((*line)[col] == '"' || (*line)[col] == '\'') return token_range(m);
        size_t end = col;
        while (end < line->size() && !((*line)[end] == ':' && (end + 1 == line->size() || (*line)[end + 1] == ' ')))
            ++end;
        while (end > col && (*line)[end - 1] == ' ') --end;
        return range_at(m, end > col ? end : col + 1);
    }
    // From `m` to the end of the content on its line: a whole `key: value` entry.
    SourceRange rest_of_line(const YAML::Mark& m) const {
        auto line = lines_.line_text(m.line + 1);
        size_t end = line ? line_content_end(m.line + 1, *line) : static_cast<size_t>(m.column) + 1;
        if (end <= static_cast<size_t>(m.column)) end = m.column + 1;
        return range_at(m, end);
    }

    Value scalar(const YAML::Node& node, const Provenance& prov) {
        const std::string& s = node.Scalar();
        if (!charge_bytes(s.size(), prov)) return Value::unknown("size limit", prov);
        // OmegaConf resolves `${...}` when the config is read with resolve=True (Bridge's overlays and launchers:
        // OmegaConf.to_container(..., resolve=True)), through a node of the config or a resolver the job registers
        // (oc.env, a launcher's own); what it yields, and its type, are the job's. `\${` is a literal `${`.
        if (has_interpolation(s))
            return Value::unknown("an OmegaConf interpolation, resolved when the job reads the config", prov);
        if (node.Tag() != "?") {
            // Quoted or explicitly tagged: a string unless the tag says otherwise. `!!bool "true"` is True and
            // `!!float 1` is 1.0 for PyYAML, so a tagged value is resolved as the tag says.
            const std::string& tag = node.Tag();
            if (tag == "tag:yaml.org,2002:int" || tag == "!!int" || tag == "tag:yaml.org,2002:bool" ||
                tag == "tag:yaml.org,2002:null")
                return parse_plain(s, prov);
            if (tag == "tag:yaml.org,2002:float") {
                Value v = parse_plain(s, prov);
                return v.is_int() ? Value::floating(static_cast<double>(v.as_int()), prov) : v;
            }
            return Value::string(s, prov);
        }
        return parse_plain(s, prov);
    }

    // YAML 1.1 resolution of a plain scalar, as PyYAML (and so OmegaConf/Hydra) does it, plus 1e-5 floats.
    static Value parse_plain(const std::string& s, const Provenance& prov) {
        if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return Value::null(prov);
        if (s == "true" || s == "True" || s == "TRUE" || s == "yes" || s == "Yes" || s == "YES" || s == "on" ||
            s == "On" || s == "ON")
            return Value::boolean(true, prov);
        if (s == "false" || s == "False" || s == "FALSE" || s == "no" || s == "No" || s == "NO" || s == "off" ||
            s == "Off" || s == "OFF")
            return Value::boolean(false, prov);
        std::string digits;
        for (char c : s)
            if (c != '_') digits += c;
        {
            std::int64_t i = 0;
            const char* b = digits.data();
            const char* e = b + digits.size();
            const char* start = (b != e && (*b == '+')) ? b + 1 : b;
            auto [p, ec] = std::from_chars(start, e, i);
            if (ec == std::errc() && p == e && start != e) return Value::integer(i, prov);
            if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
                auto [p2, ec2] = std::from_chars(b + 2, e, i, 16);
                if (ec2 == std::errc() && p2 == e) return Value::integer(i, prov);
            }
        }
        if (s == ".inf" || s == ".Inf" || s == "+.inf")
            return Value::floating(std::numeric_limits<double>::infinity(), prov);
        if (s == "-.inf" || s == "-.Inf") return Value::floating(-std::numeric_limits<double>::infinity(), prov);
        if (s == ".nan" || s == ".NaN") return Value::floating(std::nan(""), prov);
        {
            bool has_digit = false, numeric_chars = true;
            for (char c : digits) {
                if (std::isdigit(static_cast<unsigned char>(c))) has_digit = true;
                else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') numeric_chars = false;
            }
            if (has_digit && numeric_chars) {
                double d = 0;
                auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), d);
                if (ec == std::errc() && p == digits.data() + digits.size()) return Value::floating(d, prov);
            }
        }
        return Value::string(s, prov);
    }

    // `entry_prov` is the provenance of the whole `key: value` entry holding this node (or of the list item).
    Value convert(const YAML::Node& node, const Provenance& entry_prov, int depth) {
        if (++values_ > limit(Limit::YamlValues)) {
            if (!size_reported_) {
                size_reported_ = true;
                errors.push_back(input_error(
                    InputError::LimitExceeded, entry_prov.range,
                    fmt::format("the document expands to more than the limit of {} values (aliases of aliases?; "
                                "--limit yaml-values)",
                                limit(Limit::YamlValues))));
            }
            return Value::unknown("size limit", entry_prov);
        }
        if (static_cast<std::uint64_t>(depth) > limit(Limit::YamlDepth)) {
            if (!limit_reported_) {
                limit_reported_ = true;
                errors.push_back(
                    input_error(InputError::LimitExceeded, entry_prov.range,
                                fmt::format("nesting is deeper than the limit of {} levels (--limit yaml-depth)",
                                            limit(Limit::YamlDepth))));
            }
            return Value::unknown("nesting limit", entry_prov);
        }
        if (!tag_reported_ && !safe_tag(node.Tag())) {
            tag_reported_ = true;
            errors.push_back(input_error(
                InputError::Syntax, node.IsScalar() ? token_range(node.Mark()) : rest_of_line(node.Mark()),
                fmt::format("the tag {} is not one PyYAML's safe loader can construct; OmegaConf refuses to load the "
                            "file",
                            shown_tag(node.Tag()))));
            return Value::unknown("unsafe tag", entry_prov);
        }
        switch (node.Type()) {
            case YAML::NodeType::Undefined:
            case YAML::NodeType::Null: return Value::null(entry_prov);
            case YAML::NodeType::Scalar: return scalar(node, entry_prov);
            case YAML::NodeType::Sequence: {
                std::vector<Value> items;
                for (const auto& item : node) {
                    Provenance p = entry_prov;
                    p.range = item.IsScalar() ? token_range(item.Mark()) : rest_of_line(item.Mark());
                    items.push_back(convert(item, p, depth + 1));
                }
                return Value::list(std::move(items), entry_prov);
            }
            case YAML::NodeType::Map: {
                Value m = Value::map(entry_prov);
                // The line of each key so far: a duplicate is found without searching the entries (a mapping may
                // hold thousands of keys).
                std::unordered_map<std::string, int> seen;
                std::vector<std::pair<YAML::Node, YAML::Node>> merges;
                for (const auto& kv : node) {
                    const YAML::Node& k = kv.first;
                    if (!k.IsScalar()) {
                        errors.push_back(input_error(InputError::WrongType, key_range(k.Mark()),
                                                     "mapping keys must be plain names"));
                        continue;
                    }
                    if (is_merge_key(k)) {
                        merges.emplace_back(k, kv.second);
                        continue;
                    }
                    const std::string key = k.Scalar();
                    if (!charge_bytes(key.size(), entry_prov)) break;
                    Provenance p = Provenance::at(origin_, rest_of_line(k.Mark()));
                    SourceRange range = key_range(k.Mark());
                    if (auto [previous, fresh] = seen.try_emplace(key, range.line); !fresh) {
                        errors.push_back(
                            input_error(InputError::DuplicateKey, range,
                                        fmt::format("key \"{}\" appears twice in the same mapping (first at line {}); "
                                                    "Hydra/OmegaConf refuse duplicate keys",
                                                    key, previous->second)));
                        continue;
                    }
                    m.entries().push_back(Value::Entry{key, std::move(range), convert(kv.second, p, depth + 1)});
                }
                if (!merges.empty()) m = merged(std::move(m), merges, entry_prov, depth);
                // {_target_: torch.bfloat16, _call_: false} names a symbol (dtype, function): keep the name.
                const Value* call = m.find("_call_");
                if (call && call->is_bool() && !call->as_bool() && m.entries().size() == 2) {
                    const std::string target = m.target();
                    if (!target.empty()) return Value::string(target, entry_prov);
                }
                return m;
            }
        }
        return Value::null(entry_prov);
    }

private:
    // The text an aliased scalar holds is copied at each use: a few lines of aliases of a long string would otherwise
    // fill memory long before the count of values reaches its limit.
    bool charge_bytes(std::size_t n, const Provenance& prov) {
        bytes_ += n;
        if (bytes_ <= limit(Limit::YamlAliasBytes)) return true;
        if (!size_reported_) {
            size_reported_ = true;
            errors.push_back(input_error(
                InputError::LimitExceeded, prov.range,
                fmt::format("the document expands to more than the limit of {} of text (aliases of aliases?; "
                            "--limit yaml-alias-bytes)",
                            format_limit(*find_limit("yaml-alias-bytes"), limit(Limit::YamlAliasBytes)))));
        }
        return false;
    }

    // The tags PyYAML's SafeConstructor has a constructor for (pyyaml 6.0.2 lib/yaml/constructor.py:426-472); any
    // other, `!!python/name:` and `!!python/object` included, is a ConstructorError for yaml.safe_load and OmegaConf.
    // "?" is an untagged plain node, "!" an untagged quoted scalar.
    static bool safe_tag(const std::string& tag) {
        static const char* const kSafe[] = {"null", "bool",  "int", "float", "binary", "timestamp",
                                            "omap", "pairs", "set", "str",   "seq",    "map"};
        if (tag.empty() || tag == "?" || tag == "!") return true;
        constexpr std::string_view prefix = "tag:yaml.org,2002:";
        if (tag.rfind(prefix, 0) != 0) return false;
        const std::string_view name = std::string_view(tag).substr(prefix.size());
        return std::any_of(std::begin(kSafe), std::end(kSafe), [&](const char* k) { return name == k; });
    }
    static std::string shown_tag(const std::string& tag) {
        constexpr std::string_view prefix = "tag:yaml.org,2002:";
        std::string shown = tag.rfind(prefix, 0) == 0 ? "!!" + tag.substr(prefix.size()) : tag;
        if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
        return shown;
    }

    // `<<` written plainly (not quoted): YAML 1.1's merge key, which PyYAML's SafeLoader, and so OmegaConf, applies.
    static bool is_merge_key(const YAML::Node& key) { return key.Tag() == "?" && key.Scalar() == "<<"; }

    // The mappings a merge key names, in the order PyYAML merges them: one mapping, or a list of mappings of which
    // the first wins (SafeConstructor.flatten_mapping reverses the list, pyyaml 6.0.2 lib/yaml/constructor.py:200).
    // Each keeps the provenance of the lines it is written on, with a note for the `<<` that brought it here.
    std::vector<Value::Entry> merge_sources(const YAML::Node& key, const YAML::Node& value, int depth) {
        std::vector<YAML::Node> maps;
        if (value.IsMap()) maps.push_back(value);
        for (std::size_t i = value.IsSequence() ? value.size() : 0; i-- > 0;) {
            if (!value[i].IsMap()) {
                errors.push_back(input_error(InputError::Syntax, rest_of_line(value[i].Mark()),
                                             "a merge key (<<) takes mappings, but this list item is not one; "
                                             "OmegaConf refuses to load the file"));
                return {};
            }
            maps.push_back(value[i]);
        }
        if (maps.empty()) {
            errors.push_back(input_error(InputError::Syntax, rest_of_line(key.Mark()),
                                         "a merge key (<<) takes a mapping or a list of mappings (`<<: *defaults`); "
                                         "OmegaConf refuses to load the file"));
            return {};
        }
        std::vector<Value::Entry> out;
        const ChainStep step{key_range(key.Mark()), "merged into this mapping by <<"};
        for (const auto& map : maps) {
            Value converted = convert(map, Provenance::at(origin_, rest_of_line(map.Mark())), depth + 1);
            for (auto& e : converted.entries()) {
                add_step(e.value, step);
                out.push_back(std::move(e));
            }
        }
        return out;
    }

    static void add_step(Value& v, const ChainStep& step) {
        v.prov().chain.prepend(step);
        for (auto& item : v.items()) add_step(item, step);
        for (auto& e : v.entries()) add_step(e.value, step);
    }

    // A mapping with its merge keys applied as PyYAML does (constructor.py:180-213, which OmegaConf 2.3.0's loader
    // runs: omegaconf/_utils.py:136-151): the merged keys come first, a later one wins over an earlier one, and the
    // mapping's own keys win over every merged one. Duplicate keys are refused among the mapping's own keys only.
    Value merged(Value own, const std::vector<std::pair<YAML::Node, YAML::Node>>& merges, const Provenance& prov,
                 int depth) {
        std::vector<Value::Entry> all;
        for (const auto& [key, value] : merges)
            for (auto& e : merge_sources(key, value, depth)) all.push_back(std::move(e));
        for (auto& e : own.entries()) all.push_back(std::move(e));
        Value m = Value::map(prov);
        std::unordered_map<std::string, std::size_t> at;
        for (auto& e : all) {
            if (auto it = at.find(e.key); it != at.end()) {
                m.entries()[it->second] = std::move(e);
                continue;
            }
            at.emplace(e.key, m.entries().size());
            m.entries().push_back(std::move(e));
        }
        return m;
    }

    const std::string& file_;
    std::string_view text_;
    LineIndex lines_;  // every Mark is looked up by line: an index, not a scan per lookup
    mutable std::unordered_map<int, size_t> content_ends_;
    Origin origin_;
    bool limit_reported_ = false;
    bool size_reported_ = false;
    bool tag_reported_ = false;
    std::size_t values_ = 0;
    std::size_t bytes_ = 0;  // text of scalars and keys, aliases counted at each use
};

}  // namespace

Value parse_yaml_plain_scalar(const std::string& text) { return Converter::parse_plain(text, Provenance{}); }

Value parse_yaml_value(const std::string& text) {
    if (text.empty() || text.front() != '[') return parse_yaml_plain_scalar(text);
    const YamlLoadResult loaded = load_yaml("<fix value>", "v: " + text);
    const Value* v = loaded.ok() ? loaded.root.find("v") : nullptr;
    return v ? *v : Value::null();
}

namespace {

// Counts the events of one document, to tell a real document from the empty one yaml-cpp reports at the end.
class DocumentEvents final : public YAML::EventHandler {
public:
    int events = 0;
    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override { ++events; }
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override { ++events; }
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override { ++events; }
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        ++events;
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        ++events;
    }
    void OnMapEnd() override {}
};

// Documents in the text, counting at most to 2. Not YAML::LoadAll: yaml-cpp 0.7 loops forever, allocating, on some
// malformed streams (a lone ",": jbeder/yaml-cpp#1040, fixed upstream by #1319 after the Debian release). Only
// `---` / `...` markers at a line start can begin another document, so at most that many + 1 are read.
int count_documents(std::string_view text) {
    int markers = 0;
    for (std::size_t at = 0; at < text.size();) {
        if (text.compare(at, 3, "---") == 0 || text.compare(at, 3, "...") == 0) ++markers;
        const std::size_t newline = text.find('\n', at);
        if (newline == std::string_view::npos) break;
        at = newline + 1;
    }
    if (markers == 0) return 1;
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    int documents = 0;
    for (int round = 0; round <= markers && documents < 2; ++round) {
        DocumentEvents events;
        if (!parser.HandleNextDocument(events)) break;
        if (events.events > 0) ++documents;
    }
    return documents;
}

}  // namespace

// Errors in the documents are not reported: the stream is refused as a whole already (a Kubernetes manifest, a
// quantization recipe's units).
void read_stream_shapes(const std::string& file, std::string_view text, YamlLoadResult& result, Origin origin) {
    try {
        Converter conv(file, text, origin);
        for (const YAML::Node& doc : YAML::LoadAll(std::string(text)))
            if (doc.IsMap())
                result.shapes.push_back(conv.convert(doc, Provenance::at(origin, SourceRange::point(file, 1, 1)), 0));
        result.shape_read = true;
    } catch (const std::exception&) {
        result.shapes.clear();  // a document the reader refuses: the shape is not known
    }
}

// The first character PyYAML's Reader refuses ("special characters are not allowed", pyyaml 6.0.2
// lib/yaml/reader.py:137): controls other than tab and line breaks, DEL, C1 controls other than NEL, surrogates and
// U+FFFE/U+FFFF. yaml-cpp reads them, a NUL inside a quoted scalar included, but yaml.safe_load and OmegaConf stop.
// The text is valid UTF-8 (the front end checked); a malformed sequence is passed over.
std::optional<std::pair<std::size_t, char32_t>> first_unreadable_character(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const auto b = static_cast<unsigned char>(text[i]);
        const int length = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
        char32_t c = length == 1 ? b : b & (0x7F >> length);
        for (int k = 1; k < length && i + static_cast<std::size_t>(k) < text.size(); ++k)
            c = (c << 6) | (static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]) & 0x3F);
        const bool printable = c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0x7E) || c == 0x85 ||
                               (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
                               (c >= 0x10000 && c <= 0x10FFFF);
        if (!printable && (length > 1 || b < 0x80)) return std::pair{i, c};
        i += static_cast<std::size_t>(length);
    }
    return std::nullopt;
}

YamlLoadResult load_yaml(const std::string& file, std::string_view text, Origin origin) {
    YamlLoadResult result;
    if (auto bad = first_unreadable_character(text)) {
        const LineIndex lines(text);
        const int line = lines.line_of(bad->first), column = lines.column_of(bad->first);
        result.errors.push_back(input_error(
            InputError::Syntax, SourceRange{file, line, column, line, column + 1},
            fmt::format("character U+{:04X} is not allowed in YAML; PyYAML and OmegaConf refuse the file (an "
                        "escape inside double quotes, such as \"\\x00\", is allowed)",
                        static_cast<std::uint32_t>(bad->second))));
        return result;
    }
    YAML::Node doc;
    try {
        if (count_documents(text) > 1) {
            result.errors.push_back(input_error(InputError::NotAMapping, SourceRange::point(file, 1, 1),
                                                "file holds more than one YAML document; a config is one document "
                                                "(remove the extra `---` separators)"));
            result.stream = true;
            return result;
        }
        // PyYAML reads a lone "\r" as a line break (old Mac OS line endings); yaml-cpp does not. One byte for one, so
        // every mark stays where it was.
        std::string normalized(text);
        for (std::size_t i = 0; i < normalized.size(); ++i)
            if (normalized[i] == '\r' && (i + 1 == normalized.size() || normalized[i + 1] != '\n'))
                normalized[i] = '\n';
        doc = YAML::Load(normalized);
    } catch (const YAML::DeepRecursion& e) {
        result.errors.push_back(input_error(
            InputError::LimitExceeded, SourceRange::point(file, e.mark.line + 1, e.mark.column + 1),
            "nesting is deeper than the YAML reader's recursion limit (yaml-cpp's depth guard); flatten the document"));
        return result;
    } catch (const YAML::Exception& e) {
        SourceRange at = e.mark.is_null() ? SourceRange::point(file, 1, 1)
                                          : SourceRange::point(file, e.mark.line + 1, e.mark.column + 1);
        result.errors.push_back(input_error(InputError::Syntax, at, fmt::format("YAML syntax error: {}", e.msg)));
        return result;
    } catch (const std::exception& e) {
        result.errors.push_back(input_error(InputError::Syntax, SourceRange::point(file, 1, 1),
                                            fmt::format("YAML could not be read: {}", e.what())));
        return result;
    }
    if (!doc.IsDefined() || doc.IsNull()) {
        // yaml-cpp reads some malformed text (a lone ",") as an empty document: only blank, comment and marker lines
        // make a file empty.
        int line = 0;
        for (std::size_t at = 0; at < text.size() && line >= 0;) {
            std::size_t end = text.find('\n', at);
            if (end == std::string_view::npos) end = text.size();
            std::string_view content = text.substr(at, end - at);
            content.remove_prefix(std::min(content.find_first_not_of(" \t\r"), content.size()));
            ++line;
            if (!content.empty() && content[0] != '#' && content != "---" && content != "..." && content != "~" &&
                content != "null") {
                result.errors.push_back(input_error(InputError::Syntax, SourceRange::point(file, line, 1),
                                                    "YAML syntax error: this line is not a value YAML can read"));
                return result;
            }
            at = end + 1;
        }
        // Blank, comments only or a bare null: PyYAML and OmegaConf load an empty config, and so does the linter.
        result.root = Value::map(Provenance::at(origin, SourceRange::point(file, 1, 1)));
        return result;
    }
    result.shape_read = true;
    if (!doc.IsMap()) {
        const char* what = doc.IsSequence() ? "a list" : "a single value";
        result.errors.push_back(input_error(
            InputError::NotAMapping, SourceRange::point(file, doc.Mark().line + 1, doc.Mark().column + 1),
            fmt::format("the document is {}, but a config must be a mapping of sections such as `model:`", what)));
        return result;
    }
    Converter conv(file, text, origin);
    try {
        result.root = conv.convert(doc, Provenance::at(origin, SourceRange::point(file, 1, 1)), 0);
    } catch (const std::exception& e) {
        conv.errors.push_back(input_error(InputError::Syntax, SourceRange::point(file, 1, 1),
                                          fmt::format("YAML could not be read: {}", e.what())));
    }
    result.errors = std::move(conv.errors);
    if (!result.errors.empty() && result.root.is_map()) result.shapes.push_back(result.root);
    return result;
}

}  // namespace mbl
