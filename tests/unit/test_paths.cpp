// core/paths: resolved_path answers as std::filesystem::weakly_canonical(absolute(path)) does, with folders resolved
// once; and SourceManager keeps a text shared with its owner without copying it.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/paths.hpp"
#include "core/source_manager.hpp"

namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("mbridge-lint-paths-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}
fs::path expected(const fs::path& p) {
    std::error_code ec;
    return fs::weakly_canonical(fs::absolute(p, ec), ec);
}
fs::path resolved(const fs::path& p) {
    std::error_code ec;
    fs::path out = mbl::resolved_path(p, ec);
    CHECK_FALSE(ec);
    return out;
}
}  // namespace

TEST_CASE("resolved_path is weakly_canonical of the absolute path", "[paths]") {
    const fs::path d = fresh_dir("same");
    fs::create_directories(d / "real" / "pkg");
    std::ofstream(d / "real" / "pkg" / "m.py") << "x = 1\n";
    fs::create_directory_symlink(d / "real", d / "linked");
    fs::create_symlink(d / "real" / "pkg" / "m.py", d / "real" / "alias.py");
    for (const fs::path& p : {d / "real" / "pkg" / "m.py", d / "linked" / "pkg" / "m.py", d / "real" / "alias.py",
                              d / "linked" / "pkg" / "missing.py", d / "linked" / "nowhere" / "missing.py",
                              d / "linked" / "pkg" / ".." / "alias.py", d / "real" / "pkg"}) {
        INFO(p.string());
        CHECK(resolved(p) == expected(p));
        CHECK(resolved(p) == expected(p));  // answered again from the folder already resolved
    }
    CHECK(resolved(d / "linked" / "pkg" / "m.py") == d / "real" / "pkg" / "m.py");
    CHECK(mbl::normalized_path((d / "linked" / "pkg" / "m.py").string()) == (d / "real" / "pkg" / "m.py").string());
    fs::remove_all(d);
}

TEST_CASE("forget_resolved_paths sees a folder that became a link", "[paths]") {
    const fs::path d = fresh_dir("forget");
    fs::create_directories(d / "a");
    fs::create_directories(d / "b");
    fs::create_directories(d / "via");
    CHECK(resolved(d / "via" / "f.py") == d / "via" / "f.py");
    fs::remove_all(d / "via");
    fs::create_directory_symlink(d / "b", d / "via");
    mbl::forget_resolved_paths();
    CHECK(resolved(d / "via" / "f.py") == d / "b" / "f.py");
    fs::remove_all(d);
}

TEST_CASE("SourceManager keeps a shared text without copying it", "[paths]") {
    mbl::SourceManager sources;
    auto owner = std::make_shared<const std::string>("line one\nline two\n");
    sources.add_new("m.py", owner);
    CHECK(sources.text("m.py") == owner.get());
    CHECK(sources.line("m.py", 2) == std::string_view("line two"));
    sources.add_new("m.py", std::string_view("other"));  // a text already registered stays
    CHECK(*sources.text("m.py") == "line one\nline two\n");
    std::weak_ptr<const std::string> watch = owner;
    owner.reset();
    CHECK_FALSE(watch.expired());  // the manager keeps it alive
    CHECK(*sources.text("m.py") == "line one\nline two\n");
}

TEST_CASE("relative_to and display_path answer as std::filesystem's lexically_relative does", "[paths]") {
    const fs::path d = fresh_dir("relative");
    fs::create_directories(d / "real" / "pkg");
    std::ofstream(d / "real" / "pkg" / "m.py") << "x = 1\n";
    fs::create_directory_symlink(d / "real", d / "linked");
    auto old_relative = [](const fs::path& p, const fs::path& base) -> std::optional<std::string> {
        const fs::path rel = expected(p).lexically_normal().lexically_relative(expected(base).lexically_normal());
        if (rel.empty() || *rel.begin() == "..") return std::nullopt;
        return rel.generic_string();
    };
    const std::vector<fs::path> paths = {d / "real" / "pkg" / "m.py", d / "linked" / "pkg" / "m.py",
                                         d / "real" / "pkg",          d / "real" / "pkg" / ".." / "pkg" / "m.py",
                                         d / "real" / "absent.py",    d / "elsewhere.py"};
    const std::vector<fs::path> bases = {d / "real",         d / "linked", d / "real" / "pkg", d / "real" / "pkg" / "",
                                         d / "linked" / ".", fs::path("/")};
    for (const auto& p : paths)
        for (const auto& base : bases) {
            INFO(p.string() << " below " << base.string());
            CHECK(mbl::relative_to(p.string(), base.string()) == old_relative(p, base));
        }
    // display_path: relative to the working directory inside it, else absolute.
    const fs::path cwd = fs::current_path();
    for (const auto& p : paths) {
        INFO(p.string());
        CHECK(mbl::display_path(p.string()) == expected(p).string());  // the temp folder is not below the build
    }
    CHECK(mbl::display_path("some/file.py") == "some/file.py");
    CHECK(mbl::display_path((cwd / "some" / "file.py").string()) == "some/file.py");
    CHECK(mbl::display_path(cwd.string()) == ".");
    CHECK(mbl::display_path("./some/../file.py") == "file.py");
    fs::remove_all(d);
}
