#include "config/project_config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "config/rule_selection.hpp"
#include "core/did_you_mean.hpp"
#include "core/input_errors.hpp"
#include "core/limits.hpp"
#include "core/schema.hpp"
#include "core/source_manager.hpp"
#include "core/version.hpp"

namespace mbl {

namespace fs = std::filesystem;

std::string SettingSource::describe() const {
    switch (kind) {
        case Kind::Default: return "default";
        case Kind::CommandLine: return "command line";
        case Kind::File: return fmt::format("{}:{}:{}", where.file, where.line, where.column);
    }
    return "";
}

const std::vector<std::string>& ProjectConfig::keys() {
    static const std::vector<std::string> k{
        "mcore",    "te-version", "select",         "extend-select", "ignore",     "per-file-ignores",
        "severity", "exclude",    "extend-exclude", "root",          "gpu-memory", "hf-config-paths",
        "extend"};
    return k;
}

const std::vector<std::string>& ProjectConfig::default_exclude() {
    // ruff's defaults, less the names of tools this linter never meets; ".*" covers .git, .venv, .tox and the like.
    static const std::vector<std::string> k{".*",   "__pycache__", "__pypackages__", "node_modules", "site-packages",
                                            "venv", "_build",      "buck-out",       "dist"};
    return k;
}

bool is_config_file_name(std::string_view path) {
    const std::string name = fs::path(path).filename().string();
    return name == kConfigFileName || name == kPyprojectFileName;
}

std::optional<MemorySize> parse_memory_size(std::string_view text) {
    std::string s(text);
    size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == 0) return std::nullopt;
    double number = 0;
    try {
        size_t used = 0;
        number = std::stod(s.substr(0, i), &used);
        if (used != i) return std::nullopt;
    } catch (...) {
        return std::nullopt;
    }
    while (i < s.size() && s[i] == ' ') ++i;
    std::string unit;
    for (; i < s.size(); ++i) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    static const std::map<std::string, double> units{
        {"b", 1.0},         {"kb", 1e3},           {"mb", 1e6},
        {"gb", 1e9},        {"tb", 1e12},          {"kib", 1024.0},
        {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0}};
    auto it = units.find(unit);
    if (it == units.end() || !std::isfinite(number) || number <= 0) return std::nullopt;
    const double bytes = std::round(number * it->second);
    if (bytes < 1 || bytes > 1e18) return std::nullopt;
    return MemorySize{static_cast<std::uint64_t>(bytes), std::string(text)};
}

namespace {

SourceRange range_of(const std::string& file, const toml::source_region& r) {
    const int line = static_cast<int>(r.begin.line), col = static_cast<int>(r.begin.column);
    if (line <= 0) return SourceRange::point(file, 1, 1);
    int end_line = static_cast<int>(r.end.line), end_col = static_cast<int>(r.end.column);
    if (end_line < line || (end_line == line && end_col <= col)) {
        end_line = line;
        end_col = col + 1;
    }
    return SourceRange{file, line, col, end_line, end_col};
}

// toml++ makes one table per part of a dotted key (and per level of nested arrays and inline tables) and frees
// them by recursion: a key of 50,000 parts overflows the stack, in the parser or when the tree is freed. So the
// depth is measured on the text before toml++ sees it: the parts of a dotted key or table header, on top of the
// arrays and inline tables open around it. Dots inside strings and comments do not count; a float or a date-time
// in a value holds at most one dot, far below the limit.
struct TomlTooDeep {
    int line = 0, column = 0;
};
std::optional<TomlTooDeep> toml_too_deep(std::string_view text) {
    std::vector<int> open{0};  // the depth inside each open array or inline table (or table header)
    int parts = 1;             // parts of the key (or value) being read since the last `=`, `,` or newline
    int key_parts = 0;         // parts of the key whose value is being read: `a.b = {` opens at depth 2 + 1
    int line = 1;
    std::size_t line_start = 0;
    auto deeper = [&](std::size_t at) -> std::optional<TomlTooDeep> {
        // Parts of a dotted key or table header plus the arrays and inline tables open around it (toml-depth): deeper
        // TOML is refused before toml++ reads it, since toml++ recurses once per level.
        if (static_cast<std::uint64_t>(open.back()) + static_cast<std::uint64_t>(parts) <= limit(Limit::TomlDepth))
            return std::nullopt;
        return TomlTooDeep{line, static_cast<int>(at - line_start) + 1};
    };
    auto newline = [&](std::size_t at) {
        ++line;
        line_start = at + 1;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            newline(i);
            parts = 1;
            key_parts = 0;
        } else if (c == '#') {
            while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
        } else if (c == '"' || c == '\'') {
            const bool multi = text.compare(i, 3, std::string(3, c)) == 0;
            i += multi ? 3 : 1;
            for (; i < text.size(); ++i) {
                if (text[i] == '\n') {
                    newline(i);
                    if (!multi) break;  // an unterminated string: toml++ reports it
                } else if (c == '"' && text[i] == '\\') {
                    if (i + 1 < text.size() && text[i + 1] == '\n') continue;  // a line-ending backslash
                    ++i;
                } else if (text[i] == c && (!multi || text.compare(i, 3, std::string(3, c)) == 0)) {
                    if (multi) i += 2;
                    while (multi && i + 1 < text.size() && text[i + 1] == c) ++i;  // up to two quotes end the content
                    break;
                }
            }
        } else if (c == '.') {
            ++parts;
            if (auto e = deeper(i)) return e;
        } else if (c == '=') {
            key_parts = parts;
            parts = 1;
        } else if (c == ',') {
            parts = 1;
            key_parts = 0;
        } else if (c == '[' || c == '{') {
            open.push_back(open.back() + key_parts + 1);
            parts = 1;
            key_parts = 0;
            if (auto e = deeper(i)) return e;
        } else if ((c == ']' || c == '}') && open.size() > 1) {
            open.pop_back();
            key_parts = 0;
        }
    }
    return std::nullopt;
}

