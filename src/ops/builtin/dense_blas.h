// Thin typed wrappers over OpenBLAS's row-major GEMM, so templated kernels can
// call one name for float and double, and ParallelGemm, which spreads one
// GEMM over the device's workers.
//
// One thread budget: OpenBLAS runs single-threaded in this process (set as
// libopscope loads: blas_threads.cc) and the kernels split their GEMMs into
// blocks of a launch, so the cpu device's pool is the only set of threads
// doing the work. OpenBLAS's own threads beside the pool oversubscribed the
// cores: a Gemm took from 0.1 ms to 4 ms from run to run when two compute
// streams each called a multithreaded OpenBLAS on 2 cores. This also sets it
// for anything else in the process linked to the same libopenblas.
//
// The minimal build (OPSCOPE_MINIMAL: no OpenBLAS) runs plain_gemm.h's loops instead.
#pragma once

#if defined(OPSCOPE_MINIMAL)
#include "ops/builtin/plain_gemm.h"
#else
#include <cblas.h>
#endif

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/frozen_buffer.h"
#include "ops/builtin/dense_smallk.h"
#include "opscope/device.h"
#include "opscope/op.h"

namespace opscope::dense {

#if !defined(OPSCOPE_MINIMAL)
// OpenBLAS single-threaded, its server threads stopped (blas_threads.cc).
// Runs once, as the library loads; later calls return at once.
void BlasSingleThreaded();
#endif

// BLAS rejects empty problems and leading dims below 1: an empty sum leaves beta * C.
template <typename T>
bool GemmIsTrivial(int64_t m, int64_t n, int64_t k, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return true;
  if (k != 0) return false;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
  return true;
}

// C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C, all row-major, on the
// calling thread. One row of A (a classifier's Gemm at batch 1) is a
// matrix-vector product: sgemv reads B once at memory speed, where sgemm ran
// a 1 x 1280 x 1000 product at a quarter of that.
inline void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (GemmIsTrivial(m, n, k, beta, c, ldc)) return;
#if defined(OPSCOPE_MINIMAL)
  PlainGemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
  BlasSingleThreaded();
  if (m == 1) {
    // c[j] = alpha * sum_p a[p] * op(B)[p, j]: op(B)^T times a; a's elements are lda apart when A is transposed.
    cblas_sgemv(CblasRowMajor, trans_b ? CblasNoTrans : CblasTrans, trans_b ? n : k, trans_b ? k : n, alpha, b, ldb,
                a, trans_a ? lda : 1, beta, c, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
              alpha, a, lda, b, ldb, beta, c, ldc);
#endif
}

inline void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                 int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (GemmIsTrivial(m, n, k, beta, c, ldc)) return;
#if defined(OPSCOPE_MINIMAL)
  PlainGemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
  BlasSingleThreaded();
  if (m == 1) {
    cblas_dgemv(CblasRowMajor, trans_b ? CblasNoTrans : CblasTrans, trans_b ? n : k, trans_b ? k : n, alpha, b, ldb,
                a, trans_a ? lda : 1, beta, c, 1);
    return;
  }
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
              alpha, a, lda, b, ldb, beta, c, ldc);
#endif
}

// A block of a GEMM's output: rows [i0, i1), columns [j0, j1).
struct GemmBlock {
  int64_t i0, i1, j0, j1;
};

// How ParallelGemm cuts [m, n] over `workers`: one block per worker, at
// least two (the same cuts on every machine up to two cores), along the rows
// unless they are much the shorter side, none under 16 rows or 64 columns,
// and one block for a GEMM under 2 MFLOP, where a block's hand-off costs more
// than it saves, unless B is 1 MiB or more: a matrix-vector product reads B
// once from memory at what one core can pull (resnet18's classifier, 1 x 512
// x 1000, 74.7 -> 48.2 us on two, inspector-cli run --streams 1, 6 rounds
// alternating, lower in each). Two blocks per worker balanced better on a noisy machine but
// ran OpenBLAS on thinner blocks: bert's [128,1024] x [1024,256] in 32-row
// blocks took 507-902 us, in 64-row blocks 438-836 us (profile, 3 rounds
// alternating).
struct GemmSplit {
  int64_t parts = 1;
  bool by_rows = true;
  int64_t col_align = 1;  // column cuts at multiples of this (packed panels: 16)
  GemmBlock Block(int64_t p, int64_t m, int64_t n) const {
    if (by_rows) return {m * p / parts, m * (p + 1) / parts, 0, n};
    auto cut = [&](int64_t q) { return q == parts ? n : n * q / parts / col_align * col_align; };
    return {0, m, cut(p), cut(p + 1)};
  }
};

inline GemmSplit SplitGemm(int64_t m, int64_t n, int64_t k, int workers) {
  GemmSplit s;
  if (2.0 * m * n * k < 2e6 && k * n < (int64_t{1} << 18)) return s;
  s.by_rows = m >= n / 4;  // rows repack B per block, columns repack A: rows unless m is much the shorter
  const int64_t most = s.by_rows ? m / 16 : n / 64;
  s.parts = std::clamp<int64_t>(std::max(workers, 2), 1, std::max<int64_t>(most, 1));
  return s;
}

