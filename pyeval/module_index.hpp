#pragma once
// The modules of one source root: dotted name <-> file, parsed once on first use, evaluated once (module level)
// under one lock so that import cycles and threads behave. Only files inside the root are ever read; names from
// anywhere else (torch, numpy, a library's own packages) stay symbols.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/paths.hpp"
#include "pyeval/ast.hpp"
#include "pyeval/values.hpp"

namespace mbl::py {

// A scope: module globals, a function's locals, a class body. `owner` is the id of the evaluator that may write
// it; any other evaluator reads copies of its mutable values (see Interp::thaw).
struct Env : std::enable_shared_from_this<Env> {
    Env() : epoch(next_epoch()) {}
    std::uint64_t epoch;
    std::vector<std::pair<std::string, Val>> vars;
    std::shared_ptr<Env> parent;  // enclosing function scope (closures)
    std::uint64_t owner = 0;

    const Val* find(std::string_view name) const;
    Val* find(std::string_view name) { return const_cast<Val*>(static_cast<const Env*>(this)->find(name)); }
    void set(const std::string& name, Val v);
    bool erase(std::string_view name);

private:
    std::unordered_map<std::string, std::size_t> index_;  // built for large scopes (module globals)
    void reindex();
};

// What a file looked like when it was read: enough to tell, without reading it again, that it changed.
struct FileStamp {
    std::uintmax_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t inode = 0;
    bool exists = false;
    bool operator==(const FileStamp&) const = default;
};
FileStamp stamp_of(const std::string& path);

// Reads a source file whole; nullopt (and `error`) when it cannot be read or is over SourceManager::max_file_bytes().
std::optional<std::string> read_source_file(const std::string& path, std::string& error);

// How much reading and evaluating the linter has done, for the tests that check that an edit does not re-read the
// tree.
struct ReadCounters {
    std::atomic<std::uint64_t> files_read{0};       // source files read from disk (modules and import scans)
    std::atomic<std::uint64_t> files_parsed{0};     // modules parsed into syntax trees
    std::atomic<std::uint64_t> imports_scanned{0};  // texts scanned for import statements (pyeval/import_graph)
    std::atomic<std::uint64_t> recipes_evaluated{0};
};
ReadCounters& read_counters();

// Where the modules of a source root live: `root/src` (when present) is searched before `root`.
class ModuleLayout {
public:
    explicit ModuleLayout(const std::string& root);
    const std::string& root() const { return root_; }
    const std::vector<std::string>& bases() const { return bases_; }

    struct Location {
        std::string file;  // the module's file; the directory for a namespace package
        bool package = false;
        bool namespace_package = false;  // a directory without __init__.py
    };
    // The module with this dotted name (file system lookups), or nullopt.
    std::optional<Location> locate(const std::string& dotted) const;
    // The dotted name of a file inside a base (lexical: the file need not exist), or nullopt.
    std::optional<std::string> dotted_name_of(const std::string& abs_file) const;

    // The folders Python also searches for the imports of the module in `abs_file` when a script launches it, as
    // the launch sets up sys.path: the folders from the module's own up to the root that hold a script run by its
    // path (a `__main__` guard in a folder that is no package: `python dir/script.py` puts `dir` first), nearest
    // first. Each launch folder is followed by what its scripts add to sys.path themselves and by the PYTHONPATH
    // the tree's shell launchers set for them. A folder a shell launcher runs a script of is a launch folder too.
    // Thread-safe.
    std::vector<std::string> launch_bases(const std::string& abs_file) const;
    // The module with this dotted name under one folder, or nullopt.
    static std::optional<Location> locate_in(const std::string& base, const std::string& dotted,
                                             bool namespace_packages);

private:
    bool holds_script(const std::string& dir) const;  // caller holds scripts_mutex_
    // The folders the tree's shell launch scripts put on PYTHONPATH for the scripts they run (shell_launch.hpp), by
    // the scripts' folder; inside the root, vendored trees left out. Read once; caller holds scripts_mutex_.
    const std::unordered_map<std::string, std::vector<std::string>>& launcher_pythonpath() const;
    std::string root_;
    std::vector<std::string> bases_;
    mutable std::mutex scripts_mutex_;
    mutable std::unordered_map<std::string, bool> holds_script_;  // by folder
    // What a folder's scripts add to sys.path themselves (sys.path.insert/append), by folder; caller holds
    // scripts_mutex_.
    const std::vector<std::string>& scripts_sys_paths(const std::string& dir) const;
    mutable std::unordered_map<std::string, std::vector<std::string>> scripts_sys_paths_;
    mutable std::optional<std::unordered_map<std::string, std::vector<std::string>>> launcher_pythonpath_;
};

class Module {
public:
    enum State { New = 0, Initializing = 1, Ready = 2 };

    std::string name;     // dotted
    std::string key;      // the index's key: the dotted name, prefixed by the launch folder it was found in
    std::string path;     // display path, used in diagnostics (Loc::file points here)
    std::string fs_path;  // absolute path; the package directory for namespace packages
    bool is_package = false;
    bool namespace_package = false;  // a directory without __init__.py
    std::shared_ptr<const Ast> ast;  // null until parsed, and for namespace packages
    // Where the parsed text came from: an editor buffer, or the disk as `stamp` describes it.
    bool from_buffer = false;
    FileStamp stamp;
    std::optional<Diagnostic> syntax_error;
    std::once_flag parsed;
    std::atomic<bool> parse_started{false};  // a thread is parsing it, or has
    std::atomic<bool> parse_done{false};     // `ast` and `syntax_error` are set (see parsed_ast)
    std::once_flag named;  // `path` may be set once, before parsing, to the name a caller uses for the file
    std::once_flag launch_once;
    std::vector<std::string> launch_bases;  // ModuleLayout::launch_bases of its file, once asked
    std::shared_ptr<Env> globals = std::make_shared<Env>();
    std::atomic<int> state{New};
    std::thread::id init_thread;

