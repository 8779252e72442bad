// File: analysis/compare/value_findings.h
// Findings a failed compare draws from the values rather than the positions:
//   maps that turn expected into actual ("actual = 0.9844 x expected everywhere
//   (= 63/64, -1.6% on every element)", "+ 0.5", "dims 2 and 3 swapped", "reversed along dim 1",
//   "shifted by +1 along dim 2"), and bands of the inputs' and expected's
//   values that hold the mismatches ("errors only where x < 0", "where |x| is
//   in [0.3, 4.5]", "where x/scale is an exact half", "where |expected| <
//   0.001"), with the error against value bands of each subject.
// The sample: up to 262,144 evenly spaced elements and up to 65,536 of the
// mismatches, so the cost on a 64M-element output is a small part of the
// compare's own pass.
#pragma once

#include <cstdint>
#include <vector>

#include "opscope/compare.h"

namespace opscope {

// `actual` and `expected` are the host tensors compared; `kept` the sorted
// mismatch positions; fills r.findings and r.value_histograms.
void AddValueFindings(const Tensor& actual, const Tensor& expected, const std::vector<CompareInput>& inputs,
                      const std::vector<int64_t>& kept, CompareResult& r);

}  // namespace opscope
