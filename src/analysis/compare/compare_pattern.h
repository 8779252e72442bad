// File: analysis/compare/compare_pattern.h
// Names where a comparison's mismatches lie, in words a kernel author acts on:
//   "errors only in a 1-element border on all four sides of dims 2 and 3 (100% of mismatches)"
//   "errors only in the last index of dim 2 and the last index of dim 3 (100% of mismatches)"
//   "errors only in dim 1 indices 128-255, growing with the index"
//   "errors only in every other block of 512 along dim 1 (blocks 1, 3, 5, ...)"
//   "errors everywhere except where dim 1 index == dim 3 index"
//   "NaN only at dim 0 index 3 (all 3 mismatches: [3,1] [3,7] [3,12])"
//   "a single element at [0,3,7]"      "errors scattered: no dim concentrates them"
// A pattern is claimed only when a uniform scatter of as many mismatches would
// almost never (p < 1e-3) fall that way, so a few random errors stay
// "scattered"; a handful of mismatches is described as it is, with no claim.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opscope/tensor.h"

namespace opscope {

// What the compare pass gathered about where the mismatches are.
struct MismatchFacts {
  const Shape& shape;
  int64_t mismatched = 0;
  // Sorted flat indices of the mismatches (all of them, or the first ones of
  // each share when `capped`).
  const std::vector<int64_t>& kept;
  bool capped = false;
  // Count and summed error of all mismatches per index of each dim (empty
  // for a dim too long to aggregate).
  const std::vector<std::vector<int64_t>>& by_dim;
  const std::vector<std::vector<double>>& err_by_dim;
  // The lowest and highest coordinate of any mismatch in each dim.
  const std::vector<int64_t>& lo_by_dim;
  const std::vector<int64_t>& hi_by_dim;
  bool all_nan = false;  // every mismatch is a NaN in actual only
};

std::string DescribeMismatchPattern(const MismatchFacts& facts);

// A pattern or finding must be this unlikely under a uniform scatter before it is named.
inline constexpr double kSignificance = 1e-3;

// "0.984", "1e-05": three significant digits, as patterns and findings print numbers.
std::string ThreeDigits(double v);
// part/whole as "49.5%".
std::string Percent(double part, double whole);

// log P(X >= k) for X ~ Binomial(n, p), bounded from above by Chernoff's
// bound (exact when k == n): a claim passes only when even the bound is small.
double LogBinomialTail(int64_t n, int64_t k, double p);

}  // namespace opscope
