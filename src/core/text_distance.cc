#include "core/text_distance.h"

#include <algorithm>
#include <cctype>

namespace opscope {

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> ClosestStrings(std::string_view name, const std::vector<std::string>& candidates, int k) {
  std::vector<std::pair<int, std::string>> scored;
  int limit = std::max<int>(2, static_cast<int>(name.size()) / 2);
  for (const auto& c : candidates) {
    int d = EditDistance(name, c);
    // A case-insensitive prefix match is close too ("relu" -> "Relu", "conv" -> "ConvTranspose").
    bool prefix = c.size() >= name.size() && EditDistance(name, std::string_view(c).substr(0, name.size())) == 0;
    if (d <= limit || prefix) scored.emplace_back(prefix && d > 0 ? std::min(d, limit) : d, c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (int i = 0; i < static_cast<int>(scored.size()) && i < k; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace opscope
