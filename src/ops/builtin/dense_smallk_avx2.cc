// dense_smallk.h's kernel. This file alone is compiled with -mavx2 -mfma
// (src/CMakeLists.txt, outside any unity batch) and is reached only through
// Avx2SmallKGemm, which checks the CPU first.
#include "ops/builtin/dense_smallk.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

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

// f(std::integral_constant<int, left>()) for 1 <= left <= Max: the
// register blocks take their row count as a template argument, and a
// block of rows ends on whatever is left.
template <int Max, typename F>
void WithRows(int64_t left, const F& f) {
  if constexpr (Max > 0) {
    if (left == Max) return f(std::integral_constant<int, Max>());
    WithRows<Max - 1>(left, f);
  }
}

// Rows [0, n) in register blocks of six, calling f(i, rows) with rows an
// integral_constant, and the rows past the last six in blocks of four or
// five where there are enough, never a block of one to three: a block of r
// rows keeps 2r chains of multiply-adds, and under eight they leave the
// two FMA pipes idle for part of each 4-cycle latency. A 7x7 plane's 49
// positions ran as eight blocks of six and one of one, which took two
// thirds of a block of six's time for a sixth of its work; as five of six,
// three of five and one of four, every block keeps both pipes busy.
template <typename F>
void SixRowBlocks(int64_t n, const F& f) {
  int64_t sixes = n / 6, left = n % 6;
  int64_t tail[3] = {left, 0, 0};  // the blocks after the sixes
  if (left == 1 && sixes >= 2) sixes -= 2, tail[0] = 5, tail[1] = 4, tail[2] = 4;
  else if (left == 1 && sixes == 1) sixes = 0, tail[0] = 4, tail[1] = 3;
  else if (left == 2 && sixes >= 1) sixes -= 1, tail[0] = 4, tail[1] = 4;
  else if (left == 3 && sixes >= 1) sixes -= 1, tail[0] = 5, tail[1] = 4;
  int64_t i = 0;
  for (int64_t b = 0; b < sixes; ++b, i += 6) f(i, std::integral_constant<int, 6>());
  for (int64_t rows : tail) {
    WithRows<5>(rows, [&](auto r) { f(i, r); });
    i += rows;
  }
}

// C[0..MR) x [0..16) += A[0..MR) x [0..k) * B[0..k) x [0..16) (or = row_init
// + A * B), clamped to [lo, hi], masked to the panel's live columns when
// Masked. Half: a panel with at most 8 live columns, its first 8 alone (half
// the multiplies; a 7x7 plane's 49 columns are three panels and one column).
// Out of line, so that its registers are allocated for this loop alone
// (inlined into the slab loops, g++ spilled its loop-invariant pointers).
template <int MR, bool Masked, bool FromZero, bool Half = false, bool Prefetch = false>
__attribute__((noinline)) void Block(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                                     int64_t ldc, const PanelMask& mask, const Tail& tail,
                                     const float* next = nullptr) {
  // Every loop over r unrolled, so the accumulators live in registers (g++'s
  // -O2 kept them in memory: a load and a store around each FMA).
  // FromZero (the shifted GEMM over several slabs): the products are summed
  // from zero and added to C's start at the end, so a slab's chain of
  // roundings is k long, not as long as every slab before it. Otherwise
  // (one pass) the sums start at C's start.
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
    if (FromZero) {
      acc0[r] = acc1[r] = _mm256_setzero_ps();
    } else if (tail.row_init != nullptr) {
      acc0[r] = acc1[r] = _mm256_set1_ps(tail.row_init[r]);
    } else {
      acc0[r] = Masked ? _mm256_maskload_ps(cr, mask.lo) : _mm256_loadu_ps(cr);
      if constexpr (!Half) acc1[r] = Masked ? _mm256_maskload_ps(cr + 8, mask.hi) : _mm256_loadu_ps(cr + 8);
    }
  }
  // A's rows through two bases three rows apart and one byte stride, each
  // in a register: row r is read at base + (r % 3) * stride, an addressing
  // mode. With a pointer per row g++ ran out of registers and reloaded five
  // of them from the stack every step, more loads than the FMAs could hide.
  // (Half blocks run up to twelve rows: a third and a fourth base.)
  const char* a0 = reinterpret_cast<const char*>(a);
  const char* a3 = reinterpret_cast<const char*>(a + 3 * lda);
  const char* a6 = reinterpret_cast<const char*>(a + (MR > 6 ? 6 : 0) * lda);
  const char* a9 = reinterpret_cast<const char*>(a + (MR > 9 ? 9 : 0) * lda);
  const int64_t stride = lda * static_cast<int64_t>(sizeof(float));
#pragma GCC unroll 4
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    if constexpr (Prefetch) _mm_prefetch(reinterpret_cast<const char*>(next + p * ldb), _MM_HINT_T1);
    const __m256 b0 = Masked ? _mm256_maskload_ps(bp, mask.lo) : _mm256_loadu_ps(bp);
    const __m256 b1 = Half ? b0 : Masked ? _mm256_maskload_ps(bp + 8, mask.hi) : _mm256_loadu_ps(bp + 8);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const char* row = (r < 3 ? a0 : r < 6 ? a3 : r < 9 ? a6 : a9) + (r % 3) * stride;
      const __m256 av = _mm256_broadcast_ss(reinterpret_cast<const float*>(row));
      acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
      if constexpr (!Half) acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
    }
    a0 += sizeof(float);
    a3 += sizeof(float);
    if constexpr (MR > 6) a6 += sizeof(float);
    if constexpr (MR > 9) a9 += sizeof(float);
  }
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
    if constexpr (FromZero) {
      if (tail.row_init != nullptr) {
        const __m256 init = _mm256_set1_ps(tail.row_init[r]);
        acc0[r] = _mm256_add_ps(init, acc0[r]);
        if constexpr (!Half) acc1[r] = _mm256_add_ps(init, acc1[r]);
      } else {
        acc0[r] = _mm256_add_ps(Masked ? _mm256_maskload_ps(cr, mask.lo) : _mm256_loadu_ps(cr), acc0[r]);
        if constexpr (!Half)
          acc1[r] = _mm256_add_ps(Masked ? _mm256_maskload_ps(cr + 8, mask.hi) : _mm256_loadu_ps(cr + 8), acc1[r]);
      }
    }
    // max(lo, x) and min(hi, x) return x when x is NaN (the second operand),
    // and x itself for -0.0 against 0.0: std::max(x, lo)'s answers.
    acc0[r] = _mm256_min_ps(tail.hi, _mm256_max_ps(tail.lo, acc0[r]));
    if constexpr (Half) {
      _mm256_maskstore_ps(cr, mask.lo, acc0[r]);
      continue;
    }
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

// ---- 512-bit blocks ----
//
// Where the CPU has AVX-512F (WideBlocks), whole panels run the blocks
// below: a panel row is one 512-bit vector, and a block takes two panels
// side by side, six rows of two vectors, the twelve chains of Block. On a
// core whose FMA pipes are 512 bits wide (Zen 5) that is twice the flops
// an instruction: 276 GFLOP/s a core against 139 for the 256-bit form (a
// 12-chain FMA loop pinned to one core), where onnxruntime's kernels, which
// run 512-bit there, had gone twice as fast as ours. Each output sums the
// same products in the same order from the same start, one rounding per
// fused multiply-add, and is clamped by the same max and min: the bits of
// Block, lane for lane. Partial panels (masked) stay on Block.
std::atomic<int> g_wide{-1};  // -1: not decided yet

