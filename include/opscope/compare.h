// File: opscope/compare.h
// The compare engine: judges an actual tensor against an expected one, element
// by element, under one rule, and gathers the numbers that say how and where
// they differ (max/mean errors, RMSE, cosine, NaN/Inf per side, a histogram by
// decade of |expected|, the K worst elements, mismatches per index of every
// dim, and a pattern in words).
//
//   OPSCOPE_ASSIGN_OR_RETURN(CompareResult r,
//                            CompareTensors(actual, expected, DefaultTolerance(actual.dtype())));
//   if (!r.passed()) ... r.max_abs_err, r.max_abs_coords, r.pattern ...
//
// One fused parallel pass: each thread keeps partial stats for its share of
// the elements (a bounded heap for the worst K, per-dim counts touched only on
// mismatches) and the partials are merged in index order, so results do not
// depend on the thread count. Inputs are read where they lie (no copy) when
// they are contiguous host tensors.
//
// NaN matches NaN and an infinity matches the same infinity; any other NaN or
// infinity on one side only is a mismatch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope {

enum class CompareRule {
  kMixed,     // |a-e| <= atol + rtol*|e|
  kAbsolute,  // |a-e| <= atol
  kRelative,  // |a-e| <= max(atol, rtol*|e|): below |e| = atol/rtol the abs bound decides
  kBitExact,  // identical values, -0 != +0
  kUlp,       // at most max_ulp representable steps apart, in the actual's dtype
};

const char* CompareRuleName(CompareRule rule);  // "mixed", "absolute", ...
StatusOr<CompareRule> ParseCompareRule(std::string_view name);

struct Tolerance {
  double atol = 0;
  double rtol = 0;
  CompareRule rule = CompareRule::kMixed;
  int64_t max_ulp = 0;
  bool strict = false;  // a pass with warnings (CompareResult::warnings) fails
};

// The defaults by the dtype of the output under test, a few units of that
// dtype's rounding (f32 eps 1.2e-7, f16 9.8e-4, bf16 7.8e-3) with room for a
// different summation order than the double-precision reference:
//   float64 atol 1e-12 rtol 1e-10;  float32 1e-5 / 1e-5;  float16 1e-3 / 1e-3;
//   bfloat16 1e-2 / 1e-2;  integers and bool exact (bit-exact rule).
Tolerance DefaultTolerance(DType dtype);
// "|a-e| <= 1e-05 + 1e-05*|e|", "ulp(a,e) <= 4", ... : the threshold applied.
std::string DescribeTolerance(const Tolerance& t);

// A rule and its thresholds as a user asks for them (ops-debug's --mode,
// --abserr, --relerr, --max-ulp, --worst); unset fields keep the dtype's defaults.
struct ToleranceSpec {
  std::string rule;  // empty: mixed for floats, bit-exact for integers and bool; "ulp:4" sets max_ulp
  std::optional<double> atol, rtol;
  std::optional<int64_t> max_ulp;
  int worst_k = 10;
  bool strict = false;  // --strict
};

// The dtype's defaults with `spec` applied; errors name the flag.
StatusOr<Tolerance> ResolveTolerance(const ToleranceSpec& spec, DType dtype);
// The spec as flags, for a repro line: " --mode ulp:4 --abserr 1e-05".
std::string ToleranceSpecFlags(const ToleranceSpec& spec);
// The --help text on rules and defaults.
extern const char* const kToleranceHelp;

// One element, as the worst-K list and the max fields report it.
struct CompareElement {
  int64_t index = -1;  // row-major flat index
  std::vector<int64_t> coords;
  double expected = 0;
  double actual = 0;
  double abs_err = 0;  // +inf for a NaN or an infinity on one side only
};

// Elements whose |expected| lies in [10^decade, 10^(decade+1)); the zero bin
// holds |expected| == 0 and the non-finite bin NaN or infinite expected values.
struct HistogramBin {
  enum class Kind { kZero, kDecade, kNonFinite } kind = Kind::kDecade;
  int decade = 0;
  int64_t count = 0;
  int64_t mismatched = 0;
  double max_abs_err = 0;
  double sum_abs_err = 0;  // over finite pairs
  std::string Label() const;  // "0", "[1e-3,1e-2)", "nan/inf"
};

// A cause-shaped fact about the mismatches, beyond where they lie: they
// depend on a value ("errors only where x < 0"), or actual is expected under
// a simple map ("actual = 0.984 x expected everywhere", "dims 2 and 3
// swapped", "every other block of 512 along dim 1"). Claimed only when a
// uniform scatter of as many mismatches would almost never (p < 1e-3) look
// like it, and always with its share.
struct CompareFinding {
  std::string kind;     // value_band, sign, exact_half, integer, grows_with, scale, offset, swap, reverse, shift,
                        // index_equal, right_only_index_equal, periodic
  std::string subject;  // what it is about: an input's name, "expected", "x/scale", "dim 1"
  std::string text;     // the sentence printed
  double share_of_mismatches = 0;  // mismatches it covers (value findings) or explains (maps)
  double share_of_elements = 0;    // elements where it holds (value findings) or that it explains (maps)
  std::vector<std::pair<std::string, double>> numbers;  // its figures by name: factor, r2, from, to, period, ...
};