class Reader {
public:
    Reader(const std::string& file, ProjectConfig& config, std::vector<Diagnostic>& errors)
        : file_(file), config_(config), errors_(errors), dir_(fs::path(file).parent_path()) {}

    void read(const toml::table& table) {
        for (const auto& [key, node] : table) {
            const std::string name(key.str());
            const SourceRange where = range_of(file_, key.source());
            const SettingSource from{SettingSource::Kind::File, where};
            if (name == "mcore") {
                if (auto s = string_of(node, name)) {
                    if (!Schema::instance().revision(*s))
                        error(InputError::UnknownValue, where, Schema::instance().revision_error(*s, "mcore"));
                    else config_.mcore = Setting<std::string>{*s, from};
                }
            } else if (name == "te-version") {
                if (auto s = string_of(node, name)) {
                    if (!Version::parse(*s))
                        error(InputError::WrongType, where,
                              fmt::format("te-version \"{}\" is not a version such as 2.6.0", *s));
                    else config_.te_version = Setting<std::string>{*s, from};
                }
            } else if (name == "select" || name == "ignore" || name == "extend-select") {
                if (auto codes = codes_of(node, name))
                    (name == "select"   ? config_.select
                     : name == "ignore" ? config_.ignore
                                        : config_.extend_select) = {*codes, from};
            } else if (name == "exclude" || name == "extend-exclude") {
                if (auto patterns = strings_of(node, name))
                    (name == "exclude" ? config_.exclude : config_.extend_exclude) = {*patterns, from};
            } else if (name == "per-file-ignores") {
                const toml::table* t = node.as_table();
                if (!t) {
                    wrong_type(node, name, "a table of pattern = [codes]");
                    continue;
                }
                config_.per_file_ignores.source = from;
                for (const auto& [pattern, codes_node] : *t)
                    if (auto codes = codes_of(codes_node, fmt::format("per-file-ignores.\"{}\"", pattern.str())))
                        config_.per_file_ignores.value.push_back(
                            PerFileIgnore{std::string(pattern.str()), *codes, range_of(file_, pattern.source())});
            } else if (name == "severity") {
                const toml::table* t = node.as_table();
                if (!t) {
                    wrong_type(node, name, "a table of code = \"error\" | \"warning\" | \"info\"");
                    continue;
                }
                config_.severity.source = from;
                for (const auto& [code, sev_node] : *t) {
                    const SourceRange at = range_of(file_, code.source());
                    const std::string code_name(code.str());
                    if (!check_pattern(code_name, at)) continue;
                    if (names_input_diagnostics(code_name)) {
                        error(InputError::UnknownValue, at,
                              fmt::format("\"{}\": input diagnostics (IN0xx) cannot be re-ranked; select or ignore "
                                          "their warnings and infos instead",
                                          code_name));
                        continue;
                    }
                    auto sev = string_of(sev_node, fmt::format("severity.{}", code_name));
                    if (!sev) continue;
                    static const std::vector<std::string> names{"error", "warning", "info"};
                    if (*sev == "error" || *sev == "warning" || *sev == "info")
                        config_.severity.value.push_back(SeverityOverride{code_name,
                                                                          *sev == "error"     ? Severity::Error
                                                                          : *sev == "warning" ? Severity::Warning
                                                                                              : Severity::Info,
                                                                          at});
                    else
                        error(InputError::UnknownValue, range_of(file_, sev_node.source()),
                              fmt::format("severity \"{}\" for {} is not one of error, warning, info{}", *sev,
                                          code_name, did_you_mean_suffix(*sev, names)));
                }
            } else if (name == "root") {
                if (auto s = string_of(node, name)) {
                    fs::path p = fs::path(*s).is_absolute() ? fs::path(*s) : dir_ / *s;
                    std::error_code ec;
                    if (!fs::is_directory(p, ec))
                        error(InputError::Unreadable, range_of(file_, node.source()),
                              fmt::format("root \"{}\" is not a directory ({})", *s, p.lexically_normal().string()));
                    else config_.root = {fs::weakly_canonical(p, ec).string(), from};
                }
            } else if (name == "gpu-memory") {
                if (auto s = string_of(node, name)) {
                    if (auto size = parse_memory_size(*s)) config_.gpu_memory = Setting<MemorySize>{*size, from};
                    else
                        error(InputError::WrongType, range_of(file_, node.source()),
                              fmt::format("gpu-memory \"{}\" is not a memory size such as \"80GiB\" or \"141GB\"", *s));
                }
            } else if (name == "extend") {
                if (auto s = string_of(node, name)) {
                    extend_ = expanded_path(*s);
                    extend_written_ = *s;
                    extend_at_ = range_of(file_, node.source());
                }
            } else if (name == "hf-config-paths") {
                if (auto list = strings_of(node, name)) {
                    std::vector<std::string> paths;
                    for (const auto& s : *list) paths.push_back(expanded_path(s));
                    config_.hf_config_paths = {paths, from};
                }
            } else {
                error(InputError::UnknownKey, where,
                      fmt::format("unknown configuration key \"{}\"{}; known keys: {}", name,
                                  did_you_mean_suffix(name, ProjectConfig::keys()),
                                  fmt::join(ProjectConfig::keys(), ", ")));
            }
        }
    }

