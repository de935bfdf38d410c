#include "pyeval/module_index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <unordered_map>

#include <sys/stat.h>

#include "core/file_text.hpp"
#include "core/input_errors.hpp"
#include "core/source_manager.hpp"
#include "pyeval/shell_launch.hpp"

namespace mbl::py {

namespace fs = std::filesystem;

const Val* Env::find(std::string_view name) const {
    if (!index_.empty()) {
        auto it = index_.find(std::string(name));
        return it == index_.end() ? nullptr : &vars[it->second].second;
    }
    for (const auto& [k, v] : vars)
        if (k == name) return &v;
    return nullptr;
}

void Env::set(const std::string& name, Val v) {
    if (Val* existing = find(name)) {
        *existing = std::move(v);
        return;
    }
    vars.emplace_back(name, std::move(v));
    if (!index_.empty()) index_.emplace(name, vars.size() - 1);
    else if (vars.size() > 24) reindex();
}

bool Env::erase(std::string_view name) {
    for (auto it = vars.begin(); it != vars.end(); ++it) {
        if (it->first == name) {
            vars.erase(it);
            if (!index_.empty()) reindex();
            return true;
        }
    }
    return false;
}

void Env::reindex() {
    index_.clear();
    if (vars.size() <= 24) return;
    for (std::size_t i = 0; i < vars.size(); ++i) index_.emplace(vars[i].first, i);
}

std::string Module::package() const {
    if (name.rfind("__file__:", 0) == 0) return {};  // a script outside the root's packages
    if (is_package) return name;
    auto dot = name.rfind('.');
    return dot == std::string::npos ? std::string() : name.substr(0, dot);
}

std::string package_root(const std::string& file) {
    std::error_code ec;
    fs::path abs = resolved_path(file, ec);
    fs::path d = fs::is_directory(abs, ec) ? abs : abs.parent_path();
    while (fs::exists(d / "__init__.py", ec) && d != d.parent_path()) d = d.parent_path();
    return d.string();
}

FileStamp stamp_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return {};
    return FileStamp{static_cast<std::uintmax_t>(st.st_size),
                     static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
                     static_cast<std::uint64_t>(st.st_ino), true};
}

ReadCounters& read_counters() {
    static ReadCounters counters;
    return counters;
}

std::optional<std::string> read_source_file(const std::string& path, std::string& error) {
    FileText read = read_file_text(path, SourceManager::max_file_bytes());
    switch (read.failure) {
        case FileText::Failure::None: ++read_counters().files_read; return std::move(read.text);
        case FileText::Failure::TooLarge:
            error = fmt::format("the file is larger than {} (--limit file-size=...)",
                                format_limit(*find_limit("file-size"), SourceManager::max_file_bytes()));
            break;
        case FileText::Failure::NotRegular: error = "not a regular file"; break;
        default: error = std::strerror(read.error_number); break;
    }
    return std::nullopt;
}

ModuleLayout::ModuleLayout(const std::string& root) {
    std::error_code ec;
    fs::path r = resolved_path(root, ec);
    root_ = r.string();
    if (fs::is_directory(r / "src", ec)) bases_.push_back((r / "src").string());
    bases_.push_back(r.string());
}

std::optional<ModuleLayout::Location> ModuleLayout::locate_in(const std::string& base, const std::string& dotted,
                                                              bool namespace_packages) {
    std::string rel = dotted;
    std::replace(rel.begin(), rel.end(), '.', '/');
    std::error_code ec;
    fs::path dir = fs::path(base) / rel;
    if (fs::is_regular_file(dir / "__init__.py", ec)) return Location{(dir / "__init__.py").string(), true, false};
    fs::path py = fs::path(base) / (rel + ".py");
    if (fs::is_regular_file(py, ec)) return Location{py.string(), false, false};
    if (namespace_packages && fs::is_directory(dir, ec)) return Location{dir.string(), true, true};
    return std::nullopt;
}

