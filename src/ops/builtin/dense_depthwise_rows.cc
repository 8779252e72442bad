#include "ops/builtin/dense_depthwise_rows.h"

#include <limits>

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

}  // namespace
#endif

bool DepthwiseRowsFit() { return HasAvx2(); }

void Depthwise3x3RowsS1(const float* pad, int64_t pitch, int64_t rows, const float* w, float* y, int64_t n,
                        const DepthwiseRowTail& tail) {
#if defined(__x86_64__)
  PickRows(tail)(pad, pitch, rows, w, y, n, tail);
#else
  (void)pad, (void)pitch, (void)rows, (void)w, (void)y, (void)n, (void)tail;
#endif
}

}  // namespace opscope::dense
