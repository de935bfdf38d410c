// The same input gives byte-identical output whatever the thread count and the order the files are given in.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "../support/run.hpp"

namespace {

const std::string kData = MBRIDGE_LINT_TEST_DATA;
const std::string kTree = kData + "/fixtures/python/bridge_tree";
const std::string kRecipes = kTree + "/src/megatron/bridge";

mbl::test::RunResult lint(const std::string& args) {
    return mbl::test::run_shell("cd " + kTree + " && " + mbl::test::lint_binary() + " check --color never " + args);
}

}  // namespace

TEST_CASE("output does not depend on the thread count", "[determinism]") {
    for (const char* format : {"text", "json", "sarif"}) {
        INFO(format);
        const std::string args = std::string("--mcore 0.20.dev --show-unknowns --format ") + format + " " + kRecipes;
        const auto one = lint(args + " -j 1");
        REQUIRE(one.out.size() > 1000);
        for (int jobs : {2, 3, 8, 32}) {
            INFO("jobs " << jobs);
            const auto many = lint(args + " -j " + std::to_string(jobs));
            CHECK(many.code == one.code);
            CHECK(many.out == one.out);
        }
    }
}

TEST_CASE("output does not depend on the order of the files and folders given", "[determinism]") {
    const std::vector<std::string> inputs = {
        kRecipes + "/perf_recipes",
        kRecipes + "/recipes/llama/llama3.py",
        kRecipes + "/recipes/qwen",
        kData + "/fixtures/yaml/rc004_full_recompute_without_method.yaml",
        kData + "/fixtures/yaml/rc101_core_attn_recompute_with_fused_attention.yaml",
        kRecipes + "/recipes/deepseek/deepseek_v3.py"};
    auto joined = [&](const std::vector<std::size_t>& order) {
        std::string s;
        for (std::size_t i : order) s += " " + inputs[i];
        return s;
    };
    for (const char* format : {"text", "json"}) {
        INFO(format);
        const std::string flags = std::string("--mcore 0.20.dev --format ") + format;
        const auto forward = lint(flags + joined({0, 1, 2, 3, 4, 5}));
        REQUIRE(forward.out.size() > 1000);
        const auto backward = lint(flags + joined({5, 4, 3, 2, 1, 0}));
        const auto shuffled = lint(flags + joined({3, 0, 5, 1, 4, 2}));
        CHECK(backward.out == forward.out);
        CHECK(shuffled.out == forward.out);
        CHECK(backward.code == forward.code);
    }
}
