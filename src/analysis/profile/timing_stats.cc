// ComputeTimingStats (opscope/report.h): the order statistics profile and
// sweep report, so that one noisy call moves the median, not the verdict.
#include <algorithm>
#include <numeric>

#include "opscope/report.h"

namespace opscope {

namespace {

// The q-quantile of sorted samples, interpolating between neighbouring ranks
// (numpy's default "linear" method).
double Quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

TimingStats ComputeTimingStats(std::vector<double> samples) {
  TimingStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = static_cast<int>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  s.p25 = Quantile(samples, 0.25);
  s.median = Quantile(samples, 0.5);
  s.p75 = Quantile(samples, 0.75);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / s.count;
  return s;
}

}  // namespace opscope
