#include "ops/builtin/dense_depthwise8.h"

#include <algorithm>

#include "ops/builtin/dense_lanes8.h"

namespace opscope::dense {

bool Depthwise3x3EightFits(const WindowGeometry& g) {
#if defined(__x86_64__)
  const int64_t s = g.strides[1];
  return HasAvx2() && g.in[0] == 1 && g.kernel == std::vector<int64_t>{1, 3, 3} &&
         g.dilations == std::vector<int64_t>{1, 1, 1} && (s == 1 || s == 2) && g.strides[2] == s &&
         g.out[2] < (s == 2 ? 64 : 9);
#else
  (void)g;
  return false;
#endif
}

#if defined(__x86_64__)
namespace {

// The output vectors at columns i (and, kTwo, k) of buffer rows r0, r1, r2:
// the nine taps' weights times the buffer, added in order from zero, a
// multiply then an add each (Depthwise3x3's sums, bit for bit).
template <bool kTwo>
[[gnu::target("avx2"), gnu::always_inline]] inline void NineTaps(const float* r0, const float* r1, const float* r2,
                                                                 int64_t i, int64_t k, const __m256 (&wv)[9],
                                                                 __m256& a, __m256& c) {
  const float* rows[3] = {r0, r1, r2};
  a = _mm256_setzero_ps(), c = _mm256_setzero_ps();
#pragma GCC unroll 9
  for (int t = 0; t < 9; ++t) {
    const float* r = rows[t / 3] + (t % 3) * 8;
    a = _mm256_add_ps(a, _mm256_mul_ps(wv[t], _mm256_loadu_ps(r + i)));
    if constexpr (kTwo) c = _mm256_add_ps(c, _mm256_mul_ps(wv[t], _mm256_loadu_ps(r + k)));
  }
}

[[gnu::target("avx2")]] void Eight(const float* x, int64_t x_plane, const float* w, const WindowGeometry& g, float* y,
                                   int64_t y_plane, const float* next, const EightTail* tail,
                                   std::vector<float>& scratch) {
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2], s = g.strides[1];
  const int64_t ph = g.pads_begin[1], pw = g.pads_begin[2], P = OH * OW;
  // Padded extents: the input at (ph, pw), every tap of every output inside.
  const int64_t PH = std::max(H + ph, (OH - 1) * s + 3), PW = std::max(W + pw, (OW - 1) * s + 3);
  const int64_t in_floats = PH * PW * 8, out_floats = (P + 7) / 8 * 8 * 8;
  scratch.resize(static_cast<size_t>(in_floats + out_floats));
  float* in = scratch.data();
  float* out = in + in_floats;
  // The last run of eight outputs past P: read by the transpose back, never stored.
  std::fill(out + P * 8, out + out_floats, 0.0f);
  InterleavePlanes8(x, x_plane, H, W, ph, pw, PH, PW, 0.0f, in);
  // The next eight planes on their way into cache while these are computed:
  // read eight rows at a time, a row of each plane, cold planes stalled the
  // transposes ([1,384,14,14] with --cold-cache: 110 us a channel at a
  // time, 165 here before this).
  if (next != nullptr) {
    const char* p = reinterpret_cast<const char*>(next);
    const int64_t bytes = static_cast<int64_t>(sizeof(float)) * H * W;
    for (int j = 0; j < 8; ++j, p += x_plane * static_cast<int64_t>(sizeof(float))) {
      for (int64_t b = 0; b < bytes; b += 64) _mm_prefetch(p + b, _MM_HINT_T0);
    }
  }
  // Tap t of channel j in lane j.
  __m256 wv[9];
  for (int t = 0; t < 9; ++t) {
    wv[t] = _mm256_setr_ps(w[t], w[9 + t], w[18 + t], w[27 + t], w[36 + t], w[45 + t], w[54 + t], w[63 + t]);
  }
  // The tail in registers (bias, then the clamp) where the caller gives
  // one. A zero bias is not added by Epilogue::Run; -0 added changes no
  // bits (x + -0 is x, -0 included), so such a lane adds -0.
  __m256 bias = _mm256_set1_ps(-0.0f), lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
  const bool clamp = tail != nullptr && tail->clamp;
  if (tail != nullptr) {
    alignas(32) float b[8];
    for (int j = 0; j < 8; ++j) b[j] = tail->bias[j] == 0.0f ? -0.0f : tail->bias[j];
    bias = _mm256_load_ps(b);
    lo = _mm256_set1_ps(tail->lo), hi = _mm256_set1_ps(tail->hi);
  }
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float* r0 = in + oh * s * PW * 8;
    const float* r1 = r0 + PW * 8;
    const float* r2 = r1 + PW * 8;
    float* o = out + oh * OW * 8;
    // Two positions side by side: each output's nine adds are one chain of
    // dependent adds, and one chain at a time left the adders idle.
    int64_t ow = 0;
    for (; ow + 2 <= OW; ow += 2) {
      __m256 a, c;
      NineTaps<true>(r0, r1, r2, ow * s * 8, (ow + 1) * s * 8, wv, a, c);
      if (tail != nullptr) a = _mm256_add_ps(a, bias), c = _mm256_add_ps(c, bias);
      if (clamp) a = _mm256_min_ps(hi, _mm256_max_ps(lo, a)), c = _mm256_min_ps(hi, _mm256_max_ps(lo, c));
      _mm256_storeu_ps(o + ow * 8, a);
      _mm256_storeu_ps(o + ow * 8 + 8, c);
    }
    if (ow < OW) {
      __m256 a, unused;
      NineTaps<false>(r0, r1, r2, ow * s * 8, 0, wv, a, unused);
      if (tail != nullptr) a = _mm256_add_ps(a, bias);
      if (clamp) a = _mm256_min_ps(hi, _mm256_max_ps(lo, a));
      _mm256_storeu_ps(o + ow * 8, a);
    }
  }
  // Back to planes: the output positions are flat, eight at a time.
  DeinterleavePlanes8(out, P, y, y_plane);
}

}  // namespace
#endif

void Depthwise3x3Eight(const float* x, int64_t x_plane, const float* w, const WindowGeometry& g, float* y,
                       int64_t y_plane, const float* next, const EightTail* tail, std::vector<float>& scratch) {
#if defined(__x86_64__)
  Eight(x, x_plane, w, g, y, y_plane, next, tail, scratch);
#else
  (void)x, (void)x_plane, (void)w, (void)g, (void)y, (void)y_plane, (void)next, (void)tail, (void)scratch;
#endif
}

}  // namespace opscope::dense
