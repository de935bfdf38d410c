// Fuzz target: the Python recipe front end and its evaluator over a small source tree. The input is a recipe
// module, optionally followed by helper modules, each starting at a line `#=== ` (helpers become pkg/m0.py ...
// pkg/m3.py, importable as `pkg.m0` or `.m0`). The recipe module is linted as `check pkg/recipes.py` would,
// at one revision, with the override hook and the unknown-value report on.
#include <fmt/format.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/lint_session.hpp"

namespace fs = std::filesystem;

namespace {

constexpr int kMaxHelpers = 4;

// The source tree, removed when the process ends.
struct Tree {
    fs::path root = fs::temp_directory_path() / fmt::format("mbridge-lint-fuzz-python-{}", ::getpid());
    Tree() {
        fs::create_directories(root / "pkg");
        std::ofstream(root / "pkg" / "__init__.py") << "";
    }
    ~Tree() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
};

const fs::path& tree() {
    static const Tree t;
    return t.root;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (parts.size() <= kMaxHelpers) {
        const std::size_t marker = text.find("\n#=== ", start);
        const std::string_view part =
            std::string_view(text).substr(start, marker == std::string::npos ? std::string::npos : marker - start);
        parts.emplace_back(part);
        if (marker == std::string::npos) break;
        start = text.find('\n', marker + 1);
        start = start == std::string::npos ? text.size() : start + 1;
    }
    const fs::path& root = tree();
    for (int i = 0; i < kMaxHelpers; ++i) {
        const fs::path helper = root / "pkg" / fmt::format("m{}.py", i);
        if (static_cast<std::size_t>(i + 1) < parts.size()) std::ofstream(helper, std::ios::binary) << parts[i + 1];
        else fs::remove(helper);
    }
    mbl::SessionOptions options;
    options.mcore = "0.20.dev";
    options.root = root.string();
    options.jobs = 1;
    options.show_unknowns = true;
    mbl::SourceManager sources;
    const std::string recipe = (root / "pkg" / "recipes.py").string();
    sources.add(recipe, parts[0]);  // the document being edited: never written to disk
    mbl::LintSession session(options, sources);
    (void)session.lint(recipe);
    (void)session.dependencies(recipe);
    return 0;
}
