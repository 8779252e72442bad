// File: ops/builtin/dense_smallk.h
// Our own float32 GEMM kernels (AVX2+FMA, dense_smallk_avx2.cc): the small-k
// kernel below and the shifted GEMM at the end, which convolutions run.
//
// A float32 GEMM for a short inner dimension (k up to kSmallK), the shape of
// pointwise 1x1 convolutions and narrow im2col matrices: C[m, n] += A[m, k] *
// B[k, n], all row-major, no packing. OpenBLAS packs both operands on every
// call and then runs far from its peak at k = 16 (a 96 x 432 x 16 tile of
// mobilenet_v2's first expansion: 40 GFLOP/s on one core, beside 90 on large
// square GEMMs); here each 6 x 16 block of C sits in twelve AVX registers
// while B's 16-column panel (k x 16 floats) stays in L1 across every row
// block. Sums run k in order from zero, one rounding per fused multiply-add,
// fused multiply-add.
//
//   if (dense::SmallKGemmFn gemm = dense::Avx2SmallKGemm(); gemm && k <= dense::kSmallK) gemm(...);
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

namespace opscope::dense {

// Above this the B panel leaves L1 and L2 for good and OpenBLAS's packing pays.
inline constexpr int64_t kSmallK = 256;

// With `row_init`, C's row i starts at row_init[i] instead of its own value
// (C is then only written: a convolution's bias without a pass to fill it),
// and each result is clamped to [lo, hi] as it is stored, as std::min(
// std::max(x, lo), hi) would (NaN stays NaN): a ReLU or Clip in the same
// pass. Without them (nullptr, -inf, +inf) it is C += A * B.
using SmallKGemmFn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                              int64_t ldb, float* c, int64_t ldc, const float* row_init, float lo, float hi);

// The AVX2+FMA kernel (dense_smallk_avx2.cc), or nullptr when the CPU lacks
// them or OPSCOPE_SCALAR_MATH is set (then OpenBLAS runs every GEMM).
SmallKGemmFn Avx2SmallKGemm();

// Whether the kernels here run their whole panels in 512-bit blocks: where
// the CPU has AVX-512F and OPSCOPE_NO_AVX512 is unset. The same bits either
// way (dense_smallk_avx2.cc's WideBlock says why); on a core with 512-bit
// FMA pipes, twice the flops an instruction.
bool WideBlocks();

// For tests and A/B runs in one process: 512-bit blocks on (where the CPU
// has them) or off. Returns the setting before.
bool SetWideBlocks(bool on);

// ---- the shifted GEMM: B never unfolded ----
//
// Row p of B is src + off[p], read at each column's own place: B[p][j] =
// src[off[p] + at(j)]. A stride-1 convolution over a zero-padded input is
// such a product: tap (c, kh, kw) reads the padded input shifted by c *
// plane + kh * row + kw (a strided one too, once each strided dimension is
// split into phases: dense_conv.cc's PhaseGrid), and output (oh, ow) sits
// at oh * row + ow of the padded grid. Each output row is one run of
// columns (ColumnRun): columns [first, first + count) read at, at + 1, ...
// The padded grid's columns past the output's width are never computed
// (3x3 over 7x7 is 49 columns, not the grid's 63). No im2col matrix is
// written: each slab of up to kPanelK rows of B is copied straight into
// panels of kPanel columns (a run's 16 floats a copy; a panel that spans
// two runs puts their lanes together) and multiplied while in cache.
// C = row_init + A * B (C += A * B without row_init), clamped to [lo, hi]
// as stored. Over several slabs each slab's sums run k in order from zero
// and are then added to C (as OpenBLAS adds each of its k blocks): a
// 4608-term sum rounds as 18 sums of 256 and 18 additions, not as one
// chain. One slab sums onto C's start, as the small-k kernel does. Where
// each column reads does not change what it sums, or in which order.
inline constexpr int64_t kPanel = 16;
inline constexpr int64_t kPanelK = 256;

// Columns [first, first + count) of B read src + off[p] + at + (j - first).
// The runs of one call cover [0, n) in order.
struct ColumnRun {
  int64_t first, count, at;
};

// Straight from an unpadded plane (`borders` given: no grid). Where a
// window at stride 1 keeps the plane's size (3x3 with pads of 1, 5x5 with
// 2), output position s of the plane reads tap (i, j) of channel c at X's
// element c h w + s + (i - ph) w + (j - pw): the whole plane one run, off[p]
// that shift for tap p (channel p / kvol, tap p % kvol). A tap that falls
// outside the plane reads nothing and is zero: the lanes whose row (s / w
// + i - ph) or column (s % w + j - pw) leaves it are masked, tap by tap, in
// the panels that have such lanes. The padded grid's zeros, with no grid
// written: the same bits. runs is then one run {0, n, first}, first being
// the plane position of column 0.
struct PlaneBorders {
  int64_t h = 0, w = 0;    // the plane (input and output)
  int64_t kh = 0, kw = 0;  // the window
  int64_t ph = 0, pw = 0;  // pads before
};

using ShiftedGemmFn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* src,
                               const int64_t* off, const ColumnRun* runs, int64_t num_runs, float* c, int64_t ldc,
                               const float* row_init, float lo, float hi, const PlaneBorders* borders);

