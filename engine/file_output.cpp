#include "engine/file_output.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/file_text.hpp"

namespace mbl {

namespace {

constexpr std::string_view kTemporaryMark = ".mbridge-lint-";

// `.NAME.mbridge-lint-PID-XXXXXX`: the process that wrote it, or 0 for any other name.
long temporary_owner(const std::string& name) {
    const auto mark = name.rfind(kTemporaryMark);
    if (name.empty() || name[0] != '.' || mark == std::string::npos) return 0;
    const std::string rest = name.substr(mark + kTemporaryMark.size());
    const auto dash = rest.find('-');
    if (dash == std::string::npos || dash == 0 || rest.size() - dash - 1 != 6) return 0;
    long pid = 0;
    for (std::size_t i = 0; i < dash; ++i) {
        if (rest[i] < '0' || rest[i] > '9' || pid > 1'000'000'000) return 0;
        pid = pid * 10 + (rest[i] - '0');
    }
    return pid;
}

}  // namespace

std::vector<std::string> remove_stale_temporaries(const std::string& directory) {
    namespace fs = std::filesystem;
    std::vector<std::string> removed;
    std::error_code ec;
    for (fs::directory_iterator it(directory.empty() ? "." : directory, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e;
        if (!it->is_regular_file(e) || it->is_symlink(e)) continue;
        const long pid = temporary_owner(it->path().filename().string());
        // A live process (another run writing right now, or one we may not signal) keeps its file.
        if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
        if (::unlink(it->path().c_str()) == 0) removed.push_back(it->path().string());
    }
    return removed;
}

bool write_file_atomically(const std::string& path, std::string_view text, std::string* error,
                           const std::string* expected) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    std::string tmpl =
        (dir / fmt::format(".{}{}{}-XXXXXX", target.filename().string(), kTemporaryMark, ::getpid())).string();
    auto fail = [&](const char* what) {
        if (error) *error = fmt::format("{} {}: {}", what, path, std::strerror(errno));
        return false;
    };
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
        // Renaming over a link would replace the link, and writing through it would change a file elsewhere.
        if (error) *error = fmt::format("not writing fixes to {}: it is a symbolic link", path);
        return false;
    }
    const bool existed = ::stat(path.c_str(), &st) == 0;
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0) return fail("cannot create a temporary file next to");
    auto discard = [&](const char* what) {
        const int saved = errno;
        if (fd >= 0) ::close(fd);
        ::unlink(tmpl.c_str());
        errno = saved;
        return fail(what);
    };
    size_t written = 0;
    while (written < text.size()) {
        ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return discard("cannot write");
        written += static_cast<size_t>(n);
    }
    if ((existed && ::fchmod(fd, st.st_mode & 07777) != 0) || ::fsync(fd) != 0) return discard("cannot write");
    const int closed = ::close(fd);
    fd = -1;
    if (closed != 0) return discard("cannot write");
    if (expected) {
        // The last moment before the rename: an edit made since the file was read would otherwise be lost.
        const FileText now = read_file_text(path, expected->size() + 1);
        if (!now.text || *now.text != *expected) {
            ::unlink(tmpl.c_str());
            if (error)
                *error = fmt::format("{} changed on disk since mbridge-lint read it; its fixes are not written (run "
                                     "again)",
                                     path);
            return false;
        }
    }
    if (::rename(tmpl.c_str(), path.c_str()) != 0) return discard("cannot replace");
    return true;
}

namespace {

// Lines including their "\n" (the last one may lack it), so a missing final newline is a difference too.
std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
        out.push_back(text.substr(pos, end - pos));
        pos = end;
    }
    return out;
}

enum class Op { Equal, Delete, Insert };
struct Step {
    Op op;
    size_t a, b;  // line indexes in before / after
};

