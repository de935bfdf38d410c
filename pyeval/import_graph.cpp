#include "pyeval/import_graph.hpp"

#include <algorithm>
#include <filesystem>

#include "core/paths.hpp"
#include "pyeval/python_scan.hpp"

namespace mbl::py {

namespace fs = std::filesystem;

namespace {

bool ident_start(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80; }
bool ident_char(unsigned char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
bool is_quote(char c) { return c == '"' || c == '\''; }

enum class Tok { Name, Dot, Comma, LParen, RParen, Star, Semicolon, Colon, Newline, End, Other };

struct Token {
    Tok kind = Tok::End;
    std::string_view text;
    int line = 0;
    int depth = 0;  // bracket depth before the token
};

// Python's tokens, as far as import statements need them: names and punctuation come out; strings, numbers,
// comments and whitespace are skipped; newlines inside brackets or after a backslash do not end a line.
class Lexer {
public:
    explicit Lexer(std::string_view s) : s_(s) {}

    Token next() {
        while (i_ < s_.size()) {
            const char c = s_[i_];
            Token t{Tok::Other, s_.substr(i_, 1), line_, depth_};
            if (c == '\n') {
                ++i_;
                ++line_;
                if (depth_ == 0) return Token{Tok::Newline, {}, line_ - 1, 0};
                continue;
            }
            if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
                ++i_;
                continue;
            }
            if (c == '\\') {  // a line continuation (or a stray backslash)
                ++i_;
                if (i_ < s_.size() && s_[i_] == '\r') ++i_;
                if (i_ < s_.size() && s_[i_] == '\n') {
                    ++i_;
                    ++line_;
                }
                continue;
            }
            if (c == '#') {
                skip_comment();
                continue;
            }
            if (is_quote(c)) {
                skip_string(false);
                return t;
            }
            if (ident_start(static_cast<unsigned char>(c))) {
                std::size_t j = i_;
                while (j < s_.size() && ident_char(static_cast<unsigned char>(s_[j]))) ++j;
                const std::string_view word = s_.substr(i_, j - i_);
                bool formatted = false;
                i_ = j;
                if (j < s_.size() && is_quote(s_[j]) && python_string_prefix(word, formatted)) {
                    skip_string(formatted);
                    return t;
                }
                return Token{Tok::Name, word, t.line, depth_};
            }
            if ((c >= '0' && c <= '9') || (c == '.' && i_ + 1 < s_.size() && s_[i_ + 1] >= '0' && s_[i_ + 1] <= '9')) {
                skip_number();
                return t;
            }
            ++i_;
            switch (c) {
                case '(':
                    ++depth_;
                    t.kind = Tok::LParen;
                    return t;
                case '[':
                case '{': ++depth_; return t;
                case ')':
                    depth_ = std::max(0, depth_ - 1);
                    t.kind = Tok::RParen;
                    return t;
                case ']':
                case '}': depth_ = std::max(0, depth_ - 1); return t;
                case '.': t.kind = Tok::Dot; return t;
                case ',': t.kind = Tok::Comma; return t;
                case ';': t.kind = Tok::Semicolon; return t;
                case '*':
                    if (i_ < s_.size() && s_[i_] == '*') ++i_;  // `**` is not the star of `import *`
                    else t.kind = Tok::Star;
                    return t;
                case ':':
                    if (i_ < s_.size() && s_[i_] == '=') ++i_;  // walrus
                    else t.kind = Tok::Colon;
                    return t;
                default: return t;
            }
        }
        return Token{Tok::End, {}, line_, depth_};
    }

private:
    void skip_comment() {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
    }

    void skip_number() {
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (ident_char(static_cast<unsigned char>(c)) || c == '.') {
                ++i_;
            } else if ((c == '+' || c == '-') && (s_[i_ - 1] | 0x20) == 'e' &&
                       !(s_[i_ - 1] == 'e' && i_ >= 2 && (s_[i_ - 2] == 'x' || s_[i_ - 2] == 'X'))) {
                ++i_;  // 1e-3 (but not 0xe-1, which is a subtraction)
            } else {
                break;
            }
        }
    }

