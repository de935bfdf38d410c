#include <catch2/catch.hpp>

#include "core/input_errors.hpp"
#include "core/utf8.hpp"

using mbl::first_invalid_utf8;

TEST_CASE("valid UTF-8 passes, including 2-, 3- and 4-byte sequences", "[utf8]") {
    CHECK_FALSE(first_invalid_utf8("").has_value());
    CHECK_FALSE(first_invalid_utf8("model:\n  name: caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\n").has_value());
    CHECK_FALSE(first_invalid_utf8("\xF4\x8F\xBF\xBF").has_value());  // U+10FFFF, the last code point
}

TEST_CASE("the first malformed byte is found", "[utf8]") {
    CHECK(first_invalid_utf8("mod\xFF\xFF:") == 3u);
    CHECK(first_invalid_utf8("ab\xC3") == 2u);            // truncated sequence at the end
    CHECK(first_invalid_utf8("a\xC3(b") == 1u);           // bad continuation byte
    CHECK(first_invalid_utf8("\xC0\xAF") == 0u);          // overlong "/"
    CHECK(first_invalid_utf8("x\xE0\x80\xAF") == 1u);     // overlong 3-byte form
    CHECK(first_invalid_utf8("\xED\xA0\x80") == 0u);      // UTF-16 surrogate
    CHECK(first_invalid_utf8("\xF4\x90\x80\x80") == 0u);  // above U+10FFFF
    CHECK(first_invalid_utf8("ok\x92") == 2u);            // lone continuation byte
}

TEST_CASE("an encoding error points at the line and column of the bad byte", "[utf8]") {
    auto d = mbl::encoding_error("run.yaml", "model:\n  x: caf\xE9\n");
    REQUIRE(d.has_value());
    CHECK(d->code == "IN002");
    CHECK(d->range.line == 2);
    CHECK(d->range.column == 9);
    CHECK(d->message.find("0xE9") != std::string::npos);
    CHECK_FALSE(mbl::encoding_error("run.yaml", "model: {}\n").has_value());
}

TEST_CASE("an invalid byte is found wherever it lies among ASCII runs read eight bytes at a time", "[utf8]") {
    for (std::size_t at = 0; at < 20; ++at) {
        const std::string text = std::string(at, 'a') + "\xFF" + std::string(11, 'b');
        CHECK(first_invalid_utf8(text) == std::optional<std::size_t>(at));
        const std::string valid = std::string(at, 'a') + "\xC3\xA9" + std::string(11, 'b');
        CHECK_FALSE(first_invalid_utf8(valid).has_value());
        CHECK(first_invalid_utf8(std::string(at, 'a') + "\xC3") == std::optional<std::size_t>(at));  // cut short
    }
}
