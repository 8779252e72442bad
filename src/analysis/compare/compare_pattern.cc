#include "analysis/compare/compare_pattern.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "opscope/compare.h"

namespace opscope {

namespace {

// A pattern must be this unlikely under a uniform scatter before we name it.
constexpr double kSignificance = 1e-3;

std::string Percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

std::string Coords(const std::vector<int64_t>& c) {
  std::string s = "[";
  for (size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
  return s + "]";
}

std::string DimList(const std::vector<int>& dims) {
  std::string s = dims.size() == 1 ? "dim " : "dims ";
  for (size_t i = 0; i < dims.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == dims.size() ? " and " : ", ") + std::to_string(dims[i]);
  }
  return s;
}

bool Unlikely(double fraction_of_space, int64_t hits) {
  return fraction_of_space < 1 && std::pow(fraction_of_space, static_cast<double>(hits)) < kSignificance;
}

bool InBorder(int64_t c, int64_t size, int w) { return c < w || c >= size - w; }

// Share of `coords` lying in the width-w border of at least one dim in `dims`.
int64_t CoveredByBorder(const std::vector<std::vector<int64_t>>& coords, const Shape& shape,
                        const std::vector<int>& dims, int w) {
  int64_t covered = 0;
  for (const auto& c : coords) {
    for (int d : dims) {
      if (InBorder(c[d], shape[d], w)) {
        ++covered;
        break;
      }
    }
  }
  return covered;
}

std::string BorderPattern(const Shape& shape, const std::vector<std::vector<int64_t>>& coords,
                          const std::vector<std::vector<int64_t>>& by_dim) {
  const int64_t m = static_cast<int64_t>(coords.size());
  for (int w = 1; w <= 3; ++w) {
    std::vector<int> dims;
    for (int d = 0; d < shape.rank(); ++d) {
      if (shape[d] <= 2 * w || by_dim[d].empty()) continue;
      bool low = false, high = false;
      for (int i = 0; i < w; ++i) low = low || by_dim[d][i] > 0, high = high || by_dim[d][shape[d] - 1 - i] > 0;
      if (low && high) dims.push_back(d);
    }
    if (dims.empty() || CoveredByBorder(coords, shape, dims, w) != m) continue;
    // Drop dims the others already cover.
    for (size_t i = 0; i < dims.size();) {
      std::vector<int> fewer = dims;
      fewer.erase(fewer.begin() + static_cast<long>(i));
      if (!fewer.empty() && CoveredByBorder(coords, shape, fewer, w) == m) dims = fewer;
      else ++i;
    }
    double interior = 1;
    for (int d : dims) interior *= static_cast<double>(shape[d] - 2 * w) / static_cast<double>(shape[d]);
    if (!Unlikely(1 - interior, m)) continue;
    return "errors only in a " + std::to_string(w) + "-element border of " + DimList(dims) +
           " (100% of mismatches)";
  }
  return "";
}

// Pearson correlation of the index with the summed error at that index.
double Trend(const std::vector<double>& err, int64_t lo, int64_t hi) {
  const double n = static_cast<double>(hi - lo + 1);
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  for (int64_t i = lo; i <= hi; ++i) {
    const double x = static_cast<double>(i), y = err[i];
    sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y;
  }
  const double vx = sxx - sx * sx / n, vy = syy - sy * sy / n;
  if (vx <= 0 || vy <= 0) return 0;
  return (sxy - sx * sy / n) / std::sqrt(vx * vy);
}

// Spearman's rank correlation: a monotone but curved growth (an error that
// saturates, like 1 - 1/sqrt(k)) is still "growing", where Pearson's r is not.
double RankTrend(const std::vector<double>& err, int64_t lo, int64_t hi) {
  std::vector<int64_t> order;
  for (int64_t i = lo; i <= hi; ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return err[a] < err[b]; });
  std::vector<double> ranks(err.size(), 0);
  for (size_t k = 0; k < order.size();) {  // ties share their mean rank
    size_t e = k;
    while (e + 1 < order.size() && err[order[e + 1]] == err[order[k]]) ++e;
    for (size_t t = k; t <= e; ++t) ranks[order[t]] = 0.5 * static_cast<double>(k + e);
    k = e + 1;
  }
  return Trend(ranks, lo, hi);
}

std::string TrendWords(const std::vector<double>& err, int64_t lo, int64_t hi) {
  if (hi - lo + 1 < 4) return "";
  const double pearson = Trend(err, lo, hi), spearman = RankTrend(err, lo, hi);
  const double r = std::abs(spearman) > std::abs(pearson) ? spearman : pearson;
  if (r >= 0.9) return ", growing with the index";
  if (r <= -0.9) return ", shrinking with the index";
  return "";
}

}  // namespace

