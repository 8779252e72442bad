#include "ops/builtin/dense_depthwise_rows.h"

#include <limits>

#include "ops/builtin/dense_smallk.h"
#include "ops/builtin/dense_util.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace opscope::dense {

bool DepthwiseRowTailFits(const Epilogue& e) {
  return e.residual == nullptr && (e.act == Act::kNone || e.act == Act::kRelu || e.act == Act::kClip);
}

DepthwiseRowTail DepthwiseRowTailOf(const Epilogue& e, float bias) {
  DepthwiseRowTail t;
  t.bias = bias;
  if (e.act == Act::kRelu) t.clamp = true, t.lo = 0.0f, t.hi = std::numeric_limits<float>::infinity();
  if (e.act == Act::kClip) t.clamp = true, t.lo = Epilogue::Bound<float>(e.lo), t.hi = Epilogue::Bound<float>(e.hi);
  return t;
}

#if defined(__x86_64__)
namespace {

// Eight outputs of one row (kTwo: and of the row below) at column i.
template <bool kBias, bool kClamp, bool kTwo>
[[gnu::target("avx2"), gnu::always_inline]] inline void EightOutputs(const float* r0, const float* r1,
                                                                     const float* r2, const float* r3,
                                                                     const __m256 (&w)[9], __m256 bias, __m256 lo,
                                                                     __m256 hi, float* o0, float* o1) {
  const float* in[4] = {r0, r1, r2, r3};
  __m256 a = _mm256_setzero_ps(), b = _mm256_setzero_ps();
#pragma GCC unroll 9
  for (int t = 0; t < 9; ++t) {
    const int kh = t / 3, kw = t % 3;
    a = _mm256_add_ps(a, _mm256_mul_ps(w[t], _mm256_loadu_ps(in[kh] + kw)));
    if constexpr (kTwo) b = _mm256_add_ps(b, _mm256_mul_ps(w[t], _mm256_loadu_ps(in[kh + 1] + kw)));
  }
  if constexpr (kBias) {
    a = _mm256_add_ps(a, bias);
    if constexpr (kTwo) b = _mm256_add_ps(b, bias);
  }
  if constexpr (kClamp) {
    // max(lo, x) is lo > x ? lo : x, and min(hi, x) hi < x ? hi : x: a NaN
    // x stays NaN, as std::max(x, lo) and std::min(x, hi) leave it.
    a = _mm256_min_ps(hi, _mm256_max_ps(lo, a));
    if constexpr (kTwo) b = _mm256_min_ps(hi, _mm256_max_ps(lo, b));
  }
  _mm256_storeu_ps(o0, a);
  if constexpr (kTwo) _mm256_storeu_ps(o1, b);
}

// One or two output rows, n >= 8 outputs each.
template <bool kBias, bool kClamp, bool kTwo>
[[gnu::target("avx2"), gnu::always_inline]] inline void RowsBody(const float* r0, const float* r1, const float* r2,
                                                                 const float* r3, const __m256 (&w)[9], __m256 bias,
                                                                 __m256 lo, __m256 hi, float* o0, float* o1,
                                                                 int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    EightOutputs<kBias, kClamp, kTwo>(r0 + i, r1 + i, r2 + i, kTwo ? r3 + i : nullptr, w, bias, lo, hi, o0 + i,
                                      kTwo ? o1 + i : nullptr);
  }
  // The last outputs in a vector that overlaps the one before: the same
  // sums again, stored over the same bits.
  if (i < n) {
    i = n - 8;
    EightOutputs<kBias, kClamp, kTwo>(r0 + i, r1 + i, r2 + i, kTwo ? r3 + i : nullptr, w, bias, lo, hi, o0 + i,
                                      kTwo ? o1 + i : nullptr);
  }
}

// Output rows [oh0, oh1) of a plane whose padded rows are pad + r * pitch,
// two at a time, then a last one alone. (No lambdas in these bodies: they
// would not inherit the avx2 target.)
template <bool kBias, bool kClamp>
[[gnu::target("avx2")]] void Rows(const float* pad, int64_t pitch, int64_t rows, const float* wp, float* y,
                                  int64_t n, const DepthwiseRowTail& tail) {
  __m256 w[9];
  for (int t = 0; t < 9; ++t) w[t] = _mm256_broadcast_ss(wp + t);
  const __m256 bias = _mm256_set1_ps(tail.bias), lo = _mm256_set1_ps(tail.lo), hi = _mm256_set1_ps(tail.hi);
  int64_t oh = 0;
  for (; oh + 2 <= rows; oh += 2) {
    const float* r = pad + oh * pitch;
    RowsBody<kBias, kClamp, true>(r, r + pitch, r + 2 * pitch, r + 3 * pitch, w, bias, lo, hi, y + oh * n,
                                  y + (oh + 1) * n, n);
  }
  if (oh < rows) {
    const float* r = pad + oh * pitch;
    RowsBody<kBias, kClamp, false>(r, r + pitch, r + 2 * pitch, nullptr, w, bias, lo, hi, y + oh * n, nullptr, n);
  }
}

