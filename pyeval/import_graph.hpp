#pragma once
// Which module imports which, inside one source root, from the import statements alone: nothing is parsed into a
// syntax tree and nothing is evaluated. It answers "what is this recipe file built from" (dependencies) and "which
// files are built from this helper" (dependents) for --changed-only, a helper named on the command line, and the
// editor server. Each file is scanned once per content; the editor server calls revalidate() before each use.
//
// An edge `a -> b` means that a's import statements name module b: `import b`, `from b import x`, or
// `from p import b` where b is the submodule p.b (and then p too, whose __init__ runs and may define b). Parent
// packages are not edges (`import p.q.r` depends on p.q.r, not on p/__init__.py): counting them would make every
// module depend on the package hubs that re-export everything. Imports inside functions count; imports built at
// run time (importlib) do not.
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pyeval/module_index.hpp"

namespace mbl::py {

// One import statement as written.
struct ImportStatement {
    bool from = false;               // `from M import names` (else `import M`)
    int level = 0;                   // leading dots of a relative `from` import
    std::string module;              // dotted, without the dots; empty in `from . import x`
    std::vector<std::string> names;  // what a `from` import takes ("*" for a star import)
    int line = 0;                    // 1-based line of the `import` or `from` keyword
};

// Every import statement of a module's text, at any depth (inside functions, classes, `if`, `try`), found by a
// lexical scan that skips strings (f-strings included), comments, brackets and line continuations the way Python's
// tokenizer does. Text that is not valid Python gives what can be recognized; it never throws.
std::vector<ImportStatement> scan_imports(std::string_view text);

class ImportGraph {
public:
    // The text of a file when an editor holds a newer one than the disk (see ModuleIndex::Buffers).
    using Buffers = std::function<const std::string*(const std::string& path)>;

    explicit ImportGraph(const std::string& root, Buffers buffers = {});
    const ModuleLayout& layout() const { return layout_; }

    // The files `file` imports (absolute, normalized paths of modules inside the root), sorted.
    std::vector<std::string> imports(const std::string& file);
    // Every file `file` imports, at any depth, without `file` itself.
    std::set<std::string> dependencies(const std::string& file);
    // Every file of the root that imports one of `files` (which need not exist any more: a deleted module's
    // importers are found by its name), at any depth, without `files` themselves. The first call reads the root's
    // Python files (hidden directories, __pycache__ and virtual environments left out).
    std::set<std::string> dependents(const std::vector<std::string>& files);

    // Forgets the imports of files whose text changed since they were scanned (a stat per disk file; buffers
    // compared), so that the next question reads them again. Files found or lost since are not noticed: call
    // forget_layout() when files were created or deleted.
    void revalidate();
    void forget_layout();

private:
    struct Entry {
        bool scanned = false;
        bool from_buffer = false;
        FileStamp stamp;                 // of the disk file, when not from a buffer
        std::uint64_t hash = 0;          // of the text scanned
        std::vector<std::string> names;  // absolute dotted names of the modules it may import
        std::string own;                 // its own dotted name (empty outside the root's bases)
    };
    const Entry& entry(const std::string& file);                                 // caller holds mutex_
    bool scan_into(Entry& e, const std::string& file, const std::string& text);  // true: its imports changed
    const std::optional<std::string>& resolve(const std::string& dotted);        // caller holds mutex_

    ModuleLayout layout_;
    Buffers buffers_;
    std::mutex mutex_;
    std::unordered_map<std::string, Entry> entries_;                          // by absolute file path
    std::unordered_map<std::string, std::optional<std::string>> resolved_;    // dotted name -> its file, if any
    std::unordered_map<std::string, std::vector<std::string>> launch_bases_;  // folder -> ModuleLayout::launch_bases
    std::unordered_map<std::string, std::string>
        launch_names_;                                    // launch folder + name -> its name from the root ("": none)
    std::optional<std::vector<std::string>> root_files_;  // every Python file of the root, once walked
    // dependencies() answers, until a file's imports change.
    std::unordered_map<std::string, std::set<std::string>> closures_;
    // Who imports each dotted name, over root_files_; rebuilt after a file's imports changed.
    std::optional<std::unordered_map<std::string, std::vector<const std::string*>>> importers_;
};

}  // namespace mbl::py