ShiftedGemmFn Avx2ShiftedGemm();

// ---- the packed GEMM: op(B) in the shifted GEMM's panels ----
//
// MatMul and Gemm (float32, A not transposed, alpha 1, 16 rows or more) run
// the register blocks above on op(B) packed into panels of 16 columns, in
// the shifted GEMM's slabs. Where B is a model's weights (frozen:
// core/frozen_buffer.h) its panels are packed once and kept beside the
// buffer; otherwise each block of columns packs its own on every call (as
// OpenBLAS packs B on every call, and again in every block of rows). The
// same kernel either way, and every output sums its products in the same
// order whatever the blocks: the same bits in a model and in ops-debug,
// for any cut, and MatMul and Gemm (transB) over the same weights agree.
// (bert's [128,256] x [256,1024] in blocks of 64 rows: 400 us a block
// through OpenBLAS, 310 on panels packed once, 420 packing them; one core.)
struct PackedPanels {
  int64_t k = 0, n = 0;  // op(B) is k x n
  int64_t step = 0;      // rows a slab (the last one shorter)
  int64_t padded_n = 0;  // n rounded up to whole panels
  // Slab at row k0: padded_n * (its rows) floats, panel q (columns 16q ..)
  // at 16 q * rows, row p of it 16 floats; zeros past n.
  const float* data = nullptr;
  std::shared_ptr<float> owner;  // where the panels own their floats
  const float* Slab(int64_t k0) const { return data + k0 * padded_n; }
};

// op(B)'s panels, packed now: B is k x n row-major (ldb), or n x k when
// trans_b. nullptr where the CPU cannot run the kernel.
std::shared_ptr<const PackedPanels> PackPanels(const float* b, int64_t ldb, bool trans_b, int64_t k, int64_t n);

// C[m, j0..j1) += A[m, k] * op(B)[k, j0..j1), clamped to [lo, hi] as
// stored: on `frozen`'s panels (j0 a multiple of kPanel), or, when frozen
// is null, on columns j0..j1 of op(B) (b, ldb, trans_b) packed first into
// this thread's scratch.
using PackedGemmFn = void (*)(int64_t m, int64_t k, const float* a, int64_t lda, const PackedPanels* frozen,
                              const float* b, int64_t ldb, bool trans_b, int64_t j0, int64_t j1, float* c,
                              int64_t ldc, float lo, float hi);

PackedGemmFn Avx2PackedGemm();

// ---- the position GEMM: a convolution's few outputs as the rows ----
//
// C^T[j][m] += sum_p src[base_j + off[p]] * W[m][p]: output position j as
// row j (its input read at base[j], one pointer a position: a position
// anywhere in the padded grid, so rows of any width pack without waste),
// output channel m as a column of W^T's panels, packed once where W is a
// model's weights. Where a convolution has few outputs a plane (7x7: 49)
// and many channels, the channels fill whole panels where the positions
// did not (49 columns made three panels and a part), and nothing is packed
// per call. Slabs as the shifted GEMM's: each sum runs k in order, a slab
// from zero then added to C (one slab: from C's start), the same bits.
// ct is npos rows of whole panels (ldct floats apart), holding each
// output's start (bias, Z); columns [m0, m1) of W^T, m0 a multiple of kPanel.
using PositionGemmFn = void (*)(int64_t npos, int64_t k, const float* const* base, const int64_t* off,
                                const PackedPanels& wt, int64_t m0, int64_t m1, float* ct, int64_t ldct);

PositionGemmFn Avx2PositionGemm();

// The position GEMM's reads gathered first, in its register blocks of rows:
// each block's rows side by side for each tap, so that a block reads one
// run of memory instead of a row per position (a 1x1 convolution over 7x7,
// K = 160 to 960: X's rows 49 floats apart ran the kernel at 67-91 GFLOP/s
// on one core, the pack at 113). PackPositions gathers taps [k0, k1) of
// npos rows (src base[j] + off[p]) into dst (PackedPositionsFloats(npos, k)
// floats); PackedPositionBases then gives each row's pointer into it, which
// the GEMM reads with off[p] = 6 p. The same values in the same order: the
// same bits. AVX2 code: only where Avx2PositionGemm() is not null.
void PackPositions(int64_t npos, int64_t k, int64_t k0, int64_t k1, const float* const* base, const int64_t* off,
                   float* dst);
int64_t PackedPositionsFloats(int64_t npos, int64_t k);
void PackedPositionBases(int64_t npos, int64_t k, const float* dst, const float** rows);

// C^T back to Y's planes: y[m * ldy + j] = min(max(ct[j * ldct + m], lo),
// hi) for positions j < npos and channels m < nm (NaN stays NaN), in 8 x 8
// tiles transposed in registers, where the loop before it read C^T one
// value at a time down its columns. The same values: the same bits.
using PositionsOutFn = void (*)(int64_t npos, int64_t nm, const float* ct, int64_t ldct, float* y, int64_t ldy,
                                float lo, float hi);

PositionsOutFn Avx2PositionsOut();

}  // namespace opscope::dense