using RowsFn = void (*)(const float*, int64_t, int64_t, const float*, float*, int64_t, const DepthwiseRowTail&);

RowsFn PickRows(const DepthwiseRowTail& tail) {
  if (tail.bias != 0.0f) return tail.clamp ? &Rows<true, true> : &Rows<true, false>;
  return tail.clamp ? &Rows<false, true> : &Rows<false, false>;
}

// ---- stride 1 in 512-bit vectors (rows of 16 outputs or more) ----
// The loops of RowsBody and Rows again, in their own copies: code shared
// by both would be compiled for one target, and avx512f code must not run
// on a CPU that has only AVX2 (nor can a lambda or functor carry the target
// into a shared template: GCC will not inline it there).

// w * x rounded on its own: the avx512f target lets GCC fuse a multiply
// and the add after it into one FMA (one rounding, not the reference's
// two); the empty asm makes the product a value it must keep.
[[gnu::target("avx512f"), gnu::always_inline]] inline __m512 Product(__m512 w, __m512 x) {
  __m512 p = _mm512_mul_ps(w, x);
  asm("" : "+v"(p));
  return p;
}

// Sixteen outputs of one row, and of the row below (kTwo), as
// EightOutputs: the same products and adds in the same order, a lane for
// each output.
template <bool kBias, bool kClamp, bool kTwo>
[[gnu::target("avx512f"), gnu::always_inline]] inline void SixteenOutputs(const float* r0, const float* r1,
                                                                        const float* r2, const float* r3,
                                                                        const __m512 (&w)[9], __m512 bias,
                                                                        __m512 lo, __m512 hi, float* o0, float* o1) {
  const float* in[4] = {r0, r1, r2, r3};
  __m512 a = _mm512_setzero_ps(), b = _mm512_setzero_ps();
#pragma GCC unroll 9
  for (int t = 0; t < 9; ++t) {
    const int kh = t / 3, kw = t % 3;
    a = _mm512_add_ps(a, Product(w[t], _mm512_loadu_ps(in[kh] + kw)));
    if constexpr (kTwo) b = _mm512_add_ps(b, Product(w[t], _mm512_loadu_ps(in[kh + 1] + kw)));
  }
  if constexpr (kBias) {
    a = _mm512_add_ps(a, bias);
    if constexpr (kTwo) b = _mm512_add_ps(b, bias);
  }
  if constexpr (kClamp) {
    // As EightOutputs: lo > x ? lo : x, then hi < x ? hi : x; NaN stays.
    a = _mm512_maskz_min_ps(0xFFFF, hi, _mm512_maskz_max_ps(0xFFFF, lo, a));
    if constexpr (kTwo) b = _mm512_maskz_min_ps(0xFFFF, hi, _mm512_maskz_max_ps(0xFFFF, lo, b));
  }
  _mm512_storeu_ps(o0, a);
  if constexpr (kTwo) _mm512_storeu_ps(o1, b);
}

// One or two output rows of n >= 16 outputs: whole vectors, then a last
// one that overlaps the one before.
template <bool kBias, bool kClamp, bool kTwo>
[[gnu::target("avx512f"), gnu::always_inline]] inline void WideRowsBody(const float* r0, const float* r1,
                                                                      const float* r2, const float* r3,
                                                                      const __m512 (&w)[9], __m512 bias, __m512 lo,
                                                                      __m512 hi, float* o0, float* o1, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    SixteenOutputs<kBias, kClamp, kTwo>(r0 + i, r1 + i, r2 + i, kTwo ? r3 + i : nullptr, w, bias, lo, hi, o0 + i,
                                        kTwo ? o1 + i : nullptr);
  }
  if (i < n) {
    i = n - 16;
    SixteenOutputs<kBias, kClamp, kTwo>(r0 + i, r1 + i, r2 + i, kTwo ? r3 + i : nullptr, w, bias, lo, hi, o0 + i,
                                        kTwo ? o1 + i : nullptr);
  }
}

