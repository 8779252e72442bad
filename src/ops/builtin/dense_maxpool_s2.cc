// dense_maxpool_s2.h's kernel. Built for baseline x86-64 with AVX-512F
// code by attribute, reached only where dense::WideBlocks().
#include "ops/builtin/dense_maxpool_s2.h"

#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace opscope::dense {

// Windows of more rows are never met in CNNs' strided pools: they go to
// dense_pool.cc's bodies.
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
  return _mm512_maskz_max_ps(0xFFFF, b, a);
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

// One block of an output row's window, down the window's n rows (from
// `top`, `step` floats apart): columns c0 .. c0 + 15 (a) and c0 + 16 ..
// c0 + 31 (b), masked to X's W columns (-inf outside, nothing read there).
// Without kKeepNan, `nan` gathers the lanes of each row's pair holding a
// NaN (one unordered compare covers both vectors).
struct DownBlock {
  __m512 a, b;
};

template <bool kKeepNan, int kN>
[[gnu::target("avx512f"), gnu::always_inline]] inline DownBlock Down(const float* top, int64_t step, int rows,
                                                                    int64_t c0, int64_t W, __mmask16& nan) {
  const int n = kN > 0 ? kN : rows;
  const __m512 minus_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __mmask16 first = FirstLanes16(W - c0), second = FirstLanes16(W - c0 - 16);
  DownBlock d{_mm512_mask_loadu_ps(minus_inf, first, top + c0), _mm512_mask_loadu_ps(minus_inf, second, top + c0 + 16)};
  if constexpr (!kKeepNan) nan = static_cast<__mmask16>(nan | _mm512_cmp_ps_mask(d.a, d.b, _CMP_UNORD_Q));
#pragma GCC unroll 4
  for (int r = 1; r < n; ++r) {
    const float* row = top + r * step;
    const __m512 a = _mm512_mask_loadu_ps(minus_inf, first, row + c0);
    const __m512 b = _mm512_mask_loadu_ps(minus_inf, second, row + c0 + 16);
    if constexpr (!kKeepNan) nan = static_cast<__mmask16>(nan | _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q));
    d.a = TapMax<kKeepNan>(d.a, a);
    d.b = TapMax<kKeepNan>(d.b, b);
  }
  return d;
}

