#include "pyeval/ast_cache.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <type_traits>

#include "tree_format.hpp"  // generated: PYEVAL_TREE_FORMAT, a hash of what builds a tree

namespace mbl::py {
namespace fs = std::filesystem;

namespace {

static_assert(std::is_trivially_copyable_v<Node>, "trees are written and read back as bytes");

constexpr char kMagic[8] = {'M', 'B', 'L', 'A', 'S', 'T', '1', '\0'};
// Small modules parse faster than a file is opened.
constexpr std::size_t kMinBytes = 1024;

struct Header {
    char magic[8];
    std::uint64_t text_bytes;
    std::uint64_t nodes;
    std::uint64_t kids;
    std::uint32_t root;
    std::uint32_t reserved;
};

std::mutex dir_mutex;
std::string dir_setting;  // "" while the cache is off

// FNV-1a: the entry's name only; its content is compared in full.
std::uint64_t fnv1a(const std::string& s) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

fs::path entry_path(const std::string& dir, const std::string& parsed) {
    return fs::path(dir) / fmt::format("{:016x}-{}.tree", fnv1a(parsed), parsed.size());
}

// Every offset and index of a tree read back lies inside it: a damaged entry must not make the evaluator read out of
// bounds.
bool sound(const Ast& ast, std::size_t text_bytes) {
    if (ast.root >= ast.nodes.size()) return false;
    for (const Node& n : ast.nodes) {
        if (n.start > n.end || n.end > text_bytes) return false;
        if (static_cast<std::uint64_t>(n.first_kid) + n.kid_count > ast.kids.size()) return false;
    }
    for (NodeId k : ast.kids)
        if (k >= ast.nodes.size()) return false;
    return true;
}

}  // namespace

std::string ast_cache_dir() {
    std::lock_guard<std::mutex> lock(dir_mutex);
    return dir_setting;
}

void set_ast_cache_dir(const std::string& dir) {
    std::lock_guard<std::mutex> lock(dir_mutex);
    dir_setting = dir.empty() ? std::string() : (fs::path(dir) / fmt::format("trees-{}", PYEVAL_TREE_FORMAT)).string();
}

std::optional<Ast> load_cached_ast(const std::string& parsed) {
    const std::string dir = ast_cache_dir();
    if (dir.empty() || parsed.size() < kMinBytes) return std::nullopt;
    std::ifstream in(entry_path(dir, parsed), std::ios::binary);
    if (!in) return std::nullopt;
    Header h{};
    if (!in.read(reinterpret_cast<char*>(&h), sizeof h) || std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 ||
        h.text_bytes != parsed.size() || h.nodes > parsed.size() + 16 || h.kids > parsed.size() + 16)
        return std::nullopt;
    std::string text(h.text_bytes, '\0');
    if (!in.read(text.data(), static_cast<std::streamsize>(text.size())) || text != parsed) return std::nullopt;
    Ast ast;
    ast.nodes.resize(h.nodes);
    ast.kids.resize(h.kids);
    ast.root = h.root;
    if (!in.read(reinterpret_cast<char*>(ast.nodes.data()), static_cast<std::streamsize>(h.nodes * sizeof(Node))) ||
        !in.read(reinterpret_cast<char*>(ast.kids.data()), static_cast<std::streamsize>(h.kids * sizeof(NodeId))) ||
        in.peek() != std::ifstream::traits_type::eof() || !sound(ast, parsed.size()))
        return std::nullopt;
    return ast;
}

void store_cached_ast(const std::string& parsed, const Ast& ast) {
    const std::string dir = ast_cache_dir();
    if (dir.empty() || parsed.size() < kMinBytes) return;
    std::error_code ec;
    fs::create_directories(dir, ec);
    const fs::path final_path = entry_path(dir, parsed);
    // Written aside and renamed: a reader (another run, another thread) sees the whole entry or none.
    static std::atomic<unsigned> serial{0};
    const fs::path temporary = fs::path(dir) / fmt::format(".{}.{}.{}", final_path.filename().string(), getpid(),
                                                           serial.fetch_add(1, std::memory_order_relaxed));
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.text_bytes = parsed.size();
    h.nodes = ast.nodes.size();
    h.kids = ast.kids.size();
    h.root = ast.root;
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(&h), sizeof h);
        out.write(parsed.data(), static_cast<std::streamsize>(parsed.size()));
        out.write(reinterpret_cast<const char*>(ast.nodes.data()),
                  static_cast<std::streamsize>(ast.nodes.size() * sizeof(Node)));
        out.write(reinterpret_cast<const char*>(ast.kids.data()),
                  static_cast<std::streamsize>(ast.kids.size() * sizeof(NodeId)));
        out.close();
        if (!out) {
            fs::remove(temporary, ec);
            return;
        }
    }
    fs::rename(temporary, final_path, ec);
    if (ec) fs::remove(temporary, ec);
}

}  // namespace mbl::py
