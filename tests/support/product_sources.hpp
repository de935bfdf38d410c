// The product's C++ sources as text, for tests that hold the tree to a rule the compiler cannot state (which file
// may call what). Read from the source tree beside the tests (MBRIDGE_LINT_TEST_DATA is tests/).
#pragma once
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

namespace mbl::test {

struct SourceFile {
    std::string path;  // relative to the repository root: "core/effective_model.cpp"
    std::string text;
};

inline std::filesystem::path repository_root() { return std::filesystem::path(MBRIDGE_LINT_TEST_DATA).parent_path(); }

inline std::string read_source(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Every .cpp and .hpp under the folders (relative to the repository root), sorted by path.
inline std::vector<SourceFile> sources_under(std::initializer_list<const char*> folders) {
    namespace fs = std::filesystem;
    const fs::path root = repository_root();
    std::vector<SourceFile> out;
    for (const char* folder : folders)
        for (const auto& e : fs::recursive_directory_iterator(root / folder)) {
            const std::string ext = e.path().extension().string();
            if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
            out.push_back({fs::relative(e.path(), root).generic_string(), read_source(e.path())});
        }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    return out;
}

// The product's layers (docs/development.md, "Layers") and the GPU check.
inline std::vector<SourceFile> product_sources() {
    return sources_under({"core", "pyeval", "parser", "memory", "rules", "config", "engine", "report", "integrations",
                          "cli", "gpu_check"});
}

}  // namespace mbl::test