bool CpuRunsWide() {
  return __builtin_cpu_supports("avx512f") && std::getenv("OPSCOPE_NO_AVX512") == nullptr;
}

bool Wide() {
  int w = g_wide.load(std::memory_order_relaxed);
  if (w < 0) {
    w = CpuRunsWide() ? 1 : 0;
    g_wide.store(w, std::memory_order_relaxed);
  }
  return w == 1;
}

// A 512-bit block's sums start (WideBlock, WidePackingBlock): from zero
// (FromZero), from row_init, or from C; and A's rows are read through
// bases three rows apart, as Block reads them (WideStep).
template <int MR, int NP, bool FromZero>
[[gnu::target("avx512f"), gnu::always_inline]] inline void WideStart(__m512 (&acc)[NP][MR],
                                                                     const char* (&ab)[(MR + 2) / 3], const float* a,
                                                                     int64_t lda, const float* c, int64_t ldc,
                                                                     const Tail& tail) {
#pragma GCC unroll 4
  for (int i = 0; i < (MR + 2) / 3; ++i) ab[i] = reinterpret_cast<const char*>(a + 3 * i * lda);
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 2
    for (int i = 0; i < NP; ++i) {
      if (FromZero) acc[i][r] = _mm512_setzero_ps();
      else if (tail.row_init != nullptr) acc[i][r] = _mm512_set1_ps(tail.row_init[r]);
      else acc[i][r] = _mm512_loadu_ps(c + r * ldc + 16 * i);
    }
  }
}

// And end: added to C's start where summed from zero, clamped to [lo, hi],
// stored.
template <int MR, int NP, bool FromZero>
[[gnu::target("avx512f"), gnu::always_inline]] inline void WideFinish(__m512 (&acc)[NP][MR], float* c, int64_t ldc,
                                                                      const Tail& tail) {
  const __m512 lo = _mm512_set1_ps(_mm256_cvtss_f32(tail.lo)), hi = _mm512_set1_ps(_mm256_cvtss_f32(tail.hi));
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 2
    for (int i = 0; i < NP; ++i) {
      float* cr = c + r * ldc + 16 * i;
      if constexpr (FromZero) {
        const __m512 start = tail.row_init != nullptr ? _mm512_set1_ps(tail.row_init[r]) : _mm512_loadu_ps(cr);
        acc[i][r] = _mm512_add_ps(start, acc[i][r]);
      }
      // The zero-masked forms with every lane kept: vmaxps and vminps, as
      // _mm512_max_ps would be, whose g++ 12 header reads an undefined
      // vector (-Wuninitialized at every use).
      const __m512 clamped = _mm512_maskz_min_ps(0xFFFF, hi, _mm512_maskz_max_ps(0xFFFF, lo, acc[i][r]));
      _mm512_storeu_ps(cr, clamped);
    }
  }
}

// One step of k: A's column p (a float of each row, broadcast) times B's
// row p (bv), into the sums; A's rows are read through bases three rows
// apart (ab, (MR + 2) / 3 of them), each moved on a float.
template <int MR, int NP>
[[gnu::target("avx512f"), gnu::always_inline]] inline void WideStep(__m512 (&acc)[NP][MR],
                                                                    const char* (&ab)[(MR + 2) / 3], int64_t stride,
                                                                    const __m512* bv) {
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    const char* row = ab[r / 3] + (r % 3) * stride;
    const __m512 av = _mm512_set1_ps(*reinterpret_cast<const float*>(row));
#pragma GCC unroll 2
    for (int i = 0; i < NP; ++i) acc[i][r] = _mm512_fmadd_ps(av, bv[i], acc[i][r]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < (MR + 2) / 3; ++i) ab[i] += sizeof(float);
}

// C[0..MR) x [0..16 NP) += A[0..MR) x [0..k) * B (or = row_init + A * B, or
// summed from zero and added to C's start: FromZero), clamped to [lo, hi]:
// Block's sums over NP whole panels, panel i's row p at b + i panel_step +
// p ldb, its C at c + 16 i. With `next` (Prefetch) each step asks for a
// line of each of the next two panels (next, next + panel_step), into L2.
template <int MR, int NP, bool FromZero, bool Prefetch>
[[gnu::target("avx512f"), gnu::noinline]] void WideBlock(int64_t k, const float* a, int64_t lda, const float* b,
                                                         int64_t ldb, int64_t panel_step, float* c, int64_t ldc,
                                                         const Tail& tail, const float* next) {
  __m512 acc[NP][MR];
  const char* ab[(MR + 2) / 3];
  WideStart<MR, NP, FromZero>(acc, ab, a, lda, c, ldc, tail);
  const int64_t stride = lda * static_cast<int64_t>(sizeof(float));
#pragma GCC unroll 4
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    if constexpr (Prefetch) {
      _mm_prefetch(reinterpret_cast<const char*>(next + p * ldb), _MM_HINT_T1);
      if constexpr (NP == 2) _mm_prefetch(reinterpret_cast<const char*>(next + panel_step + p * ldb), _MM_HINT_T1);
    }
    __m512 bv[NP];
#pragma GCC unroll 2
    for (int i = 0; i < NP; ++i) bv[i] = _mm512_loadu_ps(bp + i * panel_step);
    WideStep<MR, NP>(acc, ab, stride, bv);
  }
  WideFinish<MR, NP, FromZero>(acc, c, ldc, tail);
}

// The position GEMM's block (PositionBlock) over NP whole panels of W^T
// (panel i at b + i panel_step), in 512-bit vectors.
template <int MR, int NP, bool FromZero, bool Prefetch>
[[gnu::target("avx512f"), gnu::noinline]] void WidePositionBlock(int64_t k, const float* const* base,
                                                                 const int64_t* off, const float* b,
                                                                 int64_t panel_step, float* c, int64_t ldc,
                                                                 const float* next) {
  __m512 acc[NP][MR];
  const float* row[MR];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    row[r] = base[r];
#pragma GCC unroll 3
    for (int i = 0; i < NP; ++i) acc[i][r] = FromZero ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc + 16 * i);
  }
