#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "core/limits.hpp"

using mbl::apply_limit;
using mbl::Limit;

TEST_CASE("limits: NAME=VALUE sets one limit and refuses what is not one, in plain words", "[limits]") {
    mbl::LimitValues v = mbl::default_limits();
    CHECK(v[static_cast<std::size_t>(Limit::PythonSteps)] == 1'000'000);
    CHECK_FALSE(apply_limit(v, "python-steps=2000000"));
    CHECK(v[static_cast<std::size_t>(Limit::PythonSteps)] == 2'000'000);
    CHECK_FALSE(apply_limit(v, "file-size=32MiB"));
    CHECK(v[static_cast<std::size_t>(Limit::FileBytes)] == 32u << 20);
    CHECK_FALSE(apply_limit(v, "yaml-alias-bytes=512 kib"));
    CHECK(v[static_cast<std::size_t>(Limit::YamlAliasBytes)] == 512u << 10);

    CHECK(
        *apply_limit(v, "python-step=5") ==
        "unknown limit \"python-step\" (did you mean \"python-steps\" or \"python-items\"?); the limits are: file-size, yaml-depth, "
        "yaml-values, yaml-alias-bytes, toml-depth, python-tokens, python-steps, python-call-depth, "
        "python-expr-depth, python-import-depth, python-items, python-while-iterations, python-value-bytes, "
        "python-total-bytes, python-export-values");
    CHECK(*apply_limit(v, "python-steps") == "\"python-steps\" is not NAME=VALUE (for example python-steps=2000000)");
    CHECK(*apply_limit(v, "python-steps=lots") == "python-steps must be a whole number, not \"lots\"");
    CHECK(*apply_limit(v, "python-steps=-1") == "python-steps must be a whole number, not \"-1\"");
    CHECK(*apply_limit(v, "python-steps=10MiB") == "python-steps must be a whole number, not \"10MiB\"");
    CHECK(*apply_limit(v, "file-size=10MB") ==
          "file-size must be a whole number of bytes, or one with KiB, MiB or GiB, not \"10MB\"");
    CHECK(*apply_limit(v, "yaml-depth=0") == "yaml-depth must be at least 1");
    // Readers that recurse once per level are capped below what the stack holds.
    CHECK(*apply_limit(v, "yaml-depth=100000") == "yaml-depth can be at most 1000 (its default is 200)");
    CHECK(*apply_limit(v, "file-size=99999999999999999999") ==
          "file-size must be a whole number of bytes, or one with KiB, MiB or GiB, not \"99999999999999999999\"");
    CHECK(*apply_limit(v, "file-size=9999999GiB") == "file-size can be at most 1 GiB (its default is 16 MiB)");
    // A refused value leaves the earlier one.
    CHECK(v[static_cast<std::size_t>(Limit::YamlDepth)] == 200);
}

TEST_CASE("every limit has a name, a default within its range and words for the docs", "[limits]") {
    for (const mbl::LimitInfo& info : mbl::limit_infos()) {
        CAPTURE(info.name);
        CHECK(mbl::find_limit(info.name) == &info);
        CHECK(info.default_value >= 1);
        CHECK(info.default_value <= info.max_value);
        CHECK(std::string(info.what).size() > 10);
        CHECK(std::string(info.past).size() > 5);
    }
    CHECK(mbl::format_limit(*mbl::find_limit("file-size"), 16u << 20) == "16 MiB");
    CHECK(mbl::format_limit(*mbl::find_limit("python-steps"), 1'000'000) == "1000000");
}

TEST_CASE("docs/limits.md lists every limit with its default and cap", "[limits][docs]") {
    std::ifstream in(std::string(MBRIDGE_LINT_TEST_DATA) + "/../docs/limits.md");
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    for (const mbl::LimitInfo& info : mbl::limit_infos()) {
        CAPTURE(info.name);
        const std::string row =
            fmt::format("| `{}` | {} | {} | {} | ", info.name, mbl::format_limit(info, info.default_value),
                        mbl::format_limit(info, info.max_value), info.what);
        CHECK(text.str().find(row) != std::string::npos);
    }
}
