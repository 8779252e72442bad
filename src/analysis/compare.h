// File: analysis/compare.h
// Judges a kernel's output against its reference, element by element, with
// the mixed rule |actual - expected| <= atol + rtol * |expected|.
//
//   OPSCOPE_ASSIGN_OR_RETURN(CompareResult r,
//                            CompareTensors(actual, expected, DefaultTolerance(actual.dtype())));
//   if (!r.passed()) ... r.max_abs_err, r.max_abs_coords ...
//
// NaN matches NaN and an infinity matches the same infinity; any other NaN or
// infinity on one side only is a mismatch. Integer and bool outputs compare
// exactly (tolerance 0).
#pragma once

#include <cstdint>
#include <vector>

#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// The defaults by the dtype of the output under test, a few units of that
// dtype's rounding (f32 eps 1.2e-7, f16 9.8e-4, bf16 7.8e-3) with room for a
// different summation order than the double-precision reference:
//   float64 atol 1e-12 rtol 1e-10;  float32 1e-5 / 1e-5;  float16 1e-3 / 1e-3;
//   bfloat16 1e-2 / 1e-2;  integers and bool exact.
Tolerance DefaultTolerance(DType dtype);

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
  // The largest |actual - expected| / |expected| over elements with expected != 0.
  double max_rel_err = 0;
  int64_t max_rel_index = -1;
  int64_t first_mismatch_index = -1;
  int64_t nan_actual = 0, nan_expected = 0;
  int64_t inf_actual = 0, inf_expected = 0;

  bool passed() const { return mismatched == 0; }
};

// `actual` and `expected` must have equal shapes; dtypes may differ (the
// reference is float64). Tensors on a device are copied to the host first.
StatusOr<CompareResult> CompareTensors(const Tensor& actual, const Tensor& expected, const Tolerance& tolerance);

// Row-major flat index -> coordinates.
std::vector<int64_t> UnravelIndex(int64_t flat, const Shape& shape);

}  // namespace opscope
