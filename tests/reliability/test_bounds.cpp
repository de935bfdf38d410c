// Hostile input finishes in bounded time and memory, with a diagnostic naming the limit it hit, and never crashes.
// The real binary runs each case under `timeout` (a hang fails the test; no speed is asserted) and its peak
// resident memory is read back from the kernel's accounting of the finished child.
#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

namespace {
using mbl::test::has;

using mbl::test::TempDir;

struct Bounded {
    int code = -1;
    std::string out;
    long peak_rss_mib = 0;  // of the largest child waited for so far
};

// Generous: a sanitizer build runs these too.
constexpr int kHangSeconds = 600;
constexpr long kMemoryBoundMiB = 3072;

Bounded lint(const TempDir& dir, const std::string& args) {
    auto r = mbl::test::run_shell("cd " + dir.path().string() + " && timeout " + std::to_string(kHangSeconds) + " " +
                                  mbl::test::lint_binary() + " " + args);
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    return {r.code, r.out, usage.ru_maxrss / 1024};
}

// Finished on its own (not killed by `timeout`, no crash signal), within the memory bound.
void check_bounded(const Bounded& r) {
    INFO(r.out.substr(0, 2000));
    CHECK(r.code != 124);  // timeout
    CHECK(r.code >= 0);
    CHECK(r.code <= 2);  // 0/1 findings, 2 unusable input; a crash would be 128+signal or -1
    CHECK(r.peak_rss_mib < kMemoryBoundMiB);
}

// Bounded, and refused as unusable input (exit 2) with a diagnostic containing `message` (the limit it hit).
void check_refused(const Bounded& r, const std::string& message) {
    check_bounded(r);
    INFO(r.out.substr(0, 2000));
    CHECK(r.code == 2);
    CHECK(has(r.out, message));
}

std::string repeat(const std::string& s, int n) {
    std::string out;
    out.reserve(s.size() * static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) out += s;
    return out;
}

const char* const kRecipeHeader = "from megatron.bridge.training.config import ConfigContainer\n"
                                  "from megatron.bridge.models import GPTModelProvider\n";

}  // namespace

TEST_CASE("deeply nested YAML stops at a named limit", "[bounds][yaml]") {
    TempDir dir;
    dir.write("flow.yaml", "model: " + repeat("[", 5000) + repeat("]", 5000) + "\n");
    std::string block = "model:\n";
    for (int i = 0; i < 300; ++i) block += std::string(2 * (i + 1), ' ') + "k" + std::to_string(i) + ":\n";
    dir.write("block.yaml", block);

    auto flow = lint(dir, "check flow.yaml");
    check_refused(flow, "error[IN008]: nesting is deeper than the YAML reader's recursion limit");

    auto deep = lint(dir, "check block.yaml");
    check_refused(deep, "error[IN008]: nesting is deeper than the limit of 200 levels");
}

TEST_CASE("YAML aliases: self-reference and exponential expansion stop at named limits", "[bounds][yaml]") {
    TempDir dir;
    dir.write("self.yaml", "model: &m\n  x: *m\n");
    std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
    for (char c = 'b'; c <= 'i'; ++c) {
        const char prev = static_cast<char>(c - 1);
        laughs += std::string(1, c) + ": &" + c + " [" + repeat(std::string("*") + prev + ", ", 9) + "*" + prev + "]\n";
    }
    laughs += "model:\n  recompute_modules: *i\n";  // 10^9 values if expanded
    dir.write("laughs.yaml", laughs);

    auto self = lint(dir, "check self.yaml");
    check_refused(self, "nesting is deeper than the limit of 200 levels");

    auto expanded = lint(dir, "check laughs.yaml");
    check_refused(expanded, "error[IN008]: the document expands to more than the limit of 250000 values");
}

