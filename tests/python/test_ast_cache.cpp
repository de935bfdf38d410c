#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "pyeval/ast.hpp"
#include "pyeval/ast_cache.hpp"

namespace fs = std::filesystem;

namespace {

// A module large enough to be kept (small ones parse faster than a file opens).
std::string module_text() {
    std::string text = "import os\n";
    for (int i = 0; i < 60; ++i)
        text += "def helper_" + std::to_string(i) + "(x):\n    return x + " + std::to_string(i) + "\n";
    return text;
}

fs::path only_entry(const fs::path& dir) {
    fs::path found;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.path().extension() == ".tree") {
            CHECK(found.empty());
            found = e.path();
        }
    return found;
}

std::string bytes_of(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

bool same_tree(const mbl::py::Ast& a, const mbl::py::Ast& b) {
    if (a.root != b.root || a.kids != b.kids || a.nodes.size() != b.nodes.size()) return false;
    for (std::size_t i = 0; i < a.nodes.size(); ++i)
        if (a.nodes[i].kind != b.nodes[i].kind || a.nodes[i].start != b.nodes[i].start ||
            a.nodes[i].end != b.nodes[i].end || a.nodes[i].first_kid != b.nodes[i].first_kid ||
            a.nodes[i].kid_count != b.nodes[i].kid_count)
            return false;
    return true;
}

struct CacheDir {
    fs::path dir = fs::temp_directory_path() / ("mbl-tree-cache-" + std::to_string(::getpid()));
    CacheDir() {
        fs::remove_all(dir);
        mbl::py::set_ast_cache_dir(dir.string());
    }
    ~CacheDir() {
        mbl::py::set_ast_cache_dir(std::string());
        fs::remove_all(dir);
    }
};

}  // namespace

TEST_CASE("a tree kept on disk is read back for the same text, and only for it", "[python][cache]") {
    CacheDir cache;
    const std::string text = module_text();
    const auto fresh = mbl::py::parse_python("m.py", text, true);
    REQUIRE_FALSE(fresh.syntax_error);
    const fs::path entry = only_entry(cache.dir);
    REQUIRE(!entry.empty());

    // Read back: the same tree.
    CHECK(same_tree(mbl::py::parse_python("m.py", text, true).ast, fresh.ast));

    // What is read back is the entry (a planted change shows), for the text the entry holds.
    std::string planted = bytes_of(entry);
    const std::size_t nodes_at = planted.size() - fresh.ast.kids.size() * sizeof(mbl::py::NodeId) -
                                 fresh.ast.nodes.size() * sizeof(mbl::py::Node);
    mbl::py::Node first{};
    std::memcpy(&first, planted.data() + nodes_at, sizeof first);
    first.kind = mbl::py::Kind::Other;
    std::memcpy(planted.data() + nodes_at, &first, sizeof first);
    write(entry, planted);
    CHECK(mbl::py::parse_python("m.py", text, true).ast.nodes[0].kind == mbl::py::Kind::Other);

    // A kid index past the tree, or an entry for another text under the same name: parsed again, not used.
    std::string broken = bytes_of(entry);
    const mbl::py::NodeId past = 0x7fffffff;
    std::memcpy(broken.data() + broken.size() - sizeof past, &past, sizeof past);
    write(entry, broken);
    CHECK(same_tree(mbl::py::parse_python("m.py", text, true).ast, fresh.ast));
    std::string other = bytes_of(entry);
    other[other.find("import os")] = 'I';
    write(entry, other);
    CHECK(same_tree(mbl::py::parse_python("m.py", text, true).ast, fresh.ast));
    write(entry, bytes_of(entry).substr(0, 40));  // cut short
    CHECK(same_tree(mbl::py::parse_python("m.py", text, true).ast, fresh.ast));
}

TEST_CASE("trees with a syntax error, editor buffers and small modules are not kept", "[python][cache]") {
    CacheDir cache;
    std::string broken = module_text() + "def (:\n";
    CHECK(mbl::py::parse_python("b.py", broken, true).syntax_error);
    CHECK(mbl::py::parse_python("c.py", module_text(), false).ast.nodes.size() > 1);
    CHECK(mbl::py::parse_python("d.py", "x = 1\n", true).ast.nodes.size() > 1);
    CHECK((!fs::exists(cache.dir) || only_entry(cache.dir).empty()));
}
