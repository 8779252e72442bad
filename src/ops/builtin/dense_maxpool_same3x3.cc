// dense_maxpool_same3x3.h's kernel. Built for baseline x86-64 with AVX2
// clones by attribute (as dense_pool.cc), reached only where HasAvx2().
#include "ops/builtin/dense_maxpool_same3x3.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

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

namespace {

// Which taps of a vector's 16 lanes lie in their plane, for a vector whose
// lane 0 is at plane position q: its left and right taps (not in the
// plane's first or last column), upper and lower (not in its first or last
// row); a lane past the plane is in the next. A stretch's vectors start at
// q = 16 v mod (H W): one entry for each of the period's vectors, kept for
// the last plane size asked.
struct TapMasks {
  int64_t H = -1, W = -1;
  struct Entry {
    __mmask16 left, right, up, down;
  };
  std::vector<Entry> period;
  void For(int64_t h, int64_t w) {
    if (h == H && w == W) return;
    H = h, W = w;
    const int64_t plane = H * W;
    int64_t g = plane, b = 16;  // gcd(plane, 16): the period is plane / g vectors
    while (b != 0) g = std::exchange(b, g % b);
    period.assign(static_cast<size_t>(plane / g), Entry{0, 0, 0, 0});
    for (int64_t v = 0; v < static_cast<int64_t>(period.size()); ++v) {
      Entry& e = period[v];
      for (int64_t l = 0; l < 16; ++l) {
        const int64_t p = (16 * v + l) % plane, row = p / W, col = p % W;
        const auto bit = static_cast<__mmask16>(1u << l);
        if (col > 0) e.left |= bit;
        if (col < W - 1) e.right |= bit;
        if (row > 0) e.up |= bit;
        if (row < H - 1) e.down |= bit;
      }
    }
  }
};

// One output's three taps in order from -inf, each kept only where greater
// (vmaxps(v, m) is v > m ? v : m): the before tap where `before`, the
// centre, the after tap where `after`.
[[gnu::target("avx512f"), gnu::always_inline]] inline __m512 Max3Masked(__m512 b, __mmask16 before, __m512 c,
                                                                        __m512 a, __mmask16 after) {
  const __m512 m = _mm512_mask_blend_ps(before, _mm512_set1_ps(-std::numeric_limits<float>::infinity()), b);
  const __m512 mc = _mm512_maskz_max_ps(0xFFFF, c, m);
  return _mm512_mask_max_ps(mc, after, a, mc);
}

// The lanes of the vector at i of an n-float stretch that lie inside it.
inline __mmask16 StretchLanes(int64_t i, int64_t n) {
  return i + 16 <= n ? 0xFFFF : static_cast<__mmask16>((1u << (n - i)) - 1);
}

// One pass of MaxPoolSame3x3StretchAvx512 over src's n floats into dst:
// each output from its taps `step` before and after (1: along the rows;
// W: down the columns), each kept where the period's masks say it lies in
// the plane. A vector whose neighbours lie inside the stretch reads them
// whole (a masked load cost more), its masks then only choosing the taps.
[[gnu::target("avx512f"), gnu::always_inline]] inline void SameStretchPass(const float* src, int64_t n, int64_t step,
                                                                           bool rows, const TapMasks::Entry* period,
                                                                           int64_t vectors, float* dst) {
  int64_t v = 0;
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = StretchLanes(i, n);
    const TapMasks::Entry& e = period[v];
    const __mmask16 b = (rows ? e.left : e.up) & k, a = (rows ? e.right : e.down) & k;
    const bool inside = i >= step && i + 16 + step <= n;
    const __m512 vb = inside ? _mm512_loadu_ps(src + i - step) : _mm512_maskz_loadu_ps(b, src + i - step);
    const __m512 va = inside ? _mm512_loadu_ps(src + i + step) : _mm512_maskz_loadu_ps(a, src + i + step);
    const __m512 vc = k == 0xFFFF ? _mm512_loadu_ps(src + i) : _mm512_maskz_loadu_ps(k, src + i);
    const __m512 m = Max3Masked(vb, b, vc, va, a);
    if (k == 0xFFFF) {
      _mm512_storeu_ps(dst + i, m);
    } else {
      _mm512_mask_storeu_ps(dst + i, k, m);
    }
    if (++v == vectors) v = 0;
  }
}

}  // namespace

[[gnu::target("avx512f")]] bool MaxPoolSame3x3StretchAvx512(const float* x, int64_t planes, int64_t H, int64_t W,
                                                            float* y, float* h) {
  const int64_t plane = H * W, n = planes * plane;
  if (n <= 0) return true;
  __mmask16 nan = 0;
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = StretchLanes(i, n);
    const __m512 v = _mm512_maskz_loadu_ps(k, x + i);
    nan |= _mm512_mask_cmp_ps_mask(k, v, v, _CMP_UNORD_Q);
  }
  if (nan != 0) return false;
  thread_local TapMasks masks;
  masks.For(H, W);
  // Through a plain pointer: the thread_local's address is looked up by a
  // call (__tls_get_addr) each time it is named.
  const TapMasks::Entry* period = masks.period.data();
  const int64_t vectors = static_cast<int64_t>(masks.period.size());
  // Along the rows into h, then down the columns into y, about 16 KiB of
  // whole planes at a time, so that h is still in L1 when read back.
  const int64_t per = std::max<int64_t>(1, 4096 / plane) * plane;
  for (int64_t at = 0; at < n; at += per) {
    const int64_t len = std::min(per, n - at);
    SameStretchPass(x + at, len, 1, true, period, vectors, h);
    SameStretchPass(h, len, W, false, period, vectors, y + at);
  }
  return true;
}
#else
bool MaxPoolSame3x3PlaneAvx2(const float*, int64_t, int64_t, float*, float*) { return false; }
bool MaxPoolSame3x3StretchAvx512(const float*, int64_t, int64_t, int64_t, float*, float*) { return false; }
#endif

}  // namespace opscope::dense