    // At an opening quote. A string that a newline interrupts (unterminated single-quoted) ends there.
    void skip_string(bool formatted) {
        const char q = s_[i_];
        const bool triple = i_ + 2 < s_.size() && s_[i_ + 1] == q && s_[i_ + 2] == q;
        i_ += triple ? 3 : 1;
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (c == '\\') {
                ++i_;
                if (i_ < s_.size() && s_[i_] == '\n') ++line_;
                if (i_ < s_.size()) ++i_;
                continue;
            }
            if (c == '\n') {
                if (!triple) return;
                ++line_;
                ++i_;
                continue;
            }
            if (formatted && c == '{') {
                ++i_;
                if (i_ < s_.size() && s_[i_] == '{') ++i_;  // `{{` is a literal brace
                else skip_replacement_field();
                continue;
            }
            ++i_;
            if (c != q) continue;
            if (!triple) return;
            if (i_ + 1 < s_.size() && s_[i_] == q && s_[i_ + 1] == q) {
                i_ += 2;
                return;
            }
        }
    }

    // After the `{` of an f-string replacement field: an expression (strings nest, PEP 701), then an optional
    // `!conversion` and `:format spec` (literal text with nested fields), up to the closing `}`.
    void skip_replacement_field() {
        int depth = 0;
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (c == '\n') {
                ++line_;
                ++i_;
            } else if (c == '#') {
                skip_comment();
            } else if (is_quote(c)) {
                skip_string(false);
            } else if (ident_start(static_cast<unsigned char>(c))) {
                std::size_t j = i_;
                while (j < s_.size() && ident_char(static_cast<unsigned char>(s_[j]))) ++j;
                bool formatted = false;
                const bool prefix =
                    j < s_.size() && is_quote(s_[j]) && python_string_prefix(s_.substr(i_, j - i_), formatted);
                i_ = j;
                if (prefix) skip_string(formatted);
            } else if (c == '(' || c == '[' || c == '{') {
                ++depth;
                ++i_;
            } else if (c == ')' || c == ']') {
                depth = std::max(0, depth - 1);
                ++i_;
            } else if (c == '}') {
                ++i_;
                if (depth == 0) return;
                --depth;
            } else if (c == ':' && depth == 0) {
                ++i_;
                skip_format_spec();
                return;
            } else {
                ++i_;
            }
        }
    }

    void skip_format_spec() {
        while (i_ < s_.size()) {
            const char c = s_[i_++];
            if (c == '}') return;
            if (c == '{') skip_replacement_field();
            else if (c == '\n') ++line_;
        }
    }

    std::string_view s_;
    std::size_t i_ = 0;
    int line_ = 1;
    int depth_ = 0;
};

// Reads `NAME (. NAME)*` starting at `t`; leaves `t` at the token after it.
std::string dotted_name(Lexer& lx, Token& t) {
    std::string out;
    while (t.kind == Tok::Name) {
        out += t.text;
        t = lx.next();
        if (t.kind != Tok::Dot) break;
        t = lx.next();
        if (t.kind != Tok::Name) break;
        out += '.';
    }
    return out;
}

// `NAME [as NAME]`: the name imported; `t` is left after it.
std::string imported_name(Lexer& lx, Token& t) {
    std::string name(t.text);
    t = lx.next();
    if (t.kind == Tok::Name && t.text == "as") {
        t = lx.next();
        if (t.kind == Tok::Name) t = lx.next();
    }
    return name;
}

}  // namespace

std::vector<ImportStatement> scan_imports(std::string_view text) {
    std::vector<ImportStatement> out;
    Lexer lx(text);
    bool at_start = true;  // the next token begins a simple statement
    Token t = lx.next();
    while (t.kind != Tok::End) {
        // `import` and `from` are keywords: at the start of a statement they begin an import (`from` elsewhere is
        // `yield from` or `raise ... from`).
        if (at_start && t.kind == Tok::Name && t.text == "import") {
            const int line = t.line;
            t = lx.next();
            while (t.kind == Tok::Name) {
                ImportStatement s;
                s.module = dotted_name(lx, t);
                s.line = line;
                if (t.kind == Tok::Name && t.text == "as") {
                    t = lx.next();
                    if (t.kind == Tok::Name) t = lx.next();
                }
                out.push_back(std::move(s));
                if (t.kind != Tok::Comma) break;
                t = lx.next();
            }
            at_start = false;
            continue;
        }
        if (at_start && t.kind == Tok::Name && t.text == "from") {
            ImportStatement s;
            s.from = true;
            s.line = t.line;
            t = lx.next();
            for (; t.kind == Tok::Dot; t = lx.next()) ++s.level;
            if (t.kind == Tok::Name && t.text != "import") s.module = dotted_name(lx, t);
            at_start = false;
            if (t.kind != Tok::Name || t.text != "import" || (s.level == 0 && s.module.empty())) continue;
            t = lx.next();
            if (t.kind == Tok::Star) {
                s.names.push_back("*");
                t = lx.next();
            } else {
                const bool parenthesized = t.kind == Tok::LParen;
                if (parenthesized) t = lx.next();
                while (t.kind == Tok::Name) {
                    s.names.push_back(imported_name(lx, t));
                    if (t.kind != Tok::Comma) break;
                    t = lx.next();
                }
                if (parenthesized && t.kind == Tok::RParen) t = lx.next();
            }
            if (!s.names.empty()) out.push_back(std::move(s));  // `from m import` alone is not a statement
            continue;
        }
        at_start = t.kind == Tok::Newline || ((t.kind == Tok::Semicolon || t.kind == Tok::Colon) && t.depth == 0);
        t = lx.next();
    }
    return out;
}

