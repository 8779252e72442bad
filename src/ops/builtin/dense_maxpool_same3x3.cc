// dense_maxpool_same3x3.h's kernel. Built for baseline x86-64 with AVX2
// clones by attribute (as dense_pool.cc), reached only where HasAvx2().
#include "ops/builtin/dense_maxpool_same3x3.h"

#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace opscope::dense {

#if defined(__x86_64__)
namespace {

// The taps of one output in order from -inf, each kept only where greater
// than the max so far: _mm256_max_ps(v, m) is v > m ? v : m.
[[gnu::target("avx2"), gnu::always_inline]] inline __m256 SameMax3(__m256 a, __m256 b, __m256 c) {
  const __m256 m = _mm256_max_ps(a, _mm256_set1_ps(-std::numeric_limits<float>::infinity()));
  return _mm256_max_ps(c, _mm256_max_ps(b, m));
}
[[gnu::target("avx2"), gnu::always_inline]] inline __m256 SameMax2(__m256 a, __m256 b) {
  return _mm256_max_ps(b, _mm256_max_ps(a, _mm256_set1_ps(-std::numeric_limits<float>::infinity())));
}
// The same for one float: v > m ? v : m (maxss's choice).
inline float SameMaxStep(float m, float v) { return v > m ? v : m; }

}  // namespace

[[gnu::target("avx2")]] bool MaxPoolSame3x3PlaneAvx2(const float* x, int64_t H, int64_t W, float* y, float* h) {
  const int64_t n = H * W;  // at least 16
  // Any NaN in X: one vector of flags or-ed over the plane (the last
  // vector overlapping the one before).
  __m256 nan = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + (i + 8 <= n ? i : n - 8));
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  if (!_mm256_testz_ps(nan, nan)) return false;
  // Along the rows, the plane as one row: h[p] from x[p - 1], x[p], x[p + 1]
  // for p in [1, n - 1), in vectors whose reads stay inside the plane.
  for (int64_t i = 1; i < n - 1; i += 8) {
    const int64_t p = i + 8 <= n - 1 ? i : n - 9;
    _mm256_storeu_ps(h + p, SameMax3(_mm256_loadu_ps(x + p - 1), _mm256_loadu_ps(x + p), _mm256_loadu_ps(x + p + 1)));
  }
  // Each row's first and last column: the tap past the row's edge left out.
  const float lowest = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < H; ++r) {
    const float* xr = x + r * W;
    h[r * W] = SameMaxStep(SameMaxStep(lowest, xr[0]), xr[1]);
    h[r * W + W - 1] = SameMaxStep(SameMaxStep(lowest, xr[W - 2]), xr[W - 1]);
  }
  // Down the columns: rows 1 to H - 2 from the rows above and below, as one
  // run; then the first row (itself and below) and the last (above and
  // itself), each in whole vectors, the last one overlapping.
  const int64_t inner_end = (H - 1) * W;
  for (int64_t i = W; i < inner_end; i += 8) {
    const int64_t p = i + 8 <= inner_end ? i : inner_end - 8;
    _mm256_storeu_ps(y + p, SameMax3(_mm256_loadu_ps(h + p - W), _mm256_loadu_ps(h + p), _mm256_loadu_ps(h + p + W)));
  }
  for (int64_t i = 0; i < W; i += 8) {
    const int64_t p = i + 8 <= W ? i : W - 8;
    _mm256_storeu_ps(y + p, SameMax2(_mm256_loadu_ps(h + p), _mm256_loadu_ps(h + p + W)));
    const int64_t q = inner_end + p;
    _mm256_storeu_ps(y + q, SameMax2(_mm256_loadu_ps(h + q - W), _mm256_loadu_ps(h + q)));
  }
  return true;
}
#else
bool MaxPoolSame3x3PlaneAvx2(const float*, int64_t, int64_t, float*, float*) { return false; }
#endif

}  // namespace opscope::dense
