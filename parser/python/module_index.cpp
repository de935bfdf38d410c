#include "parser/python/module_index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/source_manager.hpp"
#include "parser/input_errors.hpp"

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

std::string display_path(const std::string& path) {
    std::error_code ec;
    fs::path abs = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec) return path;
    fs::path cwd = fs::weakly_canonical(fs::current_path(ec), ec);
    if (ec) return abs.string();
    auto rel = abs.lexically_relative(cwd);
    if (!rel.empty() && rel.native().rfind("..", 0) != 0) return rel.string();
    return abs.string();
}

std::string default_root(const std::string& file) {
    std::error_code ec;
    fs::path abs = fs::weakly_canonical(fs::absolute(file, ec), ec);
    fs::path dir = fs::is_directory(abs, ec) ? abs : abs.parent_path();
    for (fs::path d = dir; !d.empty(); d = d.parent_path()) {
        if (fs::is_directory(d / "src" / "megatron" / "bridge", ec)) return d.string();
        if (d == d.parent_path()) break;
    }
    fs::path d = dir;
    while (fs::exists(d / "__init__.py", ec) && d != d.parent_path()) d = d.parent_path();
    return d.string();
}

ModuleIndex::ModuleIndex(std::string root, Buffers buffers) : root_(std::move(root)), buffers_(std::move(buffers)) {
    std::error_code ec;
    fs::path r = fs::weakly_canonical(fs::absolute(root_, ec), ec);
    root_ = r.string();
    if (fs::is_directory(r / "src", ec)) bases_.push_back((r / "src").string());
    bases_.push_back(r.string());
}

static std::optional<std::string> read_text(const std::string& path, std::string& error) {
    std::error_code ec;
    auto size = fs::file_size(path, ec);
    if (ec) {
        error = ec.message();
        return std::nullopt;
    }
    if (size > SourceManager::kMaxFileBytes) {
        error = fmt::format("the file is larger than {} MiB", SourceManager::kMaxFileBytes >> 20);
        return std::nullopt;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot open the file";
        return std::nullopt;
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    return buf.str();
}

Module* ModuleIndex::load(const std::string& dotted, const std::string& file, bool package, bool namespace_package) {
    // Caller holds mutex_. Only registers the module; it is read and parsed on first use (ensure_parsed).
    auto mod = std::make_unique<Module>();
    mod->name = dotted;
    mod->fs_path = file;
    mod->path = display_path(file);
    mod->is_package = package;
    mod->namespace_package = namespace_package;
    Module* raw = mod.get();
    by_file_[file] = raw;
    by_name_[dotted] = std::move(mod);
    return raw;
}

void ModuleIndex::ensure_parsed(Module* m, const std::string* given) {
    if (!given && buffers_ && !m->namespace_package) given = buffers_(m->fs_path);
    std::call_once(m->parsed, [m, given] {
        if (m->namespace_package) {
            m->ast = std::make_shared<const Ast>(parse_python(m->path, std::string()).ast);
            return;
        }
        std::string error;
        auto text = given ? std::optional<std::string>(*given) : read_text(m->fs_path, error);
        ParseOutcome parsed = parse_python(m->path, text ? std::move(*text) : std::string());
        if (!text)
            parsed.syntax_error = input_error(InputError::Unreadable, SourceRange::whole_file(m->path),
                                              fmt::format("cannot read {}: {}", m->path, error));
        m->syntax_error = std::move(parsed.syntax_error);
        m->ast = std::make_shared<const Ast>(std::move(parsed.ast));
    });
}

Module* ModuleIndex::find(const std::string& dotted) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = by_name_.find(dotted); it != by_name_.end()) return it->second.get();
    if (missing_.count(dotted)) return nullptr;
    std::string rel = dotted;
    std::replace(rel.begin(), rel.end(), '.', '/');
    std::error_code ec;
    for (const auto& base : bases_) {
        fs::path dir = fs::path(base) / rel;
        if (fs::is_regular_file(dir / "__init__.py", ec)) {
            std::string file = (dir / "__init__.py").string();
            if (auto it = by_file_.find(file); it != by_file_.end()) return it->second;
            return load(dotted, file, true, false);
        }
        fs::path py = fs::path(base) / (rel + ".py");
        if (fs::is_regular_file(py, ec)) {
            std::string file = py.string();
            if (auto it = by_file_.find(file); it != by_file_.end()) return it->second;
            return load(dotted, file, false, false);
        }
    }
    for (const auto& base : bases_) {
        fs::path dir = fs::path(base) / rel;
        if (fs::is_directory(dir, ec)) return load(dotted, dir.string(), true, true);
    }
    missing_[dotted] = true;
    return nullptr;
}

std::optional<std::string> ModuleIndex::dotted_name_of(const std::string& abs_file) const {
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

Module* ModuleIndex::module_for_file(const std::string& file, std::vector<Diagnostic>& errors, const std::string* text) {
    std::error_code ec;
    std::string abs = fs::weakly_canonical(fs::absolute(file, ec), ec).string();
    if (!text && !fs::is_regular_file(abs, ec)) {
        errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(file),
                                     fmt::format("{}: no such file", file)));
        return nullptr;
    }
    auto found = [&]() -> Module* {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (auto it = by_file_.find(abs); it != by_file_.end()) return it->second;
        }
        auto dotted = dotted_name_of(abs);
        if (dotted) {
            Module* m = find(*dotted);
            if (m && m->fs_path == abs) return m;
        }
        // A file outside the root's packages (or an unsaved buffer): a script module named after the file.
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = by_file_.find(abs); it != by_file_.end()) return it->second;
        std::string name = "__file__:" + abs;
        bool package = fs::path(abs).filename() == "__init__.py";
        return load(name, abs, package, false);
    }();
    if (text) {
        // Named as the caller wrote it, so its diagnostics land on the document being linted.
        std::call_once(found->named, [&] { found->path = file; });
        ensure_parsed(found, text);
    }
    return found;
}

std::vector<const Module*> ModuleIndex::modules() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<const Module*> out;
    for (const auto& [_, m] : by_name_) out.push_back(m.get());
    std::sort(out.begin(), out.end(), [](const Module* a, const Module* b) { return a->path < b->path; });
    return out;
}

}  // namespace mbl::py
