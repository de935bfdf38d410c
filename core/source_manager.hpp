#pragma once
// Holds the text of every file and override the run has read, so output can quote source lines.
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mbl {

class SourceManager {
public:
    // Reads a file from disk once; nullopt (and `error` set) when it cannot be read.
    const std::string* load(const std::string& path, std::string* error = nullptr);
    // Registers text that did not come from disk (an editor buffer, a command-line override).
    void add(const std::string& name, std::string text);
    const std::string* text(const std::string& name) const;
    // The 1-based line of a registered text, without its newline; nullopt when out of range.
    std::optional<std::string_view> line(const std::string& name, int line) const;

    // Largest file the linter reads; bigger input is refused with a clear message instead of exhausting memory.
    static constexpr std::size_t kMaxFileBytes = 64u << 20;

private:
    std::map<std::string, std::string> texts_;
};

std::optional<std::string_view> nth_line(std::string_view text, int line);

}  // namespace mbl