// Outputs 16 j .. 16 j + 15 of one output row from its window's columns
// taken down the rows (d: columns 32 j .. 32 j + 31). Output ow's taps are
// columns 2 ow - PW + t (t < KW): with PW = 0 the even columns, the odd
// ones, and (KW = 3) the even ones a lane on, whose last lane is the next
// block's first column (lane 0 of e, the next block's a); with PW = 1 the
// odd ones a lane back (lane 0 the block before's last column, lane 15 of
// e, its b; -inf before the row), the even ones, and (KW = 3) the odd ones.
template <bool kKeepNan, int PW, int KW>
[[gnu::target("avx512f"), gnu::always_inline]] inline void SixteenOutputs(const DownBlock& d, __m512 e,
                                                                        __mmask16 out_lanes, float* out) {
  const __m512i even_idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd_idx = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 even = _mm512_permutex2var_ps(d.a, even_idx, d.b);
  const __m512 odd = _mm512_permutex2var_ps(d.a, odd_idx, d.b);
  __m512 m;
  if constexpr (PW == 0) {
    m = TapMax<kKeepNan>(even, odd);
    if constexpr (KW == 3) {
      // Lane l: even column l + 1; lane 15 the next block's first.
      const __m512i on = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
      m = TapMax<kKeepNan>(m, _mm512_permutex2var_ps(even, on, e));
    }
  } else {
    // Lane l: odd column l - 1; lane 0 the block before's last.
    const __m512i back = _mm512_setr_epi32(31, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
    m = TapMax<kKeepNan>(_mm512_permutex2var_ps(odd, back, e), even);
    if constexpr (KW == 3) m = TapMax<kKeepNan>(m, odd);
  }
  _mm512_mask_storeu_ps(out, out_lanes, m);
}

// One output row's blocks, its window's kN rows (0: n) from `top`.
template <bool kKeepNan, int PW, int KW, int kN>
[[gnu::target("avx512f"), gnu::always_inline]] inline void OutputRow(const float* top, int64_t step, int n,
                                                                    int64_t W, int64_t OW, float* out,
                                                                    __mmask16& nan) {
  const int64_t blocks = (OW + 15) / 16;
  const __m512 minus_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  if constexpr (PW == 0) {
    DownBlock cur = Down<kKeepNan, kN>(top, step, n, 0, W, nan);
    for (int64_t j = 0; j < blocks; ++j) {
      // With KW = 3 the last block too takes the column past it (inside X
      // where W is odd); past X it is -inf, and nothing is loaded for it
      // (a 28-wide row's second block: [1,480,28,28] 45 -> 39 us, one core).
      DownBlock next{minus_inf, minus_inf};
      if ((KW == 3 || j + 1 < blocks) && 32 * (j + 1) < W) {
        next = Down<kKeepNan, kN>(top, step, n, 32 * (j + 1), W, nan);
      }
      SixteenOutputs<kKeepNan, PW, KW>(cur, next.a, FirstLanes16(OW - 16 * j), out + 16 * j);
      cur = next;
    }
  } else {
    __m512 before = minus_inf;
    for (int64_t j = 0; j < blocks; ++j) {
      const DownBlock cur = Down<kKeepNan, kN>(top, step, n, 32 * j, W, nan);
      SixteenOutputs<kKeepNan, PW, KW>(cur, before, FirstLanes16(OW - 16 * j), out + 16 * j);
      before = cur.b;
    }
  }
}

// The plane's output rows, false where X holds a NaN: Y is then to be
// written again with kKeepNan. Each row's blocks run left to right, each
// block's columns taken down the window once: the column a block needs past
// its 32 comes from its neighbour's (the next one's first, with pads of 0;
// the one before's last, with 1). Without kKeepNan every row pair read is
// compared for NaNs as it is loaded. Windows of 2 and 3 rows inside X (all
// but the edges of CNNs' pools) run unrolled. Before, each block loaded
// that column alone (a third masked load a row), worked out its masks and
// row pointers again, and the plane was read for NaNs in a pass of its own
// first (a row at a time on planes over 16 KB): [1,64,112,112] 78 us on
// one core, a fifth of it in that pass. (Two output rows at a time, their
// windows' shared row loaded once, ran 1.09x slower on 112- and 56-wide
// planes, 1.15x on 28-wide ones: ten vectors of rows and four of blocks
// carried left too few registers.)
template <bool kKeepNan, int PW, int KW>
[[gnu::target("avx512f")]] bool Plane(const float* x, const WindowGeometry& g, float* y) {
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t sh = g.strides[1], ph = g.pads_begin[1], dh = g.dilations[1], kh = g.kernel[1];
  const int64_t step = dh * W;
  __mmask16 nan = 0;
  for (int64_t oh = 0; oh < OH; ++oh) {
    // The window's rows inside X: k in [k0, k1), ih = oh sh - ph + k dh.
    const int64_t ih0 = oh * sh - ph;
    int64_t k0 = 0, k1 = kh;
    while (k0 < kh && ih0 + k0 * dh < 0) ++k0;
    while (k1 > k0 && ih0 + (k1 - 1) * dh >= H) --k1;
    const float* top = x + (ih0 + k0 * dh) * W;
    const int n = static_cast<int>(k1 - k0);
    float* out = y + oh * OW;
    if (n == 3) OutputRow<kKeepNan, PW, KW, 3>(top, step, n, W, OW, out, nan);
    else if (n == 2) OutputRow<kKeepNan, PW, KW, 2>(top, step, n, W, OW, out, nan);
    else OutputRow<kKeepNan, PW, KW, 0>(top, step, n, W, OW, out, nan);
  }
  return nan == 0;
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
    if (oh + 1 < OH) {
      _mm512_mask_storeu_ps(out + OW, first, _mm512_maskz_shuffle_f32x4(0xFFFF, m, m, _MM_SHUFFLE(3, 2, 3, 2)));
    }
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
