// The configuration file: parsing and validation (toml++), discovery (closest wins), and how the pipeline applies it.
#include <catch2/catch.hpp>

#include "../support/temp_dir.hpp"
#include "config/project_config.hpp"
#include "config/rule_selection.hpp"
#include "engine/lint_session.hpp"

using namespace mbl;

namespace {

std::string first_error(const ConfigLoadResult& r) {
    if (r.errors.empty()) return "none";
    const Diagnostic& d = r.errors.front();
    return d.code + " " + std::to_string(d.range.line) + ":" + std::to_string(d.range.column) + " " + d.message;
}

ConfigLoadResult load(const test::TempDir& dir, const std::string& name, const std::string& text) {
    return load_config_file(dir.write(name, text));
}

}  // namespace

TEST_CASE("memory sizes: decimal and binary units, spaces, fractions", "[config]") {
    CHECK(parse_memory_size("80GiB")->bytes == 80ull << 30);
    CHECK(parse_memory_size("141 GB")->bytes == 141'000'000'000ull);
    CHECK(parse_memory_size("1.5TiB")->bytes == 3ull << 39);
    CHECK(parse_memory_size("512mib")->bytes == 512ull << 20);
    CHECK(parse_memory_size("80GiB")->text == "80GiB");
    CHECK(!parse_memory_size("80"));
    CHECK(!parse_memory_size("eighty GiB"));
    CHECK(!parse_memory_size("80 GiBs"));
    CHECK(!parse_memory_size("0GiB"));
    CHECK(!parse_memory_size("-1GiB"));
}

TEST_CASE("a complete .mbridge-lint.toml is read with the location of every value", "[config]") {
    test::TempDir dir;
    std::filesystem::create_directories(dir.path() / "hf");
    auto r = load(dir, ".mbridge-lint.toml",
                  "# project settings\n"
                  "mcore = \"0.20.dev\"\n"
                  "te-version = \"2.5.0\"\n"
                  "select = [\"RC\"]\n"
                  "ignore = [\"RC115\", \"core-attn-recompute-with-fused-attention\"]\n"
                  "root = \".\"\n"
                  "gpu-memory = \"141GB\"\n"
                  "hf-config-paths = [\"hf\", \"/abs/models\"]\n"
                  "\n"
                  "[per-file-ignores]\n"
                  "\"legacy/*.yaml\" = [\"RC1\"]\n"
                  "\n"
                  "[severity]\n"
                  "RC101 = \"error\"\n");
    REQUIRE(first_error(r) == "none");
    const ProjectConfig& c = r.config;
    REQUIRE(c.mcore);
    CHECK(c.mcore->value == "0.20.dev");
    CHECK(c.mcore->source.kind == SettingSource::Kind::File);
    CHECK(c.mcore->source.where.line == 2);
    CHECK(c.mcore->source.describe() == dir / ".mbridge-lint.toml" + ":2:1");
    CHECK(c.te_version->value == "2.5.0");
    CHECK(c.select.value == std::vector<std::string>{"RC"});
    CHECK(c.ignore.value.size() == 2);
    CHECK(c.ignore.source.where.line == 5);
    CHECK(c.root.value == dir.path().string());
    REQUIRE(c.gpu_memory);
    CHECK(c.gpu_memory->value.bytes == 141'000'000'000ull);
    CHECK(c.hf_config_paths.value == std::vector<std::string>{dir / "hf", "/abs/models"});
    REQUIRE(c.per_file_ignores.value.size() == 1);
    CHECK(c.per_file_ignores.value[0].pattern == "legacy/*.yaml");
    CHECK(c.per_file_ignores.value[0].where.line == 11);
    REQUIRE(c.severity.value.size() == 1);
    CHECK(c.severity.value[0].severity == Severity::Error);
}

TEST_CASE("unknown keys are located errors with did-you-mean", "[config]") {
    test::TempDir dir;
    CHECK(first_error(load(dir, ".mbridge-lint.toml", "mcore = \"0.19\"\nignroe = [\"RC101\"]\n")) ==
          "IN004 2:1 unknown configuration key \"ignroe\" (did you mean \"ignore\"?); known keys: mcore, te-version, "
          "select, extend-select, ignore, per-file-ignores, severity, exclude, extend-exclude, root, gpu-memory, "
          "hf-config-paths, extend");
    CHECK(first_error(load(dir, ".mbridge-lint.toml", "gpu_memory = \"80GiB\"\n"))
              .find("(did you mean \"gpu-memory\"?)") != std::string::npos);
}

TEST_CASE("values of the wrong type or unknown values are errors", "[config]") {
    test::TempDir dir;
    const std::string f = ".mbridge-lint.toml";
    CHECK(first_error(load(dir, f, "select = \"RC101\"\n")) ==
          "IN005 1:10 select must be an array of strings, not a string");
    CHECK(first_error(load(dir, f, "ignore = [\"RC101\", 3]\n")) ==
          "IN005 1:20 each entry of ignore must be a string, not an integer");
    CHECK(
        first_error(load(dir, f, "mcore = \"0.21\"\n")).rfind("IN011 1:1 unknown Megatron Core revision \"0.21\"", 0) ==
        0);
    CHECK(first_error(load(dir, f, "ignore = [\"RC10l\"]\n"))
              .find("\"RC10l\" is not a rule or input-error code, code prefix or name "
                    "(did you mean") != std::string::npos);
    // IN warnings and infos are selected like rules; no IN code is re-ranked.
    CHECK(first_error(load(dir, f, "ignore = [\"IN010\", \"unknown-model\"]\n")) == "none");
    CHECK(first_error(load(dir, f, "[severity]\nIN010 = \"info\"\n")).find("cannot be re-ranked") != std::string::npos);
    CHECK(first_error(load(dir, f, "exclude = [\"legacy\", 3]\n")) ==
          "IN005 1:22 each entry of exclude must be a string, not an integer");
    CHECK(first_error(load(dir, f, "[severity]\nRC101 = \"fatal\"\n")) ==
          "IN011 2:9 severity \"fatal\" for RC101 is not one of error, warning, info");
    CHECK(first_error(load(dir, f, "gpu-memory = \"80\"\n"))
              .rfind("IN005 1:14 gpu-memory \"80\" is not a memory size", 0) == 0);
    CHECK(first_error(load(dir, f, "te-version = \"two\"\n")).rfind("IN005", 0) == 0);
    CHECK(first_error(load(dir, f, "root = \"missing-dir\"\n"))
              .rfind("IN001 1:8 root \"missing-dir\" is not a directory", 0) == 0);
    CHECK(first_error(load(dir, f, "per-file-ignores = [\"x\"]\n")).rfind("IN005", 0) == 0);
}

TEST_CASE("TOML syntax errors are located", "[config]") {
    test::TempDir dir;
    auto r = load(dir, ".mbridge-lint.toml", "mcore = \"0.19\"\nselect = [\"RC\"\n");
    REQUIRE(!r.ok());
    CHECK(r.errors[0].code == "IN002");
    CHECK(r.errors[0].range.line >= 2);
    CHECK(r.errors[0].message.rfind("TOML syntax error: ", 0) == 0);
}

TEST_CASE("TOML deeper than the limit is refused before toml++ reads it, wherever the depth comes from", "[config]") {
    test::TempDir dir;
    // Pieces joined by append: GCC 12 warns (-Wrestrict, a false positive) on some `"literal" + string` chains.
    auto join = [](std::initializer_list<std::string> parts) {
        std::string out;
        for (const auto& p : parts) out.append(p);
        return out;
    };
    auto dotted = [](int parts) {
        std::string key = "a";
        for (int i = 1; i < parts; ++i) key.append(".a");
        return key;
    };
    auto refused = [&](const std::string& name, const std::string& text) {
        return first_error(load(dir, name, text)).rfind("IN008 2:", 0) == 0;
    };
    // A dotted key of 50,000 parts overflowed the stack in toml++ (a crash, in the CLI and the editor server).
    CHECK(refused(".mbridge-lint.toml", join({"mcore = \"0.19\"\n", dotted(50000), " = 1\n"})));
    CHECK(refused("pyproject.toml", join({"[tool.x]\n", dotted(200000), " = 1\n"})));
    CHECK(refused("pyproject.toml", join({"\n[", dotted(5000), "]\n"})));
    CHECK(refused("pyproject.toml", join({"\na = ", std::string(300, '['), std::string(300, ']'), "\n"})));
    std::string inline_tables = "\na = ";
    for (int i = 0; i < 200; ++i) inline_tables.append("{b = ");
    CHECK(refused("pyproject.toml", join({inline_tables, "1", std::string(200, '}'), "\n"})));
    // Dotted keys nested in inline tables add up.
    std::string nested = "\na = ";
    for (int i = 0; i < 20; ++i) nested.append(join({"{", dotted(10), " = "}));
    CHECK(refused("pyproject.toml", join({nested, "1", std::string(20, '}'), "\n"})));
    CHECK(load(dir, "pyproject.toml", join({"\n", dotted(129), " = 1\n"})).errors.at(0).message ==
          "a dotted key or nesting is deeper than the limit of 128 levels (--limit toml-depth); the "
          "configuration is not read");

    // Within the limit, and dots that separate no keys: read as usual.
    CHECK(load(dir, "pyproject.toml", join({"[tool.other]\n", dotted(100), " = 1\n"})).ok());
    const std::string dots(5000, '.');
    const std::string strings =
        join({"[tool.other]\n\"", dots, "\" = 1\nb = '", dots, "'\nc = \"\"\"\n", dots, "\n\"\"\"\nd = '''", dots,
              "'''\ne = \"\\\"", dots, "\"\n# ", dots, "\nf = [1.5, 2.5, 1979-05-27T07:32:00.999]\n"});
    const auto read = load(dir, "pyproject.toml", strings);
    INFO(first_error(read));
    CHECK(read.ok());
}

TEST_CASE("pyproject.toml: only [tool.mbridge-lint] is read, other tools' tables are theirs", "[config]") {
    test::TempDir dir;
    auto none = load(dir, "pyproject.toml", "[project]\nname = \"x\"\n[tool.ruff]\nline-length = 100\n");
    CHECK(none.ok());
    CHECK(!none.has_section);
    auto some = load(dir, "pyproject.toml", "[tool.ruff]\nselect = [\"E\"]\n[tool.mbridge-lint]\nmcore = \"main\"\n");
    REQUIRE(some.ok());
    CHECK(some.has_section);
    CHECK(some.config.mcore->value == "main");
    CHECK(some.config.mcore->source.where.line == 4);
    CHECK(first_error(load(dir, "pyproject.toml", "[tool.mbridge-lint]\nmcores = \"main\"\n")).rfind("IN004 2:1", 0) ==
          0);
}

TEST_CASE("discovery: the closest configuration wins, .mbridge-lint.toml before pyproject.toml", "[config]") {
    test::TempDir dir;
    dir.write(".mbridge-lint.toml", "mcore = \"0.18\"\n");
    dir.write("a/pyproject.toml", "[tool.mbridge-lint]\nmcore = \"0.19\"\n");
    dir.write("a/b/pyproject.toml", "[project]\nname = \"no section here\"\n");
    dir.write("c/pyproject.toml", "[tool.mbridge-lint]\nmcore = \"main\"\n");
    dir.write("c/.mbridge-lint.toml", "mcore = \"0.12\"\n");
    ConfigResolver resolver;
    auto mcore_for = [&](const std::string& rel) {
        auto r = resolver.for_path(dir / rel);
        return r->config.mcore ? r->config.mcore->value : std::string("default");
    };
    CHECK(mcore_for("top.yaml") == "0.18");
    CHECK(mcore_for("a/x.yaml") == "0.19");
    CHECK(mcore_for("a/b/deep/x.yaml") == "0.19");  // a/b's pyproject has no section: keep looking upward
    CHECK(mcore_for("c/x.yaml") == "0.12");
    CHECK(resolver.for_path(dir / "a/x.yaml")->config.file == dir / "a/pyproject.toml");
    // --config replaces discovery.
    ConfigResolver fixed(dir / "c/pyproject.toml");
    CHECK(fixed.for_path(dir / "a/x.yaml")->config.mcore->value == "main");
}

TEST_CASE("rule selection: select, ignore, per-file-ignores and severity overrides", "[config]") {
    auto diag = [](const std::string& code, const std::string& name, Severity s, const std::string& file) {
        Diagnostic d;
        d.code = code;
        d.name = name;
        d.severity = s;
        d.range = SourceRange::point(file, 1, 1);
        return d;
    };
    test::TempDir dir;
    ProjectConfig c;
    c.root.value = dir.path().string();
    c.select.value = {"RC0", "RC101", "RC900"};
    c.ignore.value = {"RC004"};
    c.per_file_ignores.value = {PerFileIgnore{"legacy/*.yaml", {"RC1"}, {}}, PerFileIgnore{"*.gen.yaml", {"ALL"}, {}}};
    c.severity.value = {SeverityOverride{"RC1", Severity::Info, {}}, SeverityOverride{"RC101", Severity::Error, {}}};
    auto run = [&](const std::string& rel) {
        std::vector<Diagnostic> v{
            diag("RC004", "a", Severity::Error, dir / rel), diag("RC006", "b", Severity::Error, dir / rel),
            diag("RC101", "c", Severity::Warning, dir / rel), diag("RC104", "d", Severity::Warning, dir / rel),
            diag("IN004", "unknown-key", Severity::Error, dir / rel)};
        apply_rule_selection(v, c, dir / rel);
        std::string out;
        for (const auto& d : v) out += d.code + "=" + severity_name(d.severity) + " ";
        return out;
    };
    CHECK(run("x.yaml") == "RC006=error RC101=error IN004=error ");  // RC101: the exact code beats the RC1 prefix
    CHECK(run("legacy/x.yaml") == "RC006=error IN004=error ");
    CHECK(run("deep/dir/a.gen.yaml") == "IN004=error ");  // a pattern without '/' matches the file name anywhere
    CHECK(relative_to(dir / "legacy/x.yaml", dir.path().string()) == "legacy/x.yaml");
    CHECK(!relative_to("/elsewhere/x.yaml", dir.path().string()));
}

TEST_CASE("the pipeline takes mcore from the configuration, and --mcore wins over it", "[config]") {
    test::TempDir dir;
    dir.write(".mbridge-lint.toml", "mcore = \"main\"\n");
    // "mhc" is a recompute_modules label only on main.
    const std::string path = dir.write("c.yaml", "model:\n  transformer_impl: local\n  enable_mhc_connections: true\n"
                                                 "  recompute_granularity: selective\n  recompute_modules: [mhc]\n");
    auto codes = [&](const std::string& mcore) {
        SourceManager sources;
        LintSession session(SessionOptions{.mcore = mcore}, sources);
        std::string out;
        for (const auto& d : session.lint(path).diagnostics) out += d.code + " ";
        return out;
    };
    CHECK(codes("").find("RC008") == std::string::npos);
    CHECK(codes("0.20.dev").find("RC008") != std::string::npos);
}

TEST_CASE("a broken configuration makes its files unusable, reported at the configuration", "[config]") {
    test::TempDir dir;
    const std::string config = dir.write(".mbridge-lint.toml", "slect = [\"RC\"]\n");
    const std::string path = dir.write("c.yaml", "model:\n  recompute_granularity: full\n");
    SourceManager sources;
    LintSession session(SessionOptions{}, sources);
    FileResult r = session.lint(path);
    CHECK(r.config_unusable);
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics[0].code == "IN004");
    CHECK(r.diagnostics[0].range.file == config);
    // The configuration's text is at hand for the excerpt under the message.
    CHECK(sources.text(config) != nullptr);
}

TEST_CASE("the gpu-memory budget reaches the rules, a command-line budget wins", "[config]") {
    test::TempDir dir;
    dir.write(".mbridge-lint.toml", "gpu-memory = \"80GiB\"\n");
    const std::string path = dir.write("c.yaml", "model:\n  recompute_granularity: selective\n");
    SourceManager sources;
    LintSession from_file(SessionOptions{}, sources);
    CHECK(from_file.lint(path).rule_options.gpu_memory_bytes == std::optional<std::uint64_t>(80ull << 30));
    LintSession from_flag(SessionOptions{.gpu_memory_bytes = 141'000'000'000.0}, sources);
    CHECK(from_flag.lint(path).rule_options.gpu_memory_bytes == std::optional<std::uint64_t>(141'000'000'000ull));
}

TEST_CASE("a cancelled lint stops before linting and says so", "[config]") {
    test::TempDir dir;
    const std::string path = dir.write("c.yaml", "model:\n  recompute_granularity: full\n");
    SourceManager sources;
    LintSession session(SessionOptions{}, sources);
    session.set_cancellation([] { return true; });
    FileResult r = session.lint(path);
    CHECK(r.cancelled);
    CHECK(r.diagnostics.empty());
    session.set_cancellation([] { return false; });
    CHECK(!session.lint(path).diagnostics.empty());
}
