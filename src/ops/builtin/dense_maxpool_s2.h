// File: ops/builtin/dense_maxpool_s2.h
// MaxPool's 2- and 3-wide windows at stride 2 (the downsampling pools of
// resnets and inception networks) in 512-bit vectors, a plane at a time,
// straight from X. dense_pool.cc's narrow body takes a group of output rows
// down the window into a buffer and then along it with 256-bit shuffles:
// googlenet's [1,480,28,28] pool to 14x14 took 44 us on two cores, its
// [1,192,56,56] one 50 and [1,64,112,112] 54, where onnxruntime took 14,
// 22 and 30. Here each vector of sixteen outputs loads its 32 columns from
// each window row, masked to X's columns (-inf outside, nothing read
// there), takes the max down the rows in registers, and then along: the
// even and the odd columns one permute each, the neighbouring column's taps
// those moved a lane (the one column past the 32 taken from the
// neighbouring block's, a row's blocks running left to right; NaNs are
// looked for in the rows as they load). Each output takes its taps
// as the narrow body does (down the rows in order, then along the columns
// in order, each kept where greater or NaN: MaxKeepNan): the same bits.
//
//   if (dense::WideBlocks() && dense::MaxPoolS2Avx512Fits(g)) dense::MaxPoolS2PlaneAvx512(x, g, y);
#pragma once

#include <cstdint>

#include "ops/builtin/dense_util.h"

namespace opscope::dense {

// 2-D windows 2 or 3 wide at stride 2 along the rows, no dilation along
// them, the columns' pad before below the width (0 or 1 for these), any
// rows (a window's rows inside X are taken, and every window must reach X:
// dense_pool.cc's EveryWindowReachesX), input rows of 9 floats or more.
bool MaxPoolS2Avx512Fits(const WindowGeometry& g);

// `planes` planes of X (g.in[1] x g.in[2] each, back to back) into Y's
// (g.out[1] x g.out[2]), nothing past them written. Output rows of 8 or
// fewer from rows of at most 16 go two to a vector (lanes 0-7 one row,
// 8-15 the next): a row a vector left half of it empty. AVX-512F code:
// only where dense::WideBlocks().
void MaxPoolS2PlanesAvx512(const float* x, const WindowGeometry& g, float* y, int64_t planes);

}  // namespace opscope::dense