template <bool kBias, bool kClamp>
[[gnu::target("avx512f")]] void WideRows(const float* pad, int64_t pitch, int64_t rows, const float* wp, float* y,
                                         int64_t n, const DepthwiseRowTail& tail) {
  __m512 w[9];
  for (int t = 0; t < 9; ++t) w[t] = _mm512_set1_ps(wp[t]);
  const __m512 bias = _mm512_set1_ps(tail.bias), lo = _mm512_set1_ps(tail.lo), hi = _mm512_set1_ps(tail.hi);
  int64_t oh = 0;
  for (; oh + 2 <= rows; oh += 2) {
    const float* r = pad + oh * pitch;
    WideRowsBody<kBias, kClamp, true>(r, r + pitch, r + 2 * pitch, r + 3 * pitch, w, bias, lo, hi, y + oh * n,
                                      y + (oh + 1) * n, n);
  }
  if (oh < rows) {
    const float* r = pad + oh * pitch;
    WideRowsBody<kBias, kClamp, false>(r, r + pitch, r + 2 * pitch, nullptr, w, bias, lo, hi, y + oh * n, nullptr,
                                       n);
  }
}

RowsFn PickWideRows(const DepthwiseRowTail& tail) {
  if (tail.bias != 0.0f) return tail.clamp ? &WideRows<true, true> : &WideRows<true, false>;
  return tail.clamp ? &WideRows<false, true> : &WideRows<false, false>;
}

// ---- stride 2 ----

// Lanes 0, 2, .., 14 (kOdd: 1, 3, .., 15) of the sixteen floats lo, hi.
template <bool kOdd>
[[gnu::target("avx2"), gnu::always_inline]] inline __m256 Lanes(__m256 lo, __m256 hi) {
  // [lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6], then the 64-bit pairs in order.
  const __m256 s = kOdd ? _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1))
                        : _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), _MM_SHUFFLE(3, 1, 2, 0)));
}

// Eight outputs at columns x.. of one output row from input rows in[0..2]
// (null: the padding row), kFirst at x = 0 (column -1 the padding).
template <bool kBias, bool kClamp, bool kFirst>
[[gnu::target("avx2"), gnu::always_inline]] inline void EightS2(const float* const (&in)[3], int64_t x,
                                                                const __m256 (&w)[9], __m256 bias, __m256 lo,
                                                                __m256 hi, float* out) {
  __m256 acc = _mm256_setzero_ps();
#pragma GCC unroll 3
  for (int kh = 0; kh < 3; ++kh) {
    __m256 taps[3] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    if (const float* r = in[kh]) {
      const __m256 lo16 = _mm256_loadu_ps(r + 2 * x), hi16 = _mm256_loadu_ps(r + 2 * x + 8);
      taps[1] = Lanes<false>(lo16, hi16);  // columns 2x, 2x + 2, ..
      taps[2] = Lanes<true>(lo16, hi16);   // columns 2x + 1, ..
      if constexpr (kFirst) {
        // Columns -1, 1, .., 13: the odd lanes one lane up, a zero in lane 0.
        const __m256 up = _mm256_permutevar8x32_ps(taps[2], _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6));
        taps[0] = _mm256_blend_ps(up, _mm256_setzero_ps(), 0x01);
      } else {
        taps[0] = Lanes<true>(_mm256_loadu_ps(r + 2 * x - 2), _mm256_loadu_ps(r + 2 * x + 6));
      }
    }
#pragma GCC unroll 3
    for (int kw = 0; kw < 3; ++kw) acc = _mm256_add_ps(acc, _mm256_mul_ps(w[3 * kh + kw], taps[kw]));
  }
  if constexpr (kBias) acc = _mm256_add_ps(acc, bias);
  if constexpr (kClamp) acc = _mm256_min_ps(hi, _mm256_max_ps(lo, acc));
  _mm256_storeu_ps(out, acc);
}

