#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace mbl {

// Optimal-string-alignment distance (a transposition counts as one edit).
int edit_distance(std::string_view a, std::string_view b);

// The candidates closest to `word`, best first; empty when nothing is close enough to be a plausible typo.
std::vector<std::string> close_matches(std::string_view word, const std::vector<std::string>& candidates,
                                       size_t max_results = 3);

// " (did you mean "x"?)" or "" — ready to append to a message.
std::string did_you_mean_suffix(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace mbl