namespace {

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// The top-level comma-separated parts of an argument list's text.
std::vector<std::string_view> top_level_args(std::string_view s) {
    std::vector<std::string_view> out;
    int depth = 0;
    std::size_t start = 0;
    char quote = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (quote) {
            if (c == '\\') ++i;
            else if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '(' || c == '[' || c == '{') {
            ++depth;
        } else if (c == ')' || c == ']' || c == '}') {
            --depth;
        } else if (c == ',' && depth == 0) {
            out.push_back(trimmed(s.substr(start, i - start)));
            start = i + 1;
        }
    }
    if (!trimmed(s.substr(start)).empty()) out.push_back(trimmed(s.substr(start)));
    return out;
}

// `name(ARGS)` when `e` is exactly one such call: ARGS, else nullopt.
std::optional<std::string_view> call_args(std::string_view e, std::string_view name) {
    if (!e.starts_with(name) || e.size() < name.size() + 2 || e[name.size()] != '(' || e.back() != ')')
        return std::nullopt;
    std::string_view inner = e.substr(name.size() + 1, e.size() - name.size() - 2);
    int depth = 0;
    for (char c : inner) {  // `f(a) + g(b)` is not one call
        depth += c == '(' ? 1 : c == ')' ? -1 : 0;
        if (depth < 0) return std::nullopt;
    }
    return inner;
}

std::optional<std::string> string_literal(std::string_view e) {
    if (e.size() < 2 || (e.front() != '"' && e.front() != '\'') || e.back() != e.front()) return std::nullopt;
    std::string_view body = e.substr(1, e.size() - 2);
    if (body.find_first_of("\"'\\{}") != std::string_view::npos) return std::nullopt;
    return std::string(body);
}

// The path a launching script computes from its own location in the ways scripts put a folder on sys.path:
// os.path.dirname / abspath / realpath / normpath / join over __file__, pathlib's Path(__file__) with .parent,
// .parents[k], .resolve(), .absolute() and `/ "sub"`, str() of those, and an absolute literal. nullopt otherwise:
// a relative literal is relative to the working directory, which the tree does not say.
std::optional<fs::path> script_path(std::string_view e, const fs::path& script, int depth = 0) {
    e = trimmed(e);
    if (depth > 32 || e.empty()) return std::nullopt;
    if (e == "__file__") return script;
    if (auto lit = string_literal(e)) {
        if (lit->empty() || (*lit)[0] != '/') return std::nullopt;
        return fs::path(*lit);
    }
    for (const char* wrapper :
         {"str", "os.fspath", "os.path.abspath", "os.path.realpath", "os.path.normpath", "Path", "pathlib.Path"})
        if (auto inner = call_args(e, wrapper)) return script_path(*inner, script, depth + 1);
    if (auto inner = call_args(e, "os.path.dirname")) {
        auto p = script_path(*inner, script, depth + 1);
        if (p) return p->parent_path();
        return std::nullopt;
    }
    if (auto inner = call_args(e, "os.path.join")) {
        auto parts = top_level_args(*inner);
        if (parts.empty()) return std::nullopt;
        auto p = script_path(parts[0], script, depth + 1);
        for (std::size_t i = 1; p && i < parts.size(); ++i) {
            auto lit = string_literal(parts[i]);
            if (!lit) return std::nullopt;
            p = lit->starts_with("/") ? fs::path(*lit) : *p / *lit;
        }
        return p;
    }
    for (std::string_view same : {".resolve()", ".absolute()"})
        if (e.ends_with(same)) return script_path(e.substr(0, e.size() - same.size()), script, depth + 1);
    if (e.ends_with(".parent")) {
        auto p = script_path(e.substr(0, e.size() - 7), script, depth + 1);
        if (p) return p->parent_path();
        return std::nullopt;
    }
    if (e.back() == ']') {
        const auto at = e.rfind(".parents[");
        if (at == std::string_view::npos) return std::nullopt;
        const std::string_view index = e.substr(at + 9, e.size() - at - 10);
        if (index.empty() || index.size() > 2 || index.find_first_not_of("0123456789") != std::string_view::npos)
            return std::nullopt;
        auto p = script_path(e.substr(0, at), script, depth + 1);
        for (int k = 0; p && k <= std::stoi(std::string(index)); ++k) p = p->parent_path();
        return p;
    }
    if (const auto slash = e.rfind(" / "); slash != std::string_view::npos) {
        auto lit = string_literal(trimmed(e.substr(slash + 3)));
        auto p = lit ? script_path(e.substr(0, slash), script, depth + 1) : std::nullopt;
        if (p) return *p / *lit;
    }
    return std::nullopt;
}