template <bool kBias, bool kClamp>
[[gnu::target("avx2")]] void RowsS2(const float* x, int64_t H, int64_t W, int64_t rows, const float* wp, float* y,
                                    int64_t n, const DepthwiseRowTail& tail) {
  __m256 w[9];
  for (int t = 0; t < 9; ++t) w[t] = _mm256_broadcast_ss(wp + t);
  const __m256 bias = _mm256_set1_ps(tail.bias), lo = _mm256_set1_ps(tail.lo), hi = _mm256_set1_ps(tail.hi);
  for (int64_t oh = 0; oh < rows; ++oh) {
    const float* in[3];
    for (int kh = 0; kh < 3; ++kh) {
      const int64_t r = 2 * oh - 1 + kh;
      in[kh] = r >= 0 && r < H ? x + r * W : nullptr;
    }
    float* out = y + oh * n;
    EightS2<kBias, kClamp, true>(in, 0, w, bias, lo, hi, out);
    int64_t i = 8;
    for (; i + 8 <= n; i += 8) EightS2<kBias, kClamp, false>(in, i, w, bias, lo, hi, out + i);
    // The last outputs in a vector that overlaps the one before.
    if (i < n) EightS2<kBias, kClamp, false>(in, n - 8, w, bias, lo, hi, out + n - 8);
  }
}

using RowsS2Fn = void (*)(const float*, int64_t, int64_t, int64_t, const float*, float*, int64_t,
                          const DepthwiseRowTail&);

RowsS2Fn PickRowsS2(const DepthwiseRowTail& tail) {
  if (tail.bias != 0.0f) return tail.clamp ? &RowsS2<true, true> : &RowsS2<true, false>;
  return tail.clamp ? &RowsS2<false, true> : &RowsS2<false, false>;
}

// ---- stride 2 in 512-bit vectors (rows of any width) ----
// Sixteen outputs from 32 input columns: the even columns and the odd ones
// each one permute of two masked loads, and the columns left of the even
// ones (2 ow - 1) the odd ones one lane up, lane 0 the column before the
// 32 (a zero at the row's start). Columns past the row are masked off the
// loads (zeros, as the padding is, and never read: no fault at the end of
// the buffer), so rows of any width run straight from X. Two output rows
// at a time: they share an input row's loads and permutes (5 rows for 2,
// not 6), and each keeps a chain of adds of its own; one row's single
// chain had left the 28- and 14-wide rows waiting on the adds, and four
// rows at a time spilled ([1,96,112,112] 113 -> 150 us).
//
// ops-debug profile --mode kernel, FusedConv with Clip, 5 rounds
// alternating, against the 256-bit rows (OW >= 24) or eight channels at a
// time (narrower), one core / two:
//   [1,96,112,112]  128 -> 113 us /  75 -> 64
//   [1,144,56,56]    68 ->  47    /  47 -> 34
//   [1,192,28,28]    37 ->  22    /  29 -> 16
//   [1,64,20,20]    7.8 -> 6.2
// Rows of 8 outputs or fewer go two to a vector (NarrowPlanes, below): a
// row a vector here left half its lanes empty and lost to the eight
// channels at a time ([1,576,14,14] 34 -> 38 us, [1,960,7,7] 22 -> 39).

// Lanes [0, n) of sixteen set.
[[gnu::target("avx512f"), gnu::always_inline]] inline __mmask16 LanesBelow(int64_t n) {
  if (n >= 16) return static_cast<__mmask16>(0xFFFF);
  return n <= 0 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << n) - 1);
}

// The left, middle and right taps of output vector j (columns 32 j - 1 ..
// 32 j + 31) of input row r: the odd columns one lane up, lane 0 column
// 32 j - 1 (a zero at the row's start).
[[gnu::target("avx512f"), gnu::always_inline]] inline void TapsS2(const float* r, int64_t c0, int64_t W,
                                                                __m512 (&taps)[3]) {
  const __m512i even_idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd_idx = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512i up_idx = _mm512_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
  const __m512 a = _mm512_maskz_loadu_ps(LanesBelow(W - c0), r + c0);
  const __m512 b = _mm512_maskz_loadu_ps(LanesBelow(W - c0 - 16), r + c0 + 16);
  taps[1] = _mm512_permutex2var_ps(a, even_idx, b);
  taps[2] = _mm512_permutex2var_ps(a, odd_idx, b);
  // (Past the row too where wide end pads make more outputs than its columns.)
  const __m512 before = c0 > 0 && c0 <= W ? _mm512_set1_ps(r[c0 - 1]) : _mm512_setzero_ps();
  taps[0] = _mm512_mask_permutexvar_ps(before, 0xFFFE, up_idx, taps[2]);
}