std::string DescribeMismatchPattern(const Shape& shape, int64_t mismatched, const std::vector<int64_t>& kept,
                                    bool capped, const std::vector<std::vector<int64_t>>& by_dim,
                                    const std::vector<std::vector<double>>& err_by_dim) {
  if (mismatched == 0) return "no mismatches";
  const int64_t total = shape.numel();
  if (mismatched == 1 && !kept.empty()) return "a single element at " + Coords(UnravelIndex(kept[0], shape));
  const std::string tail = capped ? " (judged from the first " + std::to_string(kept.size()) + " mismatches)" : "";
  if (mismatched == total) return "errors everywhere (every element)";

  std::vector<std::vector<int64_t>> coords;
  coords.reserve(kept.size());
  for (int64_t i : kept) coords.push_back(UnravelIndex(i, shape));
  std::string border = BorderPattern(shape, coords, by_dim);
  if (!border.empty()) return border + tail;

  // Dims whose mismatches keep to a sub-range too narrow to be chance.
  std::string ranges;
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] < 2 || by_dim[d].empty()) continue;
    int64_t lo = 0, hi = shape[d] - 1;
    while (lo < hi && by_dim[d][lo] == 0) ++lo;
    while (hi > lo && by_dim[d][hi] == 0) --hi;
    const double span = static_cast<double>(hi - lo + 1) / static_cast<double>(shape[d]);
    if (span > 0.9 || !Unlikely(span, mismatched)) continue;
    ranges += ranges.empty() ? "errors only in " : " and ";
    ranges += "dim " + std::to_string(d) +
              (lo == hi ? " index " + std::to_string(lo) : " indices " + std::to_string(lo) + "-" + std::to_string(hi));
    ranges += TrendWords(err_by_dim[d], lo, hi);
  }
  if (!ranges.empty()) return ranges + " (100% of mismatches)" + tail;

  // Spread over every dim, but maybe growing along one of them.
  for (int d = 0; d < shape.rank(); ++d) {
    if (err_by_dim[d].empty()) continue;
    std::string trend = TrendWords(err_by_dim[d], 0, shape[d] - 1);
    if (!trend.empty()) {
      return "errors across all of dim " + std::to_string(d) + trend + " (" + Percent(mismatched, total) +
             " of elements)" + tail;
    }
  }
  // One index of one dim holding most of them.
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] < 4 || by_dim[d].empty()) continue;
    for (int64_t i = 0; i < shape[d]; ++i) {
      if (by_dim[d][i] * 2 >= mismatched && Unlikely(1.0 / static_cast<double>(shape[d]), by_dim[d][i])) {
        return "errors concentrate at dim " + std::to_string(d) + " index " + std::to_string(i) + " (" +
               Percent(by_dim[d][i], mismatched) + " of mismatches)" + tail;
      }
    }
  }
  if (mismatched * 100 >= total * 99) return "errors nearly everywhere (" + Percent(mismatched, total) + " of elements)";
  return "errors scattered: no dim concentrates them (" + Percent(mismatched, total) + " of elements)" + tail;
}

}  // namespace opscope