    // The syntax tree once parsing has finished, else null. For code that looks at every module while other threads
    // may be parsing some (after ensure_parsed, `ast` itself is safe to read).
    const Ast* parsed_ast() const { return parse_done.load(std::memory_order_acquire) ? ast.get() : nullptr; }

    // The package relative imports start from.
    std::string package() const;
    Loc loc(NodeId id) const {
        if (!ast || id == kNoNode) return {};
        const Node& n = (*ast)[id];
        return Loc{&path, n.line, ast->col(id), n.end_line, ast->end_col(id)};
    }
};

class ModuleIndex {
public:
    // The text of a module's file when a newer one than the disk's exists (an unsaved editor buffer, a fix not
    // written yet), else null. Called with the module's absolute normalized path, then with its display path, from
    // any thread.
    using Buffers = std::function<const std::string*(const std::string& path)>;

    // `root` is the source root; module search starts at `root/src` (when present) and `root`.
    explicit ModuleIndex(std::string root, Buffers buffers = {});

    const std::string& root() const { return layout_.root(); }
    const ModuleLayout& layout() const { return layout_; }
    // The module with this dotted name inside the root, or nullptr. Parses it on first use. Thread-safe.
    Module* find(const std::string& dotted);
    // The module an import statement of `importer` names: first in the folders its launch puts on sys.path
    // (ModuleLayout::launch_bases), then as find(). Thread-safe.
    Module* find_from(const std::string& dotted, const Module* importer);
    // Reads and parses a module once (thread-safe); `ast` is set afterwards (an empty tree when unreadable).
    // `text`: the module's text when the caller has it (an editor buffer); otherwise it is read from disk.
    void ensure_parsed(Module* m, const std::string* text = nullptr);
    // The module of a file given on the command line; nullptr (and an IN001 in `errors`) when unreadable. `text`
    // is its text when the caller has it; diagnostics then name the file as `file` is written.
    Module* module_for_file(const std::string& file, std::vector<Diagnostic>& errors,
                            const std::string* text = nullptr);
    // Names the module of `file` as the caller writes it before anything reads the module. The documents of a run
    // that are linted on several threads are named so first: module_for_file names a document when it parses it,
    // and another thread may by then be reading the module as an import.
    Module* name_document(const std::string& file);  // null when unreadable
    // Documents of the run that will be parsed later: a thread that would wait for another's module initialization
    // parses one of them instead (parse_expected), so that both cores work while the first imports are evaluated.
    // `worth` says from its text whether the document will be parsed at all.
    void expect(Module* m, std::function<bool(std::string_view)> worth);
    // Parses the last expected module nobody has started; false when none is left.
    bool parse_expected();
    // Every module read so far, sorted by path.
    std::vector<Module*> modules() const;
    // Whether a parsed module's text is still what the buffers or the disk hold (for a file read from disk, a
    // stat: no read). Not thread-safe: call it between runs.
    bool is_current(Module& m);
    // Takes modules out of the index (their files changed): the next lookup reads and initializes them afresh, and
    // names that were missing are looked up again. The old modules stay alive (objects of other modules may still
    // point into them) until the index ends; `retired_bytes` says how much text they hold.
    void retire(const std::vector<const Module*>& modules);
    std::size_t retired_bytes() const { return retired_bytes_; }
    // Held while a module's top level is evaluated (recursive: imports nest).
    std::recursive_mutex& init_mutex() { return init_mutex_; }

private:
    // Registers a module (caller holds mutex_); `shown` is its display path, worked out before the lock.
    Module* load(const std::string& dotted, const std::string& key, const std::string& file, std::string shown,
                 bool package, bool namespace_package);
    Module* find_in(const std::string& base, const std::string& dotted, bool namespace_packages);
    const std::string* buffer_of(const Module& m) const;  // a newer text than the disk's, if any

    ModuleLayout layout_;
    Buffers buffers_;
    mutable std::mutex mutex_;
    std::map<std::string, std::unique_ptr<Module>> by_name_;
    std::map<std::string, Module*> by_file_;
    std::map<std::string, bool> missing_;
    // modules()' answer, kept while no module is added, retired or renamed: the front end asks for it with every
    // document, and sorting a whole tree's modules each time cost more than the rest of the bookkeeping.
    mutable std::vector<Module*> sorted_;
    mutable bool sorted_stale_ = true;
    void rename(Module& m, const std::string& file);  // sets the display path, once
    std::vector<std::unique_ptr<Module>> retired_;
    std::size_t retired_bytes_ = 0;
    std::recursive_mutex init_mutex_;
    std::vector<std::pair<Module*, std::function<bool(std::string_view)>>> expected_;  // guarded by mutex_
};

// The source root a file's imports resolve from when nothing says otherwise: the parent of the file's top-level
// package (the highest directory chain with __init__.py files).
std::string package_root(const std::string& file);

}  // namespace mbl::py