// Input row q's taps into the output rows whose window holds it: tap row
// q - kStep o of output row o (kStep: the stride), the left, middle and
// right tap in order, each product rounded then added.
template <int kRows, int kStep>
[[gnu::target("avx512f"), gnu::always_inline]] inline void AddTapRow(__m512 (&acc)[kRows], int q,
                                                                   const __m512 (&taps)[3], const __m512 (&w)[9]) {
#pragma GCC unroll 4
  for (int o = 0; o < kRows; ++o) {
    const int kh = q - kStep * o;
    if (kh < 0 || kh > 2) continue;
#pragma GCC unroll 3
    for (int kw = 0; kw < 3; ++kw) acc[o] = _mm512_add_ps(acc[o], Product(w[3 * kh + kw], taps[kw]));
  }
}

// The rows' tail (bias, clamp) and their stores at out[o] + at, out_lanes of each.
template <bool kBias, bool kClamp, int kRows>
[[gnu::target("avx512f"), gnu::always_inline]] inline void StoreRows(__m512 (&acc)[kRows], __m512 bias, __m512 lo,
                                                                   __m512 hi, float* const (&out)[kRows], int64_t at,
                                                                   __mmask16 out_lanes) {
#pragma GCC unroll 4
  for (int o = 0; o < kRows; ++o) {
    if constexpr (kBias) acc[o] = _mm512_add_ps(acc[o], bias);
    if constexpr (kClamp) acc[o] = _mm512_maskz_min_ps(0xFFFF, hi, _mm512_maskz_max_ps(0xFFFF, lo, acc[o]));
    _mm512_mask_storeu_ps(out[o] + at, out_lanes, acc[o]);
  }
}

// Output vector j (out_lanes of it) of kRows output rows at once, from
// input rows in[0 .. 2 kRows] (null where the row is padding): input row q
// is tap row q - 2 o of output row o, so two output rows share a row's
// permutes, and each keeps a chain of adds of its own. Each output's sums
// as EightS2's: left, middle, right tap of each row in order, from zero, a
// product rounded then an add.
template <bool kBias, bool kClamp, int kRows>
[[gnu::target("avx512f"), gnu::always_inline]] inline void SixteenS2(const float* const (&in)[2 * kRows + 1],
                                                                   int64_t c0, int64_t W, const __m512 (&w)[9],
                                                                   __m512 bias, __m512 lo, __m512 hi,
                                                                   __mmask16 out_lanes, float* const (&out)[kRows]) {
  __m512 acc[kRows];
#pragma GCC unroll 4
  for (int o = 0; o < kRows; ++o) acc[o] = _mm512_setzero_ps();
#pragma GCC unroll 9
  for (int q = 0; q < 2 * kRows + 1; ++q) {
    __m512 taps[3] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    if (in[q] != nullptr) TapsS2(in[q], c0, W, taps);
    AddTapRow<kRows, 2>(acc, q, taps, w);
  }
  StoreRows<kBias, kClamp, kRows>(acc, bias, lo, hi, out, c0 / 2, out_lanes);
}

// kRows output rows from oh on, every vector of them.
template <bool kBias, bool kClamp, int kRows>
[[gnu::target("avx512f"), gnu::always_inline]] inline void RowsAtS2(const float* x, int64_t H, int64_t W,
                                                                  int64_t oh, const __m512 (&w)[9], __m512 bias,
                                                                  __m512 lo, __m512 hi, float* y, int64_t n) {
  const float* in[2 * kRows + 1];
#pragma GCC unroll 9
  for (int q = 0; q < 2 * kRows + 1; ++q) {
    const int64_t r = 2 * oh - 1 + q;
    in[q] = r >= 0 && r < H ? x + r * W : nullptr;
  }
  float* out[kRows];
#pragma GCC unroll 4
  for (int o = 0; o < kRows; ++o) out[o] = y + (oh + o) * n;
  for (int64_t i = 0; i < n; i += 16) {
    SixteenS2<kBias, kClamp, kRows>(in, 2 * i, W, w, bias, lo, hi, LanesBelow(n - i), out);
  }
}