// The folders a launching script's own `sys.path.insert(i, PATH)` / `sys.path.append(PATH)` add, where PATH is
// computed from the script's location (script_path); in the order Python's sys.path ends up with them.
std::vector<std::string> script_sys_paths(const fs::path& script, const std::string& text) {
    std::vector<std::string> inserted, appended;
    for (const char* call : {"sys.path.insert(", "sys.path.append("}) {
        const bool insert = std::string_view(call) == "sys.path.insert(";
        for (auto at = text.find(call); at != std::string::npos; at = text.find(call, at + 1)) {
            const auto line_start = text.rfind('\n', at);
            const std::string_view before(text.data() + (line_start == std::string::npos ? 0 : line_start + 1),
                                          at - (line_start == std::string::npos ? 0 : line_start + 1));
            if (before.find('#') != std::string_view::npos) continue;  // a comment
            const std::size_t open = at + std::string_view(call).size() - 1;
            int depth = 0;
            std::size_t close = open;
            for (; close < text.size(); ++close) {
                depth += text[close] == '(' ? 1 : text[close] == ')' ? -1 : 0;
                if (depth == 0) break;
            }
            if (close >= text.size()) continue;
            const auto args = top_level_args(std::string_view(text).substr(open + 1, close - open - 1));
            if (args.size() != (insert ? 2u : 1u)) continue;
            if (auto p = script_path(args.back(), script))
                (insert ? inserted : appended).push_back(p->lexically_normal().string());
        }
    }
    std::vector<std::string> out(inserted.rbegin(), inserted.rend());  // each insert(0, ...) goes before the last
    out.insert(out.end(), appended.begin(), appended.end());
    for (auto& p : out)
        if (p.size() > 1 && p.back() == '/') p.pop_back();
    return out;
}

}  // namespace

bool ModuleLayout::holds_script(const std::string& dir) const {
    if (auto it = holds_script_.find(dir); it != holds_script_.end()) return it->second;
    bool found = false;
    std::error_code ec;
    // A folder with __init__.py is a package: its modules run with `python -m`, which puts the working directory
    // on sys.path, not the folder.
    if (!fs::exists(fs::path(dir) / "__init__.py", ec)) {
        for (fs::directory_iterator it(dir, ec), end; !found && !ec && it != end; it.increment(ec)) {
            const fs::path& p = it->path();
            if (p.extension() != ".py" || !it->is_regular_file(ec)) continue;
            FileText text = read_file_text(p.string(), SourceManager::max_file_bytes());
            if (text.failure != FileText::Failure::None || !text.text) continue;
            found =
                text.text->find("__main__") != std::string::npos && text.text->find("__name__") != std::string::npos;
        }
    }
    holds_script_.emplace(dir, found);
    return found;
}