#pragma GCC unroll 4
  for (int64_t p = 0; p < k; ++p) {
    const int64_t o = off[p];
    if constexpr (Prefetch) {
#pragma GCC unroll 3
      for (int i = 0; i < NP; ++i) {
        _mm_prefetch(reinterpret_cast<const char*>(next + i * panel_step + p * kPanel), _MM_HINT_T1);
      }
    }
    __m512 bv[NP];
#pragma GCC unroll 3
    for (int i = 0; i < NP; ++i) bv[i] = _mm512_load_ps(b + i * panel_step + p * kPanel);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(row[r][o]);
#pragma GCC unroll 3
      for (int i = 0; i < NP; ++i) acc[i][r] = _mm512_fmadd_ps(av, bv[i], acc[i][r]);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int i = 0; i < NP; ++i) {
      float* cr = c + r * ldc + 16 * i;
      if (FromZero) acc[i][r] = _mm512_add_ps(_mm512_loadu_ps(cr), acc[i][r]);
      _mm512_storeu_ps(cr, acc[i][r]);
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
  if (Wide()) {
    for (; j + 32 <= n; j += 32) WideBlock<MR, 2, false, false>(k, a, lda, b + j, ldb, 16, c + j, ldc, tail, nullptr);
    // A lone panel: six chains of 512-bit multiply-adds still take fewer
    // cycles a step than Block's twelve of 256 bits.
    if (j + 16 <= n) {
      WideBlock<MR, 1, false, false>(k, a, lda, b + j, ldb, 16, c + j, ldc, tail, nullptr);
      j += 16;
    }
  }
  for (; j + 16 <= n; j += 16) Block<MR, false, false>(k, a, lda, b + j, ldb, c + j, ldc, full, tail);
  if (j < n) Block<MR, true, false>(k, a, lda, b + j, ldb, c + j, ldc, PanelMask(n - j), tail);
}

void SmallKGemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                int64_t ldc, const float* row_init, float lo, float hi) {
  const __m256 lov = _mm256_set1_ps(lo), hiv = _mm256_set1_ps(hi);
  auto tail = [&](int64_t i) { return Tail{row_init != nullptr ? row_init + i : nullptr, lov, hiv}; };
  // Columns in chunks of about 24 KiB of B (it stays in L1 across every row
  // block of the chunk), rows in blocks of six inside.
  // Two panels at least where 512-bit blocks run, which take them in pairs
  // (k = 256: 32 KiB, inside Zen 5's 48 KiB L1; at one panel the 1x1s of
  // googlenet's inception3b, K = 256, ran on the 256-bit blocks).
  const int64_t least = Wide() ? 32 : 16;
  const int64_t chunk = std::max<int64_t>(least, (24 << 10) / (4 * std::max<int64_t>(k, 1)) / 16 * 16);
  for (int64_t j = 0; j < n; j += chunk) {
    const int64_t w = std::min(chunk, n - j);
    // A last panel of at most 8 live columns (a 7x7 plane's 49th) runs apart,
    // every row of it, twelve rows a block on its first 8 lanes, as the
    // shifted GEMM's StripRows does: in blocks of six rows of two vectors it
    // cost as much as a full panel (mobilenet_v2's 160 -> 960 1x1 over 7x7
    // spent a quarter of its time on that one column).
    const int64_t half = w % 16 != 0 && w % 16 <= 8 ? w % 16 : 0, whole = w - half;
    if (whole > 0) {
      SixRowBlocks(m, [&](int64_t r0, auto rows) {
        Rows<decltype(rows)::value>(whole, k, a + r0 * lda, lda, b + j, ldb, c + r0 * ldc + j, ldc, tail(r0));
      });
    }
    if (half > 0) {
      const PanelMask mask(half);
      const float* bh = b + j + whole;
      int64_t i = 0;
      for (; i + 12 <= m; i += 12) {
        Block<12, true, false, true>(k, a + i * lda, lda, bh, ldb, c + i * ldc + j + whole, ldc, mask, tail(i));
      }
      const float* ai = a + i * lda;
      float* ci = c + i * ldc + j + whole;
      WithRows<11>(m - i, [&](auto rows) {
        Block<decltype(rows)::value, true, false, true>(k, ai, lda, bh, ldb, ci, ldc, mask, tail(i));
      });
    }
  }
}

// Rows [i0, i1) of C against one panel of B: six at a time (SixRowBlocks),
// or, for its first 8 columns alone (Half), twelve. With one vector a row,
// six rows are six chains of dependent multiply-adds, too few to fill both
// FMA pipes for their 4-cycle latency; twelve fill them (a 7x7 plane's last
// column cost 0.7 of a full panel in blocks of six).
template <bool Masked, bool FromZero, bool Half = false>
void StripRows(int64_t i0, int64_t i1, int64_t k, const float* a, int64_t lda, const float* b, float* c,
               int64_t ldc, const PanelMask& mask, const Tail& tail, const float* next = nullptr) {
  auto at = [&](int64_t i) { return Tail{tail.row_init != nullptr ? tail.row_init + i : nullptr, tail.lo, tail.hi}; };
  if constexpr (!Half) {
    SixRowBlocks(i1 - i0, [&](int64_t r, auto rows) {
      const int64_t i = i0 + r;
      constexpr int kRows = decltype(rows)::value;
      if (next != nullptr) {
        Block<kRows, Masked, FromZero, false, true>(k, a + i * lda, lda, b, kPanel, c + i * ldc, ldc, mask, at(i),
                                                    next);
      } else {
        Block<kRows, Masked, FromZero>(k, a + i * lda, lda, b, kPanel, c + i * ldc, ldc, mask, at(i));
      }
    });
  } else {
    int64_t i = i0;
    auto block = [&](auto rows) {
      constexpr int kRows = decltype(rows)::value;
      Block<kRows, Masked, FromZero, true>(k, a + i * lda, lda, b, kPanel, c + i * ldc, ldc, mask, at(i));
    };
    for (; i + 12 <= i1; i += 12) block(std::integral_constant<int, 12>());
    WithRows<11>(i1 - i, block);
  }
}

// Rows [0, n) in as few blocks of at most R rows as hold them, as even as
// they go (64 rows at R = 12: 11, 11, 11, 11, 10, 10), for the 512-bit
// blocks: fewer blocks read the panels fewer times, and each keeps 2 x its
// rows chains of multiply-adds. Blocks of six (twelve chains) left CNNs'
// 64, 128, 256 and 512 channels with a block of 4 or 2 rows.
template <int R, typename F>
void WideRowBlocks(int64_t n, const F& f) {
  const int64_t blocks = (n + R - 1) / R;
  for (int64_t b = 0, i = 0; b < blocks; ++b) {
    const int64_t rows = n / blocks + (b < n % blocks ? 1 : 0);
    WithRows<R>(rows, [&](auto r) { f(i, r); });
    i += rows;
  }
}

// Twelve rows for the shifted and packed GEMMs (24 chains: the kernel
// alone, one core, 7 rounds alternating over five shapes, 246-259 ->
// 251-262 GFLOP/s against blocks of six, of an FMA loop's 271); eight for
// the position GEMM, whose rows are pointers held in general registers.
inline constexpr int kWideRows = 12, kWidePositionRows = 8;

// StripRows on NP whole panels of a slab (k rows each, side by side) in WideBlocks.
template <int NP, bool FromZero>
void WideStripRows(int64_t i0, int64_t i1, int64_t k, const float* a, int64_t lda, const float* b, float* c,
                   int64_t ldc, const Tail& tail, const float* next) {
  WideRowBlocks<kWideRows>(i1 - i0, [&](int64_t r, auto rows) {
    const int64_t i = i0 + r;
    constexpr int kRows = decltype(rows)::value;
    const Tail at{tail.row_init != nullptr ? tail.row_init + i : nullptr, tail.lo, tail.hi};
    if (next != nullptr) {
      WideBlock<kRows, NP, FromZero, true>(k, a + i * lda, lda, b, kPanel, kPanel * k, c + i * ldc, ldc, at, next);
    } else {
      WideBlock<kRows, NP, FromZero, false>(k, a + i * lda, lda, b, kPanel, kPanel * k, c + i * ldc, ldc, at, nullptr);
    }
  });
}

