#include "analysis/compare/value_findings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "analysis/compare/compare_pattern.h"  // LogBinomialTail

namespace opscope {

namespace {

constexpr int64_t kElementSample = int64_t{1} << 18;
constexpr int64_t kMismatchSample = int64_t{1} << 16;
// A map "explains" the output when this share of elements and of mismatches
// pass the rule once it is applied.
constexpr double kExplains = 0.99;


// v rounded to two significant digits, away from the band's inside (`up`
// for an upper edge), so a band printed short still holds what it held.
double Round2(double v, bool up) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, std::floor(std::log10(std::fabs(v))) - 1);
  const double r = (up ? std::ceil(v / scale) : std::floor(v / scale)) * scale;
  return std::strtod(ThreeDigits(r).c_str(), nullptr);  // drop the binary noise of the product (strtod: never throws)
}

// The elements and mismatches the findings are drawn from, with their pair of values.
struct Samples {
  std::vector<int64_t> elements, mismatches;
  std::vector<double> ea, ee, ma, me;  // actual/expected at each
  std::vector<char> element_fails;
};

Samples Draw(const Tensor& a, const Tensor& e, const std::vector<int64_t>& kept, const Tolerance& tol) {
  Samples s;
  const int64_t n = a.numel();
  const int64_t stride = std::max<int64_t>(1, (n + kElementSample - 1) / kElementSample);
  for (int64_t i = 0; i < n; i += stride) s.elements.push_back(i);
  const auto kn = static_cast<int64_t>(kept.size());
  const int64_t kstride = std::max<int64_t>(1, (kn + kMismatchSample - 1) / kMismatchSample);
  for (int64_t i = 0; i < kn; i += kstride) s.mismatches.push_back(kept[i]);
  for (int64_t i : s.elements) {
    s.ea.push_back(a.FlatGetAsDouble(i));
    s.ee.push_back(e.FlatGetAsDouble(i));
    s.element_fails.push_back(!PairPasses(tol, a.dtype(), s.ea.back(), s.ee.back()));
  }
  for (int64_t i : s.mismatches) {
    s.ma.push_back(a.FlatGetAsDouble(i));
    s.me.push_back(e.FlatGetAsDouble(i));
  }
  return s;
}

// ---- Maps from expected to actual -------------------------------------------------

struct MapFit {
  double elements = 0, mismatches = 0;  // shares that pass once mapped
};

