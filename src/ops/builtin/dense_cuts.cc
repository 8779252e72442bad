#include "ops/builtin/dense_cuts.h"

#include <algorithm>

namespace opscope::dense {

double ColumnCost(int64_t cols, int64_t unit) {
  constexpr int64_t kPanel = 16;
  const int64_t rest = cols % unit;
  if (unit <= kPanel) return static_cast<double>(cols / unit) + (rest == 0 ? 0.0 : rest <= 8 ? 0.5 : 1.0);
  double cost = 2.0 * static_cast<double>(cols / unit);
  int64_t left = rest;
  if (left >= kPanel) cost += 1.5, left -= kPanel;
  if (left > 0) cost += left <= 8 ? 1.0 : 2.0;
  return cost;
}

double CutsFinish(const std::vector<int64_t>& cuts, int64_t unit, int workers, int64_t row_blocks) {
  std::vector<double> free_at(static_cast<size_t>(std::max(workers, 1)), 0.0);
  for (int64_t r = 0; r < row_blocks; ++r) {
    for (size_t b = 0; b + 1 < cuts.size(); ++b) {
      *std::min_element(free_at.begin(), free_at.end()) += ColumnCost(cuts[b + 1] - cuts[b], unit);
    }
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

std::vector<int64_t> ColumnCuts(int64_t n, int64_t unit, int64_t count, int workers, int64_t row_blocks) {
  const int64_t units = (n + unit - 1) / unit;
  count = std::max<int64_t>(1, std::min(count, units));
  std::vector<int64_t> best(static_cast<size_t>(count + 1));
  for (int64_t i = 0; i <= count; ++i) best[i] = std::min(n, (i * units + count - 1) / count * unit);
  if (workers <= 1) return best;
  double best_finish = CutsFinish(best, unit, workers, row_blocks);
  std::vector<int64_t> counts = {count};
  for (int64_t c = (count - 1) / workers * workers; c >= workers; c -= workers) counts.push_back(c);
  for (int64_t c : counts) {
    // Cut i at i n / c rounded to the nearest unit; the last at n.
    std::vector<int64_t> cuts(static_cast<size_t>(c + 1));
    bool increasing = true;
    for (int64_t i = 0; i <= c; ++i) {
      cuts[i] = i == c ? n : std::min(n, (2 * i * n + c * unit) / (2 * c * unit) * unit);
      increasing = increasing && (i == 0 || cuts[i] > cuts[i - 1]);
    }
    if (!increasing) continue;
    const double finish = CutsFinish(cuts, unit, workers, row_blocks);
    if (finish < best_finish) best = std::move(cuts), best_finish = finish;
  }
  return best;
}

}  // namespace opscope::dense
