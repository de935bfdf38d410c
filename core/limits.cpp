#include "core/limits.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <charconv>
#include <limits>
#include <vector>

#include "core/did_you_mean.hpp"

namespace mbl {

namespace {

constexpr std::uint64_t kKiB = 1024, kMiB = kKiB << 10, kGiB = kMiB << 10;
constexpr std::uint64_t kIntMax = std::numeric_limits<int>::max();

// The readers that recurse once per level (yaml-cpp, toml++, the evaluator's expressions and calls) are capped well
// below what the stack holds, so that raising a limit cannot turn deep input into a crash.
const std::array<LimitInfo, static_cast<std::size_t>(Limit::Count)> kInfos{{
    {Limit::FileBytes, "file-size", true, 16 * kMiB, 1 * kGiB,
     "bytes of one file, configuration file, editor buffer or standard input", "IN001: the file is not read"},
    {Limit::YamlDepth, "yaml-depth", false, 200, 1000, "levels of nesting in a YAML document",
     "IN008 at the value that goes deeper; the file is not linted"},
    {Limit::YamlValues, "yaml-values", false, 250'000, kIntMax,
     "values one YAML document expands to, each use of an alias counted",
     "IN008 at the value past the limit; the file is not linted"},
    {Limit::YamlAliasBytes, "yaml-alias-bytes", true, 64 * kMiB, 4 * kGiB,
     "text (keys and scalars) one YAML document expands to, each use of an alias counted",
     "IN008 at the alias past the limit; the file is not linted"},
    {Limit::TomlDepth, "toml-depth", false, 128, 1000,
     "parts of a dotted key or table header plus the arrays and inline tables around it, in .mbridge-lint.toml "
     "and pyproject.toml",
     "IN008 in the configuration file; files it governs are not linted"},
    {Limit::PythonTokens, "python-tokens", false, 300'000, 100'000'000,
     "tokens of one Python file (names, numbers, strings, operators; comments are free), counted before it is "
     "parsed",
     "IN008 at the token past the limit; the file is not parsed, and a module importing it sees it as unknown"},
    {Limit::PythonSteps, "python-steps", false, 1'000'000, 1'000'000'000,
     "evaluation steps of one recipe, and of one module's top level",
     "IN008 at the recipe (or the module's statement) that spent them"},
    {Limit::PythonCallDepth, "python-call-depth", false, 40, 200, "nested Python calls (recursive helpers)",
     "the call's value is unknown (IN012 with --show-unknowns)"},
    {Limit::PythonExprDepth, "python-expr-depth", false, 150, 1000, "nested Python expressions",
     "the expression's value is unknown (IN012 with --show-unknowns)"},
    {Limit::PythonImportDepth, "python-import-depth", false, 48, 200, "nested module imports being initialized",
     "the deeper module's names are unknown"},
    {Limit::PythonItems, "python-items", false, 100'000, kIntMax,
     "elements of one list, dict or string the evaluator builds", "the value is unknown (IN012 with --show-unknowns)"},
    {Limit::PythonWhileIterations, "python-while-iterations", false, 10'000, kIntMax, "iterations of one `while` loop",
     "IN008 at the recipe"},
    {Limit::PythonValueBytes, "python-value-bytes", true, 1 * kMiB, 4 * kGiB,
     "bytes of one string or container the evaluator builds", "IN008 at the recipe, naming the value's line"},
    {Limit::PythonTotalBytes, "python-total-bytes", true, 64 * kMiB, 16 * kGiB,
     "bytes of strings and containers one recipe builds in all", "IN008 at the recipe"},
    {Limit::PythonExportValues, "python-export-values", false, 100'000, kIntMax,
     "values of the config a recipe returns, a list that holds itself counted at each use", "IN008 at the recipe"},
}};

std::optional<std::uint64_t> parse_value(const LimitInfo& info, std::string_view text) {
    std::uint64_t number = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, number);
    if (ec != std::errc() || ptr == text.data()) return std::nullopt;
    std::string unit(ptr, end);
    while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
    for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::uint64_t scale = 1;
    if (!unit.empty()) {
        if (!info.bytes) return std::nullopt;
        if (unit == "b") scale = 1;
        else if (unit == "kib") scale = kKiB;
        else if (unit == "mib") scale = kMiB;
        else if (unit == "gib") scale = kGiB;
        else return std::nullopt;
    }
    if (number > std::numeric_limits<std::uint64_t>::max() / scale) return std::numeric_limits<std::uint64_t>::max();
    return number * scale;
}

}  // namespace

namespace detail {
LimitValues g_limits = default_limits();
}

const std::array<LimitInfo, static_cast<std::size_t>(Limit::Count)>& limit_infos() { return kInfos; }

const LimitInfo* find_limit(std::string_view name) {
    for (const LimitInfo& info : kInfos)
        if (name == info.name) return &info;
    return nullptr;
}

LimitValues default_limits() {
    LimitValues values{};
    for (const LimitInfo& info : kInfos) values[static_cast<std::size_t>(info.id)] = info.default_value;
    return values;
}

void set_limits(const LimitValues& values) { detail::g_limits = values; }

std::string format_limit(const LimitInfo& info, std::uint64_t value) {
    if (info.bytes && value % kGiB == 0) return fmt::format("{} GiB", value / kGiB);
    if (info.bytes && value % kMiB == 0) return fmt::format("{} MiB", value / kMiB);
    if (info.bytes && value % kKiB == 0) return fmt::format("{} KiB", value / kKiB);
    return info.bytes ? fmt::format("{} bytes", value) : fmt::format("{}", value);
}

std::optional<std::string> apply_limit(LimitValues& values, std::string_view assignment) {
    const std::size_t eq = assignment.find('=');
    if (eq == std::string_view::npos)
        return fmt::format("\"{}\" is not NAME=VALUE (for example python-steps=2000000)", assignment);
    const std::string_view name = assignment.substr(0, eq), text = assignment.substr(eq + 1);
    const LimitInfo* info = find_limit(name);
    if (!info) {
        std::vector<std::string> names;
        for (const LimitInfo& i : kInfos) names.emplace_back(i.name);
        return fmt::format("unknown limit \"{}\"{}; the limits are: {}", name, NameMatcher(names).suffix(name),
                           fmt::join(names, ", "));
    }
    const std::optional<std::uint64_t> value = parse_value(*info, text);
    if (!value)
        return fmt::format("{} must be a whole number{}, not \"{}\"", info->name,
                           info->bytes ? " of bytes, or one with KiB, MiB or GiB" : "", text);
    if (*value == 0) return fmt::format("{} must be at least 1", info->name);
    if (*value > info->max_value)
        return fmt::format("{} can be at most {} (its default is {})", info->name, format_limit(*info, info->max_value),
                           format_limit(*info, info->default_value));
    values[static_cast<std::size_t>(info->id)] = *value;
    return std::nullopt;
}

}  // namespace mbl