namespace {

// Folders whose files are other people's code: a walk for launchers does not enter them, and PYTHONPATH entries
// inside them are not read (a vendored library stays outside, as installed packages are).
bool vendored_folder(const std::string& name) {
    return name == "3rdparty" || name == "third_party" || name == "third-party" || name == "site-packages" ||
           name == "node_modules" || name == "__pycache__" || (!name.empty() && name[0] == '.');
}

bool inside_own_code(const fs::path& path, const fs::path& root) {
    const auto rel = path.lexically_relative(root);
    if (rel.empty() || rel.native().rfind("..", 0) == 0) return false;
    for (const auto& part : rel)
        if (vendored_folder(part.string())) return false;
    return true;
}

bool is_shell_script(const fs::path& p) {
    const auto ext = p.extension();
    return ext == ".sh" || ext == ".bash" || ext == ".sbatch" || ext == ".slurm";
}

// What a shell launcher runs, read once per version of the file (stamp_of, as modules are): an editor's server and
// the import graph beside it each walk the tree's launchers, and a launcher is rarely edited.
std::vector<LaunchedScript> launched_by_file(const fs::path& launcher) {
    struct Read {
        FileStamp stamp;
        std::vector<LaunchedScript> runs;
    };
    static std::mutex mutex;
    static std::unordered_map<std::string, Read> read;
    const FileStamp stamp = stamp_of(launcher.string());
    if (stamp.exists) {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = read.find(launcher.string()); it != read.end() && it->second.stamp == stamp)
            return it->second.runs;
    }
    std::vector<LaunchedScript> runs;
    FileText text = read_file_text(launcher.string(), SourceManager::max_file_bytes());
    if (text.failure == FileText::Failure::None && text.text &&
        (text.text->find("python") != std::string::npos || text.text->find("torchrun") != std::string::npos))
        runs = scripts_launched_by(launcher.string(), *text.text);
    if (stamp.exists) {
        std::lock_guard<std::mutex> lock(mutex);
        read[launcher.string()] = Read{stamp, runs};
    }
    return runs;
}

}  // namespace

const std::unordered_map<std::string, std::vector<std::string>>& ModuleLayout::launcher_pythonpath() const {
    if (launcher_pythonpath_) return *launcher_pythonpath_;
    launcher_pythonpath_.emplace();
    const fs::path root(root_);
    std::error_code ec;
    // A root that is no project (a home directory a loose file sits in) is not searched past this many entries:
    // its launchers' PYTHONPATH stays unknown, as the environment's does.
    constexpr int kMaxEntries = 100'000;
    constexpr int kMaxDepth = 8;
    int entries = 0;
    for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end && ++entries <= kMaxEntries; it.increment(ec)) {
        if (it->is_directory(ec)) {
            // A git submodule (a `.git` file or folder of its own) is someone else's tree too; launchers sit a few
            // folders down (examples/models/FAMILY/MODEL/run.sh), not deeper.
            if (vendored_folder(it->path().filename().string()) || fs::exists(it->path() / ".git", ec) ||
                it.depth() >= kMaxDepth)
                it.disable_recursion_pending();
            continue;
        }
        if (!is_shell_script(it->path()) || !it->is_regular_file(ec)) continue;
        for (const auto& run : launched_by_file(it->path())) {
            if (!inside_own_code(run.script, root)) continue;
            auto& folders = (*launcher_pythonpath_)[fs::path(run.script).parent_path().string()];
            for (const auto& folder : run.pythonpath) {
                if (!inside_own_code(folder, root) || !fs::is_directory(folder, ec)) continue;
                if (std::find(bases_.begin(), bases_.end(), folder) != bases_.end()) continue;
                if (std::find(folders.begin(), folders.end(), folder) == folders.end()) folders.push_back(folder);
            }
        }
    }
    return *launcher_pythonpath_;
}

const std::vector<std::string>& ModuleLayout::scripts_sys_paths(const std::string& dir) const {
    auto [known, added] = scripts_sys_paths_.try_emplace(dir);
    if (!added) return known->second;  // every module of a launch folder asks: its scripts are read once
    const fs::path root(root_);
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path& p = it->path();
        if (p.extension() != ".py" || !it->is_regular_file(ec)) continue;
        FileText text = read_file_text(p.string(), SourceManager::max_file_bytes());
        if (text.failure != FileText::Failure::None || !text.text || text.text->find("sys.path.") == std::string::npos)
            continue;
        for (const auto& path : script_sys_paths(p, *text.text)) {
            const auto inside = fs::path(path).lexically_relative(root);
            if (inside.empty() || inside.native().rfind("..", 0) == 0 || !fs::is_directory(path, ec)) continue;
            if (std::find(known->second.begin(), known->second.end(), path) == known->second.end())
                known->second.push_back(path);
        }
    }
    return known->second;
}