ImportGraph::ImportGraph(const std::string& root, Buffers buffers) : layout_(root), buffers_(std::move(buffers)) {}

bool ImportGraph::scan_into(Entry& e, const std::string& file, const std::string& text) {
    const std::uint64_t hash = std::hash<std::string_view>{}(text);
    if (e.scanned && hash == e.hash) return false;  // same content: the same imports
    const bool first = !e.scanned;
    e.scanned = true;
    e.hash = hash;
    std::vector<std::string> before = std::move(e.names);
    e.names.clear();
    ++read_counters().imports_scanned;
    // Relative imports start from the file's package: itself for __init__.py, else its parent.
    e.own = layout_.dotted_name_of(file).value_or("");
    std::string package = e.own;
    if (fs::path(file).filename() != "__init__.py") {
        auto dot = package.rfind('.');
        package = dot == std::string::npos ? std::string() : package.substr(0, dot);
    }
    for (const auto& s : scan_imports(text)) {
        std::string base = s.module;
        if (s.level > 0) {
            std::string up = package;
            bool outside = up.empty();
            for (int i = 1; i < s.level && !outside; ++i) {
                auto dot = up.rfind('.');
                outside = dot == std::string::npos;
                up = outside ? std::string() : up.substr(0, dot);
            }
            if (outside) continue;  // beyond the top-level package: Python refuses it
            base = s.module.empty() ? up : up + "." + s.module;
        }
        if (base.empty()) continue;
        e.names.push_back(base);
        for (const auto& name : s.names)
            if (name != "*") e.names.push_back(base + "." + name);
    }
    // A name only the launching script's sys.path finds (ModuleLayout::launch_bases: `from utils.overrides import
    // ...` under scripts/performance) is kept under the module's name from the root, the name its dependents are
    // looked up by. Files no script launches (every package module) never look.
    const std::string folder = fs::path(file).parent_path().string();
    const bool unresolved = std::any_of(e.names.begin(), e.names.end(), [&](const auto& n) { return !resolve(n); });
    auto bases = launch_bases_.end();
    if (unresolved) {  // a file whose every import resolves needs no launch folders
        bases = launch_bases_.find(folder);
        if (bases == launch_bases_.end()) bases = launch_bases_.emplace(folder, layout_.launch_bases(file)).first;
    }
    if (bases != launch_bases_.end() && !bases->second.empty())
        for (auto& name : e.names) {
            if (resolve(name)) continue;
            for (const auto& b : bases->second) {
                auto [known, inserted] = launch_names_.try_emplace(b + '\n' + name);
                if (inserted)
                    if (auto where = ModuleLayout::locate_in(b, name, false))
                        known->second = layout_.dotted_name_of(where->file).value_or("");
                if (known->second.empty()) continue;
                name = known->second;
                break;
            }
        }
    std::sort(e.names.begin(), e.names.end());
    e.names.erase(std::unique(e.names.begin(), e.names.end()), e.names.end());
    if (e.names == before) return false;
    if (!first) closures_.clear();  // a file scanned for the first time changes no answer given before
    return true;
}

const ImportGraph::Entry& ImportGraph::entry(const std::string& file) {
    auto [it, inserted] = entries_.try_emplace(file);
    if (!inserted) return it->second;
    Entry& e = it->second;
    if (const std::string* buffer = buffers_ ? buffers_(file) : nullptr) {
        e.from_buffer = true;
        scan_into(e, file, *buffer);
        return e;
    }
    e.stamp = stamp_of(file);
    std::string error;
    if (auto text = read_source_file(file, error)) scan_into(e, file, *text);
    return e;
}

