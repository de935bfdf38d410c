#include "core/did_you_mean.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace mbl {

namespace {

// No known name is this long; a suggestion would be noise.
constexpr std::size_t kLongestSuggestible = 128;

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

std::string lowered(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = lower(c);
    return out;
}

// Optimal string alignment distance of two lower-case words, computed only in the band of cells that can stay
// within `limit` (three rolling rows); stops as soon as a whole row is over it and returns limit + 1.
int osa_distance(std::string_view a, std::string_view b, int limit, std::uint64_t& cells) {
    const int n = static_cast<int>(a.size()), m = static_cast<int>(b.size());
    const int over = limit + 1;
    if (std::abs(n - m) > limit) return over;
    std::vector<int> before(m + 2, over), previous(m + 2, over), current(m + 2, over);
    for (int j = 0; j <= std::min(m, limit); ++j) previous[j] = j;
    for (int i = 1; i <= n; ++i) {
        const int lo = std::max(1, i - limit), hi = std::min(m, i + limit);
        current[lo - 1] = lo == 1 ? i : over;
        int row_min = current[lo - 1];
        for (int j = lo; j <= hi; ++j) {
            const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            int d = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d = std::min(d, before[j - 2] + 1);
            current[j] = std::min(d, over);
            row_min = std::min(row_min, current[j]);
        }
        cells += static_cast<std::uint64_t>(hi - lo + 1);
        current[hi + 1] = over;
        if (row_min > limit) return over;
        std::swap(before, previous);
        std::swap(previous, current);
    }
    return std::min(previous[m], over);
}

}  // namespace

int edit_distance(std::string_view a, std::string_view b) {
    std::uint64_t cells = 0;
    return osa_distance(lowered(a), lowered(b), static_cast<int>(std::max(a.size(), b.size())), cells);
}

NameMatcher::NameMatcher(const std::vector<std::string>& candidates) {
    for (const auto& c : candidates) {
        Candidate k{c, lowered(c), {}};
        for (unsigned char ch : k.lower)
            k.counts[ch & 31] = static_cast<std::uint8_t>(std::min(255, k.counts[ch & 31] + 1));
        by_length_.push_back(std::move(k));
    }
    std::stable_sort(by_length_.begin(), by_length_.end(),
                     [](const Candidate& a, const Candidate& b) { return a.name.size() < b.name.size(); });
    const std::size_t longest = by_length_.empty() ? 0 : by_length_.back().name.size();
    for (std::size_t len = 0; len <= longest + 1; ++len)
        first_of_length_.push_back(static_cast<std::size_t>(
            std::lower_bound(by_length_.begin(), by_length_.end(), len,
                             [](const Candidate& c, std::size_t l) { return c.name.size() < l; }) -
            by_length_.begin()));
}

std::vector<std::string> NameMatcher::close_matches(std::string_view word, std::size_t max_results) const {
    if (word.size() > kLongestSuggestible || by_length_.empty()) return {};
    // Long words tolerate more edits; very short ones only one.
    const int limit = std::max<int>(1, static_cast<int>(word.size()) / 3);
    const std::string lw = lowered(word);
    Counts counts{};
    for (unsigned char ch : lw) counts[ch & 31] = static_cast<std::uint8_t>(std::min(255, counts[ch & 31] + 1));
    auto index_of_length = [&](std::size_t len) {
        return len < first_of_length_.size() ? first_of_length_[len] : by_length_.size();
    };
    std::vector<std::pair<int, std::string>> scored;
    std::uint64_t cells = 0;
    // Only names whose length is within `limit` can be that near; and only those whose letters differ by at most
    // `limit` (a multiset difference: each edit changes it by at most one) are worth the distance.
    const std::size_t from = index_of_length(word.size() > static_cast<std::size_t>(limit) ? word.size() - limit : 0);
    const std::size_t to = index_of_length(word.size() + limit + 1);
    for (std::size_t i = from; i < to; ++i) {
        const Candidate& c = by_length_[i];
        if (c.name == word) continue;
        int more = 0, fewer = 0;
        for (std::size_t b = 0; b < counts.size(); ++b) {
            const int d = counts[b] - c.counts[b];
            if (d > 0) more += d;
            else fewer -= d;
        }
        if (std::max(more, fewer) > limit) continue;
        const int d = osa_distance(lw, c.lower, limit, cells);
        if (d <= limit) scored.emplace_back(d, c.name);
    }
    cells_.fetch_add(cells, std::memory_order_relaxed);
    // Only when nothing is a near miss: a name with a part starting with the word is a likely abbreviation ("attn" for
    // core_attn); its distance is the number of letters it adds. The word inside a part is chance ("run" in
    // rerun_state_machine), no suggestion.
    auto starts_a_part = [&](const std::string& name) {
        for (std::size_t at = name.find(word); at != std::string::npos; at = name.find(word, at + 1))
            if (at == 0 || name[at - 1] == '_') return true;
        return false;
    };
    if (scored.empty() && word.size() >= 3)
        for (std::size_t i = index_of_length(word.size() + 1); i < by_length_.size(); ++i)
            if (starts_a_part(by_length_[i].name))
                scored.emplace_back(static_cast<int>(by_length_[i].name.size() - word.size()), by_length_[i].name);
    std::sort(scored.begin(), scored.end());
    std::vector<std::string> out;
    for (auto& [d, c] : scored) {
        if (out.size() >= max_results) break;
        out.push_back(std::move(c));
    }
    return out;
}

std::string NameMatcher::suffix(std::string_view word) const {
    auto matches = close_matches(word, 2);
    if (matches.empty()) return {};
    if (matches.size() == 1) return fmt::format(" (did you mean \"{}\"?)", matches[0]);
    return fmt::format(" (did you mean \"{}\" or \"{}\"?)", matches[0], matches[1]);
}

std::vector<std::string> close_matches(std::string_view word, const std::vector<std::string>& candidates,
                                       size_t max_results) {
    return NameMatcher(candidates).close_matches(word, max_results);
}

std::string did_you_mean_suffix(std::string_view word, const std::vector<std::string>& candidates) {
    return NameMatcher(candidates).suffix(word);
}

}  // namespace mbl