std::vector<std::string> ModuleLayout::launch_bases(const std::string& abs_file) const {
    std::vector<std::string> out;
    std::lock_guard<std::mutex> lock(scripts_mutex_);
    const fs::path root(root_);
    const auto& pythonpath = launcher_pythonpath();
    auto add = [&out](const std::string& folder) {
        if (std::find(out.begin(), out.end(), folder) == out.end()) out.push_back(folder);
    };
    for (fs::path dir = fs::path(abs_file).parent_path(); dir != root && dir != dir.parent_path();
         dir = dir.parent_path()) {
        auto rel = dir.lexically_relative(root);
        if (rel.empty() || rel.native().rfind("..", 0) == 0) break;  // outside the root
        const auto launched = pythonpath.find(dir.string());
        if (!holds_script(dir.string()) && launched == pythonpath.end()) continue;
        add(dir.string());
        // What the folder's scripts add to sys.path themselves, after their own folder.
        for (const auto& added : scripts_sys_paths(dir.string())) add(added);
        // Then PYTHONPATH as the shell launchers that run the folder's scripts set it (Python puts it after the
        // script's folder, before the installed packages).
        if (launched != pythonpath.end())
            for (const auto& folder : launched->second) add(folder);
    }
    return out;
}

std::optional<ModuleLayout::Location> ModuleLayout::locate(const std::string& dotted) const {
    std::string rel = dotted;
    std::replace(rel.begin(), rel.end(), '.', '/');
    std::error_code ec;
    for (const auto& base : bases_) {
        fs::path dir = fs::path(base) / rel;
        if (fs::is_regular_file(dir / "__init__.py", ec)) return Location{(dir / "__init__.py").string(), true, false};
        fs::path py = fs::path(base) / (rel + ".py");
        if (fs::is_regular_file(py, ec)) return Location{py.string(), false, false};
    }
    for (const auto& base : bases_) {
        fs::path dir = fs::path(base) / rel;
        if (fs::is_directory(dir, ec)) return Location{dir.string(), true, true};
    }
    return std::nullopt;
}

std::optional<std::string> ModuleLayout::dotted_name_of(const std::string& abs_file) const {
    fs::path f(abs_file);
    for (const auto& base : bases_) {
        auto rel = f.lexically_relative(base);
        if (rel.empty() || rel.native().rfind("..", 0) == 0) continue;
        std::string name;
        for (auto part = rel.begin(); part != rel.end(); ++part) {
            std::string s = part->string();
            if (std::next(part) == rel.end()) {
                if (s == "__init__.py") break;
                if (s.size() > 3 && s.compare(s.size() - 3, 3, ".py") == 0) s.resize(s.size() - 3);
            }
            if (!name.empty()) name += '.';
            name += s;
        }
        if (!name.empty()) return name;
    }
    return std::nullopt;
}

ModuleIndex::ModuleIndex(std::string root, Buffers buffers) : layout_(root), buffers_(std::move(buffers)) {}

Module* ModuleIndex::load(const std::string& dotted, const std::string& key, const std::string& file, std::string shown,
                          bool package, bool namespace_package) {
    // Caller holds mutex_. Only registers the module; it is read and parsed on first use (ensure_parsed).
    auto mod = std::make_unique<Module>();
    mod->name = dotted;
    mod->key = key;
    mod->fs_path = file;
    mod->path = std::move(shown);
    mod->is_package = package;
    mod->namespace_package = namespace_package;
    Module* raw = mod.get();
    by_file_[file] = raw;
    by_name_[key] = std::move(mod);
    sorted_stale_ = true;
    return raw;
}