TEST_CASE("deeply nested Python expressions, brackets and calls finish without a crash", "[bounds][python]") {
    TempDir dir;
    const std::string recipe = "\n\ndef a_config() -> ConfigContainer:\n"
                               "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=X))\n"
                               "    cfg.model.recompute_granularity = \"full\"\n    return cfg\n";
    dir.write("parens.py", kRecipeHeader + std::string("X = ") + repeat("(", 5000) + "1" + repeat(")", 5000) + recipe);
    dir.write("lists.py", kRecipeHeader + std::string("X = ") + repeat("[", 20000) + repeat("]", 20000) + recipe);
    dir.write("calls.py", kRecipeHeader + std::string("X = ") + repeat("f(", 3000) + repeat(")", 3000) + recipe);
    std::string blocks =
        std::string(kRecipeHeader) + "\n\ndef a_config() -> ConfigContainer:\n    cfg = ConfigContainer()\n";
    std::string indent = "    ";
    for (int i = 0; i < 400; ++i, indent += "  ") blocks += indent + "if True:\n";
    blocks += indent + "cfg.model.recompute_granularity = \"full\"\n    return cfg\n";
    dir.write("blocks.py", blocks);

    // Past 200 nested brackets CPython's parser refuses the file ("too many nested parentheses"): so does the linter,
    // located, before tree-sitter recurses.
    for (const char* file : {"parens.py", "lists.py", "calls.py"}) {
        INFO(file);
        auto r = lint(dir, std::string("check --show-unknowns ") + file);
        check_bounded(r);
        CHECK(r.code == 2);
        CHECK(has(r.out, "error[IN002]: invalid Python syntax: brackets nested more than 200 deep"));
    }
    // 400 nested blocks are past CPython's own limit of 100 indentation levels: refused as invalid, not crashed on.
    auto blocked = lint(dir, "check blocks.py");
    check_refused(blocked, "error[IN002]");
}

TEST_CASE("import cycles and recursive helpers end, and the limit is named", "[bounds][python]") {
    TempDir dir;
    dir.write("pkg/__init__.py", "");
    dir.write("pkg/a.py", "from pkg.b import *\nfrom pkg.a import *\nimport pkg.a\nX = 1\n");
    dir.write("pkg/b.py", "from pkg.a import *\nfrom pkg.c import *\n");
    dir.write("pkg/c.py",
              "from pkg.b import *\n\ndef grow(n):\n    return grow(n + 1)\n\ndef ping(n):\n    return pong(n)\n\n"
              "def pong(n):\n    return ping(n)\n");
    dir.write("pkg/recipes.py", std::string(kRecipeHeader) +
                                    "from pkg.a import *\n\n\ndef recursive_config() -> ConfigContainer:\n"
                                    "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=grow(0)))\n"
                                    "    cfg.model.recompute_granularity = \"full\"\n"
                                    "    cfg.model.recompute_method = \"uniform\"\n"
                                    "    cfg.model.recompute_num_layers = ping(1)\n    return cfg\n");
    auto r = lint(dir, "check --show-unknowns pkg/recipes.py");
    check_bounded(r);
    CHECK(r.code == 0);
    CHECK(has(
        r.out,
        "model.num_layers is not known statically: calls nested deeper than 40 (a recursive helper?) at pkg.c.grow"));
    CHECK(has(r.out, "model.recompute_num_layers is not known statically: calls nested deeper than 40"));
    CHECK(has(r.out, "1 recipe evaluated; 0 resolve all five recompute fields"));
}

TEST_CASE("a 50 MB file is refused at once, naming the size limit", "[bounds]") {
    TempDir dir;
    {
        std::ofstream yaml(dir / "big.yaml");
        yaml << "model:\n  recompute_granularity: full\ndata:\n  paths:\n";
        const std::string line = "    - /datasets/shard/path/to/a/rather/long/file/name/of/sixty-four/bytes.bin\n";
        for (std::size_t written = 0; written < 50'000'000; written += line.size()) yaml << line;
    }
    auto r = lint(dir, "check big.yaml");
    check_refused(r, "error[IN001]: cannot read big.yaml: the file is");
    CHECK(has(r.out, "above mbridge-lint's limit of 16 MiB"));
}

TEST_CASE("100,000 recipe functions in one file are all checked in bounded memory", "[bounds][python]") {
    TempDir dir;
    {
        std::ofstream py(dir / "many.py");
        py << kRecipeHeader
           << "\n\ndef _base():\n    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4))\n"
              "    cfg.model.recompute_granularity = \"full\"\n    return cfg\n";
        for (int i = 0; i < 100'000; ++i)
            py << "\n\ndef r" << i
               << "_config() -> ConfigContainer:\n    cfg = _base()\n    cfg.model.recompute_num_layers = "
               << (i % 4 + 1) << "\n    return cfg\n";
    }
    // About 2.6 million tokens: past the default per-file limit (IN008), so the limit is raised as a user would.
    auto r = lint(dir, "check many.py --limit python-tokens=5000000 --format json --output report.json");
    check_bounded(r);
    CHECK(r.code == 1);  // RC004: full without a method, in _base
    std::ifstream report(dir / "report.json");
    const std::string json((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
    CHECK(has(json, "\"RC004\""));
    // The one helper line shared by every recipe is reported once, naming how many others it affects.
    CHECK(has(json, "the same line also affects 99999 other recipes"));
}
