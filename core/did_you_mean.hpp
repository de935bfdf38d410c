#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mbl {

// Optimal-string-alignment distance (a transposition counts as one edit), ignoring case.
int edit_distance(std::string_view a, std::string_view b);

// Names to suggest from, prepared once (lower case, grouped by length, letter counts) so that each lookup compares
// the word only with names that could be near it: a file with 20,000 unknown keys asks 20,000 times.
class NameMatcher {
public:
    explicit NameMatcher(const std::vector<std::string>& candidates);

    // The candidates closest to `word`, best first; empty when nothing is close enough to be a plausible typo.
    std::vector<std::string> close_matches(std::string_view word, std::size_t max_results = 3) const;
    // " (did you mean "x"?)" or "" — ready to append to a message.
    std::string suffix(std::string_view word) const;

    // Edit-distance cells computed so far (the costly part of a lookup); tests check that it stays bounded.
    std::uint64_t cells() const { return cells_.load(std::memory_order_relaxed); }

private:
    using Counts = std::array<std::uint8_t, 32>;  // letters folded into 32 buckets
    struct Candidate {
        std::string name, lower;
        Counts counts{};
    };
    std::vector<Candidate> by_length_;             // sorted by name length
    std::vector<std::size_t> first_of_length_;     // index into by_length_ of the first name of each length
    mutable std::atomic<std::uint64_t> cells_{0};  // a static matcher may serve several threads
};

// One-off lookups (the candidates are prepared for this call only).
std::vector<std::string> close_matches(std::string_view word, const std::vector<std::string>& candidates,
                                       size_t max_results = 3);
std::string did_you_mean_suffix(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace mbl
