// dense_maxpool_s2.h's kernel. Built for baseline x86-64 with AVX-512F
// code by attribute, reached only where dense::WideBlocks().
#include "ops/builtin/dense_maxpool_s2.h"

#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace opscope::dense {

// Window rows held in registers' worth of pointers: more are never met in
// CNNs' strided pools and go to dense_pool.cc's bodies.
constexpr int64_t kMaxWindowRows = 16;

bool MaxPoolS2Avx512Fits(const WindowGeometry& g) {
#if defined(__x86_64__)
  const int64_t kw = g.kernel.size() == 3 ? g.kernel[2] : 0;
  // Planes under 9 wide stay eight at a time (dense_pool.cc's
  // MaxPoolEightAvx2): [1,512,7,7] 2x2 9.1 us there, 10.3 two rows a vector.
  return g.in.size() == 3 && g.in[0] == 1 && g.kernel[0] == 1 && (kw == 2 || kw == 3) && g.strides[2] == 2 &&
         g.dilations[2] == 1 && g.pads_begin[2] >= 0 && g.pads_begin[2] <= 1 && g.kernel[1] >= 1 &&
         g.kernel[1] <= kMaxWindowRows && g.in[2] >= 9;
#else
  (void)g;
  return false;
#endif
}

#if defined(__x86_64__)
namespace {

// dense_pool.cc's MaxKeepNan, sixteen lanes: b where b > a or b is NaN, else a.
[[gnu::target("avx512f"), gnu::always_inline]] inline __m512 MaxKeepNan16(__m512 a, __m512 b) {
  const __mmask16 take = _mm512_cmp_ps_mask(b, a, _CMP_GT_OQ) | _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(take, a, b);
}

// The max of a and a next tap b: MaxKeepNan16, or where the plane holds no
// NaN vmaxps (b > a ? b : a, the same choice, one instruction for four).
template <bool kKeepNan>
[[gnu::target("avx512f"), gnu::always_inline]] inline __m512 TapMax(__m512 a, __m512 b) {
  if constexpr (kKeepNan) return MaxKeepNan16(a, b);
  return _mm512_max_ps(b, a);
}

// Whether n floats from x hold a NaN.
[[gnu::target("avx512f")]] bool HoldsNan(const float* x, int64_t n) {
  __mmask16 nan0 = 0, nan1 = 0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
    nan0 = static_cast<__mmask16>(nan0 | _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q));
    nan1 = static_cast<__mmask16>(nan1 | _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q));
  }
  for (; i < n; i += 16) {
    const __mmask16 lanes = n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 a = _mm512_maskz_loadu_ps(lanes, x + i);
    nan0 = static_cast<__mmask16>(nan0 | _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q));
  }
  return (nan0 | nan1) != 0;
}

// Lanes [0, n) of sixteen set.
[[gnu::target("avx512f"), gnu::always_inline]] inline __mmask16 FirstLanes16(int64_t n) {
  if (n >= 16) return static_cast<__mmask16>(0xFFFF);
  return n <= 0 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << n) - 1);
}