template <bool kBias, bool kClamp>
[[gnu::target("avx512f")]] void WideRowsS2(const float* x, int64_t H, int64_t W, int64_t rows, const float* wp,
                                           float* y, int64_t n, const DepthwiseRowTail& tail) {
  __m512 w[9];
  for (int t = 0; t < 9; ++t) w[t] = _mm512_set1_ps(wp[t]);
  const __m512 bias = _mm512_set1_ps(tail.bias), lo = _mm512_set1_ps(tail.lo), hi = _mm512_set1_ps(tail.hi);
  int64_t oh = 0;
  for (; oh + 2 <= rows; oh += 2) RowsAtS2<kBias, kClamp, 2>(x, H, W, oh, w, bias, lo, hi, y, n);
  if (oh < rows) RowsAtS2<kBias, kClamp, 1>(x, H, W, oh, w, bias, lo, hi, y, n);
}

RowsS2Fn PickWideRowsS2(const DepthwiseRowTail& tail) {
  if (tail.bias != 0.0f) return tail.clamp ? &WideRowsS2<true, true> : &WideRowsS2<true, false>;
  return tail.clamp ? &WideRowsS2<false, true> : &WideRowsS2<false, false>;
}

// ---- stride 1 with pads of one in 512-bit vectors, straight from X ----
// Output (oh, ow) takes columns ow - 1, ow, ow + 1 of input rows oh - 1 ..
// oh + 1: masked loads (columns outside X masked to zeros, as the padding
// is); at a row's start the left taps are the middle ones moved a lane up,
// so no address before the row is formed (an expand-load there had cost
// [1,576,14,14] 42 us against 37: the core runs it as microcode; the
// right taps of a row's last vector so moved came out even with their
// load). No padded copy of the plane
// (the padded rows' copy, a call a channel, had been most of a 14x14
// plane's time), and a 14-wide row is one vector where the 256-bit rows
// took two overlapping ones. Two output rows at a time share their four
// input rows' loads, each with a chain of adds of its own; the sums as
// SixteenOutputs' (taps in order from zero, each product rounded).

// Output vector i (out_lanes of it) of kRows output rows at once from
// input rows in[0 .. kRows + 1] (null where the row is padding).
template <bool kBias, bool kClamp, int kRows>
[[gnu::target("avx512f"), gnu::always_inline]] inline void SixteenS1(const float* const (&in)[kRows + 2], int64_t i,
                                                                   int64_t W, const __m512 (&w)[9], __m512 bias,
                                                                   __m512 lo, __m512 hi, __mmask16 out_lanes,
                                                                   float* const (&out)[kRows]) {
  const __mmask16 centre = LanesBelow(W - i), left = LanesBelow(W - i + 1), right = LanesBelow(W - i - 1);
  // Lane l from lane l - 1 (lane 0 zeroed by the mask).
  const __m512i up = _mm512_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
  __m512 acc[kRows];
#pragma GCC unroll 4
  for (int o = 0; o < kRows; ++o) acc[o] = _mm512_setzero_ps();
#pragma GCC unroll 4
  for (int q = 0; q < kRows + 2; ++q) {
    __m512 taps[3] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    if (const float* r = in[q]) {
      taps[1] = _mm512_maskz_loadu_ps(centre, r + i);
      taps[0] = i > 0 ? _mm512_maskz_loadu_ps(left, r + i - 1) : _mm512_maskz_permutexvar_ps(0xFFFE, up, taps[1]);
      taps[2] = _mm512_maskz_loadu_ps(right, r + i + 1);
    }
    AddTapRow<kRows, 1>(acc, q, taps, w);
  }
  StoreRows<kBias, kClamp, kRows>(acc, bias, lo, hi, out, i, out_lanes);
}

template <bool kBias, bool kClamp, int kRows>
[[gnu::target("avx512f"), gnu::always_inline]] inline void RowsAtS1(const float* x, int64_t H, int64_t W,
                                                                  int64_t oh, const __m512 (&w)[9], __m512 bias,
                                                                  __m512 lo, __m512 hi, float* y) {
  const float* in[kRows + 2];
#pragma GCC unroll 4
  for (int q = 0; q < kRows + 2; ++q) {
    const int64_t r = oh - 1 + q;
    in[q] = r >= 0 && r < H ? x + r * W : nullptr;
  }
  float* out[kRows];
#pragma GCC unroll 4
  for (int o = 0; o < kRows; ++o) out[o] = y + (oh + o) * W;
  for (int64_t i = 0; i < W; i += 16) {
    SixteenS1<kBias, kClamp, kRows>(in, i, W, w, bias, lo, hi, LanesBelow(W - i), out);
  }
}

