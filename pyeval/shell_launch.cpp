#include "pyeval/shell_launch.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>

namespace mbl::py {
namespace fs = std::filesystem;

namespace {

// Marks a part of a value the text does not say (the environment, a command's output): an entry holding it is
// dropped.
constexpr char kUnknown = '\x01';

bool unknown(std::string_view s) { return s.find(kUnknown) != std::string_view::npos; }

struct ShellState {
    std::string launcher;                     // absolute: $0 and ${BASH_SOURCE[0]}
    std::optional<std::string> cwd;           // unknown until the launcher's own `cd` to a known folder
    std::map<std::string, std::string> vars;  // what the launcher assigned
    std::set<std::string> exported;
};

struct LogicalLine {
    std::string text;
    int line = 0;
};

// The launcher's commands line by line: continuations joined, comments and here-document bodies left out.
std::vector<LogicalLine> logical_lines(std::string_view text) {
    std::vector<LogicalLine> out;
    static const std::regex heredoc(R"(<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?)");
    std::string pending, terminator;
    int number = 0, start = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const auto end = std::min(text.find('\n', pos), text.size());
        std::string line(text.substr(pos, end - pos));
        pos = end + 1;
        ++number;
        if (!terminator.empty()) {
            const auto first = line.find_first_not_of(" \t");
            if (first != std::string::npos && line.substr(first) == terminator) terminator.clear();
            continue;
        }
        if (pending.empty()) start = number;
        if (!line.empty() && line.back() == '\\') {
            pending += line.substr(0, line.size() - 1) + ' ';
            continue;
        }
        pending += line;
        std::smatch m;
        if (pending.find("<<") != std::string::npos && pending.find("<<<") == std::string::npos &&
            std::regex_search(pending, m, heredoc))
            terminator = m[1];
        out.push_back({std::move(pending), start});
        pending.clear();
        if (end == text.size()) break;
    }
    return out;
}

// Where a `$(`, `${` or quote that starts at `i` ends (the index of its closing character), or npos.
std::size_t closing(std::string_view s, std::size_t i) {
    const char open = s[i];
    if (open == '\'') return s.find('\'', i + 1);
    if (open == '"' || open == '`') {
        for (std::size_t j = i + 1; j < s.size(); ++j) {
            if (s[j] == '\\') ++j;
            else if (s[j] == open) return j;
            else if (open == '"' && s[j] == '$' && j + 1 < s.size() && (s[j + 1] == '(' || s[j + 1] == '{')) {
                j = closing(s, j + 1);
                if (j == std::string_view::npos) return j;
            }
        }
        return std::string_view::npos;
    }
    const char close = open == '(' ? ')' : '}';
    int depth = 0;
    for (std::size_t j = i; j < s.size(); ++j) {
        if (s[j] == '\'' || s[j] == '"' || s[j] == '`') {
            j = closing(s, j);
            if (j == std::string_view::npos) return j;
        } else if (s[j] == open) {
            ++depth;
        } else if (s[j] == close && --depth == 0) {
            return j;
        }
    }
    return std::string_view::npos;
}

// Splits a line into its simple commands (at `;`, `&&`, `||`, `|`, `&` outside quotes and substitutions), or into
// words (at blanks); a `#` starting a word ends the line.
std::vector<std::string> split(std::string_view s, bool into_words) {
    std::vector<std::string> out;
    std::string cur;
    auto flush = [&] {
        const auto first = cur.find_first_not_of(" \t");
        if (first != std::string::npos) out.push_back(cur.substr(first));
        cur.clear();
    };
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool word_start = i == 0 || std::isspace(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == ';';
        if (c == '#' && word_start) break;
        std::size_t end = std::string_view::npos;
        if (c == '\'' || c == '"' || c == '`') end = closing(s, i);
        else if (c == '$' && i + 1 < s.size() && (s[i + 1] == '(' || s[i + 1] == '{')) end = closing(s, i + 1);
        if (end != std::string_view::npos) {
            cur.append(s.substr(i, end + 1 - i));
            i = end;
        } else if (into_words ? std::isspace(static_cast<unsigned char>(c)) != 0
                              : (c == ';' || c == '|' || (c == '&' && (i == 0 || s[i - 1] != '>')))) {
            flush();
        } else {
            cur.push_back(c);
        }
    }
    flush();
    return out;
}

std::string normalized(const fs::path& p) {
    std::string s = p.lexically_normal().string();
    if (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
}

// An absolute path for `path` as a command running in `cwd` sees it; kUnknown when it depends on what is unknown.
std::string absolute(const std::string& path, const std::optional<std::string>& cwd) {
    if (path.empty() || unknown(path)) return std::string(1, kUnknown);
    if (path[0] == '/') return normalized(path);
    if (!cwd) return std::string(1, kUnknown);
    return normalized(fs::path(*cwd) / path);
}

std::string dirname(std::string p) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    const auto slash = p.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : p.substr(0, slash);
}

std::string expand(std::string_view word, const ShellState& st);

// The output of `$(...)` for the commands launchers compute folders with: cd, pwd, dirname, realpath, readlink -f.
std::string substitute(std::string_view inner, const ShellState& outer) {
    ShellState st = outer;  // a subshell: its `cd` stays inside
    std::string output(1, kUnknown);
    for (const auto& command : split(inner, false)) {
        std::vector<std::string> args;
        for (const auto& w : split(command, true))
            if (w.find('>') == std::string::npos && w != "--" && w != "-P" && w != "-L") args.push_back(w);
        if (args.empty()) continue;
        const std::string& verb = args[0];
        const std::string arg = args.size() > 1 ? expand(args.back(), st) : std::string(1, kUnknown);
        const bool readlink =
            verb == "readlink" && args.size() == 3 && (args[1] == "-f" || args[1] == "-e" || args[1] == "-m");
        if (verb == "cd") {
            const std::string dir = args.size() == 2 ? absolute(arg, st.cwd) : std::string(1, kUnknown);
            st.cwd = unknown(dir) ? std::nullopt : std::optional<std::string>(dir);
        } else if (verb == "pwd" && args.size() == 1) {
            output = st.cwd.value_or(std::string(1, kUnknown));
        } else if (verb == "dirname" && args.size() == 2) {
            output = unknown(arg) ? arg : dirname(arg);
        } else if ((verb == "realpath" && args.size() == 2) || readlink) {
            output = absolute(arg, st.cwd);
        } else {
            output = std::string(1, kUnknown);
        }
    }
    return output;
}

// `${NAME...}` and `$NAME`: what the launcher assigned, its own path, its working directory; a variable it never
// assigned is unset (so `${ROOT:-default}` is the default), except PYTHONPATH itself, whose inherited value is
// unknown, and a bare `$HOME`-like reference, which only the environment gives.
std::string parameter(std::string_view body, const ShellState& st) {
    std::size_t n = 0;
    while (n < body.size() && (std::isalnum(static_cast<unsigned char>(body[n])) || body[n] == '_')) ++n;
    std::string name(body.substr(0, n));
    std::string_view rest = body.substr(n);
    if (rest.starts_with("[0]") || rest.starts_with("[@]")) {
        name += rest.substr(0, 3);
        rest.remove_prefix(3);
    }
    std::optional<std::string> value;
    if (name == "0" || name == "BASH_SOURCE" || name == "BASH_SOURCE[0]") value = st.launcher;
    else if (name == "PWD") value = st.cwd.value_or(std::string(1, kUnknown));
    else if (auto it = st.vars.find(name); it != st.vars.end()) value = it->second;
    else if (name == "PYTHONPATH") value = std::string(1, kUnknown);
    if (rest.empty()) return value.value_or(std::string(1, kUnknown));
    const bool colon = rest[0] == ':';
    if (colon) rest.remove_prefix(1);
    if (rest.empty()) return std::string(1, kUnknown);
    const char op = rest[0];
    const std::string word = expand(rest.substr(1), st);
    // Set or not, nobody knows: `${PYTHONPATH:+:$PYTHONPATH}` still starts a new entry, so the one before it stands.
    if (value && unknown(*value) && op == '+')
        return word.starts_with(':') ? std::string(":") + kUnknown : std::string(1, kUnknown);
    if (value && unknown(*value) && (op == '-' || op == '=')) return std::string(1, kUnknown);
    const bool set = value && !(colon && value->empty());
    if (op == '-' || op == '=') return set ? *value : word;
    if (op == '+') return set ? word : std::string();
    return std::string(1, kUnknown);  // `#`, `%`, `/`: string surgery the model does not do
}

// A word as the shell expands it (quotes removed); parts the text does not say are kUnknown.
std::string expand(std::string_view word, const ShellState& st) {
    std::string out;
    for (std::size_t i = 0; i < word.size(); ++i) {
        const char c = word[i];
        if (c == '\'') {
            const auto end = closing(word, i);
            if (end == std::string_view::npos) return std::string(1, kUnknown);
            out.append(word.substr(i + 1, end - i - 1));
            i = end;
        } else if (c == '"') {
            const auto end = closing(word, i);
            if (end == std::string_view::npos) return std::string(1, kUnknown);
            out += expand(word.substr(i + 1, end - i - 1), st);
            i = end;
        } else if (c == '`') {
            const auto end = closing(word, i);
            if (end == std::string_view::npos) return std::string(1, kUnknown);
            out += substitute(word.substr(i + 1, end - i - 1), st);
            i = end;
        } else if (c == '\\' && i + 1 < word.size()) {
            out.push_back(word[++i]);
        } else if (c == '$' && i + 1 < word.size() && (word[i + 1] == '(' || word[i + 1] == '{')) {
            const auto end = closing(word, i + 1);
            if (end == std::string_view::npos) return std::string(1, kUnknown);
            const std::string_view inner = word.substr(i + 2, end - i - 2);
            out += word[i + 1] == '(' ? substitute(inner, st) : parameter(inner, st);
            i = end;
        } else if (c == '$' && i + 1 < word.size() &&
                   (std::isalnum(static_cast<unsigned char>(word[i + 1])) || word[i + 1] == '_')) {
            std::size_t n = i + 1;
            if (std::isdigit(static_cast<unsigned char>(word[n]))) ++n;
            else
                while (n < word.size() && (std::isalnum(static_cast<unsigned char>(word[n])) || word[n] == '_')) ++n;
            out += parameter(word.substr(i + 1, n - i - 1), st);
            i = n - 1;
        } else {
            out.push_back(c);
        }
    }
    return out;
}

bool is_assignment(std::string_view w) {
    const auto eq = w.find('=');
    if (eq == 0 || eq == std::string_view::npos || std::isdigit(static_cast<unsigned char>(w[0]))) return false;
    for (std::size_t i = 0; i < eq; ++i)
        if (!std::isalnum(static_cast<unsigned char>(w[i])) && w[i] != '_') return false;
    return true;
}

// `python`, `python3.11`, `torchrun`, with or without a folder. Asked of every word of every launcher line: a
// comparison, where a regex match cost a third of reading a tree's launchers.
bool runs_python(const std::string& word) {
    const auto slash = word.rfind('/');
    const std::string_view name = std::string_view(word).substr(slash == std::string::npos ? 0 : slash + 1);
    if (name == "torchrun") return true;
    if (!name.starts_with("python")) return false;
    return std::all_of(name.begin() + 6, name.end(),
                       [](char c) { return c == '.' || std::isdigit(static_cast<unsigned char>(c)); });
}

// The folders a PYTHONPATH value names, absolute, for a Python process started in `cwd`.
std::vector<std::string> pythonpath_folders(const std::string& value, const std::optional<std::string>& cwd) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= value.size()) {
        auto end = value.find(':', start);
        if (end == std::string::npos) end = value.size();
        const std::string entry = value.substr(start, end - start);
        start = end + 1;
        if (entry.empty()) continue;  // the working directory, which only the caller knows
        const std::string folder = absolute(entry, cwd);
        if (!unknown(folder)) out.push_back(folder);
    }
    return out;
}