// Outputs i .. i + 15 of one output row, from its window's n rows. Output
// ow's taps are columns 2 ow - PW + t (t < KW): with PW = 0 the even
// columns, the odd ones, and (KW = 3) the even ones a lane on, whose last
// lane is column 2 i + 32; with PW = 1 the odd ones a lane back (lane 0
// column 2 i - 1, -inf before the row), the even ones, and (KW = 3) the odd
// ones. That extra column is loaded with the 32 and taken down the rows
// with them, in lane 0 of a vector of its own.
template <bool kKeepNan, int PW, int KW>
[[gnu::target("avx512f"), gnu::always_inline]] inline void SixteenOutputs(const float* const* rows, int n,
                                                                        int64_t i, int64_t W, __mmask16 out_lanes,
                                                                        float* out) {
  const __m512i even_idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd_idx = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 minus_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const int64_t c0 = 2 * i;
  const __mmask16 first = FirstLanes16(W - c0), second = FirstLanes16(W - c0 - 16);
  // The extra column: 2 i + 32 (PW = 0, KW = 3) or 2 i - 1 (PW = 1), where inside X.
  const int64_t extra = PW == 0 ? c0 + 32 : c0 - 1;
  const bool extra_in = (PW == 1 || KW == 3) && extra >= 0 && extra < W;
  const int64_t extra_at = extra_in ? extra : 0;
  const __mmask16 extra_lane = extra_in ? static_cast<__mmask16>(1) : static_cast<__mmask16>(0);
  __m512 a = _mm512_mask_loadu_ps(minus_inf, first, rows[0] + c0);
  __m512 b = _mm512_mask_loadu_ps(minus_inf, second, rows[0] + c0 + 16);
  __m512 e = _mm512_mask_loadu_ps(minus_inf, extra_lane, rows[0] + extra_at);
  for (int r = 1; r < n; ++r) {
    a = TapMax<kKeepNan>(a, _mm512_mask_loadu_ps(minus_inf, first, rows[r] + c0));
    b = TapMax<kKeepNan>(b, _mm512_mask_loadu_ps(minus_inf, second, rows[r] + c0 + 16));
    e = TapMax<kKeepNan>(e, _mm512_mask_loadu_ps(minus_inf, extra_lane, rows[r] + extra_at));
  }
  const __m512 even = _mm512_permutex2var_ps(a, even_idx, b);
  const __m512 odd = _mm512_permutex2var_ps(a, odd_idx, b);
  __m512 m;
  if constexpr (PW == 0) {
    m = TapMax<kKeepNan>(even, odd);
    if constexpr (KW == 3) {
      // Lane l: even column l + 1; lane 15 the extra one.
      const __m512i on = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
      m = TapMax<kKeepNan>(m, _mm512_permutex2var_ps(even, on, e));
    }
  } else {
    // Lane l: odd column l - 1; lane 0 the extra one.
    const __m512i back = _mm512_setr_epi32(16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
    m = TapMax<kKeepNan>(_mm512_permutex2var_ps(odd, back, e), even);
    if constexpr (KW == 3) m = TapMax<kKeepNan>(m, odd);
  }
  _mm512_mask_storeu_ps(out + i, out_lanes, m);
}

// Planes up to this many floats (16 KB) are read for NaNs whole before
// their taps; larger ones a row at a time.
constexpr int64_t kNanPassWhole = 4096;

// The plane's output rows, false where X holds a NaN: Y is then to be
// written again with kKeepNan. Without kKeepNan the plane is read for NaNs
// first, a plane of up to kNanPassWhole floats at once, a larger one a row
// at a time just before the first output row that takes it, so that the
// row is still in L1 when its taps are read: one pass over a 112x112
// plane (50 KB) first had cost [1,64,112,112] 86 us on one core against
// 79, and a row at a time [1,480,28,28] 56 against 72 (a call a row).
template <bool kKeepNan, int PW, int KW>
[[gnu::target("avx512f")]] bool Plane(const float* x, const WindowGeometry& g, float* y) {
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t sh = g.strides[1], ph = g.pads_begin[1], dh = g.dilations[1], kh = g.kernel[1];
  int64_t scanned = 0;  // input rows [0, scanned) read for NaNs
  if (!kKeepNan && H * W <= kNanPassWhole) {
    if (HoldsNan(x, H * W)) return false;
    scanned = H;
  }
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float* rows[kMaxWindowRows];
    int n = 0;
    int64_t last = -1;
    for (int64_t k = 0; k < kh; ++k) {
      const int64_t ih = oh * sh - ph + k * dh;
      if (ih >= 0 && ih < H) rows[n++] = x + ih * W, last = ih;
    }
    if (!kKeepNan && last >= scanned) {
      if (HoldsNan(x + scanned * W, (last + 1 - scanned) * W)) return false;
      scanned = last + 1;
    }
    float* out = y + oh * OW;
    for (int64_t i = 0; i < OW; i += 16) SixteenOutputs<kKeepNan, PW, KW>(rows, n, i, W, FirstLanes16(OW - i), out);
  }
  return true;
}

template <int PW, int KW>
void PlaneKeepingNan(const float* x, const WindowGeometry& g, float* y) {
  if (!Plane<false, PW, KW>(x, g, y)) Plane<true, PW, KW>(x, g, y);
}

// ---- narrow planes: two output rows a vector ----
// Output rows of 8 or fewer (14x14 planes pooled to 7x7) fill half a
// vector: lanes 0-7 take output row oh, lanes 8-15 row oh + 1. Each of the
// two window's rows (at most 16 floats: W <= 16) is taken down the window
// in a vector of its own, then each column tap is one permute of the pair:
// lane l column 2 l - PW + t of the first, lane 8 + l of the second, -inf
// outside X. The taps in the wide body's order: the same bits. Against
// eight planes at a time (dense_pool.cc's MaxPoolEightAvx2, transposed in
// and out), one core, 5 rounds alternating: googlenet's [1,832,14,14] 2x2
// to 7x7 38 -> 26 us, [1,512,14,14] 3x3 30 -> 19, [1,256,16,16] with
// pads 17.5 -> 10.3.

// The column taps' permutes and the lanes each keeps (inside X).
struct NarrowPoolTaps {
  __m512i idx[3];
  __mmask16 lanes[3];
};

