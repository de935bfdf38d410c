// The options a fixture states, read one way for every test that reads them: a YAML or Python fixture's header
// comments (`# mcore: main`, `# gpu-memory: 80GiB`, `# unsafe-fixes`), a fixture tree's fixture.toml, the command
// line a rule doc's Example shows. Each option is `check`'s option of that name, so the fixture tests lint with the
// session options the snapshot's command line passes to the binary. A fixture that names no revision gets the
// session's default, as `check` does.
#pragma once
#include <toml++/toml.h>

#include <charconv>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/lint_session.hpp"
#include "memory/estimate.hpp"

namespace test_support {

struct FixtureOptions {
    mbl::SessionOptions session;         // what the fixture is linted with
    std::vector<std::string> arguments;  // the same as `check` options, in the order stated (snapshots' command line)
    bool unsafe_fixes = false;           // `# unsafe-fixes`: the golden fix cases apply unsafe fixes too
    // fixture.toml only: command-line overrides, and the files to lint (relative to the tree) instead of all of it.
    std::vector<std::string> overrides;
    std::vector<std::string> targets;
};

namespace detail {

inline int whole_number(const std::string& key, const std::string& value) {
    int n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || n <= 0)
        throw std::invalid_argument("fixture option " + key + ": \"" + value + "\" is not a positive whole number");
    return n;
}

inline double byte_size(const std::string& key, const std::string& value) {
    if (value == "0") return 0.0;
    const auto bytes = mbl::memory::parse_byte_size(value);
    if (!bytes) throw std::invalid_argument("fixture option " + key + ": \"" + value + "\" is not a size like 80GiB");
    return *bytes;
}

}  // namespace detail

// Sets `check`'s option `--KEY VALUE` (`mcore`, `te-version`, `gpu-memory`, `data-parallel-size`, `gpus`, `reserve`);
// false when `key` is none of them. A value the option cannot take throws: a fixture that states a broken option
// fails instead of running without it.
inline bool set_option(FixtureOptions& o, const std::string& key, const std::string& value) {
    mbl::SessionOptions& s = o.session;
    if (key == "mcore") s.mcore = value;
    else if (key == "te-version") s.te_version = value;
    else if (key == "gpu-memory") s.gpu_memory_bytes = detail::byte_size(key, value);
    else if (key == "data-parallel-size") s.data_parallel_size = detail::whole_number(key, value);
    else if (key == "gpus") s.gpus = detail::whole_number(key, value);
    else if (key == "reserve") s.reserve_bytes = detail::byte_size(key, value);
    else return false;
    o.arguments.push_back("--" + key);
    o.arguments.push_back(value);
    return true;
}

// A fixture file's header comments, each on a line of its own: `# KEY: VALUE` for an option of set_option, and
// `# unsafe-fixes`. Other comments (`# expect:`, prose) are not options.
inline FixtureOptions options_from_comments(const std::string& text) {
    static const std::regex option_re(R"(^#\s*([a-z-]+):\s*(\S+)\s*$)");
    static const std::regex unsafe_re(R"(^#\s*unsafe-fixes\s*$)");
    FixtureOptions o;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::smatch m;
        if (std::regex_search(line, m, option_re)) set_option(o, m[1], m[2]);
        else if (std::regex_search(line, unsafe_re)) o.unsafe_fixes = true;
    }
    return o;
}

// The options of command lines shown in prose (`--te-version 2.4`, `--gpu-memory=80GiB`); the first mention of an
// option counts.
inline FixtureOptions options_from_command_line(const std::string& text) {
    static const std::regex option_re(R"(--([a-z-]+)[ =]([A-Za-z0-9._]+))");
    FixtureOptions o;
    std::set<std::string> seen;
    for (std::sregex_iterator it(text.begin(), text.end(), option_re), end; it != end; ++it)
        if (seen.insert((*it)[1]).second) set_option(o, (*it)[1], (*it)[2]);
    return o;
}

// A fixture tree's fixture.toml, when it has one: the options of set_option as keys (`mcore = "0.20.dev"`),
// `overrides` and `targets` as arrays of strings.
inline FixtureOptions options_of_tree(const std::filesystem::path& tree) {
    FixtureOptions o;
    const auto file = tree / "fixture.toml";
    if (!std::filesystem::exists(file)) return o;
    const toml::table t = toml::parse_file(file.string());
    for (const auto& [key, value] : t)
        if (const auto text = value.value<std::string>()) set_option(o, std::string(key.str()), *text);
    auto strings = [&](const char* key, std::vector<std::string>& out) {
        if (const auto* a = t[key].as_array())
            for (const auto& item : *a) out.push_back(item.value_or(std::string()));
    };
    strings("overrides", o.overrides);
    strings("targets", o.targets);
    return o;
}

}  // namespace test_support
