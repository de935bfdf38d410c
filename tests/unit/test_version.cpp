#include <catch2/catch.hpp>

#include "core/version.hpp"

using mbl::Version;

TEST_CASE("Transformer Engine versions compare like PEP 440", "[version]") {
    auto v = [](const char* s) { return *Version::parse(s); };
    CHECK(v("2.5.0") < v("2.6.0dev0"));
    CHECK(v("2.6.0dev0") < v("2.6.0rc1"));
    CHECK(v("2.6.0rc1") < v("2.6.0"));
    CHECK(v("2.6") >= v("2.6.0dev0"));
    CHECK(v("2.10.0+cu128") >= v("2.6.0"));
    CHECK(v("1.13") < v("2.0"));
}

TEST_CASE("malformed versions are refused", "[version]") {
    CHECK_FALSE(Version::parse(""));
    CHECK_FALSE(Version::parse("latest"));
    CHECK_FALSE(Version::parse("2.x"));
    CHECK_FALSE(Version::parse("2.6.0foo"));
    // Numbers too long for any real version are refused rather than overflowing (found by fuzz_toml, UBSan).
    CHECK_FALSE(Version::parse("2.6.0dev88888888888888888888"));
    CHECK_FALSE(Version::parse("99999999999.0"));
    CHECK(Version::parse("2.6.0rc1000000"));
}