// Share of sampled elements and mismatches that pass when actual is judged
// against `mapped(index, actual, expected)`; `nullopt`-like NaN marks an
// element the map has no source for (left out of the share).
MapFit Fit(const Samples& s, const Tolerance& tol, DType dtype,
           const std::function<double(int64_t, double)>& expected_for) {
  MapFit fit;
  auto share = [&](const std::vector<int64_t>& at, const std::vector<double>& av, const std::vector<double>& ev) {
    int64_t counted = 0, pass = 0;
    for (size_t k = 0; k < at.size(); ++k) {
      const double want = expected_for(at[k], ev[k]);
      if (std::isnan(want) && !std::isnan(ev[k])) continue;  // no source
      ++counted;
      pass += PairPasses(tol, dtype, av[k], want);
    }
    return counted ? static_cast<double>(pass) / static_cast<double>(counted) : 0.0;
  };
  fit.mismatches = share(s.mismatches, s.ma, s.me);
  if (fit.mismatches >= kExplains) fit.elements = share(s.elements, s.ea, s.ee);
  return fit;
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  auto mid = v.begin() + static_cast<long>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// p/q with q <= 1024 within 1e-6 of x, as "63/64"; empty when none.
std::string SmallFraction(double x) {
  if (!(std::fabs(x) < 1e6)) return "";  // no small fraction, and p must fit an int64
  for (int q = 1; q <= 1024; ++q) {
    const double p = std::round(x * q);
    if (p != 0 && std::fabs(p / q - x) <= 1e-6 * std::fabs(x)) {
      return q == 1 ? "" : std::to_string(static_cast<int64_t>(p)) + "/" + std::to_string(q);  // a whole factor says itself
    }
  }
  return "";
}

void AddMapFindings(const Tensor& a, const Tensor& e, const Samples& s, CompareResult& r) {
  const Tolerance& tol = r.tolerance;
  const DType dtype = a.dtype();
  auto add = [&](std::string kind, std::string subject, std::string text, const MapFit& fit,
                 std::vector<std::pair<std::string, double>> numbers) {
    r.findings.push_back({std::move(kind), std::move(subject),
                          std::move(text) + " (explains " + Percent(fit.elements, 1) + " of elements)", fit.mismatches,
                          fit.elements, std::move(numbers)});
  };
  auto explains = [](const MapFit& f) { return f.mismatches >= kExplains && f.elements >= kExplains; };

  // A pure scale and a pure offset: the median ratio and difference.
  std::vector<double> ratios, diffs;
  for (size_t k = 0; k < s.elements.size(); ++k) {
    if (!std::isfinite(s.ea[k]) || !std::isfinite(s.ee[k])) continue;
    diffs.push_back(s.ea[k] - s.ee[k]);
    if (s.ee[k] != 0) ratios.push_back(s.ea[k] / s.ee[k]);
  }
  const double scale = Median(ratios);
  if (std::isfinite(scale) && scale != 1 && scale != 0) {
    MapFit fit = Fit(s, tol, dtype, [&](int64_t, double ev) { return scale * ev; });
    if (explains(fit)) {
      double ss_res = 0, ss_tot = 0, mean = 0, n = 0;
      for (size_t k = 0; k < s.elements.size(); ++k) {
        if (std::isfinite(s.ea[k]) && std::isfinite(s.ee[k])) mean += s.ea[k], ++n;
      }
      mean /= std::max(1.0, n);
      for (size_t k = 0; k < s.elements.size(); ++k) {
        if (!std::isfinite(s.ea[k]) || !std::isfinite(s.ee[k])) continue;
        ss_res += (s.ea[k] - scale * s.ee[k]) * (s.ea[k] - scale * s.ee[k]);
        ss_tot += (s.ea[k] - mean) * (s.ea[k] - mean);
      }
      const double r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
      const std::string frac = SmallFraction(scale);
      char r2_text[32];
      std::snprintf(r2_text, sizeof r2_text, "%.6g", r2);
      // Near 1 the factor keeps the digits that show its distance from 1
      // (0.9957, not 0.996), and says it as the relative error it makes.
      const double off = scale - 1;
      const int digits = std::fabs(off) < 0.1 ? 2 + static_cast<int>(std::ceil(-std::log10(std::fabs(off)))) : 3;
      char factor[40], rel[40];
      std::snprintf(factor, sizeof factor, "%.*g", digits, scale);
      std::snprintf(rel, sizeof rel, "%+.2g%%", 100 * off);
      std::string said = frac.empty() ? "" : "= " + frac;
      if (std::fabs(off) < 0.1) said += (said.empty() ? "" : ", ") + std::string(rel) + " on every element";
      add("scale", "actual", "actual = " + std::string(factor) + " x expected everywhere" + (said.empty() ? "" : " (" + said + ")") +
          ", r^2 = " + r2_text + ": a missing or wrong factor", fit, {{"factor", scale}, {"r2", r2}});
      return;  // an offset or a permutation cannot explain the same output better
    }
  }
  const double offset = Median(diffs);
  if (std::isfinite(offset) && offset != 0) {
    MapFit fit = Fit(s, tol, dtype, [&](int64_t, double ev) { return ev + offset; });
    if (explains(fit)) {
      add("offset", "actual", "actual = expected " + std::string(offset < 0 ? "- " : "+ ") + ThreeDigits(std::fabs(offset)) +
          " everywhere: a constant added or dropped", fit, {{"offset", offset}});
      return;
    }
  }

  // Index maps: two dims of equal size swapped, one dim reversed, one dim shifted.
  const Shape& shape = a.shape();
  const int rank = shape.rank();
  const std::vector<int64_t> strides = shape.ContiguousStrides();
  auto coord = [&](int64_t flat, int d) { return (flat / strides[d]) % shape[d]; };
  auto try_map = [&](const std::function<int64_t(int64_t)>& source) {
    return Fit(s, tol, dtype, [&](int64_t i, double) {
      const int64_t from = source(i);
      return from < 0 ? NAN : e.FlatGetAsDouble(from);
    });
  };
  for (int i = 0; i < rank; ++i) {
    for (int j = i + 1; j < rank; ++j) {
      if (shape[i] != shape[j] || shape[i] < 2) continue;
      MapFit fit = try_map([&](int64_t f) {
        const int64_t ci = coord(f, i), cj = coord(f, j);
        return f + (cj - ci) * strides[i] + (ci - cj) * strides[j];
      });
      if (explains(fit)) {
        add("swap", "dims " + std::to_string(i) + "," + std::to_string(j),
            "actual is expected with dims " + std::to_string(i) + " and " + std::to_string(j) + " swapped", fit,
            {{"dim_a", i}, {"dim_b", j}});
        return;
      }
    }
  }
  for (int d = 0; d < rank; ++d) {
    if (shape[d] < 2) continue;
    MapFit fit = try_map([&](int64_t f) { return f + (shape[d] - 1 - 2 * coord(f, d)) * strides[d]; });
    if (explains(fit)) {
      add("reverse", "dim " + std::to_string(d), "actual is expected reversed along dim " + std::to_string(d), fit,
          {{"dim", d}});
      return;
    }
  }
  for (int d = 0; d < rank; ++d) {
    for (int k : {1, -1, 2, -2}) {
      if (shape[d] <= 2 * std::abs(k)) continue;
      MapFit fit = try_map([&](int64_t f) {
        const int64_t c = coord(f, d) - k;
        return c < 0 || c >= shape[d] ? int64_t{-1} : f - k * strides[d];
      });
      if (explains(fit)) {
        const std::string by = (k > 0 ? "+" : "") + std::to_string(k);
        add("shift", "dim " + std::to_string(d),
            "actual is expected shifted by " + by + " along dim " + std::to_string(d) + " (actual at index i holds expected at i" +
                (k > 0 ? "-" : "+") + std::to_string(std::abs(k)) + ")",
            fit, {{"dim", d}, {"by", k}});
        return;
      }
    }
  }
}

// ---- Values that hold the mismatches ----------------------------------------------

// One subject's value at each sampled element and mismatch.
struct Subject {
  std::string name;
  std::vector<double> at_elements, at_mismatches;
};

// Flat output index -> flat index of `in` broadcast to `out` (numpy rules),
// or empty when `in` does not broadcast to `out`.
std::function<int64_t(int64_t)> BroadcastIndex(const Shape& in, const Shape& out) {
  if (in.rank() > out.rank()) return {};
  const std::vector<int64_t> out_strides = out.ContiguousStrides(), in_strides = in.ContiguousStrides();
  std::vector<int64_t> step(out.rank(), 0);
  for (int k = 0; k < in.rank(); ++k) {
    const int d = out.rank() - in.rank() + k;
    if (in[k] == out[d]) step[d] = in_strides[k];
    else if (in[k] != 1) return {};
  }
  return [out, out_strides, step](int64_t flat) {
    int64_t at = 0;
    for (int d = 0; d < out.rank(); ++d) at += ((flat / out_strides[d]) % out[d]) * step[d];
    return at;
  };
}

std::vector<Subject> Subjects(const Tensor& e, const std::vector<CompareInput>& inputs, const Samples& s) {
  std::vector<Subject> subjects;
  auto values = [&](const std::function<double(int64_t)>& v, Subject& sub) {
    for (int64_t i : s.elements) sub.at_elements.push_back(v(i));
    for (int64_t i : s.mismatches) sub.at_mismatches.push_back(v(i));
  };
  std::vector<std::pair<std::string, double>> scalars;
  for (const CompareInput& in : inputs) {
    if (!in.tensor.defined() || !in.tensor.on_host() || in.tensor.numel() == 0) continue;
    if (in.tensor.numel() == 1) {
      scalars.emplace_back(in.name, in.tensor.FlatGetAsDouble(0));
      continue;
    }
    auto index = BroadcastIndex(in.tensor.shape(), e.shape());
    if (!index) continue;
    Subject sub{in.name, {}, {}};
    values([&](int64_t i) { return in.tensor.FlatGetAsDouble(index(i)); }, sub);
    subjects.push_back(std::move(sub));
  }
  // A full-shape input over a one-element input: x/scale, where rounding ties live.
  const size_t full = subjects.size();
  for (const auto& [name, value] : scalars) {
    if (value == 0 || !std::isfinite(value)) continue;
    for (size_t k = 0; k < full; ++k) {
      Subject sub{subjects[k].name + "/" + name, {}, {}};
      for (double v : subjects[k].at_elements) sub.at_elements.push_back(v / value);
      for (double v : subjects[k].at_mismatches) sub.at_mismatches.push_back(v / value);
      subjects.push_back(std::move(sub));
    }
  }
  Subject expected{"expected", s.ee, s.me};
  subjects.push_back(std::move(expected));
  return subjects;
}

struct Band {
  std::string kind, words;  // "sign", "x < 0"
  std::function<bool(double)> holds;
  bool simple = false;
  double from = NAN, to = NAN;
  bool fitted = false;  // its edges come from the mismatches themselves
};

// The shortest window of sorted `v` holding `keep` of its values.
std::pair<double, double> ShortestWindow(const std::vector<double>& sorted, size_t keep) {
  std::pair<double, double> best{sorted.front(), sorted.back()};
  for (size_t i = 0; i + keep <= sorted.size(); ++i) {
    if (sorted[i + keep - 1] - sorted[i] < best.second - best.first) best = {sorted[i], sorted[i + keep - 1]};
  }
  return best;
}

std::vector<Band> Candidates(const Subject& sub) {
  const std::string& x = sub.name;
  std::vector<Band> bands = {
      {"sign", x + " < 0", [](double v) { return v < 0; }, true},
      {"sign", x + " > 0", [](double v) { return v > 0; }, true},
      {"sign", x + " == 0", [](double v) { return v == 0; }, true},
      {"sign", x + " <= 0", [](double v) { return v <= 0; }, true},
      {"sign", x + " >= 0", [](double v) { return v >= 0; }, true},
      {"exact_half", x + " is an exact half (a rounding tie)",
       [](double v) { return std::isfinite(v) && std::fabs(v - std::floor(v)) == 0.5; }, true},
      {"integer", x + " is an integer", [](double v) { return std::isfinite(v) && v == std::floor(v); }, true},
  };
  std::vector<double> finite, mags, all_mags;
  for (double v : sub.at_mismatches) {
    if (std::isfinite(v)) finite.push_back(v), mags.push_back(std::fabs(v));
  }
  for (double v : sub.at_elements) {
    if (std::isfinite(v)) all_mags.push_back(std::fabs(v));
  }
  if (finite.size() < 2 || all_mags.empty()) return bands;
  std::sort(finite.begin(), finite.end());
  std::sort(mags.begin(), mags.end());
  const double min_mag = *std::min_element(all_mags.begin(), all_mags.end());
  const double max_mag = *std::max_element(all_mags.begin(), all_mags.end());
  for (double keep : {1.0, 0.95}) {
    const auto n = static_cast<size_t>(std::ceil(keep * static_cast<double>(mags.size())));
    const auto [lo_m, hi_m] = ShortestWindow(mags, n);
    const double lo = lo_m, hi = hi_m;  // plain variables: a lambda cannot capture a structured binding (C++17 clang)
    const double lo_r = Round2(lo, false), hi_r = Round2(hi, true);
    std::string words;
    if (lo <= min_mag) words = "|" + x + "| " + (hi_r > hi ? "< " : "<= ") + ThreeDigits(hi_r);
    else if (hi >= max_mag) words = "|" + x + "| " + (lo_r < lo ? "> " : ">= ") + ThreeDigits(lo_r);
    else words = "|" + x + "| is in [" + ThreeDigits(lo_r) + ", " + ThreeDigits(hi_r) + "]";
    bands.push_back({"value_band", words, [lo, hi](double v) { return std::fabs(v) >= lo && std::fabs(v) <= hi; }, false,
                     lo, hi, true});
    const auto [slo_v, shi_v] = ShortestWindow(finite, n);
    const double slo = slo_v, shi = shi_v;
    bands.push_back({"value_band", x + " is in [" + ThreeDigits(Round2(slo, false)) + ", " + ThreeDigits(Round2(shi, true)) + "]",
                     [slo, shi](double v) { return v >= slo && v <= shi; }, false, slo, shi, true});
  }
  return bands;
}

int64_t CountHolding(const std::vector<double>& v, const Band& b) {
  int64_t n = 0;
  for (double x : v) n += b.holds(x);
  return n;
}

// The narrowest band that holds (nearly) every mismatch and far fewer of the elements.
void AddBandFinding(const Subject& sub, size_t subjects, int64_t mismatched, CompareResult& r) {
  const auto m = static_cast<int64_t>(sub.at_mismatches.size());
  const auto n = static_cast<double>(sub.at_elements.size());
  if (m < 2 || n == 0) return;
  const Band* best = nullptr;
  double best_share = 0, best_frac = 0, best_score = INFINITY;
  std::vector<Band> bands = Candidates(sub);
  for (const Band& b : bands) {
    const int64_t hits = CountHolding(sub.at_mismatches, b);
    const double share = static_cast<double>(hits) / static_cast<double>(m);
    const double frac = std::max(static_cast<double>(CountHolding(sub.at_elements, b)), 0.5) / n;
    if (share < 0.9 || frac > 0.8 || share < 1.2 * frac) continue;
    // A band cut from the mismatches' own values would hold them by
    // construction: the chance that m random values span so little is
    // about m * frac^(m-1) (one per window for the 95% band), and every
    // candidate tried is one more chance (Bonferroni).
    const double log_p = b.fitted ? std::log(static_cast<double>(m)) + std::log(static_cast<double>(m - hits + 1)) +
                                        LogBinomialTail(m, hits - 1, frac)
                                  : LogBinomialTail(m, hits, frac);
    if (log_p > std::log(kSignificance / static_cast<double>(bands.size() * subjects))) continue;
    // "Only" beats "mostly"; then the narrower band; a simple predicate wins unless a band is much narrower.
    const double score = (share >= 0.995 ? 0 : 10) + frac * (b.simple ? 0.8 : 1.0);
    if (score < best_score) best = &b, best_share = share, best_frac = frac, best_score = score;
  }
  if (best == nullptr) return;
  const bool only = best_share >= 0.995;
  std::string text = std::string(only ? "errors only where " : "errors mostly where ") + best->words + " (" +
                     Percent(best_share, 1) + " of mismatches, " + Percent(best_frac, 1) + " of elements)";
  if (sub.name == "expected" && best->kind == "value_band" && best->words.rfind("|expected| <", 0) == 0) {
    text += ": small results, where cancellation loses digits";
  }
  std::vector<std::pair<std::string, double>> numbers = {{"mismatches_analysed", static_cast<double>(m)},
                                                        {"mismatched", static_cast<double>(mismatched)}};
  if (std::isfinite(best->from)) numbers.insert(numbers.begin(), {{"from", best->from}, {"to", best->to}});
  r.findings.push_back({best->kind, sub.name, text, best_share, best_frac, numbers});
}

// Spearman's rank correlation of two series.
double RankCorrelation(const std::vector<double>& x, const std::vector<double>& y) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<size_t> order(v.size());
    for (size_t i = 0; i < v.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    std::vector<double> rank(v.size());
    for (size_t k = 0; k < order.size();) {
      size_t e = k;
      while (e + 1 < order.size() && v[order[e + 1]] == v[order[k]]) ++e;
      for (size_t t = k; t <= e; ++t) rank[order[t]] = 0.5 * static_cast<double>(k + e);
      k = e + 1;
    }
    return rank;
  };
  const std::vector<double> rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += rx[i], sy += ry[i], sxx += rx[i] * rx[i], syy += ry[i] * ry[i], sxy += rx[i] * ry[i];
  }
  const double vx = sxx - sx * sx / n, vy = syy - sy * sy / n;
  return vx > 0 && vy > 0 ? (sxy - sx * sy / n) / std::sqrt(vx * vy) : 0;
}