template <bool FromZero, bool Prefetch = false>
void Slab(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels, float* c, int64_t ldc,
          const Tail& tail) {
  static const PanelMask full(kPanel);
  constexpr int64_t kRowGroup = 96;
  const bool wide = Wide();
  for (int64_t i0 = 0; i0 < m; i0 += kRowGroup) {
    const int64_t i1 = std::min(m, i0 + kRowGroup);
    for (int64_t j = 0; j < n; j += kPanel) {
      const float* b = panels + j * k;
      if (wide && j + kPanel <= n) {
        // Two whole panels a block where there are two, else one.
        const bool two = j + 2 * kPanel <= n;
        const int64_t width = two ? 2 * kPanel : kPanel;
        const float* next = Prefetch && j + width < n ? b + width * k : nullptr;
        if (two) WideStripRows<2, FromZero>(i0, i1, k, a, lda, b, c + j, ldc, tail, next);
        else WideStripRows<1, FromZero>(i0, i1, k, a, lda, b, c + j, ldc, tail, next);
        j += width - kPanel;
        continue;
      }
      // The next panel asked for a line a step, into L2, as the position GEMM
      // does: MatMul's kept panels of B come from memory (bert, inspector-cli
      // run --streams 1, 8 rounds alternating, paired: its MatMuls 1.02-1.07x,
      // the span 1.04x; the encoder's span 1.01x). The shifted GEMM's panels,
      // packed a moment before, are in cache: it asks for nothing.
      const float* next = Prefetch && j + kPanel < n ? b + kPanel * k : nullptr;
      if (j + kPanel <= n) StripRows<false, FromZero>(i0, i1, k, a, lda, b, c + j, ldc, full, tail, next);
      else if (n - j <= 8) StripRows<true, FromZero, true>(i0, i1, k, a, lda, b, c + j, ldc, PanelMask(n - j), tail);
      else StripRows<true, FromZero>(i0, i1, k, a, lda, b, c + j, ldc, PanelMask(n - j), tail);
    }
  }
}

// Where one panel of a slab reads its 16 columns: a panel inside one run
// (`whole`) reads 16 floats at `delta` past each row's start; otherwise
// `pieces` reads a run's share of one half (8 lanes): lanes outside `mask`
// read nothing and stay zero (the panel's lanes past n too).
struct PanelPiece {
  int half;
  int64_t delta;
  __m256i mask;
};
struct PanelReads {
  bool whole = false;
  int64_t delta = 0;
  std::vector<PanelPiece> pieces;
  // Straight from a plane (PlaneBorders), a panel with lanes outside it for
  // some tap: tap t's masks of the two halves, all 16 lanes read at delta.
  // Empty otherwise. tap_bits: the same masks as 16 bits, lane l bit l.
  std::vector<PanelMask> taps;
  std::vector<uint16_t> tap_bits;
};

// The panels of n columns read straight from a plane (dense_smallk.h's
// PlaneBorders), column j at plane position first + j: a panel whose lanes
// read inside the plane for every tap is whole; the others keep a pair of
// masks a tap.
void PlanBorderPanels(int64_t n, int64_t first, const PlaneBorders& b, std::vector<PanelReads>& plan) {
  const int64_t panels = (n + kPanel - 1) / kPanel, kvol = b.kh * b.kw;
  plan.resize(static_cast<size_t>(panels));
  // Kept between calls: the plan is made for every block of columns.
  thread_local std::vector<uint32_t> rows, cols;
  rows.resize(static_cast<size_t>(b.kh));
  cols.resize(static_cast<size_t>(b.kw));
  for (int64_t q = 0; q < panels; ++q) {
    PanelReads& pr = plan[static_cast<size_t>(q)];
    pr.pieces.clear();
    pr.taps.clear();
    pr.tap_bits.clear();
    const int64_t j0 = q * kPanel, live = std::min(kPanel, n - j0);
    pr.delta = first + j0;
    // Which lanes stay inside the plane for each window row (rows) and
    // column (cols), as bits: tap (i, j)'s lanes are rows[i] & cols[j] (a
    // lane and tap at a time, the masks took 4% of a 3x3 conv's time).
    std::fill(rows.begin(), rows.end(), 0u);
    std::fill(cols.begin(), cols.end(), 0u);
    int64_t row = (first + j0) / b.w, col = (first + j0) % b.w;
    for (int64_t l = 0; l < live; ++l) {
      for (int64_t i = 0; i < b.kh; ++i) rows[static_cast<size_t>(i)] |= (row + i - b.ph >= 0 && row + i - b.ph < b.h ? 1u : 0u) << l;
      for (int64_t j = 0; j < b.kw; ++j) cols[static_cast<size_t>(j)] |= (col + j - b.pw >= 0 && col + j - b.pw < b.w ? 1u : 0u) << l;
      if (++col == b.w) col = 0, ++row;
    }
    const uint32_t all = (1u << kPanel) - 1;
    bool inside = live == kPanel;
    for (int64_t i = 0; i < b.kh; ++i) inside = inside && rows[static_cast<size_t>(i)] == all;
    for (int64_t j = 0; j < b.kw; ++j) inside = inside && cols[static_cast<size_t>(j)] == all;
    pr.whole = inside;
    if (inside) continue;
    pr.taps.resize(static_cast<size_t>(kvol), PanelMask(0));
    pr.tap_bits.resize(static_cast<size_t>(kvol), 0);
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    for (int64_t t = 0; t < kvol; ++t) {
      const uint32_t lanes = rows[static_cast<size_t>(t / b.kw)] & cols[static_cast<size_t>(t % b.kw)];
      pr.tap_bits[static_cast<size_t>(t)] = static_cast<uint16_t>(lanes);
      const __m256i lo = _mm256_set1_epi32(static_cast<int>(lanes & 0xFF)), hi = _mm256_set1_epi32(static_cast<int>(lanes >> 8));
      pr.taps[static_cast<size_t>(t)].lo = _mm256_cmpeq_epi32(_mm256_and_si256(lo, bit), bit);
      pr.taps[static_cast<size_t>(t)].hi = _mm256_cmpeq_epi32(_mm256_and_si256(hi, bit), bit);
    }
  }
}

// Each panel's reads, from the runs: column j0 + l of run r reads at
// delta = at - first + j0, plus l.
void PlanPanels(int64_t n, const ColumnRun* runs, int64_t num_runs, std::vector<PanelReads>& plan) {
  const int64_t panels = (n + kPanel - 1) / kPanel;
  plan.resize(static_cast<size_t>(panels));
  int64_t r = 0;
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t q = 0; q < panels; ++q) {
    PanelReads& pr = plan[static_cast<size_t>(q)];
    pr.pieces.clear();
    pr.taps.clear();
    const int64_t j0 = q * kPanel, j1 = std::min(n, j0 + kPanel);
    while (runs[r].first + runs[r].count <= j0) ++r;
    const ColumnRun& first = runs[r];
    pr.whole = j1 - j0 == kPanel && first.first + first.count >= j1;
    pr.delta = first.at - first.first + j0;
    if (pr.whole) continue;
    for (int64_t s = r; s < num_runs && runs[s].first < j1; ++s) {
      const int64_t lo = std::max(j0, runs[s].first) - j0, hi = std::min(j1, runs[s].first + runs[s].count) - j0;
      for (int half = 0; half < 2; ++half) {
        const int64_t a = std::max<int64_t>(lo - 8 * half, 0), b = std::min<int64_t>(hi - 8 * half, 8);
        if (a >= b) continue;
        const __m256i in = _mm256_and_si256(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(static_cast<int>(a) - 1)),
                                            _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(b)), idx));
        pr.pieces.push_back({half, runs[s].at - runs[s].first + j0 + 8 * half, in});
      }
    }
  }
}