    // `extend`: the base configuration this file names, absolute ("" when none), and where it is named.
    const std::string& extend() const { return extend_; }
    const std::string& extend_written() const { return extend_written_; }
    const SourceRange& extend_at() const { return extend_at_; }

private:
    // A path written in this file: `~/` is the home directory, a relative path is relative to this file's folder.
    std::string expanded_path(const std::string& s) const {
        std::string expanded = s;
        if (expanded.rfind("~/", 0) == 0)
            if (const char* home = std::getenv("HOME")) expanded = std::string(home) + expanded.substr(1);
        const fs::path p = fs::path(expanded).is_absolute() ? fs::path(expanded) : dir_ / expanded;
        return p.lexically_normal().string();
    }
    void error(InputError kind, SourceRange at, std::string message) {
        errors_.push_back(input_error(kind, std::move(at), std::move(message)));
    }
    void wrong_type(const toml::node& node, std::string_view key, std::string_view expected) {
        error(InputError::WrongType, range_of(file_, node.source()),
              fmt::format("{} must be {}, not {}", key, expected, type_name(node)));
    }
    static std::string type_name(const toml::node& node) {
        switch (node.type()) {
            case toml::node_type::string: return "a string";
            case toml::node_type::integer: return "an integer";
            case toml::node_type::floating_point: return "a number";
            case toml::node_type::boolean: return "a boolean";
            case toml::node_type::array: return "an array";
            case toml::node_type::table: return "a table";
            default: return "a date or time";
        }
    }
    std::optional<std::string> string_of(const toml::node& node, std::string_view key) {
        if (auto s = node.value<std::string>(); s && node.is_string()) return *s;
        wrong_type(node, key, "a string");
        return std::nullopt;
    }
    std::optional<std::vector<std::string>> strings_of(const toml::node& node, std::string_view key) {
        const toml::array* a = node.as_array();
        if (!a) {
            wrong_type(node, key, "an array of strings");
            return std::nullopt;
        }
        std::vector<std::string> out;
        bool ok = true;
        for (const auto& item : *a) {
            if (auto s = item.value<std::string>(); s && item.is_string()) out.push_back(*s);
            else {
                wrong_type(item, fmt::format("each entry of {}", key), "a string");
                ok = false;
            }
        }
        if (!ok) return std::nullopt;
        return out;
    }
    bool check_pattern(const std::string& pattern, const SourceRange& at) {
        std::string why;
        if (rule_pattern_valid(pattern, &why)) return true;
        error(InputError::UnknownValue, at, why);
        return false;
    }
    std::optional<std::vector<std::string>> codes_of(const toml::node& node, std::string_view key) {
        auto list = strings_of(node, key);
        if (!list) return std::nullopt;
        const toml::array& a = *node.as_array();
        bool ok = true;
        for (size_t i = 0; i < list->size(); ++i) ok &= check_pattern((*list)[i], range_of(file_, a[i].source()));
        if (!ok) return std::nullopt;
        return list;
    }

