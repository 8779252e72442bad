#include "analysis/compare/compare_pattern.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "opscope/compare.h"

namespace opscope {

namespace {


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

// The same for a span cut to fit the hits (their lowest to highest index):
// m uniform hits span a fraction f or less with probability about m*f^(m-1).
bool FittedUnlikely(double span, int64_t hits) {
  if (span >= 1 || hits < 2) return false;
  const double m = static_cast<double>(hits);
  return std::log(m) + (m - 1) * std::log(span) < std::log(kSignificance);
}

// The sides of a dim a border band may hold: its first w indices, its last w.
struct Sides {
  bool low = false, high = false;
};

bool InBand(int64_t c, int64_t size, int w, Sides s) { return (s.low && c < w) || (s.high && c >= size - w); }

// Mismatches lying in the chosen band of at least one dim.
int64_t CoveredByBands(const std::vector<std::vector<int64_t>>& coords, const Shape& shape,
                       const std::vector<Sides>& sides, int w) {
  int64_t covered = 0;
  for (const auto& c : coords) {
    for (int d = 0; d < shape.rank(); ++d) {
      if (InBand(c[d], shape[d], w, sides[d])) {
        ++covered;
        break;
      }
    }
  }
  return covered;
}

std::string IndexWord(int w) { return w == 1 ? "index" : std::to_string(w) + " indices"; }

std::string BorderWords(const Shape& shape, const std::vector<Sides>& sides, int w) {
  std::vector<int> dims;
  bool all_both = true;
  for (int d = 0; d < shape.rank(); ++d) {
    if (!sides[d].low && !sides[d].high) continue;
    dims.push_back(d);
    all_both = all_both && sides[d].low && sides[d].high;
  }
  if (all_both && dims.size() >= 2) {
    const size_t n = 2 * dims.size();
    const std::string count = n == 4 ? "four" : n == 6 ? "six" : std::to_string(n);
    return "a " + std::to_string(w) + "-element border on all " + count + " sides of " + DimList(dims);
  }
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    const Sides sd = sides[dims[i]];
    s += i ? " and " : "";
    s += sd.low && sd.high ? "the first and last " : sd.low ? "the first " : "the last ";
    s += IndexWord(w) + " of dim " + std::to_string(dims[i]);
  }
  return s;
}

// A band of width 1-3 at the start or end of some dims that holds every
// mismatch, with only the sides that have any.
std::string BorderPattern(const Shape& shape, const std::vector<std::vector<int64_t>>& coords, int64_t m) {
  for (int w = 1; w <= 3; ++w) {
    std::vector<Sides> sides(shape.rank());
    for (const auto& c : coords) {
      for (int d = 0; d < shape.rank(); ++d) {
        if (shape[d] <= 2 * w) continue;
        sides[d].low = sides[d].low || c[d] < w;
        sides[d].high = sides[d].high || c[d] >= shape[d] - w;
      }
    }
    if (CoveredByBands(coords, shape, sides, w) != m) continue;
    // Drop the sides (then whole dims) the others already cover.
    for (int d = 0; d < shape.rank(); ++d) {
      for (bool* side : {&sides[d].low, &sides[d].high}) {
        if (!*side) continue;
        *side = false;
        if (CoveredByBands(coords, shape, sides, w) != m) *side = true;
      }
    }
    double outside = 1;
    for (int d = 0; d < shape.rank(); ++d) {
      const int n_sides = sides[d].low + sides[d].high;
      outside *= static_cast<double>(shape[d] - n_sides * w) / static_cast<double>(shape[d]);
    }
    if (!Unlikely(1 - outside, m)) continue;
    int bands = 0;
    for (const Sides& sd : sides) bands += sd.low + sd.high;
    if (bands == 1) return "";  // one end of one dim is a range: the range words say it, with the other dims
    return "only in " + BorderWords(shape, sides, w) + " (100% of mismatches)";
  }
  return "";
}

// The mismatches on, or everywhere off, the diagonal of two dims.
std::string DiagonalPattern(const MismatchFacts& f, const std::vector<std::vector<int64_t>>& coords,
                            const std::string& noun) {
  const Shape& shape = f.shape;
  const int64_t total = shape.numel(), m = static_cast<int64_t>(coords.size());
  for (int i = 0; i < shape.rank(); ++i) {
    for (int j = i + 1; j < shape.rank(); ++j) {
      if (shape[i] < 2 || shape[j] < 2) continue;
      int64_t on = 0;
      for (const auto& c : coords) on += c[i] == c[j];
      const double cells = static_cast<double>(shape[i]) * static_cast<double>(shape[j]);
      const double f_on = static_cast<double>(std::min(shape[i], shape[j])) / cells;
      const auto on_elements = static_cast<int64_t>(static_cast<double>(total) * f_on + 0.5);
      const std::string where = "dim " + std::to_string(i) + " index == dim " + std::to_string(j) + " index";
      if (on == m && Unlikely(f_on, m)) return noun + " only where " + where + " (100% of mismatches)";
      if (on == 0 && !f.capped && f.mismatched == total - on_elements && on_elements >= 2) {
        return noun + " everywhere except where " + where + " (right only there: " + std::to_string(on_elements) +
               " elements)";
      }
    }
  }
  return "";
}

// The indices of dim d that hold a mismatch, in order.
std::vector<int64_t> HitIndices(const MismatchFacts& f, const std::vector<std::vector<int64_t>>& coords, int d) {
  std::vector<int64_t> hit;
  if (!f.by_dim[d].empty()) {
    for (int64_t i = 0; i < f.shape[d]; ++i) {
      if (f.by_dim[d][i] > 0) hit.push_back(i);
    }
    return hit;
  }
  for (const auto& c : coords) hit.push_back(c[d]);
  std::sort(hit.begin(), hit.end());
  hit.erase(std::unique(hit.begin(), hit.end()), hit.end());
  return hit;
}

// Equal blocks repeating with one period along dim d, none missing: "every
// other block of 512 along dim 1 (blocks 1, 3, 5, ...)". Empty when the hit
// indices are one run or follow no period.
std::string PeriodicWords(const std::vector<int64_t>& hit, int64_t size, int64_t m, int d) {
  std::vector<std::pair<int64_t, int64_t>> runs;  // [first, last]
  for (int64_t i : hit) {
    if (!runs.empty() && runs.back().second + 1 == i) runs.back().second = i;
    else runs.emplace_back(i, i);
  }
  if (runs.size() < 2) return "";
  const int64_t len = runs[0].second - runs[0].first + 1, period = runs[1].first - runs[0].first;
  if (period <= len || runs[0].first >= period) return "";
  for (size_t k = 0; k < runs.size(); ++k) {
    const int64_t first = runs[0].first + static_cast<int64_t>(k) * period;
    const int64_t run_len = runs[k].second - runs[k].first + 1;
    const bool last_cut = k + 1 == runs.size() && runs[k].second == size - 1 && run_len < len;
    if (runs[k].first != first || (run_len != len && !last_cut)) return "";
  }
  if (runs[0].first + static_cast<int64_t>(runs.size()) * period < size) return "";  // a block missing at the end
  const double covered = static_cast<double>(hit.size()) / static_cast<double>(size);
  if (covered > 0.75 || !FittedUnlikely(covered, m)) return "";
  const std::string along = " along dim " + std::to_string(d);
  if (period == 2 * len && runs[0].first % len == 0) {
    const int64_t b = runs[0].first / len;
    const std::string unit = len == 1 ? "index" : "block of " + std::to_string(len);
    const std::string list = (len == 1 ? "indices " : "blocks ") + std::to_string(b) + ", " + std::to_string(b + 2) +
                             ", " + std::to_string(b + 4) + ", ...";
    return "every other " + unit + along + " (" + list + ")";
  }
  return "blocks of " + std::to_string(len) + " every " + std::to_string(period) + along + " (from index " +
         std::to_string(runs[0].first) + ")";
}

// A handful of mismatches, described as they are: the coordinates they share.
std::string FewWords(const Shape& shape, const std::vector<std::vector<int64_t>>& coords, const std::string& noun) {
  std::string shared;
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] < 2) continue;
    bool same = true;
    for (const auto& c : coords) same = same && c[d] == coords[0][d];
    if (!same) continue;
    shared += shared.empty() ? " only at " : " and ";
    shared += "dim " + std::to_string(d) + " index " + std::to_string(coords[0][d]);
  }
  if (shared.empty() && coords.size() > 4) return "";
  std::string list;
  for (const auto& c : coords) list += (list.empty() ? "" : " ") + Coords(c);
  if (shared.empty()) return noun + " at " + list + " (" + std::to_string(coords.size()) + " mismatches)";
  return noun + shared + " (all " + std::to_string(coords.size()) + " mismatches: " + list + ")";
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

