#include "core/did_you_mean.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace mbl {

int edit_distance(std::string_view a, std::string_view b) {
    // Optimal string alignment distance, case-insensitive, kept in three rolling rows: it runs for every unknown
    // key of a file, so it must not allocate a matrix per call.
    const size_t m = b.size();
    std::vector<int> before(m + 1), previous(m + 1), current(m + 1);
    for (size_t j = 0; j <= m; ++j) previous[j] = static_cast<int>(j);
    auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
    for (size_t i = 1; i <= a.size(); ++i) {
        current[0] = static_cast<int>(i);
        for (size_t j = 1; j <= m; ++j) {
            const int cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                current[j] = std::min(current[j], before[j - 2] + 1);
        }
        std::swap(before, previous);
        std::swap(previous, current);
    }
    return previous[m];
}

std::vector<std::string> close_matches(std::string_view word, const std::vector<std::string>& candidates,
                                       size_t max_results) {
    // Long words tolerate more edits; very short ones only one.
    const int limit = std::max<int>(1, static_cast<int>(word.size()) / 3);
    // No known name is this long; a suggestion would be noise, and the distance is quadratic in the length.
    constexpr size_t kLongestSuggestible = 128;
    if (word.size() > kLongestSuggestible) return {};
    std::vector<std::pair<int, std::string>> scored, abbreviations;
    for (const auto& c : candidates) {
        if (c == word) continue;
        const size_t length_gap = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
        // The distance is at least the length gap: skip the quadratic work for candidates that cannot be near.
        const int d = length_gap > static_cast<size_t>(limit) ? static_cast<int>(length_gap) : edit_distance(word, c);
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
