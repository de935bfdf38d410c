#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <string>

#include "../support/fixture_options.hpp"
#include "../support/temp_dir.hpp"
#include "core/input_errors.hpp"
#include "core/schema.hpp"
#include "engine/lint_session.hpp"
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

namespace {

// The text of a doc's section, from its heading to the next one.
std::string section(std::string_view doc, std::string_view heading) {
    const auto at = doc.find(heading);
    if (at == std::string_view::npos) return {};
    const auto end = doc.find("\n## ", at + heading.size());
    return std::string(doc.substr(at, end == std::string_view::npos ? end : end - at));
}

// The section's first ```yaml block; empty when there is none.
std::string yaml_block(const std::string& text) {
    const auto open = text.find("```yaml\n");
    if (open == std::string::npos) return {};
    const auto start = open + 8;
    return text.substr(start, text.find("```", start) - start);
}

// The codes `mbridge-lint check --mcore <revision>` reports for `yaml`, with the options the Example section shows on
// its command line (`--te-version 2.4`, `--gpu-memory 80GiB`, `--data-parallel-size 8`).
std::set<std::string> codes_for(const std::string& revision, const std::string& example_section,
                                const std::string& yaml) {
    mbl::SessionOptions options = test_support::options_from_command_line(example_section).session;
    options.mcore = revision;
    mbl::test::TempDir dir;
    mbl::SourceManager sources;
    mbl::LintSession session(options, sources);
    std::set<std::string> codes;
    for (const auto& d : session.lint(dir.write("example.yaml", yaml)).diagnostics) codes.insert(d.code);
    return codes;
}

}  // namespace

TEST_CASE("each rule's Example fires the rule and its Use instead does not", "[rules][docs]") {
    for (const auto& r : mbl::all_rules()) {
        const auto& i = r->info();
        INFO(std::string(i.code) << " (rules/" << i.code << "_*.cpp)");
        const std::string example_section = section(i.doc, "## Example\n");
        const std::string example = yaml_block(example_section);
        const std::string instead = yaml_block(section(i.doc, "## Use instead\n"));
        REQUIRE_FALSE(example.empty());
        REQUIRE_FALSE(instead.empty());
        // At a revision the rule is about (error rules apply where Megatron Core rejects, some advice only where a
        // revision crashes): the default one first, then each in turn.
        const auto& schema = mbl::Schema::instance();
        std::vector<std::string> revisions{schema.default_revision()};
        for (const auto& name : schema.revision_names()) revisions.push_back(name);
        bool fires = false, right = false;
        for (const auto& revision : revisions) {
            if (!codes_for(revision, example_section, example).count(std::string(i.code))) continue;
            fires = true;
            right = !codes_for(revision, example_section, instead).count(std::string(i.code));
            if (right) break;
        }
        INFO(example_section);
        CHECK(fires);  // the Example fires the rule at some revision
        CHECK(right);  // and at one of those, the Use instead does not
    }
}

TEST_CASE("every input error code has the rules' documentation, and explain finds it", "[rules][docs]") {
    std::set<std::string_view> codes;
    const auto& docs = mbl::input_error_docs();
    REQUIRE(docs.size() == static_cast<std::size_t>(mbl::InputError::NotResolved) + 1);
    for (std::size_t k = 0; k < docs.size(); ++k) {
        const auto kind = static_cast<mbl::InputError>(k);
        const auto& i = docs[k];
        INFO(std::string(i.code));
        CHECK(i.code == mbl::input_error_code(kind));
        CHECK(i.name == mbl::input_error_name(kind));
        CHECK(codes.insert(i.code).second);
        CHECK(!i.summary.empty());
        for (const char* section : {"## What it does\n", "## Why is this bad?\n", "## Example\n", "## Use instead\n"})
            CHECK(i.doc.find(section) != std::string_view::npos);
        CHECK(mbl::find_doc(i.code) == &i);
        CHECK(mbl::find_doc(i.name) == &i);
        CHECK(mbl::find_rule(i.code) == nullptr);
    }
    CHECK(mbl::find_doc("in004") == mbl::find_doc("IN004"));
    CHECK(mbl::find_doc("RC004") == &mbl::find_rule("RC004")->info());
    CHECK(mbl::find_doc("IN999") == nullptr);
}
