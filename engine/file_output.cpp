#include "engine/file_output.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

namespace mbl {

bool write_file_atomically(const std::string& path, std::string_view text, std::string* error) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    std::string tmpl = (dir / fmt::format(".{}.mbridge-lint-XXXXXX", target.filename().string())).string();
    auto fail = [&](const char* what) {
        if (error) *error = fmt::format("{} {}: {}", what, path, std::strerror(errno));
        return false;
    };
    struct stat st {};
    const bool existed = ::stat(path.c_str(), &st) == 0;
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0) return fail("cannot create a temporary file next to");
    size_t written = 0;
    while (written < text.size()) {
        ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ::close(fd);
            ::unlink(tmpl.c_str());
            return fail("cannot write");
        }
        written += static_cast<size_t>(n);
    }
    if ((existed && ::fchmod(fd, st.st_mode & 07777) != 0) || ::fsync(fd) != 0) {
        ::close(fd);
        ::unlink(tmpl.c_str());
        return fail("cannot write");
    }
    ::close(fd);
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        ::unlink(tmpl.c_str());
        return fail("cannot replace");
    }
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
