#include "ops/builtin/dense_depthwise8.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace opscope::dense {

bool Depthwise3x3EightFits(const WindowGeometry& g) {
#if defined(__x86_64__)
  const int64_t s = g.strides[1];
  return HasAvx2() && g.in[0] == 1 && g.kernel == std::vector<int64_t>{1, 3, 3} &&
         g.dilations == std::vector<int64_t>{1, 1, 1} && (s == 1 || s == 2) && g.strides[2] == s && g.out[2] < (s == 2 ? 32 : 9);
#else
  (void)g;
  return false;
#endif
}

#if defined(__x86_64__)
namespace {

// r[k] becomes the k-th lanes of the eight inputs: r[k][j] = in[j][k].
[[gnu::target("avx2")]] inline void Transpose8(__m256 (&r)[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// Lanes [0, n) of 8 set.
[[gnu::target("avx2")]] inline __m256i Lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Interleaves channels ch[0..8)'s `n` floats at `at` (n <= 8: masked loads
// touch nothing past them) into dst[k * 8 + j] = ch[j][at + k], k < n.
[[gnu::target("avx2")]] inline void Interleave(const float* const (&ch)[8], int64_t at, int64_t n, float* dst) {
  __m256 r[8];
  if (n == 8) {
    for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(ch[j] + at);
  } else {
    const __m256i m = Lanes(n);
    for (int j = 0; j < 8; ++j) r[j] = _mm256_maskload_ps(ch[j] + at, m);
  }
  Transpose8(r);
  // Spelled out: as a loop over k < n, g++ made it a memcpy of r (rep movsq),
  // a sixth of the whole kernel's time.
  switch (n) {
    case 8: _mm256_storeu_ps(dst + 56, r[7]); [[fallthrough]];
    case 7: _mm256_storeu_ps(dst + 48, r[6]); [[fallthrough]];
    case 6: _mm256_storeu_ps(dst + 40, r[5]); [[fallthrough]];
    case 5: _mm256_storeu_ps(dst + 32, r[4]); [[fallthrough]];
    case 4: _mm256_storeu_ps(dst + 24, r[3]); [[fallthrough]];
    case 3: _mm256_storeu_ps(dst + 16, r[2]); [[fallthrough]];
    case 2: _mm256_storeu_ps(dst + 8, r[1]); [[fallthrough]];
    case 1: _mm256_storeu_ps(dst, r[0]); [[fallthrough]];
    default: break;
  }
}

[[gnu::target("avx2")]] void Eight(const float* x, int64_t x_plane, const float* w, const WindowGeometry& g, float* y,
                                   int64_t y_plane, const float* next, std::vector<float>& scratch) {
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
  // The border, zero; the interior is written whole below.
  std::memset(in, 0, static_cast<size_t>(ph * PW * 8) * sizeof(float));
  std::memset(in + (ph + H) * PW * 8, 0, static_cast<size_t>((PH - ph - H) * PW * 8) * sizeof(float));
  for (int64_t r = ph; r < ph + H; ++r) {
    std::memset(in + r * PW * 8, 0, static_cast<size_t>(pw * 8) * sizeof(float));
    std::memset(in + (r * PW + pw + W) * 8, 0, static_cast<size_t>((PW - pw - W) * 8) * sizeof(float));
  }
  const float* xs[8];
  for (int j = 0; j < 8; ++j) xs[j] = x + j * x_plane;
  for (int64_t ih = 0; ih < H; ++ih) {
    float* row = in + ((ih + ph) * PW + pw) * 8;
    for (int64_t c = 0; c < W; c += 8) Interleave(xs, ih * W + c, std::min<int64_t>(8, W - c), row + c * 8);
  }
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
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float* r0 = in + oh * s * PW * 8;
    const float* r1 = r0 + PW * 8;
    const float* r2 = r1 + PW * 8;
    float* o = out + oh * OW * 8;
    for (int64_t ow = 0; ow < OW; ++ow) {
      const int64_t i = ow * s * 8;
      __m256 acc = _mm256_setzero_ps();
      acc = _mm256_add_ps(acc, _mm256_mul_ps(wv[0], _mm256_loadu_ps(r0 + i)));
      acc = _mm256_add_ps(acc, _mm256_mul_ps(wv[1], _mm256_loadu_ps(r0 + i + 8)));
      acc = _mm256_add_ps(acc, _mm256_mul_ps(wv[2], _mm256_loadu_ps(r0 + i + 16)));
      acc = _mm256_add_ps(acc, _mm256_mul_ps(wv[3], _mm256_loadu_ps(r1 + i)));
      acc = _mm256_add_ps(acc, _mm256_mul_ps(wv[4], _mm256_loadu_ps(r1 + i + 8)));
      acc = _mm256_add_ps(acc, _mm256_mul_ps(wv[5], _mm256_loadu_ps(r1 + i + 16)));
      acc = _mm256_add_ps(acc, _mm256_mul_ps(wv[6], _mm256_loadu_ps(r2 + i)));
      acc = _mm256_add_ps(acc, _mm256_mul_ps(wv[7], _mm256_loadu_ps(r2 + i + 8)));
      acc = _mm256_add_ps(acc, _mm256_mul_ps(wv[8], _mm256_loadu_ps(r2 + i + 16)));
      _mm256_storeu_ps(o + ow * 8, acc);
    }
  }
  // Back to planes: the output positions are flat, eight at a time.
  for (int64_t p = 0; p < P; p += 8) {
    __m256 r[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(out + (p + k) * 8);
    Transpose8(r);
    if (p + 8 <= P) {
      for (int j = 0; j < 8; ++j) _mm256_storeu_ps(y + j * y_plane + p, r[j]);
    } else {
      alignas(32) float tail[8];
      for (int j = 0; j < 8; ++j) {
        _mm256_store_ps(tail, r[j]);
        std::copy(tail, tail + (P - p), y + j * y_plane + p);
      }
    }
  }
}

}  // namespace
#endif

void Depthwise3x3Eight(const float* x, int64_t x_plane, const float* w, const WindowGeometry& g, float* y,
                       int64_t y_plane, const float* next, std::vector<float>& scratch) {
#if defined(__x86_64__)
  Eight(x, x_plane, w, g, y, y_plane, next, scratch);
#else
  (void)x, (void)x_plane, (void)w, (void)g, (void)y, (void)y_plane, (void)next, (void)scratch;
#endif
}

}  // namespace opscope::dense
