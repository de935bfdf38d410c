#include "core/did_you_mean.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace mbl {

int edit_distance(std::string_view a, std::string_view b) {
    const size_t n = a.size(), m = b.size();
    std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
    for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
    for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
    for (size_t i = 1; i <= n; ++i) {
        for (size_t j = 1; j <= m; ++j) {
            int cost = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                               std::tolower(static_cast<unsigned char>(b[j - 1]))
                           ? 0
                           : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[n][m];
}

std::vector<std::string> close_matches(std::string_view word, const std::vector<std::string>& candidates,
                                       size_t max_results) {
    // Long words tolerate more edits; very short ones only one.
    const int limit = std::max<int>(1, static_cast<int>(word.size()) / 3);
    std::vector<std::pair<int, std::string>> scored, abbreviations;
    for (const auto& c : candidates) {
        if (c == word) continue;
        int d = edit_distance(word, c);
        if (d <= limit) scored.emplace_back(d, c);
        // Only when nothing is a near miss: a candidate containing the word is a likely abbreviation ("attn").
        else if (word.size() >= 3 && c.find(word) != std::string::npos) abbreviations.emplace_back(d, c);
    }
    if (scored.empty()) scored = std::move(abbreviations);
    std::sort(scored.begin(), scored.end());
    std::vector<std::string> out;
    for (auto& [d, c] : scored) {
        if (out.size() >= max_results) break;
        out.push_back(c);
    }
    return out;
}

std::string did_you_mean_suffix(std::string_view word, const std::vector<std::string>& candidates) {
    auto matches = close_matches(word, candidates, 2);
    if (matches.empty()) return {};
    if (matches.size() == 1) return fmt::format(" (did you mean \"{}\"?)", matches[0]);
    return fmt::format(" (did you mean \"{}\" or \"{}\"?)", matches[0], matches[1]);
}

}  // namespace mbl