struct Command {
    std::vector<std::pair<std::string, std::string>> assignments;  // NAME, expanded value
    std::vector<std::string> words;                                // expanded, after the assignments
    bool exports = false;                                          // `export ...`
};

Command read_command(const std::string& text, const ShellState& st) {
    Command c;
    auto raw = split(text, true);
    std::size_t i = 0;
    // Words that run what follows them in this shell: `then python x.py`, `exec env A=1 python x.py`.
    static const std::set<std::string, std::less<>> prefixes{"then", "do",   "else",  "{",  "(",
                                                             "exec", "time", "nohup", "env"};
    while (i < raw.size() && prefixes.count(raw[i])) ++i;
    if (i < raw.size() && (raw[i] == "export" || raw[i] == "declare" || raw[i] == "local" || raw[i] == "readonly")) {
        c.exports = raw[i] == "export";
        ++i;
        while (i < raw.size() && raw[i][0] == '-') ++i;  // `declare -x`
    }
    for (; i < raw.size() && is_assignment(raw[i]); ++i) {
        const auto eq = raw[i].find('=');
        c.assignments.emplace_back(raw[i].substr(0, eq), expand(std::string_view(raw[i]).substr(eq + 1), st));
    }
    for (; i < raw.size(); ++i) c.words.push_back(c.exports ? raw[i] : expand(raw[i], st));
    return c;
}