void ModuleIndex::ensure_parsed(Module* m, const std::string* given) {
    if (!given && !m->namespace_package) given = buffer_of(*m);
    std::call_once(m->parsed, [m, given] {
        m->parse_started.store(true, std::memory_order_release);
        if (m->namespace_package) {
            m->ast = std::make_shared<const Ast>(parse_python(m->path, std::string()).ast);
            m->parse_done.store(true, std::memory_order_release);
            return;
        }
        std::string error;
        m->from_buffer = given != nullptr;
        if (!given) m->stamp = stamp_of(m->fs_path);  // before reading: a change while reading shows next time
        auto text = given ? std::optional<std::string>(*given) : read_source_file(m->fs_path, error);
        ++read_counters().files_parsed;
        const bool from_disk = !given && text.has_value();  // an editor's buffer changes with every keystroke
        ParseOutcome parsed = parse_python(m->path, text ? std::move(*text) : std::string(), from_disk);
        if (!text) parsed.syntax_error = unreadable_file(m->path, error);
        m->syntax_error = std::move(parsed.syntax_error);
        m->ast = std::make_shared<const Ast>(std::move(parsed.ast));
        m->parse_done.store(true, std::memory_order_release);
    });
}

Module* ModuleIndex::find(const std::string& dotted) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = by_name_.find(dotted); it != by_name_.end()) return it->second.get();
        if (missing_.count(dotted)) return nullptr;
    }
    // The file system is asked outside the lock: other threads' lookups of known names do not wait for it.
    const auto where = layout_.locate(dotted);
    std::string shown = where ? display_path(where->file) : std::string();
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = by_name_.find(dotted); it != by_name_.end()) return it->second.get();  // found meanwhile
    if (!where) {
        missing_[dotted] = true;
        return nullptr;
    }
    if (auto it = by_file_.find(where->file); it != by_file_.end()) return it->second;
    return load(dotted, dotted, where->file, std::move(shown), where->package, where->namespace_package);
}

Module* ModuleIndex::find_in(const std::string& base, const std::string& dotted, bool namespace_packages) {
    // Keyed by the folder too: two launch folders may each hold a `utils` of their own.
    const std::string key = base + '\n' + dotted;
    // A miss of the first pass (no namespace packages) is remembered apart from a miss of both.
    const std::string miss = namespace_packages ? key : key + '\n';
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = by_name_.find(key); it != by_name_.end()) return it->second.get();
        if (missing_.count(miss)) return nullptr;
    }
    const auto where = ModuleLayout::locate_in(base, dotted, namespace_packages);
    std::string shown = where ? display_path(where->file) : std::string();
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = by_name_.find(key); it != by_name_.end()) return it->second.get();
    if (!where) {
        missing_[miss] = true;
        return nullptr;
    }
    if (auto it = by_file_.find(where->file); it != by_file_.end()) return it->second;
    return load(dotted, key, where->file, std::move(shown), where->package, where->namespace_package);
}

Module* ModuleIndex::find_from(const std::string& dotted, const Module* importer) {
    if (!importer || importer->fs_path.empty()) return find(dotted);
    auto* from = const_cast<Module*>(importer);
    std::call_once(from->launch_once, [&] { from->launch_bases = layout_.launch_bases(from->fs_path); });
    const auto& bases = from->launch_bases;
    if (bases.empty()) return find(dotted);
    // Python's order: a module or regular package anywhere on sys.path before a namespace package.
    for (const auto& base : bases)
        if (Module* m = find_in(base, dotted, false)) return m;
    if (Module* m = find(dotted)) return m;
    for (const auto& base : bases)
        if (Module* m = find_in(base, dotted, true)) return m;
    return nullptr;
}

Module* ModuleIndex::module_for_file(const std::string& file, std::vector<Diagnostic>& errors,
                                     const std::string* text) {
    std::error_code ec;
    std::string abs = resolved_path(file, ec).string();
    if (!text && !fs::is_regular_file(abs, ec)) {
        errors.push_back(
            input_error(InputError::Unreadable, SourceRange::whole_file(file), fmt::format("{}: no such file", file)));
        return nullptr;
    }
    auto found = [&]() -> Module* {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (auto it = by_file_.find(abs); it != by_file_.end()) return it->second;
        }
        auto dotted = layout_.dotted_name_of(abs);
        if (dotted) {
            Module* m = find(*dotted);
            if (m && m->fs_path == abs) return m;
        }
        // A file outside the root's packages (or an unsaved buffer): a script module named after the file.
        std::string shown = display_path(abs);
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = by_file_.find(abs); it != by_file_.end()) return it->second;
        std::string name = "__file__:" + abs;
        bool package = fs::path(abs).filename() == "__init__.py";
        return load(name, name, abs, std::move(shown), package, false);
    }();
    if (text) {
        // Named as the caller wrote it, so its diagnostics land on the document being linted.
        rename(*found, file);
        ensure_parsed(found, text);
    }
    return found;
}