// A whole panel, or one with a mask a tap (bits: tap t's at bits[t]), in
// 512-bit reads and stores: one masked load a row where the 256-bit path
// made two vmaskmovps.
[[gnu::target("avx512f"), gnu::noinline]] void WidePackPanel(int64_t k, const float* base, const int64_t* off,
                                                              const uint16_t* bits, int64_t tap0, int64_t kvol,
                                                              float* dst) {
  if (bits == nullptr) {
    for (int64_t p = 0; p < k; ++p, dst += kPanel) _mm512_store_ps(dst, _mm512_loadu_ps(base + off[p]));
    return;
  }
  int64_t t = tap0;
  for (int64_t p = 0; p < k; ++p, dst += kPanel) {
    _mm512_store_ps(dst, _mm512_maskz_loadu_ps(bits[t], base + off[p]));
    if (++t == kvol) t = 0;
  }
}

// Rows [0, k) of the shifted B (row p: src + off[p]), into the panels of a
// slab, a panel at a time: each panel's k rows are written in order (a row
// at a time across the panels stored 16 floats to every panel in turn, a
// slab's size apart, and took a tenth of a 3x3 conv's time). Row p is tap
// (tap0 + p) % kvol of its channel (straight from a plane: PanelReads::taps).
// `count` panels of the plan.
void PackShifted(int64_t k, const float* src, const int64_t* off, const PanelReads* plan, int64_t count,
                 int64_t tap0, int64_t kvol, float* panels) {
  float* dst = panels;
  const bool wide = Wide();
  for (const PanelReads& pr : std::span(plan, static_cast<size_t>(count))) {
    if (wide && (pr.whole || !pr.taps.empty())) {
      WidePackPanel(k, src + pr.delta, off, pr.whole ? nullptr : pr.tap_bits.data(), tap0, kvol, dst);
      dst += kPanel * k;
      continue;
    }
    if (pr.whole) {
      const float* base = src + pr.delta;
      for (int64_t p = 0; p < k; ++p, dst += kPanel) {
        _mm256_store_ps(dst, _mm256_loadu_ps(base + off[p]));
        _mm256_store_ps(dst + 8, _mm256_loadu_ps(base + off[p] + 8));
      }
      continue;
    }
    if (!pr.taps.empty()) {
      // Masked lanes read nothing (a tap past the plane's first or last row
      // would read before X or past it) and are +0, the grid's padding.
      int64_t t = tap0;
      for (int64_t p = 0; p < k; ++p, dst += kPanel) {
        const float* at = src + (pr.delta + off[p]);
        const PanelMask& mask = pr.taps[static_cast<size_t>(t)];
        _mm256_store_ps(dst, _mm256_maskload_ps(at, mask.lo));
        _mm256_store_ps(dst + 8, _mm256_maskload_ps(at + 8, mask.hi));
        if (++t == kvol) t = 0;
      }
      continue;
    }
    // A half at a time, its pieces (disjoint lanes) or-ed together in
    // registers; past three, one pass per piece over the panel in L1.
    for (int half = 0; half < 2; ++half) {
      const PanelPiece* pc[8];
      int np = 0;
      for (const PanelPiece& piece : pr.pieces)
        if (piece.half == half && np < 8) pc[np++] = &piece;
      float* d = dst + 8 * half;
      auto load = [&](int i, int64_t p) { return _mm256_maskload_ps(src + off[p] + pc[i]->delta, pc[i]->mask); };
      if (np == 0) {
        for (int64_t p = 0; p < k; ++p) _mm256_store_ps(d + p * kPanel, _mm256_setzero_ps());
      } else if (np == 1) {
        for (int64_t p = 0; p < k; ++p) _mm256_store_ps(d + p * kPanel, load(0, p));
      } else if (np == 2) {
        for (int64_t p = 0; p < k; ++p) _mm256_store_ps(d + p * kPanel, _mm256_or_ps(load(0, p), load(1, p)));
      } else if (np == 3) {
        for (int64_t p = 0; p < k; ++p)
          _mm256_store_ps(d + p * kPanel, _mm256_or_ps(_mm256_or_ps(load(0, p), load(1, p)), load(2, p)));
      } else {
        for (int64_t p = 0; p < k; ++p) _mm256_store_ps(d + p * kPanel, load(0, p));
        for (int i = 1; i < np; ++i)
          for (int64_t p = 0; p < k; ++p)
            _mm256_store_ps(d + p * kPanel, _mm256_or_ps(_mm256_load_ps(d + p * kPanel), load(i, p)));
      }
    }
    dst += kPanel * k;
  }
}

// The slabs both GEMMs cut k into: even ones (576 as 3 x 192, not 256 + 256
// + 64: a thin slab stores and reloads C for little work).
int64_t SlabStep(int64_t k) {
  const int64_t slabs = std::max<int64_t>(1, (k + kPanelK - 1) / kPanelK);
  return std::max<int64_t>(1, (k + slabs - 1) / slabs);
}

// Each slab of the shifted B is packed into panels first: read in place,
// the shifted rows cost more than the packing (loads across cache lines;
// a 3x3 conv's blocks ran 20% slower than on packed panels; on a Zen 5 in
// 512-bit blocks, masked, as fast as packing and no faster). Two panels at
// a time, each pair packed and then run against every row of A while it is
// in L1 (a block's whole slab, 123 KB for a 3x3 over 56x56, was written to
// L2 and read back); on 512-bit blocks the pair's first block of rows packs
// it as it runs (PackingPair: two cores, ops-debug profile --mode kernel, 7
// rounds alternating: 3x3 over 56x56 514 -> 501 us, resnet's 7x7 stride-2
// stem 532 -> 508, 128 channels over 28x28 unchanged).
inline constexpr int64_t kGroupPanels = 2;
// WideBlock<MR, 2> on a pair of panels read from the shifted B itself
// (panel i's row p at base[i] + off[p], masked by bits[i][tap] where bits
// are given), each row stored into the pair's packed slab (panel i at dst +
// i 16 k) as it is used: the first block of rows packs the pair for the
// blocks after it, and no pass of its own reads B (the packing was 8% of a
// 3x3 conv's time on two cores).
template <int MR, bool FromZero, bool Masked>
[[gnu::target("avx512f"), gnu::noinline]] void WidePackingBlock(int64_t k, const float* a, int64_t lda,
                                                                const float* const* base, const int64_t* off,
                                                                const uint16_t* const* bits, int64_t tap0,
                                                                int64_t kvol, float* dst, float* c, int64_t ldc,
                                                                const Tail& tail) {
  constexpr int NP = 2;
  __m512 acc[NP][MR];
  const char* ab[(MR + 2) / 3];
  WideStart<MR, NP, FromZero>(acc, ab, a, lda, c, ldc, tail);
  const int64_t stride = lda * static_cast<int64_t>(sizeof(float));
  const float *b0 = base[0], *b1 = base[1];
  const uint16_t *m0 = Masked ? bits[0] : nullptr, *m1 = Masked ? bits[1] : nullptr;
  float* d1 = dst + kPanel * k;
  int64_t t = tap0;
#pragma GCC unroll 2
  for (int64_t p = 0; p < k; ++p) {
    const int64_t o = off[p];
    __m512 bv[NP];
    if constexpr (Masked) {
      bv[0] = _mm512_maskz_loadu_ps(m0[t], b0 + o);
      bv[1] = _mm512_maskz_loadu_ps(m1[t], b1 + o);
      if (++t == kvol) t = 0;
    } else {
      bv[0] = _mm512_loadu_ps(b0 + o);
      bv[1] = _mm512_loadu_ps(b1 + o);
    }
    _mm512_store_ps(dst + p * kPanel, bv[0]);
    _mm512_store_ps(d1 + p * kPanel, bv[1]);
    WideStep<MR, NP>(acc, ab, stride, bv);
  }
  WideFinish<MR, NP, FromZero>(acc, c, ldc, tail);
}