// The script a command runs with Python (`python x.py`, `python3 -u x.py`, `torchrun --nproc_per_node=8 x.py`,
// `uv run x.py`), or empty: none, a module (`-m`), a command string (`-c`).
std::string python_script(const std::vector<std::string>& words) {
    bool python = false;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string& w = words[i];
        if (!python) {
            python = runs_python(w) || (w == "uv" && i + 1 < words.size() && words[i + 1] == "run");
            continue;
        }
        if (w == "-m" || w == "-c" || w == "--module") return {};
        if (w.size() > 3 && w.ends_with(".py") && w[0] != '-') return w;
    }
    return {};
}

void run_command(const Command& c, int line, ShellState& st, std::vector<LaunchedScript>& out) {
    if (c.words.empty() || c.exports) {
        for (const auto& [name, value] : c.assignments) st.vars[name] = value;
        if (c.exports) {
            for (const auto& [name, value] : c.assignments) st.exported.insert(name);
            for (const auto& w : c.words)
                if (w[0] != '-') st.exported.insert(w);
        }
        return;
    }
    if (c.words[0] == "cd") {
        std::string dir = c.words.size() > 1 ? c.words.back() : std::string(1, kUnknown);
        dir = absolute(dir, st.cwd);
        st.cwd = unknown(dir) ? std::nullopt : std::optional<std::string>(dir);
        return;
    }
    const std::string script = python_script(c.words);
    if (script.empty()) return;
    const std::string path = absolute(script, st.cwd);
    if (unknown(path)) return;
    std::optional<std::string> pythonpath;
    for (const auto& [name, value] : c.assignments)
        if (name == "PYTHONPATH") pythonpath = value;
    if (!pythonpath && st.exported.count("PYTHONPATH"))
        if (auto it = st.vars.find("PYTHONPATH"); it != st.vars.end()) pythonpath = it->second;
    out.push_back({path, pythonpath ? pythonpath_folders(*pythonpath, st.cwd) : std::vector<std::string>{}, line});
}

}  // namespace

std::vector<LaunchedScript> scripts_launched_by(const std::string& launcher, std::string_view text) {
    ShellState st;
    st.launcher = normalized(launcher);
    std::vector<LaunchedScript> out;
    for (const auto& line : logical_lines(text))
        for (const auto& command : split(line.text, false)) run_command(read_command(command, st), line.line, st, out);
    return out;
}

}  // namespace mbl::py