    const std::string& file_;
    ProjectConfig& config_;
    std::vector<Diagnostic>& errors_;
    fs::path dir_;
    std::string extend_, extend_written_;
    SourceRange extend_at_;
};

template <typename T>
void set_over(Setting<T>& base, const Setting<T>& over) {
    if (over.source.kind != SettingSource::Kind::Default) base = over;
}
template <typename T>
void set_over(std::optional<Setting<T>>& base, const std::optional<Setting<T>>& over) {
    if (over) base = over;
}
// extend-select and extend-exclude add to what the base adds.
void add_over(Setting<std::vector<std::string>>& base, const Setting<std::vector<std::string>>& over) {
    if (over.source.kind == SettingSource::Kind::Default) return;
    base.value.insert(base.value.end(), over.value.begin(), over.value.end());
    base.source = over.source;
}
// per-file-ignores and severity merge entry by entry: the extending file's entry for a pattern or code replaces the
// base's.
template <typename T, typename Key>
void merge_over(Setting<std::vector<T>>& base, const Setting<std::vector<T>>& over, Key key) {
    if (over.source.kind == SettingSource::Kind::Default) return;
    std::vector<T> merged;
    for (const auto& b : base.value)
        if (std::none_of(over.value.begin(), over.value.end(), [&](const T& o) { return key(o) == key(b); }))
            merged.push_back(b);
    merged.insert(merged.end(), over.value.begin(), over.value.end());
    base = {std::move(merged), over.source};
}

// `config` set over `base`, the configuration it extends: docs/configuration.md "Sharing a base configuration".
ProjectConfig extended(ProjectConfig base, const ProjectConfig& config) {
    const std::string base_file = base.file;
    set_over(base.mcore, config.mcore);
    set_over(base.te_version, config.te_version);
    set_over(base.select, config.select);
    add_over(base.extend_select, config.extend_select);
    set_over(base.ignore, config.ignore);
    set_over(base.exclude, config.exclude);
    add_over(base.extend_exclude, config.extend_exclude);
    merge_over(base.per_file_ignores, config.per_file_ignores, [](const PerFileIgnore& p) { return p.pattern; });
    merge_over(base.severity, config.severity, [](const SeverityOverride& o) { return o.code; });
    // The root is the extending file's folder unless a file of the chain sets it.
    if (config.root.source.kind != SettingSource::Kind::Default ||
        base.root.source.kind == SettingSource::Kind::Default)
        base.root = config.root;
    set_over(base.gpu_memory, config.gpu_memory);
    set_over(base.hf_config_paths, config.hf_config_paths);
    base.file = config.file;
    base.extends.insert(base.extends.begin(), base_file);
    return base;
}

ConfigLoadResult load_layer(const std::string& path, const std::string* text, std::vector<std::string>& chain);

// Reads the configuration `extend` names into `result`, under it; a missing, looping or too long chain is an error
// located at the `extend` key.
void load_base(ConfigLoadResult& result, const std::string& base, const std::string& written, const SourceRange& at,
               std::vector<std::string>& chain) {
    std::error_code ec;
    const std::string key = fs::weakly_canonical(base, ec).string();
    if (std::find(chain.begin(), chain.end(), key) != chain.end()) {
        result.errors.push_back(input_error(InputError::UnknownValue, at,
                                            fmt::format("extend = \"{}\" leads back to a configuration that extends "
                                                        "it: {}",
                                                        written, fmt::join(chain, " -> "))));
        return;
    }
    if (static_cast<int>(chain.size()) > kMaxExtendDepth) {
        result.errors.push_back(
            input_error(InputError::LimitExceeded, at,
                        fmt::format("extend chain longer than the limit of {} files", kMaxExtendDepth)));
        return;
    }
    if (!fs::is_regular_file(base, ec)) {
        result.errors.push_back(
            input_error(InputError::Unreadable, at,
                        fmt::format("extend = \"{}\": no such configuration file ({})", written, base)));
        return;
    }
    ConfigLoadResult loaded = load_layer(base, nullptr, chain);
    result.errors.insert(result.errors.end(), loaded.errors.begin(), loaded.errors.end());
    if (!loaded.has_section)
        result.errors.push_back(
            input_error(InputError::UnknownValue, at,
                        fmt::format("extend = \"{}\": it has no [tool.mbridge-lint] table", written)));
    if (loaded.errors.empty() && loaded.has_section) result.config = extended(std::move(loaded.config), result.config);
}

}  // namespace

