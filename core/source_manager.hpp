#pragma once
// Holds the text of every file and override the run has read, so output can quote source lines. Thread-safe: the
// files of a run are linted on several threads. A text (or line index) handed out stays valid until `add` replaces
// the text of its name, which must therefore not race with a reader of that name (fixes do it between lints).
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/limits.hpp"
#include "core/line_index.hpp"

namespace mbl {

class SourceManager {
public:
    // Reads a file from disk once, or returns the text registered under `path`; null (and `error` set) when it cannot
    // be read or is larger than max_file_bytes().
    const std::string* load(const std::string& path, std::string* error = nullptr);
    // Registers text that did not come from disk (an editor buffer, a command-line override).
    void add(const std::string& name, std::string text);
    // Registers text under `name` unless some text already is (a module read for quoting, by any thread).
    void add_new(const std::string& name, std::string_view text);
    // The same, keeping `text` itself (shared with its owner, a module's syntax tree) instead of a copy.
    void add_new(const std::string& name, std::shared_ptr<const std::string> text);
    const std::string* text(const std::string& name) const;
    // Registers `text` under `name` and under every other name already registered for the same file (a path as
    // given and the same path made absolute): a fix's new text must reach every reader.
    void replace_everywhere(const std::string& name, std::string text);
    // The 1-based line of a registered text, without its newline; nullopt when out of range.
    std::optional<std::string_view> line(const std::string& name, int line) const;
    // The line index of a registered text (built once, dropped when the text changes); null when unknown.
    const LineIndex* lines(const std::string& name) const;

    // Largest file the linter reads; bigger input is refused with a clear message instead of exhausting memory.
    // Bridge configs and recipe modules are kilobytes; the default 16 MiB leaves room for generated YAML dumps while
    // a stray 50 MB file is refused at once instead of costing seconds and a GiB (`--limit file-size=...`).
    static std::size_t max_file_bytes() { return static_cast<std::size_t>(limit(Limit::FileBytes)); }

private:
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<const std::string>> texts_;
    // Built on first line() of a text (diagnostics quote lines of large files); dropped when the text changes.
    mutable std::map<std::string, LineIndex> line_indexes_;
};

std::optional<std::string_view> nth_line(std::string_view text, int line);

}  // namespace mbl