// "the error grows with |x|", over the sampled mismatches: the matching
// elements' rounding grows with the value in any correct kernel too.
void AddGrowthFinding(const Subject& sub, const Samples& s, CompareResult& r) {
  std::vector<double> mag, err;
  for (size_t k = 0; k < s.mismatches.size(); ++k) {
    const double v = sub.at_mismatches[k], d = std::fabs(s.ma[k] - s.me[k]);
    if (!std::isfinite(v) || !std::isfinite(d)) continue;
    mag.push_back(std::fabs(v));
    err.push_back(d);
  }
  if (mag.size() < 16) return;
  const double rho = RankCorrelation(mag, err);
  if (rho < 0.9) return;
  r.findings.push_back({"grows_with", sub.name,
                        "the error grows with |" + sub.name + "| (rank correlation " + ThreeDigits(rho) + " over " +
                            std::to_string(mag.size()) + " mismatches)",
                        1, 0, {{"rank_correlation", rho}}});
}

ValueHistogram Histogram(const Subject& sub, const Samples& s) {
  ValueHistogram h;
  h.subject = sub.name;
  h.elements_analysed = static_cast<int64_t>(sub.at_elements.size());
  h.mismatches_analysed = static_cast<int64_t>(sub.at_mismatches.size());
  std::vector<double> sorted;
  for (double v : sub.at_elements) {
    if (std::isfinite(v)) sorted.push_back(v);
  }
  if (sorted.empty()) return h;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> edges;
  for (int q = 0; q <= 10; ++q) {
    const double edge = sorted[std::min(sorted.size() - 1, static_cast<size_t>(q * (sorted.size() - 1) / 10))];
    if (edges.empty() || edge > edges.back()) edges.push_back(edge);
  }
  if (edges.size() == 1) edges.push_back(edges[0]);  // a constant: one closed band
  const size_t nb = edges.size() - 1;
  h.bands.resize(nb);
  std::vector<int64_t> finite(nb, 0);
  auto band_of = [&](double v) -> int {
    if (!std::isfinite(v) || v < edges.front() || v > edges.back()) return -1;
    const size_t b = static_cast<size_t>(std::upper_bound(edges.begin(), edges.end(), v) - edges.begin());
    return static_cast<int>(std::min(nb, std::max<size_t>(b, 1)) - 1);
  };
  for (size_t b = 0; b < nb; ++b) h.bands[b].from = edges[b], h.bands[b].to = edges[b + 1];
  for (size_t k = 0; k < sub.at_elements.size(); ++k) {
    const int b = band_of(sub.at_elements[k]);
    if (b < 0) continue;
    ValueBand& band = h.bands[b];
    ++band.elements;
    const double d = std::fabs(s.ea[k] - s.ee[k]);
    if (!std::isfinite(d)) continue;
    band.max_abs_err = std::max(band.max_abs_err, d);
    band.mean_abs_err += d;
    ++finite[b];
  }
  for (size_t b = 0; b < nb; ++b) h.bands[b].mean_abs_err /= std::max<int64_t>(1, finite[b]);
  for (double v : sub.at_mismatches) {
    const int b = band_of(v);
    if (b >= 0) ++h.bands[b].mismatches;
  }
  return h;
}

}  // namespace

void AddValueFindings(const Tensor& actual, const Tensor& expected, const std::vector<CompareInput>& inputs,
                      const std::vector<int64_t>& kept, CompareResult& r) {
  if (r.passed() || kept.empty()) return;
  const Samples s = Draw(actual, expected, kept, r.tolerance);
  AddMapFindings(actual, expected, s, r);
  const bool mapped = !r.findings.empty();
  // Expected comes last: where an input's values already explain the
  // errors, expected's (a function of them) would only say it again.
  bool banded = false, grown = false;
  const std::vector<Subject> subjects = Subjects(expected, inputs, s);
  for (const Subject& sub : subjects) {
    r.value_histograms.push_back(Histogram(sub, s));
    if (mapped) continue;  // a map explains the values already
    const bool is_expected = sub.name == "expected";
    const size_t before = r.findings.size();
    if (!(is_expected && banded)) AddBandFinding(sub, subjects.size(), r.mismatched, r);
    banded = banded || r.findings.size() > before;
    const size_t before_growth = r.findings.size();
    if (!(is_expected && grown)) AddGrowthFinding(sub, s, r);
    grown = grown || r.findings.size() > before_growth;
  }
}

}  // namespace opscope
