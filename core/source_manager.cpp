#include "core/source_manager.hpp"

#include "core/paths.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "core/file_text.hpp"

namespace mbl {

namespace {
std::string too_large(std::size_t size) {
    return fmt::format("the file is {} bytes, above mbridge-lint's limit of {} (--limit file-size=...)", size,
                       format_limit(*find_limit("file-size"), SourceManager::max_file_bytes()));
}
}  // namespace

const std::string* SourceManager::load(const std::string& path, std::string* error) {
    if (const std::string* known = text(path)) {
        // An editor's buffer is bounded as the file on disk would be.
        if (known->size() <= max_file_bytes()) return known;
        if (error) *error = too_large(known->size());
        return nullptr;
    }
    // Only what the shell hands over as a pipe (`<(command)`, /dev/stdin) is read as one: a named FIFO would wait
    // for a writer, a device might never end.
    const bool shell_pipe =
        path.rfind("/dev/fd/", 0) == 0 || path.rfind("/proc/self/fd/", 0) == 0 || path == "/dev/stdin";
    FileText read = read_file_text(path, max_file_bytes(), /*regular_only=*/!shell_pipe);
    if (!read.text) {
        if (error) {
            switch (read.failure) {
                case FileText::Failure::Directory: *error = "is a directory"; break;
                case FileText::Failure::NotRegular:
                    *error = "not a regular file (a FIFO, socket or device); only regular files are read";
                    break;
                case FileText::Failure::TooLarge: *error = too_large(read.size); break;
                case FileText::Failure::CannotOpen: *error = std::strerror(read.error_number); break;
                default: *error = "read error"; break;
            }
        }
        return nullptr;
    }
    // Read outside the lock; a thread that read the same file meanwhile keeps its text (the first one stays).
    std::lock_guard<std::mutex> lock(mutex_);
    auto& kept = texts_[path];
    if (!kept) kept = std::make_shared<const std::string>(std::move(*read.text));
    return kept.get();
}

void SourceManager::add(const std::string& name, std::string text) {
    std::lock_guard<std::mutex> lock(mutex_);
    line_indexes_.erase(name);
    texts_[name] = std::make_shared<const std::string>(std::move(text));
}

void SourceManager::add_new(const std::string& name, std::string_view text) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& kept = texts_[name];
    if (!kept) kept = std::make_shared<const std::string>(text);
}

void SourceManager::add_new(const std::string& name, std::shared_ptr<const std::string> text) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& kept = texts_[name];
    if (!kept) kept = std::move(text);
}

void SourceManager::replace_everywhere(const std::string& name, std::string text) {
    auto shared = std::make_shared<const std::string>(std::move(text));
    const bool file = !name.empty() && name.front() != '<';
    const std::string key = file ? normalized_path(name) : name;
    std::lock_guard<std::mutex> lock(mutex_);
    texts_[name] = shared;
    line_indexes_.erase(name);
    if (!file) return;
    for (auto& [other, kept] : texts_)
        if (other != name && !other.empty() && other.front() != '<' && normalized_path(other) == key) {
            kept = shared;
            line_indexes_.erase(other);
        }
}

const std::string* SourceManager::text(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = texts_.find(name);
    return it == texts_.end() ? nullptr : it->second.get();
}

std::optional<std::string_view> nth_line(std::string_view text, int line) {
    if (line < 1) return std::nullopt;
    size_t pos = 0;
    for (int l = 1; l < line; ++l) {
        pos = text.find('\n', pos);
        if (pos == std::string_view::npos) return std::nullopt;
        ++pos;
    }
    if (pos > text.size()) return std::nullopt;
    size_t end = text.find('\n', pos);
    std::string_view out = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
    return out;
}

const LineIndex* SourceManager::lines(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = texts_.find(name);
    if (found == texts_.end()) return nullptr;
    const std::string* t = found->second.get();
    auto it = line_indexes_.find(name);
    if (it == line_indexes_.end()) it = line_indexes_.emplace(name, LineIndex(*t)).first;
    return &it->second;
}

std::optional<std::string_view> SourceManager::line(const std::string& name, int line) const {
    const LineIndex* index = lines(name);
    if (!index) return std::nullopt;
    return index->line_text(line);
}

}  // namespace mbl