// A pair of whole panels (or panels masked a tap, straight from a plane)
// against rows [0, m): the first block of rows packs the pair as it runs
// (WidePackingBlock), the rest run on the packed slab. False where the pair
// cannot (a panel read in pieces, or fewer than 32 columns).
template <bool FromZero>
bool PackingPair(int64_t m, int64_t cols, int64_t k, const float* a, int64_t lda, const float* src,
                 const int64_t* off, const PanelReads* pair, int64_t tap0, int64_t kvol, float* slab, float* c,
                 int64_t ldc, const Tail& tail) {
  if (cols != 2 * kPanel) return false;
  bool masked = false;
  for (int i = 0; i < 2; ++i) {
    if (!pair[i].whole && pair[i].taps.empty()) return false;
    masked = masked || !pair[i].whole;
  }
  thread_local std::vector<uint16_t> ones;
  if (masked && static_cast<int64_t>(ones.size()) < kvol) ones.assign(static_cast<size_t>(kvol), 0xFFFF);
  const float* base[2] = {src + pair[0].delta, src + pair[1].delta};
  const uint16_t* bits[2] = {pair[0].whole ? ones.data() : pair[0].tap_bits.data(),
                             pair[1].whole ? ones.data() : pair[1].tap_bits.data()};
  const int64_t blocks = (m + kWideRows - 1) / kWideRows, r0 = (m + blocks - 1) / blocks;  // WideRowBlocks' first
  WithRows<kWideRows>(r0, [&](auto rows) {
    constexpr int R = decltype(rows)::value;
    if (masked) WidePackingBlock<R, FromZero, true>(k, a, lda, base, off, bits, tap0, kvol, slab, c, ldc, tail);
    else WidePackingBlock<R, FromZero, false>(k, a, lda, base, off, nullptr, tap0, kvol, slab, c, ldc, tail);
  });
  if (r0 < m) {
    const Tail rest{tail.row_init != nullptr ? tail.row_init + r0 : nullptr, tail.lo, tail.hi};
    Slab<FromZero>(m - r0, cols, k, a + r0 * lda, lda, slab, c + r0 * ldc, ldc, rest);
  }
  return true;
}

void ShiftedGemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* src, const int64_t* off,
                 const ColumnRun* runs, int64_t num_runs, float* c, int64_t ldc, const float* row_init, float lo,
                 float hi, const PlaneBorders* borders) {
  if (m <= 0 || n <= 0) return;
  const float inf = std::numeric_limits<float>::infinity();
  struct Aligned {
    void operator()(float* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<float, Aligned> slab;
  thread_local int64_t slab_size = 0;
  thread_local std::vector<PanelReads> plan;
  const int64_t panels = (n + kPanel - 1) / kPanel, need = std::min(k, kPanelK) * kGroupPanels * kPanel;
  if (need > slab_size) {
    slab.reset(static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>(need) * sizeof(float))));
    slab_size = need;
  }
  if (borders != nullptr) PlanBorderPanels(n, runs[0].at, *borders, plan);
  else PlanPanels(n, runs, num_runs, plan);
  const int64_t kvol = borders != nullptr ? borders->kh * borders->kw : 1;
  const int64_t slabs = (k + kPanelK - 1) / kPanelK, step = SlabStep(k);
  for (int64_t k0 = 0; k0 < k; k0 += step) {
    const int64_t kl = std::min(step, k - k0);
    const bool last = k0 + kl == k;
    const Tail tail{k0 == 0 ? row_init : nullptr, _mm256_set1_ps(last ? lo : -inf), _mm256_set1_ps(last ? hi : inf)};
    for (int64_t q0 = 0; q0 < panels; q0 += kGroupPanels) {
      const int64_t q1 = std::min(panels, q0 + kGroupPanels), j0 = q0 * kPanel, cols = std::min(n, q1 * kPanel) - j0;
      if (Wide()) {
        const bool done = slabs == 1 ? PackingPair<false>(m, cols, kl, a + k0, lda, src, off + k0, plan.data() + q0,
                                                          k0 % kvol, kvol, slab.get(), c + j0, ldc, tail)
                                     : PackingPair<true>(m, cols, kl, a + k0, lda, src, off + k0, plan.data() + q0,
                                                         k0 % kvol, kvol, slab.get(), c + j0, ldc, tail);
        if (done) continue;
      }
      PackShifted(kl, src, off + k0, plan.data() + q0, q1 - q0, k0 % kvol, kvol, slab.get());
      // One slab sums onto C's start, as the small-k kernel does: the same
      // bits where both could run.
      if (slabs == 1) Slab<false>(m, cols, kl, a + k0, lda, slab.get(), c + j0, ldc, tail);
      else Slab<true>(m, cols, kl, a + k0, lda, slab.get(), c + j0, ldc, tail);
    }
  }
}

// The slabs and panels of a k x n op(B); no floats yet.
PackedPanels PanelsFor(int64_t k, int64_t n) {
  PackedPanels p;
  p.k = k;
  p.n = n;
  p.step = SlabStep(k);
  p.padded_n = (n + kPanel - 1) / kPanel * kPanel;
  return p;
}

// Columns [j0, j0 + p.n) of op(B) into p's layout at `data`: a row of B
// at a time across the panels (16 contiguous floats a copy), or, from a
// transposed B, a row of B (a column of op(B)) at a time down its panel.
void PackInto(const float* b, int64_t ldb, bool trans_b, int64_t j0, const PackedPanels& p, float* data) {
  for (int64_t k0 = 0; k0 < p.k; k0 += p.step) {
    const int64_t kl = std::min(p.step, p.k - k0);
    float* slab = data + k0 * p.padded_n;
    if (!trans_b) {
      for (int64_t r = 0; r < kl; ++r) {
        const float* row = b + (k0 + r) * ldb + j0;
        for (int64_t q = 0; q < p.padded_n; q += kPanel) {
          float* dst = slab + q * kl + r * kPanel;
          const int64_t live = std::clamp<int64_t>(p.n - q, 0, kPanel);
          std::copy(row + q, row + q + live, dst);
          std::fill(dst + live, dst + kPanel, 0.0f);
        }
      }
      continue;
    }
    for (int64_t j = 0; j < p.padded_n; ++j) {
      float* dst = slab + (j / kPanel) * kPanel * kl + j % kPanel;
      if (j >= p.n) {
        for (int64_t r = 0; r < kl; ++r) dst[r * kPanel] = 0.0f;
        continue;
      }
      const float* col = b + (j0 + j) * ldb + k0;
      for (int64_t r = 0; r < kl; ++r) dst[r * kPanel] = col[r];
    }
  }
}

