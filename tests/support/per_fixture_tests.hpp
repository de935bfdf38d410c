// One Catch test case per fixture (a file or a folder), named "<kind> <file name>" and tagged [per-fixture]: each
// fixture passes or fails on its own, `test_x "<kind> <name>"` runs one, and tests/CMakeLists.txt gives each its own
// ctest entry from the same folder listing (mbridge_lint_fixture_tests).
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace test_support {

// The entries of `folder` whose extension is `extension` ("" = the subfolders), sorted. An unreadable folder gives
// none; the tests that count the fixtures then fail.
inline std::vector<std::filesystem::path> fixture_paths(const std::filesystem::path& folder,
                                                        const std::string& extension) {
    std::vector<std::filesystem::path> paths;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        const bool wanted =
            extension.empty() ? it->is_directory(ec) : it->is_regular_file(ec) && it->path().extension() == extension;
        if (wanted) paths.push_back(it->path());
    }
    std::sort(paths.begin(), paths.end());
    return paths;
}

using FixtureCheck = void (*)(const std::filesystem::path&);

class FixtureTestInvoker final : public Catch::ITestInvoker {
public:
    FixtureTestInvoker(std::filesystem::path path, FixtureCheck check) : path_(std::move(path)), check_(check) {}
    void invoke() const override { check_(path_); }

private:
    std::filesystem::path path_;
    FixtureCheck check_;
};

// Registers `check(path)` as a test case for each path; call it from a namespace-scope initializer, before Catch runs.
inline std::size_t register_fixture_tests(const std::string& kind, const std::string& tags,
                                          const std::vector<std::filesystem::path>& paths, FixtureCheck check) {
    const std::string all_tags = tags + "[per-fixture]";
    for (const auto& path : paths) {
        const std::string name = kind + " " + path.filename().string();
        // Catch owns the invoker; AutoReg records start-up errors (a duplicate name) for Catch to report.
        Catch::AutoReg registration(new FixtureTestInvoker(path, check), CATCH_INTERNAL_LINEINFO, Catch::StringRef(),
                                    Catch::NameAndTags(name, all_tags));
    }
    return paths.size();
}

}  // namespace test_support
