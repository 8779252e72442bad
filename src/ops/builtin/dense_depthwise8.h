// File: ops/builtin/dense_depthwise8.h
// The 3x3 depthwise convolution of small planes (mobilenets' 28x28 to 7x7),
// eight channels at a time with the channels in the vector lanes.
//
// A channel at a time (dense_conv.cc's Depthwise3x3) a 7- to 28-wide row is
// a few vectors and its set-up: a padded copy of the plane, at stride 2 its
// split into even and odd columns, a call per row. In mobilenet_v2 that ran
// [1,576,14,14] at stride 2 in 180 us and [1,960,7,7] in 95, where
// onnxruntime, which keeps eight channels in each vector (NCHWc), took 51
// and 41. Here eight planes are transposed into one zero-bordered buffer of
// [rows][columns][8] (8x8 transposes in registers), each output is the
// nine taps' weights times that buffer, eight channels in one vector, and
// the outputs are transposed back. There is no edge case left: a tap on the
// border reads a zero.
//
// Measured with ops-debug profile (--mode kernel, 3 rounds alternating with
// the channel-at-a-time kernel, warm / --cold-cache):
//   [1,576,14,14] stride 2   103-181 -> 38-60 us   190-207 -> 151-155 us
//   [1,192,28,28] stride 2   106-132 -> 66-76 us   140-185 -> 127-138 us
//   [1,144,56,56] stride 2   146-175 -> 130-142 us 250-299 -> 190-206 us
//   [1,960,7,7]   stride 1    75-90  -> 59-60 us   116-164 -> 79-85 us
//   [1,96,112,112] stride 2  231 -> 195 us (5 rounds)  292 -> 306 (4 rounds)
// (the last one 221 -> 183 us in mobilenet_v2, node medians of 25
// iterations, 5 of 5 rounds; its buffer, 114 x 114 x 8 floats, still fits
// the core's L2, as a plane wider than 127 would not).
// Two output positions side by side (two chains of dependent adds, not one)
// and the bias and Clip in registers, not in a pass after, took them further
// (ops-debug profile of FusedConv with Clip, 5 rounds alternating, medians):
//   [1,96,112,112] stride 2  196 -> 166 us   [1,144,56,56] stride 2  79 -> 69 us
//   [1,192,28,28]  stride 2   34 -> 31 us    [1,960,7,7]   stride 1  42 -> 33 us
//   [1,576,14,14]  stride 2   31 -> 28 us
// At stride 1 on wider planes it lost: [1,384,14,14] went 65 -> 42-58 us
// warm but 100 -> 135-165 cold (and so in mobilenet_v2), [1,192,28,28]
// 105 -> 117 warm. Those stay a channel at a time (dense_depthwise_rows.h).
//
// Where the CPU has AVX-512 (dense::WideBlocks), planes with pads of one
// before run rows straight from X instead (dense_depthwise_rows.h: two
// output rows a vector for rows of 8 or fewer); this kernel runs the other
// windows there, and all of them on AVX2-only CPUs.
//
// The sums are Depthwise3x3's: each output adds its nine taps in the same
// order from zero, a multiply then an add each (no FMA), so a tap on the
// border adds weight * 0 as there, which needs every weight finite
// (Is3x3WithFiniteWeights).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/builtin/dense_util.h"

namespace opscope::dense {

// Whether Depthwise3x3Eight runs a window: 2-D, 3x3, no dilation, on a CPU
// with AVX2; stride 2 on both dims with rows narrower than 64 outputs, or
// stride 1 with rows of at most 8.
bool Depthwise3x3EightFits(const WindowGeometry& g);

// The eight channels' tail, applied in registers as Epilogue::Run would
// after: each channel's bias (unless zero), then clamped to [lo, hi] when
// `clamp` (Relu: [0, +inf)). dense_depthwise_rows.h says which epilogues fit.
struct EightTail {
  float bias[8] = {};
  bool clamp = false;
  float lo = 0.0f, hi = 0.0f;
};

// Channels c = 0..7: plane x + c * x_plane, weights w + 9 c, output y + c *
// y_plane (g.out_size() floats, written whole, with `tail` applied, or
// without bias or activation where it is null). `next`, unless null, is the
// first of the next eight planes (x_plane apart), prefetched. `scratch` is
// the caller's, grown as needed.
void Depthwise3x3Eight(const float* x, int64_t x_plane, const float* w, const WindowGeometry& g, float* y,
                       int64_t y_plane, const float* next, const EightTail* tail, std::vector<float>& scratch);

}  // namespace opscope::dense