[[gnu::target("avx512f"), gnu::always_inline]] inline NarrowPoolTaps NarrowPoolTapsOf(int64_t W, int64_t pw,
                                                                                    int64_t kw) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
  const __m512i second = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 16, 16, 16, 16, 16, 16, 16, 16);
  NarrowPoolTaps t;
  for (int64_t c = 0; c < kw; ++c) {
    const __m512i col = _mm512_add_epi32(_mm512_add_epi32(lane, lane), _mm512_set1_epi32(static_cast<int>(c - pw)));
    t.idx[c] = _mm512_add_epi32(col, second);
    t.lanes[c] = static_cast<__mmask16>(_mm512_cmpge_epi32_mask(col, _mm512_setzero_si512()) &
                                        _mm512_cmplt_epi32_mask(col, _mm512_set1_epi32(static_cast<int>(W))));
  }
  return t;
}

// One plane, false where X holds a NaN (kKeepNan: the NaN-keeping max).
template <bool kKeepNan, int KW>
[[gnu::target("avx512f"), gnu::always_inline]] inline bool NarrowPlane(const float* x, const WindowGeometry& g,
                                                                      const NarrowPoolTaps& taps, float* y) {
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t sh = g.strides[1], ph = g.pads_begin[1], dh = g.dilations[1], kh = g.kernel[1];
  if (!kKeepNan && HoldsNan(x, H * W)) return false;
  const __m512 minus_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __mmask16 row = FirstLanes16(W), first = FirstLanes16(OW);
  for (int64_t oh = 0; oh < OH; oh += 2) {
    // Each output row's window rows inside X, down the window in order.
    __m512 down[2] = {minus_inf, minus_inf};
    for (int o = 0; o < 2 && oh + o < OH; ++o) {
      bool any = false;
      for (int64_t k = 0; k < kh; ++k) {
        const int64_t ih = (oh + o) * sh - ph + k * dh;
        if (ih < 0 || ih >= H) continue;
        const __m512 v = _mm512_mask_loadu_ps(minus_inf, row, x + ih * W);
        down[o] = any ? TapMax<kKeepNan>(down[o], v) : v;
        any = true;
      }
    }
    __m512 m = _mm512_mask_blend_ps(taps.lanes[0], minus_inf, _mm512_permutex2var_ps(down[0], taps.idx[0], down[1]));
#pragma GCC unroll 2
    for (int c = 1; c < KW; ++c) {
      const __m512 t = _mm512_permutex2var_ps(down[0], taps.idx[c], down[1]);
      m = TapMax<kKeepNan>(m, _mm512_mask_blend_ps(taps.lanes[c], minus_inf, t));
    }
    float* out = y + oh * OW;
    _mm512_mask_storeu_ps(out, first, m);
    if (oh + 1 < OH) _mm512_mask_storeu_ps(out + OW, first, _mm512_shuffle_f32x4(m, m, _MM_SHUFFLE(3, 2, 3, 2)));
  }
  return true;
}

template <int KW>
[[gnu::target("avx512f")]] void NarrowPlanes(const float* x, const WindowGeometry& g, float* y, int64_t planes) {
  const NarrowPoolTaps taps = NarrowPoolTapsOf(g.in[2], g.pads_begin[2], KW);
  const int64_t in = g.in_size(), out = g.out_size();
  for (int64_t p = 0; p < planes; ++p) {
    const float* xp = x + p * in;
    float* yp = y + p * out;
    if (!NarrowPlane<false, KW>(xp, g, taps, yp)) NarrowPlane<true, KW>(xp, g, taps, yp);
  }
}

}  // namespace
#endif

void MaxPoolS2PlanesAvx512(const float* x, const WindowGeometry& g, float* y, int64_t planes) {
#if defined(__x86_64__)
  const bool three = g.kernel[2] == 3;
  if (g.out[2] <= 8 && g.in[2] <= 16) {
    (three ? NarrowPlanes<3> : NarrowPlanes<2>)(x, g, y, planes);
    return;
  }
  const int64_t in = g.in_size(), out = g.out_size();
  for (int64_t p = 0; p < planes; ++p) {
    if (g.pads_begin[2] == 0) {
      (three ? PlaneKeepingNan<0, 3> : PlaneKeepingNan<0, 2>)(x + p * in, g, y + p * out);
    } else {
      (three ? PlaneKeepingNan<1, 3> : PlaneKeepingNan<1, 2>)(x + p * in, g, y + p * out);
    }
  }
#else
  (void)x, (void)g, (void)y, (void)planes;
#endif
}

}  // namespace opscope::dense
