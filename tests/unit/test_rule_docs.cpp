#include <catch2/catch.hpp>
#include <regex>
#include <set>

#include "rules/registry.hpp"

TEST_CASE("every rule has a stable code, a kebab-case name and complete documentation", "[rules][docs]") {
    std::set<std::string_view> codes, names;
    static const std::regex code_re("RC[0-9]{3}");
    static const std::regex name_re("[a-z0-9]+(-[a-z0-9]+)*");
    REQUIRE(mbl::all_rules().size() >= 44);
    for (const auto& r : mbl::all_rules()) {
        const auto& i = r->info();
        INFO(std::string(i.code));
        CHECK(std::regex_match(std::string(i.code), code_re));
        CHECK(std::regex_match(std::string(i.name), name_re));
        CHECK(codes.insert(i.code).second);
        CHECK(names.insert(i.name).second);
        CHECK(!i.summary.empty());
        for (const char* section : {"## What it does\n", "## Why is this bad?\n", "## Example\n", "## Use instead\n"})
            CHECK(i.doc.find(section) != std::string_view::npos);
        // Error rules are Megatron Core rejections (RC0xx); advice is RC1xx.
        CHECK((i.severity == mbl::Severity::Error) == (i.code[2] == '0'));
        CHECK(mbl::find_rule(i.code) == r.get());
        CHECK(mbl::find_rule(i.name) == r.get());
    }
    CHECK(mbl::find_rule("rc004") == mbl::find_rule("RC004"));
    CHECK(mbl::find_rule("RC999") == nullptr);
}
