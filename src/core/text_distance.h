// Edit distance for "did you mean" suggestions (unknown ops, attrs, flags).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace opscope {

// Levenshtein distance, case-insensitive.
int EditDistance(std::string_view a, std::string_view b);
// Up to k candidates closest to `name`, closest first; only reasonably close ones.
std::vector<std::string> ClosestStrings(std::string_view name, const std::vector<std::string>& candidates, int k);

}  // namespace opscope