std::string ThreeDigits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string Percent(double part, double whole) { return ThreeDigits(whole > 0 ? 100.0 * part / whole : 0.0) + "%"; }

double LogBinomialTail(int64_t n, int64_t k, double p) {
  if (n <= 0 || k <= 0 || p >= 1) return 0;
  if (p <= 0) return -INFINITY;
  const double q = static_cast<double>(k) / static_cast<double>(n);
  if (q <= p) return 0;
  if (k >= n) return static_cast<double>(n) * std::log(p);
  const double kl = q * std::log(q / p) + (1 - q) * std::log((1 - q) / (1 - p));
  return -static_cast<double>(n) * kl;
}

std::string DescribeMismatchPattern(const MismatchFacts& f) {
  const Shape& shape = f.shape;
  const int64_t mismatched = f.mismatched;
  const std::vector<int64_t>& kept = f.kept;
  const std::string noun = f.all_nan ? "NaN" : "errors";
  if (mismatched == 0) return "no mismatches";
  const int64_t total = shape.numel();
  if (mismatched == 1 && !kept.empty()) {
    return (f.all_nan ? "a single NaN at " : "a single element at ") + Coords(UnravelIndex(kept[0], shape));
  }
  const std::string tail = f.capped ? " (judged from the first " + std::to_string(kept.size()) + " mismatches)" : "";
  if (mismatched == total) return noun + " everywhere (every element)";

  std::vector<std::vector<int64_t>> coords;
  coords.reserve(kept.size());
  for (int64_t i : kept) coords.push_back(UnravelIndex(i, shape));
  const int64_t m = static_cast<int64_t>(coords.size());
  std::string border = BorderPattern(shape, coords, m);
  if (!border.empty()) return noun + " " + border + tail;
  std::string diagonal = DiagonalPattern(f, coords, noun);
  if (!diagonal.empty()) return diagonal + tail;

  // Dims whose mismatches keep to a sub-range, or to blocks repeating with a
  // period, too narrow to be chance.
  std::string ranges;
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] < 2 || f.lo_by_dim.size() <= static_cast<size_t>(d)) continue;
    std::string words;
    if (!f.by_dim[d].empty() || !f.capped) words = PeriodicWords(HitIndices(f, coords, d), shape[d], mismatched, d);
    if (words.empty()) {
      const int64_t lo = f.lo_by_dim[d], hi = f.hi_by_dim[d];
      const double span = static_cast<double>(hi - lo + 1) / static_cast<double>(shape[d]);
      if (span > 0.9 || !FittedUnlikely(span, mismatched)) continue;
      words = "dim " + std::to_string(d) +
              (lo == hi ? " index " + std::to_string(lo) : " indices " + std::to_string(lo) + "-" + std::to_string(hi));
      if (!f.err_by_dim[d].empty()) words += TrendWords(f.err_by_dim[d], lo, hi);
    }
    ranges += (ranges.empty() ? noun + " only in " : " and ") + words;
  }
  if (!ranges.empty()) return ranges + " (100% of mismatches)" + tail;
  if (mismatched <= 16 && !f.capped) {
    std::string few = FewWords(shape, coords, noun);
    if (!few.empty()) return few;
  }

  // Spread over every dim, but maybe growing along one of them.
  for (int d = 0; d < shape.rank(); ++d) {
    if (f.err_by_dim[d].empty()) continue;
    std::string trend = TrendWords(f.err_by_dim[d], 0, shape[d] - 1);
    if (!trend.empty()) {
      return noun + " across all of dim " + std::to_string(d) + trend + " (" + Percent(mismatched, total) +
             " of elements)" + tail;
    }
  }
  // One index of one dim holding most of them, far more than its share.
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] < 4 || f.by_dim[d].empty()) continue;
    for (int64_t i = 0; i < shape[d]; ++i) {
      const int64_t c = f.by_dim[d][i];
      if (c * 2 >= mismatched &&
          LogBinomialTail(mismatched, c, 1.0 / static_cast<double>(shape[d])) < std::log(kSignificance)) {
        return noun + " concentrate at dim " + std::to_string(d) + " index " + std::to_string(i) + " (" +
               Percent(c, mismatched) + " of mismatches)" + tail;
      }
    }
  }
  if (mismatched * 100 >= total * 99) return noun + " nearly everywhere (" + Percent(mismatched, total) + " of elements)";
  return noun + " scattered: no dim concentrates them (" + Percent(mismatched, total) + " of elements)" + tail;
}

}  // namespace opscope
