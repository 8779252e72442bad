// File: analysis/compare/compare_pattern.h
// Names where a comparison's mismatches lie, in words a kernel author acts on:
//   "errors only in a 1-element border of dims 2 and 3 (100% of mismatches)"
//   "errors only in dim 1 indices 128-255, growing with the index"
//   "a single element at [0,3,7]"      "errors scattered: no dim concentrates them"
// A pattern is claimed only when a uniform scatter of as many mismatches would
// almost never (p < 1e-3) fall that way, so a few random errors stay "scattered".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opscope/tensor.h"

namespace opscope {

// `kept`: sorted flat indices of the mismatches (all of them, or the first
// ones of each share when `capped`); `by_dim` / `err_by_dim` count and sum the
// errors of all mismatches per index of each dim.
std::string DescribeMismatchPattern(const Shape& shape, int64_t mismatched, const std::vector<int64_t>& kept,
                                    bool capped, const std::vector<std::vector<int64_t>>& by_dim,
                                    const std::vector<std::vector<double>>& err_by_dim);

}  // namespace opscope