// Sets rows [i0, i1) of a block of C to row[j] (0 where `row` is null).
// GEMM callers start C at its bias this way and call with beta = 1: with
// beta = 0 OpenBLAS zeroes C first in a pass of its own (sgemm_beta), which
// took more time than the multiply on a 1x1 convolution's strided output
// tiles (96 x 432 x 16: 1234 us with beta = 0, 659 us with a memset and
// beta = 1, one core).
template <typename C>
void FillBlock(C* c, int64_t ldc, const GemmBlock& blk, const C* row) {
  for (int64_t i = blk.i0; i < blk.i1; ++i) {
    C* dst = c + i * ldc + blk.j0;
    if (row == nullptr) std::fill(dst, dst + (blk.j1 - blk.j0), C(0));
    else std::copy(row + blk.j0, row + blk.j1, dst);
  }
}

// Which kernel a float GEMM's blocks run: the packed kernel (dense_smallk.h)
// where it applies (A not transposed, alpha 1, at least 16 rows: a
// matrix-vector product stays with sgemv), B's panels kept beside B where
// B is frozen (a model's weights: core/frozen_buffer.h, packed on the first
// call); otherwise OpenBLAS.
struct GemmPanels {
  bool use = false;
  std::shared_ptr<const PackedPanels> frozen;  // null: each block packs its columns
};

inline GemmPanels ChoosePanels(const Tensor& bt, const float* bp, int64_t ldb, bool ta, bool tb, float alpha,
                               int64_t m, int64_t k, int64_t n) {
  GemmPanels g;
  g.use = !ta && alpha == 1.0f && m >= 16 && k > 0 && n > 0 && Avx2PackedGemm() != nullptr;
  if (!g.use || bt.dtype() != DType::kF32 || !bt.is_contiguous() || bp != bt.data<float>()) return g;
  const std::string key = std::string(tb ? "gemm_panels_t:" : "gemm_panels:") + std::to_string(k) + "x" +
                          std::to_string(n) + ":" + std::to_string(ldb);
  g.frozen = std::static_pointer_cast<const PackedPanels>(FrozenDerived(bt, key, [&] {
    return std::static_pointer_cast<const void>(PackPanels(bp, ldb, tb, k, n));
  }));
  return g;
}

// C = init + alpha * op(A) op(B) as blocks of one launch named `name` over
// the device's workers: init(block) writes the block's starting values of C
// (FillBlock: zeros, a bias, beta * another matrix), the GEMM adds to them
// (beta = 1), and tail(block) runs right after (an epilogue over output
// still in cache). With `panels.use` (ChoosePanels: C float) each block
// runs the packed kernel, not OpenBLAS: on B's kept panels, or packing its
// own columns (blocks then cut by columns, so no two pack the same ones).
template <typename C, typename Init, typename Tail>
Status ParallelGemm(KernelContext& ctx, std::string_view name, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                    C alpha, const C* a, int64_t lda, const C* b, int64_t ldb, C* c, int64_t ldc, const Init& init,
                    const Tail& tail, const GemmPanels& panels = {}) {
  const int workers = ctx.device() != nullptr ? std::max(1, ctx.device()->info().compute_units) : 1;
  GemmSplit s = SplitGemm(m, n, k, workers);
  if (panels.use) {
    s.col_align = kPanel;
    if (panels.frozen == nullptr && s.parts > 1 && s.by_rows) {
      s.by_rows = false;
      s.parts = std::clamp<int64_t>(s.parts, 1, std::max<int64_t>(n / (2 * kPanel), 1));
    }
  }
  // A launch of its own rather than ParallelFor: an op's "block" tunable
  // (ConvTranspose's channels per block) must not merge the GEMM's blocks.
  KernelLaunch launch;
  launch.name = std::string(name) + (!panels.use ? "" : panels.frozen != nullptr ? "_kept_panels" : "_panels");
  launch.config.grid = {s.parts, 1, 1};
  launch.config.block = {1, 1, 1};
  launch.host = [&](const BlockContext& bc) {
    const GemmBlock blk = s.Block(bc.block_idx.x, m, n);
    init(blk);
    // Row i of op(A) starts at a + i * lda (or a + i when transposed); column j of op(B) likewise.
    const C* ab = a + blk.i0 * (ta ? 1 : lda);
    const C* bb = b + blk.j0 * (tb ? ldb : 1);
    if constexpr (std::is_same_v<C, float>) {
      if (panels.use) {
        const float inf = std::numeric_limits<float>::infinity();
        Avx2PackedGemm()(blk.i1 - blk.i0, k, ab, lda, panels.frozen.get(), b, ldb, tb, blk.j0, blk.j1,
                         c + blk.i0 * ldc, ldc, -inf, inf);
        tail(blk);
        return;
      }
    }
    Gemm(ta, tb, blk.i1 - blk.i0, blk.j1 - blk.j0, k, alpha, ab, lda, bb, ldb, C(1), c + blk.i0 * ldc + blk.j0, ldc);
    tail(blk);
  };
  OPSCOPE_RETURN_IF_ERROR(ctx.Launch(launch));
  // The body is borrowed by reference: the launch must finish before we return.
  if (ctx.stream() != nullptr) OPSCOPE_RETURN_IF_ERROR(ctx.stream()->Synchronize());
  return Status::Ok();
}

}  // namespace opscope::dense
