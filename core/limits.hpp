#pragma once
// The limits that keep one run bounded on hostile input, settable with `--limit NAME=VALUE` (docs/limits.md).
// They are set once, before any file is read, and only read afterwards: the command line sets them, never a
// configuration file, which comes with the pull request being linted and could otherwise lift the bounds.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mbl {

enum class Limit : std::uint8_t {
    FileBytes,
    YamlDepth,
    YamlValues,
    YamlAliasBytes,
    TomlDepth,
    PythonTokens,
    PythonSteps,
    PythonCallDepth,
    PythonExprDepth,
    PythonImportDepth,
    PythonItems,
    PythonWhileIterations,
    PythonValueBytes,
    PythonTotalBytes,
    PythonExportValues,
    Count,
};

struct LimitInfo {
    Limit id;
    const char* name;  // as written on the command line
    bool bytes;        // a size: accepts KiB, MiB, GiB suffixes and is printed with them
    std::uint64_t default_value;
    std::uint64_t max_value;  // higher would overflow what the limit is compared with
    const char* what;         // what it bounds
    const char* past;         // what happens past it
};

const std::array<LimitInfo, static_cast<std::size_t>(Limit::Count)>& limit_infos();
const LimitInfo* find_limit(std::string_view name);

using LimitValues = std::array<std::uint64_t, static_cast<std::size_t>(Limit::Count)>;
LimitValues default_limits();

namespace detail {
extern LimitValues g_limits;
}
// The run's value of a limit (the default unless set_limits changed it).
inline std::uint64_t limit(Limit l) { return detail::g_limits[static_cast<std::size_t>(l)]; }
// Call before any thread reads a limit (start-up, or a test between runs).
void set_limits(const LimitValues& values);

// Applies "NAME=VALUE" to `values`; the reason in plain words when it is not one (unknown name, with a "did you
// mean"; not a whole number or size; zero; too large).
std::optional<std::string> apply_limit(LimitValues& values, std::string_view assignment);
// "16 MiB" or "200", as the docs and messages write a value.
std::string format_limit(const LimitInfo& info, std::uint64_t value);

}  // namespace mbl