Module* ModuleIndex::name_document(const std::string& file) {
    std::vector<Diagnostic> unreadable;  // reported when the document is linted
    Module* m = module_for_file(file, unreadable);
    if (m) rename(*m, file);
    return m;
}

void ModuleIndex::expect(Module* m, std::function<bool(std::string_view)> worth) {
    if (m->parse_started.load(std::memory_order_acquire)) return;  // an editor's second lint: parsed already
    std::lock_guard<std::mutex> lock(mutex_);
    expected_.emplace_back(m, std::move(worth));
}

bool ModuleIndex::parse_expected() {
    for (;;) {
        std::pair<Module*, std::function<bool(std::string_view)>> next;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (expected_.empty()) return false;
            next = std::move(expected_.back());  // the last named: the furthest from what the threads start on
            expected_.pop_back();
        }
        Module* m = next.first;
        if (m->parse_started.load(std::memory_order_acquire) || m->namespace_package) continue;
        std::string error;
        const std::string* buffer = buffer_of(*m);
        std::optional<std::string> text =
            buffer ? std::optional<std::string>(*buffer) : read_source_file(m->fs_path, error);
        if (!text || !next.second(*text)) continue;
        ensure_parsed(m, &*text);  // as the document's lint will give it
        return true;
    }
}

void ModuleIndex::rename(Module& m, const std::string& file) {
    std::call_once(m.named, [&] {
        std::lock_guard<std::mutex> lock(mutex_);
        m.path = file;
        sorted_stale_ = true;
    });
}

std::vector<Module*> ModuleIndex::modules() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (sorted_stale_) {
        sorted_.clear();
        for (const auto& [_, m] : by_name_) sorted_.push_back(m.get());
        std::sort(sorted_.begin(), sorted_.end(), [](const Module* a, const Module* b) { return a->path < b->path; });
        sorted_stale_ = false;
    }
    return sorted_;
}

const std::string* ModuleIndex::buffer_of(const Module& m) const {
    if (!buffers_) return nullptr;
    // By its absolute path (an editor's buffer), else as diagnostics name it (a fix made in memory, --diff).
    if (const std::string* text = buffers_(m.fs_path)) return text;
    return m.path != m.fs_path ? buffers_(m.path) : nullptr;
}

bool ModuleIndex::is_current(Module& m) {
    if (!m.ast || m.namespace_package) return true;
    if (const std::string* buffer = buffer_of(m)) return *buffer == m.ast->text;
    if (!m.from_buffer) return stamp_of(m.fs_path) == m.stamp;
    // Read from a buffer that is gone (the editor closed it): current if the disk holds the same text.
    const FileStamp stamp = stamp_of(m.fs_path);
    std::string error;
    auto text = read_source_file(m.fs_path, error);
    if (!text || *text != m.ast->text) return false;
    m.from_buffer = false;
    m.stamp = stamp;
    return true;
}

void ModuleIndex::retire(const std::vector<const Module*>& modules) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Module* m : modules) {
        auto it = by_name_.find(m->key);
        if (it == by_name_.end() || it->second.get() != m) continue;
        by_file_.erase(m->fs_path);
        if (m->ast) retired_bytes_ += m->ast->text.size();
        retired_.push_back(std::move(it->second));
        by_name_.erase(it);
        sorted_stale_ = true;
    }
    if (!modules.empty()) missing_.clear();
}

}  // namespace mbl::py
