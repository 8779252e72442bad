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

// The same pool in 512-bit vectors over `planes` H x W planes back to back
// (any H and W with H W <= kSame3x3StretchMaxPlane), as one stretch: each
// vector's taps beyond their row or plane are left out by masks kept for
// each of the period's vectors (no lane counters, no scalar edges). On
// planes narrower than 8 the plane-at-a-time kernel above cannot run, and
// the AVX2 stretch body spent its time on its counters: googlenet's
// [1,832,7,7] pools took 21 us in the model against onnxruntime's 7. One
// core, ops-debug profile --mode kernel, 3 rounds alternating: [1,832,7,7]
// 38 -> 13 us, [1,512,14,14] 29 -> 26; [1,256,28,28] 45 -> 49, so planes
// past 256 positions stay on the kernel above. Masked loads read nothing
// outside X. h: min(planes, 4096 / (H W) + 1) H W floats of scratch. False
// where X holds a NaN, as above. AVX-512F code: only where
// dense::WideBlocks().
inline constexpr int64_t kSame3x3StretchMaxPlane = 256;
bool MaxPoolSame3x3StretchAvx512(const float* x, int64_t planes, int64_t H, int64_t W, float* y, float* h);

}  // namespace opscope::dense
