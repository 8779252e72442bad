// File: ops/builtin/dense_lanes8.h
// Eight NCHW planes with their channels in the lanes of AVX2 vectors, and
// back: what the small-plane depthwise convolution (dense_depthwise8.h)
// runs on. A plane 7 to 31 wide is a few vectors per row, mostly set-up when
// taken a plane at a time; interleaved, every output position is one vector
// of eight channels, with no edge case left once the buffer has its border.
// (MaxPool on it, -inf bordered, lost to dense_pool.cc's separable bodies:
// a max of nine taps a vector, against two of three down and along, took
// [1,480,14,14] at stride 1 from 41-67 to 61-102 us.)
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>

namespace opscope::dense {

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

// Interleaves channels ch[0..8)'s `n` floats at `at` (n <= 8: masked loads
// touch nothing past them) into dst[k * 8 + j] = ch[j][at + k], k < n.
[[gnu::target("avx2")]] inline void Interleave8(const float* const (&ch)[8], int64_t at, int64_t n, float* dst) {
  __m256 r[8];
  if (n == 8) {
    for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(ch[j] + at);
  } else {
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                                         _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int j = 0; j < 8; ++j) r[j] = _mm256_maskload_ps(ch[j] + at, m);
  }
  Transpose8(r);
  // Spelled out: as a loop over k < n, g++ made it a memcpy of r (rep movsq),
  // a sixth of the depthwise kernel's time.
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

// Planes x + j * x_plane (rows of W, H of them) into `in`, [PH][PW][8] with
// the input at (ph, pw) and `border` everywhere else.
[[gnu::target("avx2")]] inline void InterleavePlanes8(const float* x, int64_t x_plane, int64_t H, int64_t W,
                                                      int64_t ph, int64_t pw, int64_t PH, int64_t PW, float border,
                                                      float* in) {
  std::fill(in, in + ph * PW * 8, border);
  std::fill(in + (ph + H) * PW * 8, in + PH * PW * 8, border);
  for (int64_t r = ph; r < ph + H; ++r) {
    std::fill(in + r * PW * 8, in + (r * PW + pw) * 8, border);
    std::fill(in + (r * PW + pw + W) * 8, in + (r + 1) * PW * 8, border);
  }
  const float* xs[8];
  for (int j = 0; j < 8; ++j) xs[j] = x + j * x_plane;
  for (int64_t ih = 0; ih < H; ++ih) {
    float* row = in + ((ih + ph) * PW + pw) * 8;
    for (int64_t c = 0; c < W; c += 8) Interleave8(xs, ih * W + c, std::min<int64_t>(8, W - c), row + c * 8);
  }
}

// The inverse for `P` flat positions: out[p * 8 + j] to y[j * y_plane + p].
// `out` holds P rounded up to 8 positions (the ones past P are read, not stored).
[[gnu::target("avx2")]] inline void DeinterleavePlanes8(const float* out, int64_t P, float* y, int64_t y_plane) {
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

}  // namespace opscope::dense
#endif
