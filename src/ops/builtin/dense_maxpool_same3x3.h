// File: ops/builtin/dense_maxpool_same3x3.h
// The 3x3 max pool that keeps its plane's size (stride 1, pads of 1: the
// branch pools of inception blocks), a plane at a time, on planes at least
// 8 wide. dense_pool.cc's stretch body ran it with a lane counter per
// vector telling each lane its column and row, its blends and the counter's
// chain of four dependent steps in every vector of both passes: [1,192,28,28]
// took 83 us on one core where the loads and maxes alone need about 15.
// Here both passes run along the plane as if it were one long row, every
// vector whole and unmasked, and then put right what that got wrong: the
// row pass's first and last column of each row (a tap from the next or the
// previous row), one float each; the column pass runs its first and last
// row apart, with two taps. Each output takes its taps in the stretch
// body's order from -inf, each kept only where greater (vmaxps): the same
// bits wherever X holds no NaN.
//
//   if (dense::HasAvx2() && dense::MaxPoolSame3x3Fits(H, W) &&
//       dense::MaxPoolSame3x3PlaneAvx2(x, H, W, y, h)) { /* y is the pool */ }
#pragma once

#include <cstdint>

namespace opscope::dense {

// Planes of H x W this kernel takes: at least 2 rows and 8 columns.
inline bool MaxPoolSame3x3Fits(int64_t H, int64_t W) { return H >= 2 && W >= 8; }

// One H x W plane of X into Y's, h holding H * W floats of scratch. False
// where X holds a NaN (Y then holds nothing meaningful): its max keeps the
// first NaN it meets, which vmaxps does not, and the caller runs its
// NaN-keeping body. AVX2 code: only where dense::HasAvx2().
bool MaxPoolSame3x3PlaneAvx2(const float* x, int64_t H, int64_t W, float* y, float* h);

}  // namespace opscope::dense