const std::optional<std::string>& ImportGraph::resolve(const std::string& dotted) {
    auto [it, inserted] = resolved_.try_emplace(dotted);
    if (inserted)
        if (auto where = layout_.locate(dotted); where && !where->namespace_package)
            it->second = normalized_path(where->file);
    return it->second;
}

std::vector<std::string> ImportGraph::imports(const std::string& file) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    for (const auto& name : entry(file).names)
        if (const auto& target = resolve(name); target && *target != file) out.push_back(*target);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::set<std::string> ImportGraph::dependencies(const std::string& file) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = closures_.find(file); it != closures_.end()) return it->second;
    }
    std::set<std::string> seen;
    std::vector<std::string> todo{file};
    while (!todo.empty()) {
        const std::string next = std::move(todo.back());
        todo.pop_back();
        for (auto& d : imports(next))
            if (d != file && seen.insert(d).second) todo.push_back(std::move(d));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return closures_[file] = std::move(seen);
}

std::set<std::string> ImportGraph::dependents(const std::vector<std::string>& files) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!root_files_) {
        root_files_.emplace();
        importers_.reset();
        std::error_code ec;
        for (fs::recursive_directory_iterator it(layout_.root(), fs::directory_options::skip_permission_denied, ec),
             end;
             !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (it->is_directory(ec)) {
                // Hidden directories (.git, .venv), caches and installed packages are not the project's modules.
                if (name.empty() || name[0] == '.' || name == "__pycache__" || name == "node_modules" ||
                    name == "site-packages" || fs::exists(it->path() / "pyvenv.cfg", ec))
                    it.disable_recursion_pending();
                continue;
            }
            // Directory links are not followed, so paths below the (resolved) root are resolved too, but for linked files.
            if (name.size() > 3 && name.ends_with(".py") && it->is_regular_file(ec))
                root_files_->push_back(it->is_symlink(ec) ? normalized_path(it->path().string()) : it->path().string());
        }
        std::sort(root_files_->begin(), root_files_->end());
    }
    if (!importers_) {
        importers_.emplace();
        for (const auto& file : *root_files_)
            for (const auto& name : entry(file).names) (*importers_)[name].push_back(&file);
    }
    std::set<std::string> out;
    std::vector<std::string> todo;
    for (const auto& f : files)
        if (auto name = layout_.dotted_name_of(f)) todo.push_back(*name);
    std::set<std::string> names_seen(todo.begin(), todo.end());
    const std::set<std::string> given(files.begin(), files.end());
    while (!todo.empty()) {
        const std::string name = std::move(todo.back());
        todo.pop_back();
        auto it = importers_->find(name);
        if (it == importers_->end()) continue;
        for (const std::string* file : it->second) {
            if (given.count(*file) || !out.insert(*file).second) continue;
            const std::string& own = entries_.at(*file).own;
            if (!own.empty() && names_seen.insert(own).second) todo.push_back(own);
        }
    }
    return out;
}

void ImportGraph::revalidate() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end();) {
        Entry& e = it->second;
        const std::string& file = it->first;
        if (const std::string* buffer = buffers_ ? buffers_(file) : nullptr) {
            e.from_buffer = true;
            if (scan_into(e, file, *buffer)) importers_.reset();  // cheap when unchanged: a hash of the buffer
            ++it;
            continue;
        }
        FileStamp now = stamp_of(file);
        if (!e.from_buffer && now == e.stamp) {
            ++it;
            continue;
        }
        importers_.reset();
        if (!now.exists) {
            resolved_.clear();  // names that led to it must be looked up again
            root_files_.reset();
            closures_.clear();
            it = entries_.erase(it);
            continue;
        }
        // Changed on disk (or its editor buffer was closed): read it again; the same content keeps its imports.
        e.from_buffer = false;
        e.stamp = now;
        std::string error;
        if (auto text = read_source_file(file, error)) scan_into(e, file, *text);
        ++it;
    }
}

void ImportGraph::forget_layout() {
    std::lock_guard<std::mutex> lock(mutex_);
    resolved_.clear();
    launch_bases_.clear();
    launch_names_.clear();
    root_files_.reset();
    importers_.reset();
    closures_.clear();
}

}  // namespace mbl::py