void PackedGemm(int64_t m, int64_t k, const float* a, int64_t lda, const PackedPanels* frozen, const float* b,
                int64_t ldb, bool trans_b, int64_t j0, int64_t j1, float* c, int64_t ldc, float lo, float hi) {
  if (m <= 0 || j1 <= j0 || k <= 0) return;
  PackedPanels scratch;
  if (frozen == nullptr) {
    struct Aligned {
      void operator()(float* p) const { std::free(p); }
    };
    thread_local std::unique_ptr<float, Aligned> buffer;
    thread_local int64_t buffer_size = 0;
    scratch = PanelsFor(k, j1 - j0);
    const int64_t need = k * scratch.padded_n;
    if (need > buffer_size) {
      buffer.reset(static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>(need) * sizeof(float))));
      buffer_size = need;
    }
    PackInto(b, ldb, trans_b, j0, scratch, buffer.get());
    scratch.data = buffer.get();
    c += j0;
    j1 -= j0;
    j0 = 0;
  }
  const PackedPanels& panels = frozen != nullptr ? *frozen : scratch;
  const float inf = std::numeric_limits<float>::infinity();
  const bool one_slab = panels.step >= k;
  for (int64_t k0 = 0; k0 < k; k0 += panels.step) {
    const int64_t kl = std::min(panels.step, k - k0);
    const bool last = k0 + kl == k;
    const Tail tail{nullptr, _mm256_set1_ps(last ? lo : -inf), _mm256_set1_ps(last ? hi : inf)};
    const float* slab = panels.Slab(k0) + j0 * kl;
    if (one_slab) Slab<false, true>(m, j1 - j0, kl, a + k0, lda, slab, c + j0, ldc, tail);
    else Slab<true, true>(m, j1 - j0, kl, a + k0, lda, slab, c + j0, ldc, tail);
  }
}

// Positions [0, MR) of C^T against one panel of W^T (dense_smallk.h's
// position GEMM): row r reads base[r] + off[p], one pointer a row in a
// register, so the MR positions may lie anywhere (two output rows of a 7x7
// plane in one block). C is a scratch of whole panels: no masks. With
// `next` (Prefetch), each step also asks for a line of the panel the GEMM
// takes next, into L2 (PositionGemm says why).
template <int MR, bool FromZero, bool Prefetch>
__attribute__((noinline)) void PositionBlock(int64_t k, const float* const* base, const int64_t* off, const float* b,
                                             float* c, int64_t ldc, const float* next) {
  __m256 acc0[MR], acc1[MR];
  const float* row[MR];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    row[r] = base[r];
    if (FromZero) {
      acc0[r] = acc1[r] = _mm256_setzero_ps();
    } else {
      acc0[r] = _mm256_loadu_ps(c + r * ldc);
      acc1[r] = _mm256_loadu_ps(c + r * ldc + 8);
    }
  }
#pragma GCC unroll 4
  for (int64_t p = 0; p < k; ++p) {
    const int64_t o = off[p];
    if constexpr (Prefetch) _mm_prefetch(reinterpret_cast<const char*>(next + p * kPanel), _MM_HINT_T1);
    const __m256 b0 = _mm256_load_ps(b + p * kPanel), b1 = _mm256_load_ps(b + p * kPanel + 8);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(row[r] + o);
      acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
      acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
    if (FromZero) {
      acc0[r] = _mm256_add_ps(_mm256_loadu_ps(cr), acc0[r]);
      acc1[r] = _mm256_add_ps(_mm256_loadu_ps(cr + 8), acc1[r]);
    }
    _mm256_storeu_ps(cr, acc0[r]);
    _mm256_storeu_ps(cr + 8, acc1[r]);
  }
}

// How many whole panels of the `left` still to run the next 512-bit
// position block takes: three (eight rows of three vectors, 24 chains on
// eight broadcasts a step), or two where three would leave one alone.
// A partial panel (m1 past the last whole one) is one too.
int64_t PositionPanels(int64_t left) {
  if (left == 4 || left == 2) return 2;
  return std::clamp<int64_t>(left, 1, 3);
}

template <int NP, bool FromZero>
void WidePositionRows(int64_t npos, int64_t k, const float* const* base, const int64_t* off, const float* b,
                      float* c, int64_t ldc, const float* next) {
  WideRowBlocks<kWidePositionRows>(npos, [&](int64_t i, auto rows) {
    constexpr int R = decltype(rows)::value;
    if (next != nullptr) WidePositionBlock<R, NP, FromZero, true>(k, base + i, off, b, kPanel * k, c + i * ldc, ldc, next);
    else WidePositionBlock<R, NP, FromZero, false>(k, base + i, off, b, kPanel * k, c + i * ldc, ldc, nullptr);
  });
}

template <bool FromZero>
void PositionRows(int64_t npos, int64_t k, const float* const* base, const int64_t* off, const float* b, float* c,
                  int64_t ldc, const float* next) {
  SixRowBlocks(npos, [&](int64_t i, auto rows) {
    constexpr int R = decltype(rows)::value;
    if (next != nullptr) PositionBlock<R, FromZero, true>(k, base + i, off, b, c + i * ldc, ldc, next);
    else PositionBlock<R, FromZero, false>(k, base + i, off, b, c + i * ldc, ldc, nullptr);
  });
}