// Myers' O((N+M)D) shortest edit script; each round keeps only its diagonals [-d, d].
std::vector<Step> shortest_edit(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
    const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size());
    std::vector<std::vector<long>> rounds;  // rounds[d][k + d] = furthest x on diagonal k after round d
    std::vector<long> prev;
    long final_d = -1;
    for (long d = 0; d <= n + m && final_d < 0; ++d) {
        std::vector<long> v(static_cast<size_t>(2 * d + 1));
        auto at = [&](const std::vector<long>& w, long dd, long k) { return w[static_cast<size_t>(k + dd)]; };
        for (long k = -d; k <= d; k += 2) {
            long x;
            if (d == 0) x = 0;
            else if (k == -d || (k != d && at(prev, d - 1, k - 1) < at(prev, d - 1, k + 1))) x = at(prev, d - 1, k + 1);
            else x = at(prev, d - 1, k - 1) + 1;
            long y = x - k;
            while (x < n && y < m && a[static_cast<size_t>(x)] == b[static_cast<size_t>(y)]) ++x, ++y;
            v[static_cast<size_t>(k + d)] = x;
            if (x >= n && y >= m) final_d = d;
        }
        rounds.push_back(v);
        prev = std::move(v);
    }
    std::vector<Step> steps;
    long x = n, y = m;
    for (long d = final_d; d >= 0; --d) {
        const long k = x - y;
        long px = 0, py = 0;
        if (d > 0) {
            const auto& w = rounds[static_cast<size_t>(d - 1)];
            auto at = [&](long kk) { return w[static_cast<size_t>(kk + d - 1)]; };
            const long pk = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
            px = at(pk);
            py = px - pk;
        }
        while (x > px && y > py) {
            --x, --y;
            steps.push_back({Op::Equal, static_cast<size_t>(x), static_cast<size_t>(y)});
        }
        if (d > 0) {
            if (x == px) steps.push_back({Op::Insert, static_cast<size_t>(x), static_cast<size_t>(py)});
            else steps.push_back({Op::Delete, static_cast<size_t>(px), static_cast<size_t>(y)});
        }
        x = px;
        y = py;
    }
    return {steps.rbegin(), steps.rend()};
}

void put_line(std::string& out, char mark, std::string_view line) {
    out += mark;
    out.append(line);
    if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

}  // namespace

std::string unified_diff(const std::string& path, std::string_view before, std::string_view after) {
    if (before == after) return "";
    const auto a = split_lines(before), b = split_lines(after);
    const auto steps = shortest_edit(a, b);
    constexpr size_t context = 3;
    std::string out = fmt::format("--- {}\n+++ {}\n", path, path);
    size_t i = 0;
    while (i < steps.size()) {
        if (steps[i].op == Op::Equal) {
            ++i;
            continue;
        }
        // A hunk: from `context` lines before this change to `context` lines after the last change that is less than
        // 2 * context equal lines away from the next one.
        size_t start = i >= context ? i - context : 0;
        while (start < i && steps[start].op != Op::Equal) ++start;
        size_t end = i, equal_run = 0;
        for (size_t j = i; j < steps.size(); ++j) {
            if (steps[j].op == Op::Equal) {
                if (++equal_run > 2 * context) break;
            } else {
                equal_run = 0;
                end = j;
            }
        }
        size_t stop = std::min(steps.size(), end + 1 + context);
        size_t a_start = steps[start].a, b_start = steps[start].b, a_count = 0, b_count = 0;
        std::string body;
        for (size_t j = start; j < stop; ++j) {
            const Step& s = steps[j];
            if (s.op == Op::Equal) put_line(body, ' ', a[s.a]), ++a_count, ++b_count;
            else if (s.op == Op::Delete) put_line(body, '-', a[s.a]), ++a_count;
            else put_line(body, '+', b[s.b]), ++b_count;
        }
        out += fmt::format("@@ -{},{} +{},{} @@\n", a_count ? a_start + 1 : a_start, a_count,
                           b_count ? b_start + 1 : b_start, b_count);
        out += body;
        i = stop;
    }
    return out;
}

}  // namespace mbl