ConfigLoadResult load_config_file(const std::string& path, const std::string* text) {
    std::vector<std::string> chain;
    return load_layer(path, text, chain);
}

namespace {

ConfigLoadResult load_layer(const std::string& path, const std::string* text, std::vector<std::string>& chain) {
    ConfigLoadResult result;
    result.config.file = path;
    std::error_code ec;
    result.config.root.value =
        fs::weakly_canonical(fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path(), ec)
            .string();
    std::string buffer;
    if (!text) {
        SourceManager reader;
        std::string why;
        const std::string* t = reader.load(path, &why);
        if (!t) {
            result.errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(path),
                                                fmt::format("cannot read configuration {}: {}", path, why)));
            return result;
        }
        buffer = *t;
        text = &buffer;
    }
    if (auto deep = toml_too_deep(*text)) {
        result.errors.push_back(input_error(
            InputError::LimitExceeded, SourceRange::point(path, deep->line, deep->column),
            fmt::format("a dotted key or nesting is deeper than the limit of {} levels (--limit toml-depth); the "
                        "configuration is not read",
                        limit(Limit::TomlDepth))));
        return result;
    }
    toml::table doc;
    try {
        doc = toml::parse(*text, path);
    } catch (const toml::parse_error& e) {
        result.errors.push_back(input_error(InputError::Syntax, range_of(path, e.source()),
                                            fmt::format("TOML syntax error: {}", e.description())));
        return result;
    }
    const toml::table* table = &doc;
    if (fs::path(path).filename() == kPyprojectFileName) {
        const toml::node* section = doc.at_path("tool.mbridge-lint").node();
        if (!section) {
            result.has_section = false;
            return result;
        }
        table = section->as_table();
        if (!table) {
            result.errors.push_back(input_error(InputError::WrongType, range_of(path, section->source()),
                                                "[tool.mbridge-lint] must be a table"));
            return result;
        }
    }
    Reader reader(path, result.config, result.errors);
    reader.read(*table);
    if (!reader.extend().empty()) {
        std::error_code canonical_ec;
        chain.push_back(fs::weakly_canonical(path, canonical_ec).string());
        load_base(result, reader.extend(), reader.extend_written(), reader.extend_at(), chain);
        chain.pop_back();
    }
    return result;
}

}  // namespace

std::shared_ptr<const ConfigLoadResult> ConfigResolver::for_path(const std::string& path) {
    if (!explicit_file_.empty()) {
        std::lock_guard lock(mutex_);
        auto& slot = by_dir_[""];
        if (!slot) slot = std::make_shared<ConfigLoadResult>(load_config_file(explicit_file_));
        return slot;
    }
    {
        std::lock_guard lock(mutex_);
        if (auto it = by_path_.find(path); it != by_path_.end()) return it->second;
    }
    std::error_code ec;
    fs::path p = fs::absolute(path, ec);
    fs::path dir = fs::is_directory(p, ec) ? p : p.parent_path();
    auto found = for_directory(dir.lexically_normal().string());
    std::lock_guard lock(mutex_);
    by_path_.emplace(path, found);
    return found;
}

std::shared_ptr<const ConfigLoadResult> ConfigResolver::for_directory(const std::string& dir) {
    {
        std::lock_guard lock(mutex_);
        if (auto it = by_dir_.find(dir); it != by_dir_.end()) return it->second;
    }
    std::shared_ptr<const ConfigLoadResult> found;
    std::error_code ec;
    const fs::path d(dir);
    for (const char* name : {kConfigFileName, kPyprojectFileName}) {
        const fs::path candidate = d / name;
        if (!fs::is_regular_file(candidate, ec)) continue;
        auto loaded = std::make_shared<ConfigLoadResult>(load_config_file(candidate.string()));
        if (loaded->has_section) {
            found = std::move(loaded);
            break;
        }
    }
    if (!found) {
        if (d.has_parent_path() && d.parent_path() != d) {
            found = for_directory(d.parent_path().string());
        } else {
            auto none = std::make_shared<ConfigLoadResult>();
            none->config.root.value = fs::current_path(ec).string();  // no configuration: paths relative to here
            found = std::move(none);
        }
    }
    std::lock_guard lock(mutex_);
    by_dir_[dir] = found;
    return found;
}

void ConfigResolver::clear() {
    std::lock_guard lock(mutex_);
    by_dir_.clear();
    by_path_.clear();
}

}  // namespace mbl
