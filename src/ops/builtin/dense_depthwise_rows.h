// File: ops/builtin/dense_depthwise_rows.h
// The 3x3 depthwise convolution at stride 1 two output rows at a time (and
// at stride 2 a row at a time, below), with the bias and a Relu or Clip
// applied in registers before the store.
//
// A row at a time (dense_conv.cc's DwRowS1, the loop GCC vectorises), each
// output is one chain of nine dependent adds, 3 cycles each, and the core
// holds too few of them in flight to keep its two adders busy: mobilenet_v2's
// [1,144,56,56] ran its rows at 1.05 us a plane. Two rows share four input
// rows, so the loads of the middle two serve both, and two chains run side
// by side: 0.85 us a plane (a microbenchmark, one core; three rows 0.86, four
// 0.92, two rows of two vectors 0.93: more chains spill the nine weights out
// of AVX2's sixteen registers). The bias and activation in the same pass
// spare the epilogue's second pass over the rows.
//
// The sums are DwRowS1's bit for bit: each output adds its nine taps in the
// same order from zero, a multiply then an add each (no FMA), and the tail is
// Epilogue::Run's (the bias added unless it is zero, then max with the lower
// bound, min with the upper, which pass a NaN through as std::max and
// std::min do there).
#pragma once

#include <cstdint>

#include "ops/builtin/dense_epilogue.h"

namespace opscope::dense {

// What the rows apply after the sums: p + bias (when bias is not zero), then
// clamped to [lo, hi] (when `clamp`). Relu is the clamp to [0, +inf).
struct DepthwiseRowTail {
  float bias = 0.0f;
  bool clamp = false;
  float lo = 0.0f, hi = 0.0f;
};

// Whether the rows can apply `e` themselves: no activation, Relu or Clip,
// and no residual Z. Otherwise the caller runs `e` on the rows it gets.
bool DepthwiseRowTailFits(const Epilogue& e);
// `e`'s tail with this channel's bias (DepthwiseRowTailFits(e) must hold).
DepthwiseRowTail DepthwiseRowTailOf(const Epilogue& e, float bias);

// Whether this CPU runs Depthwise3x3RowsS1 (AVX2).
bool DepthwiseRowsFit();

// `rows` output rows of n >= 8 outputs each, y + oh * n, from the padded
// rows pad + r * pitch (n + 2 floats each, rows + 2 of them): output row oh
// from padded rows oh, oh + 1 and oh + 2.
void Depthwise3x3RowsS1(const float* pad, int64_t pitch, int64_t rows, const float* w, float* y, int64_t n,
                        const DepthwiseRowTail& tail);

// At stride 1 with pads of one on every side (the plane keeps its size),
// a whole H x W plane into y (H x W) straight from X in 512-bit vectors,
// two rows at a time, columns and rows outside X read as zeros. The sums
// and tail as Depthwise3x3RowsS1's. AVX-512F code: only where WideBlocks().
void Depthwise3x3SamePlaneWide(const float* x, int64_t H, int64_t W, const float* w, float* y,
                               const DepthwiseRowTail& tail);

// Narrow planes, two output rows a 512-bit vector: pads of one before,
// stride 1 or 2 on both dims, input rows of at most 16 floats, output rows
// of at most 8, rows and columns outside X read as zeros. `count` planes,
// plane c from x + c x_plane into y + c y_plane (oh x ow), its nine weights
// at w9 + 9 c and its bias bias[c] (none where bias is null); the clamp of
// `tail` (its bias unused). The sums and tail as Depthwise3x3RowsS1's.
// AVX-512F code: only where WideBlocks().
struct NarrowPlanesArgs {
  const float* x = nullptr;
  int64_t x_plane = 0, h = 0, w = 0, stride = 1;
  const float* w9 = nullptr;
  const float* bias = nullptr;
  float* y = nullptr;
  int64_t y_plane = 0, oh = 0, ow = 0, count = 0;
};
void Depthwise3x3NarrowPlanesWide(const NarrowPlanesArgs& p, const DepthwiseRowTail& tail);

// At stride 2 with pads of one, a row at a time straight from X's plane
// (W floats a row, H rows): output row oh from input rows 2 oh - 1, 2 oh
// and 2 oh + 1 (a row outside the plane is zeros), output column ow from
// input columns 2 ow - 1, 2 ow, 2 ow + 1 (column -1 a zero), n >= 8 outputs
// a row with 2 n <= W (no column past the row is read), y + oh * n. Each
// vector of eight outputs takes its even and odd input columns from two
// loads by shuffles, so nothing is copied first: the eight-channel kernel
// (dense_depthwise8.h) interleaved eight planes into a buffer as large as
// them and transposed the outputs back, and [1,96,112,112] spent 30% of its
// samples writing that buffer. The sums and tail as Depthwise3x3RowsS1's.
// Where WideBlocks(), in 512-bit vectors, two rows at a time, and rows of
// any n >= 1 and any W: columns past the row (2 n > W) read as zeros.
void Depthwise3x3RowsS2(const float* x, int64_t H, int64_t W, int64_t rows, const float* w, float* y, int64_t n,
                        const DepthwiseRowTail& tail);

}  // namespace opscope::dense
