#pragma once
// The project configuration: `[tool.mbridge-lint]` in pyproject.toml or the top level of .mbridge-lint.toml.
// Every setting remembers where it was written, so `mbridge-lint config` can say where each value came from.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/diagnostic.hpp"

namespace mbl {

// Where a setting's value came from: a location in a configuration file, the command line, or the default.
struct SettingSource {
    enum class Kind { Default, File, CommandLine };
    Kind kind = Kind::Default;
    SourceRange where;             // for File
    std::string describe() const;  // "default", "command line", "path:line:col"
};

template <typename T>
struct Setting {
    T value{};
    SettingSource source;
};

struct PerFileIgnore {
    std::string pattern;             // fnmatch pattern against the path relative to `root`
    std::vector<std::string> codes;  // codes, code prefixes or rule names
    SourceRange where;
};

struct SeverityOverride {
    std::string code;  // code, code prefix or rule name
    Severity severity = Severity::Warning;
    SourceRange where;
};

// "80GiB", "141 GB", "512MiB": a byte count and the text it was written as.
struct MemorySize {
    std::uint64_t bytes = 0;
    std::string text;
};
// Units B, kB/KB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024), case-insensitive, an optional
// space between number and unit, a decimal number allowed. nullopt when `text` is not such a size.
std::optional<MemorySize> parse_memory_size(std::string_view text);

struct ProjectConfig {
    std::string file;  // the configuration file ("" when none was found: every setting is its default)
    // The files `extend` brought in, nearest first (`extend = "../base.toml"`): each is read first, and the file
    // that extends it sets over it key by key (docs/configuration.md "Sharing a base configuration").
    std::vector<std::string> extends;
    std::optional<Setting<std::string>> mcore;
    std::optional<Setting<std::string>> te_version;
    Setting<std::vector<std::string>> select{{"ALL"}, {}};
    Setting<std::vector<std::string>> extend_select;  // added to `select` (a later layer, such as the command line)
    Setting<std::vector<std::string>> ignore;
    // Paths directory walks leave out: fnmatch patterns relative to `root`, or a name anywhere (no '/').
    // `exclude` replaces the defaults (default_exclude()); `extend-exclude` adds to them.
    Setting<std::vector<std::string>> exclude{default_exclude(), {}};
    Setting<std::vector<std::string>> extend_exclude;
    Setting<std::vector<PerFileIgnore>> per_file_ignores;
    Setting<std::vector<SeverityOverride>> severity;
    Setting<std::string> root;  // absolute; default: the configuration file's directory (or the linted file's)
    std::optional<Setting<MemorySize>> gpu_memory;      // read by the memory advice rules
    Setting<std::vector<std::string>> hf_config_paths;  // absolute

    // The configuration keys, for "did you mean" and the README.
    static const std::vector<std::string>& keys();
    // Hidden directories (.git, .venv), caches, virtual environments, installed packages and build outputs.
    static const std::vector<std::string>& default_exclude();
};

struct ConfigLoadResult {
    ProjectConfig config;
    std::vector<Diagnostic> errors;  // IN0xx, located in the configuration file
    bool has_section = true;         // false: a pyproject.toml without [tool.mbridge-lint]
    bool ok() const { return errors.empty(); }
};

// Reads one configuration file (`text` given: the editor's buffer). pyproject.toml is read for its
// [tool.mbridge-lint] table only; any other file name is read as .mbridge-lint.toml (keys at top level).
ConfigLoadResult load_config_file(const std::string& path, const std::string* text = nullptr);

// How many files an `extend` chain may hold beyond the first: a longer chain is refused, as is a cycle.
inline constexpr int kMaxExtendDepth = 8;
inline constexpr const char* kConfigFileName = ".mbridge-lint.toml";
inline constexpr const char* kPyprojectFileName = "pyproject.toml";
bool is_config_file_name(std::string_view path);

// Finds and caches the configuration that governs each file: the closest directory, from the file's own upward,
// holding .mbridge-lint.toml or a pyproject.toml with [tool.mbridge-lint] (.mbridge-lint.toml wins in one
// directory). Thread-safe.
class ConfigResolver {
public:
    // `explicit_file`: use this configuration for every file (--config) instead of discovering one.
    explicit ConfigResolver(std::string explicit_file = {}) : explicit_file_(std::move(explicit_file)) {}

    std::shared_ptr<const ConfigLoadResult> for_path(const std::string& path);
    // Forgets what was read (a configuration file changed).
    void clear();

private:
    std::shared_ptr<const ConfigLoadResult> for_directory(const std::string& dir);
    std::string explicit_file_;
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<const ConfigLoadResult>> by_dir_;
    // for_path's answers by the path as asked: a run asks three times for each file (the walk, naming, the lint).
    std::unordered_map<std::string, std::shared_ptr<const ConfigLoadResult>> by_path_;
};

}  // namespace mbl