// The error against value bands of one subject (an input or expected), the
// bands cut at its deciles. Elements are counted over `elements_analysed`
// evenly spaced ones (all of them up to 262,144), mismatches over up to
// 65,536 of them: the report says both.
struct ValueBand {
  double from = 0, to = 0;  // [from, to], the last band closed
  int64_t elements = 0, mismatches = 0;
  double max_abs_err = 0, mean_abs_err = 0;  // over its analysed elements with both sides finite
};
struct ValueHistogram {
  std::string subject;
  int64_t elements_analysed = 0, mismatches_analysed = 0;
  std::vector<ValueBand> bands;
};

struct CompareResult {
  Tolerance tolerance;
  int64_t total = 0;
  int64_t mismatched = 0;
  // The largest |actual - expected| (an infinity counts; a NaN does not).
  double max_abs_err = 0;
  int64_t max_abs_index = -1;  // row-major flat index; -1 when there are no elements
  std::vector<int64_t> max_abs_coords;
  double expected_at_max_abs = 0;
  double actual_at_max_abs = 0;
  // The largest |actual - expected| / |expected| over finite elements with expected != 0.
  double max_rel_err = 0;
  int64_t max_rel_index = -1;
  std::vector<int64_t> max_rel_coords;
  double expected_at_max_rel = 0;
  double actual_at_max_rel = 0;
  int64_t max_ulp = -1;  // only measured under the ulp rule
  int64_t first_mismatch_index = -1;
  // Over the pairs where both sides are finite.
  int64_t finite_pairs = 0;
  double mean_abs_err = 0;
  double rmse = 0;
  double cosine = 1;  // 1 when both sides are all zero, 0 when only one is
  int64_t nan_actual = 0, nan_expected = 0;
  int64_t inf_actual = 0, inf_expected = 0;
  int64_t nan_only_actual = 0;  // NaN in actual where expected is not NaN: a finding of its own
  int64_t inf_only_actual = 0;  // an infinity in actual where expected is finite
  std::vector<HistogramBin> histogram;  // non-empty bins, zero first, then by decade, non-finite last
  std::vector<CompareElement> worst;    // the K largest errors, largest first (mismatches first)
  // mismatches_by_dim[d][i]: mismatches whose coordinate in dim d is i
  // (empty for a dim longer than 65536, where it would outgrow the inputs).
  std::vector<std::vector<int64_t>> mismatches_by_dim;
  std::vector<std::vector<double>> abs_err_by_dim;  // summed |a-e| of those mismatches
  std::string pattern;  // where the mismatches are, in words
  std::vector<CompareFinding> findings;         // only on a failure
  std::vector<ValueHistogram> value_histograms;  // one per input that maps onto the output, and expected
  // What the verdict cannot see, over the pairs where both sides are finite.
  // floor_decides: elements where the absolute floor is larger than the
  // relative bound (|expected| < atol/rtol), so atol judges them alone;
  // floor_allows_tenth: elements where that floor also allows an error of a
  // tenth of |expected| or more (|expected| <= 10*atol). Both -1 under rules
  // with no floor to hide behind (absolute, bit-exact, ulp).
  int64_t floor_decides = -1, floor_allows_tenth = -1;
  int64_t sign_flips = 0;     // pairs of opposite signs (actual * expected < 0)
  int64_t nonzero_pairs = 0;  // pairs where neither side is zero
  // A pass that may hide wrong values (kind floor_decides, low_cosine,
  // sign_flip): printed as warnings, in report.json, and failed under
  // --strict. A failed compare has none.
  std::vector<CompareFinding> warnings;

  bool passed() const { return mismatched == 0 && !(tolerance.strict && !warnings.empty()); }
};

// An input of the op under test whose values the errors are tied to: one of
// the output's shape (or broadcast to it the numpy way), or one element (a
// scale: the full-shape inputs divided by it are subjects too).
// A pass whose cosine similarity is below this bound is not silent.
inline constexpr double kCosineWarnBelow = 0.99;

struct CompareInput {
  std::string name;
  Tensor tensor;
};

struct CompareOptions {
  int worst_k = 10;
  int threads = 0;  // 0: one per hardware thread
  std::vector<CompareInput> inputs;
  // The findings a failure adds (maps, value bands, their histograms): a
  // sample's worth of work, off only to time the compare without them.
  bool findings = true;
};

// Whether one pair of values passes `tolerance` (as CompareTensors judges
// each element; `dtype` is the actual's, which the ulp rule counts in).
bool PairPasses(const Tolerance& tolerance, DType dtype, double actual, double expected);

// `actual` and `expected` must have equal shapes (no elements: nothing to
// judge, it passes; the compare command rejects empty files); dtypes may differ (a reference is float64). Tensors on a device are copied
// to the host first.
StatusOr<CompareResult> CompareTensors(const Tensor& actual, const Tensor& expected, const Tolerance& tolerance,
                                       const CompareOptions& options = {});

// Row-major flat index -> coordinates.
std::vector<int64_t> UnravelIndex(int64_t flat, const Shape& shape);

}  // namespace opscope
