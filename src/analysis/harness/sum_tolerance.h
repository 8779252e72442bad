// File: analysis/harness/sum_tolerance.h
// The default float tolerance of an op whose outputs are long sums of
// products: Conv, ConvTranspose, Gemm, MatMul and their fused forms.
//
// The per-dtype defaults (float32 1e-5 + 1e-5 |e|) allow a few roundings of
// the result. A K-term float sum rounds by about sqrt(K) * u * sum |terms|
// (u = 2^-24, the unit roundoff of the float the kernel sums in), which is
// set by the terms' magnitudes, not the result's: where a 576-term sum
// cancels to near zero, a correct kernel failed the defaults (resnet18's
// 3x3 conv at 64 channels, 187 of 200,704 outputs, the worst 6.7e-5 off at a
// value of 63.55). benchdnn scales its threshold with the accumulation length
// in the same spirit. Where the user gave no tolerance, the absolute floor is
// raised to
//
//   2 * sqrt(K) * u * K * mean|A| * mean|B|
//
// (K * mean|A| * mean|B| is the expected sum of |terms|; the factor 2 the
// spread of sums about it), never lowered, and the report says so. A term
// read from the wrong place or lost is off by about mean|A| * mean|B|,
// 1 / (2 u K^1.5) times the floor: 600x at K = 576, 27x at K = 4608.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "opscope/compare.h"
#include "opscope/op.h"

namespace opscope {

struct SumTolerance {
  double atol = 0;   // the raised absolute floor
  std::string note;  // one line for the report: why and how much
};

// The raised floor for output `out` (dtype `dtype`) of `op` on `inputs`
// (host tensors; a device one gives nullopt), or nullopt where the op is
// no sum of products, the output no float, or the floor already higher.
std::optional<SumTolerance> SumRoundingTolerance(const OpSchema& op, const std::vector<Tensor>& inputs,
                                                 const Attrs& attrs, DType dtype, const Tolerance& current);

}  // namespace opscope