template <bool kBias, bool kClamp>
[[gnu::target("avx512f")]] void PlaneS1(const float* x, int64_t H, int64_t W, const float* wp, float* y,
                                        const DepthwiseRowTail& tail) {
  __m512 w[9];
  for (int t = 0; t < 9; ++t) w[t] = _mm512_set1_ps(wp[t]);
  const __m512 bias = _mm512_set1_ps(tail.bias), lo = _mm512_set1_ps(tail.lo), hi = _mm512_set1_ps(tail.hi);
  int64_t oh = 0;
  for (; oh + 2 <= H; oh += 2) RowsAtS1<kBias, kClamp, 2>(x, H, W, oh, w, bias, lo, hi, y);
  if (oh < H) RowsAtS1<kBias, kClamp, 1>(x, H, W, oh, w, bias, lo, hi, y);
}

using PlaneS1Fn = void (*)(const float*, int64_t, int64_t, const float*, float*, const DepthwiseRowTail&);

PlaneS1Fn PickPlaneS1(const DepthwiseRowTail& tail) {
  if (tail.bias != 0.0f) return tail.clamp ? &PlaneS1<true, true> : &PlaneS1<true, false>;
  return tail.clamp ? &PlaneS1<false, true> : &PlaneS1<false, false>;
}

// ---- narrow planes in 512-bit vectors: two output rows a vector ----
// Rows of at most 8 outputs (7x7 planes at stride 1, 14x14 ones at stride
// 2) fill half a vector or less, so a vector holds two output rows, oh in
// lanes 0-7 and oh + 1 in lanes 8-15. For tap row kh its input rows are
// loaded whole (at most 16 floats each, masked to the row) and each of the
// three taps is one permute of the pair: lane l takes column s l - 1 + kw
// of the first, lane 8 + l of the second, zero outside the row. The eight
// channels at a time of dense_depthwise8.h had transposed eight planes into
// a buffer and back for these. ops-debug profile --mode kernel, FusedConv
// with Clip, 5 rounds alternating with them, one core / two:
//   [1,960,7,7]    stride 1  37 -> 26 us / 24 -> 18
//   [1,576,14,14]  stride 2  33 -> 17    / 20 -> 13
//   [1,160,16,16]  stride 2  11 ->  6    / 12 ->  7

// The three taps' permute of (first row, second row) and the lanes each
// keeps (inside the row, and an output of the row).
struct NarrowTaps {
  __m512i idx[3];
  __mmask16 lanes[3];
};

// In vector arithmetic: written lane by lane into memory and loaded back,
// the indices stalled each plane's start on three failed store forwards
// ([1,960,7,7] 57 us against 38 eight channels at a time).
[[gnu::target("avx512f"), gnu::always_inline]] inline NarrowTaps NarrowTapsOf(int64_t W, int64_t OW, int64_t s) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
  const __m512i second = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 16, 16, 16, 16, 16, 16, 16, 16);
  const __m512i start = s == 2 ? _mm512_add_epi32(lane, lane) : lane;  // s l
  const __mmask16 outputs = _mm512_cmplt_epi32_mask(lane, _mm512_set1_epi32(static_cast<int>(OW)));
  NarrowTaps t;
  for (int kw = 0; kw < 3; ++kw) {
    const __m512i col = _mm512_add_epi32(start, _mm512_set1_epi32(kw - 1));
    const __mmask16 inside = _mm512_cmpge_epi32_mask(col, _mm512_setzero_si512()) &
                             _mm512_cmplt_epi32_mask(col, _mm512_set1_epi32(static_cast<int>(W)));
    t.idx[kw] = _mm512_add_epi32(col, second);
    t.lanes[kw] = static_cast<__mmask16>(inside & outputs);
  }
  return t;
}