// Each slab's panel of W^T (16 KiB at 256 rows) stays in L1 while the
// block's positions run past it, and every register block asks for one line
// of the next panel a step, into L2: W^T comes from memory (a model's
// weights outlast the caches), and a panel the hardware had not fetched
// ahead stalled the first block of each. One core, resnet18's 512 -> 512
// 3x3 over 7x7 with W^T cycled through 150 MB: 2760-3295 us without,
// 2417-2881 with (into L1, or from the first block alone, no better than
// without). In the model (inspector-cli run --streams 1, 8 rounds
// alternating, paired): resnet18's layer4 1.11-1.17x, layer3 1.02-1.03x,
// the span 1.05x; googlenet's inception5 3x3s 1.11-1.14x, the span 1.07x.
void PositionGemm(int64_t npos, int64_t k, const float* const* base, const int64_t* off, const PackedPanels& wt,
                  int64_t m0, int64_t m1, float* ct, int64_t ldct) {
  if (npos <= 0 || m1 <= m0 || k <= 0) return;
  const bool one_slab = wt.step >= k;
  const bool wide = Wide();
  for (int64_t k0 = 0; k0 < k; k0 += wt.step) {
    const int64_t kl = std::min(wt.step, k - k0);
    const float* slab = wt.Slab(k0);
    // Three panels a block where 512-bit blocks run (PositionPanels), else one.
    for (int64_t q = m0, width = kPanel; q < m1; q += width) {
      width = wide ? PositionPanels((m1 - q) / kPanel) * kPanel : kPanel;
      const float* b = slab + q * kl;
      float* c = ct + (q - m0);
      // The panel after these: the next of this slab, or the next slab's first.
      const float* next = q + width < m1 ? b + width * kl
                          : k0 + wt.step < k ? wt.Slab(k0 + wt.step) + m0 * std::min(wt.step, k - k0 - wt.step)
                                             : nullptr;
      if (wide && width == 3 * kPanel) {
        if (one_slab) WidePositionRows<3, false>(npos, kl, base, off + k0, b, c, ldct, next);
        else WidePositionRows<3, true>(npos, kl, base, off + k0, b, c, ldct, next);
      } else if (wide && width == 2 * kPanel) {
        if (one_slab) WidePositionRows<2, false>(npos, kl, base, off + k0, b, c, ldct, next);
        else WidePositionRows<2, true>(npos, kl, base, off + k0, b, c, ldct, next);
      } else if (wide) {
        if (one_slab) WidePositionRows<1, false>(npos, kl, base, off + k0, b, c, ldct, next);
        else WidePositionRows<1, true>(npos, kl, base, off + k0, b, c, ldct, next);
      } else if (one_slab) {
        PositionRows<false>(npos, kl, base, off + k0, b, c, ldct, next);
      } else {
        PositionRows<true>(npos, kl, base, off + k0, b, c, ldct, next);
      }
    }
  }
}

// Eight rows of eight floats transposed in registers: r[i]'s lane c goes
// to r[c]'s lane i (pairs interleaved, then quads, then the 128-bit halves).
[[gnu::always_inline]] inline void Transpose8x8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20), r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20), r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31), r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31), r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// Tiles of eight positions by eight channels: eight rows of C^T loaded and
// clamped, transposed, stored as eight rows of Y. Where the positions are
// not a multiple of eight the last tile overlaps the one before (it writes
// the same values again); fewer than eight positions, or the channels past
// the last eight, one at a time. Each value is only clamped and moved: the
// bits of the scalar loop it replaced.
void PositionsOut(int64_t npos, int64_t nm, const float* ct, int64_t ldct, float* y, int64_t ldy, float lo,
                  float hi) {
  const __m256 lov = _mm256_set1_ps(lo), hiv = _mm256_set1_ps(hi);
  int64_t m = 0;
  if (npos >= 8) {
    for (; m + 8 <= nm; m += 8) {
      for (int64_t j0 = 0; j0 < npos; j0 += 8) {
        const int64_t j = std::min(j0, npos - 8);
        __m256 r[8];
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) {
          r[i] = _mm256_min_ps(hiv, _mm256_max_ps(lov, _mm256_loadu_ps(ct + (j + i) * ldct + m)));
        }
        Transpose8x8(r);
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) _mm256_storeu_ps(y + (m + i) * ldy + j, r[i]);
      }
    }
  }
  for (; m < nm; ++m) {
    for (int64_t j = 0; j < npos; ++j) y[m * ldy + j] = std::min(std::max(ct[j * ldct + m], lo), hi);
  }
}

// Whether this CPU runs the kernels here (and OPSCOPE_SCALAR_MATH is unset).
bool Usable() {
  static const bool usable = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                             std::getenv("OPSCOPE_SCALAR_MATH") == nullptr;
  return usable;
}

}  // namespace

ShiftedGemmFn Avx2ShiftedGemm() { return Usable() ? ShiftedGemm : nullptr; }

SmallKGemmFn Avx2SmallKGemm() { return Usable() ? SmallKGemm : nullptr; }

PackedGemmFn Avx2PackedGemm() { return Usable() ? PackedGemm : nullptr; }

PositionGemmFn Avx2PositionGemm() { return Usable() ? PositionGemm : nullptr; }

PositionsOutFn Avx2PositionsOut() { return Usable() ? PositionsOut : nullptr; }

bool WideBlocks() { return Usable() && Wide(); }

bool SetWideBlocks(bool on) {
  const bool was = Wide();
  g_wide.store(on && CpuRunsWide() ? 1 : 0, std::memory_order_relaxed);
  return was;
}

// Position rows gathered in the position GEMM's register blocks
// (SixRowBlocks' cut of npos): block b at dst + 6 k b, its rows side by
// side for each tap ([k][6], the lanes past a shorter block's rows never
// written nor read). Taps [k0, k1) only, so that workers can share a pack.
// Rows that lie side by side in the source (a 1x1 convolution's, or a
// block inside one row of the grid) move four and two floats a tap.
void PackPositions(int64_t npos, int64_t k, int64_t k0, int64_t k1, const float* const* base, const int64_t* off,
                   float* dst) {
  int64_t b = 0;
  SixRowBlocks(npos, [&](int64_t i, auto rows) {
    constexpr int R = decltype(rows)::value;
    float* blk = dst + 6 * k * b++;
    bool side_by_side = true;
    for (int r = 1; r < R; ++r) side_by_side = side_by_side && base[i + r] == base[i] + r;
    if (side_by_side) {
      const float* src = base[i];
      for (int64_t p = k0; p < k1; ++p) {
        const float* s = src + off[p];
        float* d = blk + 6 * p;
        if constexpr (R >= 4) _mm_storeu_ps(d, _mm_loadu_ps(s));
        if constexpr (R == 6) {
          const __m128 two = _mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(s + 4));
          _mm_storel_pi(reinterpret_cast<__m64*>(d + 4), two);
        }
        if constexpr (R == 5) d[4] = s[4];
        if constexpr (R < 4) {
          for (int r = 0; r < R; ++r) d[r] = s[r];
        }
      }
      return;
    }
    for (int64_t p = k0; p < k1; ++p) {
      float* d = blk + 6 * p;
#pragma GCC unroll 6
      for (int r = 0; r < R; ++r) d[r] = base[i + r][off[p]];
    }
  });
}

int64_t PackedPositionsFloats(int64_t npos, int64_t k) {
  int64_t blocks = 0;
  SixRowBlocks(npos, [&](int64_t, auto) { ++blocks; });
  return 6 * k * blocks;
}

// Where PackPositions put row j's first tap: the GEMM reads it with off[p] = 6 p.
void PackedPositionBases(int64_t npos, int64_t k, const float* dst, const float** rows) {
  int64_t b = 0;
  SixRowBlocks(npos, [&](int64_t i, auto r) {
    for (int j = 0; j < decltype(r)::value; ++j) rows[i + j] = dst + 6 * k * b + j;
    ++b;
  });
}

std::shared_ptr<const PackedPanels> PackPanels(const float* b, int64_t ldb, bool trans_b, int64_t k, int64_t n) {
  if (!Usable() || k <= 0 || n <= 0) return nullptr;
  auto p = std::make_shared<PackedPanels>(PanelsFor(k, n));
  const size_t bytes = static_cast<size_t>(k * p->padded_n) * sizeof(float);
  float* data = static_cast<float*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
  if (data == nullptr) return nullptr;
  p->owner.reset(data, [](float* f) { std::free(f); });
  p->data = data;
  PackInto(b, ldb, trans_b, 0, *p, data);
  return p;
}

}  // namespace opscope::dense
