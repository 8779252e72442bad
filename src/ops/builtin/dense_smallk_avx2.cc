// dense_smallk.h's kernel. This file alone is compiled with -mavx2 -mfma
// (src/CMakeLists.txt, outside any unity batch) and is reached only through
// Avx2SmallKGemm, which checks the CPU first.
#include "ops/builtin/dense_smallk.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>

namespace opscope::dense {
namespace {

// Lanes j < live of a 16-column panel: two masks of 8 (maskload/maskstore
// touch no memory in the lanes they leave out).
struct PanelMask {
  __m256i lo, hi;
  explicit PanelMask(int64_t live) {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    lo = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(live)), idx);
    hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(live) - 8), idx);
  }
};

// What a block starts from and what it stores: dense_smallk.h's row_init, lo, hi.
struct Tail {
  const float* row_init;
  __m256 lo, hi;
};

// C[0..MR) x [0..16) += A[0..MR) x [0..k) * B[0..k) x [0..16) (or = row_init
// + A * B), clamped to [lo, hi], masked to the panel's live columns when Masked.
template <int MR, bool Masked>
void Block(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
           const PanelMask& mask, const Tail& tail) {
  // Every loop over r unrolled, so the accumulators live in registers (g++'s
  // -O2 kept them in memory: a load and a store around each FMA).
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
    if (tail.row_init != nullptr) {
      acc0[r] = acc1[r] = _mm256_set1_ps(tail.row_init[r]);
    } else {
      acc0[r] = Masked ? _mm256_maskload_ps(cr, mask.lo) : _mm256_loadu_ps(cr);
      acc1[r] = Masked ? _mm256_maskload_ps(cr + 8, mask.hi) : _mm256_loadu_ps(cr + 8);
    }
  }
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    const __m256 b0 = Masked ? _mm256_maskload_ps(bp, mask.lo) : _mm256_loadu_ps(bp);
    const __m256 b1 = Masked ? _mm256_maskload_ps(bp + 8, mask.hi) : _mm256_loadu_ps(bp + 8);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
      acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
      acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
    // max(lo, x) and min(hi, x) return x when x is NaN (the second operand),
    // and x itself for -0.0 against 0.0: std::max(x, lo)'s answers.
    acc0[r] = _mm256_min_ps(tail.hi, _mm256_max_ps(tail.lo, acc0[r]));
    acc1[r] = _mm256_min_ps(tail.hi, _mm256_max_ps(tail.lo, acc1[r]));
    if (Masked) {
      _mm256_maskstore_ps(cr, mask.lo, acc0[r]);
      _mm256_maskstore_ps(cr + 8, mask.hi, acc1[r]);
    } else {
      _mm256_storeu_ps(cr, acc0[r]);
      _mm256_storeu_ps(cr + 8, acc1[r]);
    }
  }
}

// Rows [i, i + MR) of C across the 16-column panels of a chunk: the block's
// rows of A and C stay put (C's rows are far apart in a convolution's output,
// a page each) while B's panels, in L1, stream past.
template <int MR>
void Rows(int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
          const Tail& tail) {
  static const PanelMask full(16);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) Block<MR, false>(k, a, lda, b + j, ldb, c + j, ldc, full, tail);
  if (j < n) Block<MR, true>(k, a, lda, b + j, ldb, c + j, ldc, PanelMask(n - j), tail);
}

void SmallKGemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                int64_t ldc, const float* row_init, float lo, float hi) {
  const __m256 lov = _mm256_set1_ps(lo), hiv = _mm256_set1_ps(hi);
  auto tail = [&](int64_t i) { return Tail{row_init != nullptr ? row_init + i : nullptr, lov, hiv}; };
  // Columns in chunks of about 24 KiB of B (it stays in L1 across every row
  // block of the chunk), rows in blocks of six inside.
  const int64_t chunk = std::max<int64_t>(16, (24 << 10) / (4 * std::max<int64_t>(k, 1)) / 16 * 16);
  for (int64_t j = 0; j < n; j += chunk) {
    const int64_t w = std::min(chunk, n - j);
    int64_t i = 0;
    for (; i + 6 <= m; i += 6) Rows<6>(w, k, a + i * lda, lda, b + j, ldb, c + i * ldc + j, ldc, tail(i));
    const float* ai = a + i * lda;
    float* ci = c + i * ldc + j;
    switch (m - i) {
      case 5: Rows<5>(w, k, ai, lda, b + j, ldb, ci, ldc, tail(i)); break;
      case 4: Rows<4>(w, k, ai, lda, b + j, ldb, ci, ldc, tail(i)); break;
      case 3: Rows<3>(w, k, ai, lda, b + j, ldb, ci, ldc, tail(i)); break;
      case 2: Rows<2>(w, k, ai, lda, b + j, ldb, ci, ldc, tail(i)); break;
      case 1: Rows<1>(w, k, ai, lda, b + j, ldb, ci, ldc, tail(i)); break;
      default: break;
    }
  }
}

}  // namespace

SmallKGemmFn Avx2SmallKGemm() {
  static const bool usable = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                             std::getenv("OPSCOPE_SCALAR_MATH") == nullptr;
  return usable ? SmallKGemm : nullptr;
}

}  // namespace opscope::dense