// Planes [0, p.count) one after another, each with its own weights and
// bias: the taps' permutes and the clamp are set up once for all (a call a
// plane spent about as long on its set-up as on its sums). A zero bias is
// added as -0, which changes no bits (x + -0 is x, -0 included), as
// Epilogue::Run leaves a sum it does not add to.
template <bool kClamp>
[[gnu::target("avx512f")]] void NarrowPlanes(const NarrowPlanesArgs& p, const DepthwiseRowTail& tail) {
  const int64_t H = p.h, W = p.w, OH = p.oh, OW = p.ow, s = p.stride;
  const NarrowTaps taps = NarrowTapsOf(W, OW, s);
  const __m512 lo = _mm512_set1_ps(tail.lo), hi = _mm512_set1_ps(tail.hi);
  const __mmask16 row = LanesBelow(W), first = LanesBelow(OW);
  for (int64_t c = 0; c < p.count; ++c) {
    const float* x = p.x + c * p.x_plane;
    const float* wp = p.w9 + 9 * c;
    float* y = p.y + c * p.y_plane;
    __m512 w[9];
    for (int t = 0; t < 9; ++t) w[t] = _mm512_set1_ps(wp[t]);
    const float b = p.bias != nullptr ? p.bias[c] : 0.0f;
    const __m512 bias = _mm512_set1_ps(b == 0.0f ? -0.0f : b);
    for (int64_t oh = 0; oh < OH; oh += 2) {
      __m512 acc = _mm512_setzero_ps();
#pragma GCC unroll 3
      for (int kh = 0; kh < 3; ++kh) {
        const int64_t ra = s * oh - 1 + kh, rb = ra + s;
        const __m512 a = ra >= 0 && ra < H ? _mm512_maskz_loadu_ps(row, x + ra * W) : _mm512_setzero_ps();
        const __m512 bv =
            oh + 1 < OH && rb >= 0 && rb < H ? _mm512_maskz_loadu_ps(row, x + rb * W) : _mm512_setzero_ps();
#pragma GCC unroll 3
        for (int kw = 0; kw < 3; ++kw) {
          const __m512 v = _mm512_maskz_permutex2var_ps(taps.lanes[kw], a, taps.idx[kw], bv);
          acc = _mm512_add_ps(acc, Product(w[3 * kh + kw], v));
        }
      }
      acc = _mm512_add_ps(acc, bias);
      if constexpr (kClamp) acc = _mm512_maskz_min_ps(0xFFFF, hi, _mm512_maskz_max_ps(0xFFFF, lo, acc));
      // Lanes 0-7 to row oh, lanes 8-15 (moved down) to row oh + 1.
      float* out = y + oh * OW;
      _mm512_mask_storeu_ps(out, first, acc);
      if (oh + 1 < OH) {
        _mm512_mask_storeu_ps(out + OW, first, _mm512_maskz_shuffle_f32x4(0xFFFF, acc, acc, _MM_SHUFFLE(3, 2, 3, 2)));
      }
    }
  }
}

}  // namespace
#endif

bool DepthwiseRowsFit() { return HasAvx2(); }

void Depthwise3x3RowsS2(const float* x, int64_t H, int64_t W, int64_t rows, const float* w, float* y, int64_t n,
                        const DepthwiseRowTail& tail) {
#if defined(__x86_64__)
  (WideBlocks() ? PickWideRowsS2(tail) : PickRowsS2(tail))(x, H, W, rows, w, y, n, tail);
#else
  (void)x, (void)H, (void)W, (void)rows, (void)w, (void)y, (void)n, (void)tail;
#endif
}

void Depthwise3x3NarrowPlanesWide(const NarrowPlanesArgs& p, const DepthwiseRowTail& tail) {
#if defined(__x86_64__)
  (tail.clamp ? NarrowPlanes<true> : NarrowPlanes<false>)(p, tail);
#else
  (void)p, (void)tail;
#endif
}

void Depthwise3x3SamePlaneWide(const float* x, int64_t H, int64_t W, const float* w, float* y,
                               const DepthwiseRowTail& tail) {
#if defined(__x86_64__)
  PickPlaneS1(tail)(x, H, W, w, y, tail);
#else
  (void)x, (void)H, (void)W, (void)w, (void)y, (void)tail;
#endif
}

void Depthwise3x3RowsS1(const float* pad, int64_t pitch, int64_t rows, const float* w, float* y, int64_t n,
                        const DepthwiseRowTail& tail) {
#if defined(__x86_64__)
  // Rows of 16 outputs or more in 512-bit vectors where the CPU has them:
  // one core, ops-debug profile --mode kernel, 5 rounds alternating,
  // [1,32,112,112] 111 -> 95 us, 28x28 and 56x56 planes unchanged; 14-wide
  // rows as one masked vector had gone 37.5 -> 39.7 (the plane's copy and
  // set-up are most of their time), so they stay 256-bit.
  (n >= 16 && WideBlocks() ? PickWideRows(tail) : PickRows(tail))(pad, pitch, rows, w, y, n, tail);
#else
  (void)pad, (void)pitch, (void)rows, (void)w, (void)y, (void)n, (void)tail;
#endif
}

}  // namespace opscope::dense
