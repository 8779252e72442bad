// Pooling: MaxPool (opset 12: dilations, ceil_mode, auto_pad, storage_order,
// optional Indices), AveragePool (opset 11: count_include_pad, ceil_mode) and
// GlobalAveragePool, for 1 to 3 spatial dims. Kernels run one block of
// (n, c) planes at a time over a 3-D view; references loop over N-D indices.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ops/builtin/dense_lanes8.h"
#include "ops/builtin/dense_maxpool_same3x3.h"
#include "ops/builtin/dense_maxpool_s2.h"
#include "ops/builtin/dense_smallk.h"
#include "ops/builtin/dense_util.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

using dense::WindowGeometry;

Status CheckPoolInput(std::string_view op, const Shape& x) {
  if (x.rank() < 3 || x.rank() > 5) {
    return InvalidArgumentError(std::string(op) + ": input X has shape " + x.ToString() +
                                "; expected [N, C, spatial...] with 1 to 3 spatial dims");
  }
  return Status::Ok();
}

StatusOr<WindowGeometry> PoolGeometry(std::string_view op, const Shape& x, const Attrs& attrs) {
  OPSCOPE_RETURN_IF_ERROR(CheckPoolInput(op, x));
  const std::vector<int64_t> kernel = attrs.ints("kernel_shape");
  if (kernel.empty()) return InvalidArgumentError(std::string(op) + ": attribute kernel_shape is required");
  return dense::SlidingWindow(op, x, kernel, attrs, attrs.i("ceil_mode") != 0);
}

Shape PoolOutShape(const Shape& x, const WindowGeometry& g) {
  std::vector<int64_t> out = {x[0], x[1]};
  out.insert(out.end(), g.out.begin(), g.out.end());
  return Shape(out);
}

Status MaxPoolInfer(InferContext& c) {
  OPSCOPE_ASSIGN_OR_RETURN(WindowGeometry g, PoolGeometry("MaxPool", c.input(0).shape, c.attrs()));
  const int64_t so = c.attrs().i("storage_order");
  if (so != 0 && so != 1) {
    return InvalidArgumentError("MaxPool: attribute storage_order=" + std::to_string(so) +
                                "; expected 0 (row major) or 1 (column major)");
  }
  const Shape out = PoolOutShape(c.input(0).shape, g);
  c.SetOutput(0, c.input(0).dtype, out);
  if (c.num_outputs() > 1) c.SetOutput(1, DType::kI64, out);
  return Status::Ok();
}

Status AveragePoolInfer(InferContext& c) {
  OPSCOPE_ASSIGN_OR_RETURN(WindowGeometry g, PoolGeometry("AveragePool", c.input(0).shape, c.attrs()));
  c.SetOutput(0, c.input(0).dtype, PoolOutShape(c.input(0).shape, g));
  return Status::Ok();
}

// Index of a spatial position in X's flat storage for the Indices output:
// row major (storage_order 0) or with the spatial dims column major (1).
inline int64_t SpatialIndex(int64_t d, int64_t h, int64_t w, const WindowGeometry& g, bool col_major) {
  return col_major ? d + g.in[0] * (h + g.in[1] * w) : (d * g.in[1] + h) * g.in[2] + w;
}

// Whether every output window of `g` has at least one tap inside X, along
// every dim (not so where the padding is as wide as the window, or a
// ceil_mode window starts in the padding).
bool EveryWindowReachesX(const WindowGeometry& g) {
  for (int i = 0; i < 3; ++i) {
    for (int64_t o = 0; o < g.out[i]; ++o) {
      bool reaches = false;
      for (int64_t k = 0; k < g.kernel[i] && !reaches; ++k) {
        const int64_t p = o * g.strides[i] - g.pads_begin[i] + k * g.dilations[i];
        reaches = p >= 0 && p < g.in[i];
      }
      if (!reaches) return false;
    }
  }
  return true;
}

// The larger of a and b, a NaN on either side kept (the reference's rule: a
// window holding a NaN gives NaN). Side-effect free, so loops of it vectorise
// as a compare and a blend.
template <typename T>
inline T MaxKeepNan(T a, T b) {
  return (b > a || b != b) ? b : a;
}

// MaxKeepNan for a loop the compiler leaves scalar: as written, a compare
// and a branch, which random data mispredicts half the time (the edge
// columns of MaxPoolPlaneFlatBody: 40% of [1,480,14,14]'s time); here the
// same choice as masks, with SSE2 (x86-64's baseline).
#if defined(__x86_64__)
inline float MaxKeepNanScalar(float a, float b) {
  const __m128 va = _mm_set_ss(a), vb = _mm_set_ss(b);
  const __m128 take = _mm_or_ps(_mm_cmpgt_ss(vb, va), _mm_cmpunord_ss(vb, vb));
  return _mm_cvtss_f32(_mm_or_ps(_mm_and_ps(take, vb), _mm_andnot_ps(take, va)));
}
inline double MaxKeepNanScalar(double a, double b) {
  const __m128d va = _mm_set_sd(a), vb = _mm_set_sd(b);
  const __m128d take = _mm_or_pd(_mm_cmpgt_sd(vb, va), _mm_cmpunord_sd(vb, vb));
  return _mm_cvtsd_f64(_mm_or_pd(_mm_and_pd(take, vb), _mm_andnot_pd(take, va)));
}
#else
template <typename T>
inline T MaxKeepNanScalar(T a, T b) {
  return MaxKeepNan(a, b);
}
#endif

// The input rows of output row (od, oh)'s window that lie inside X, into
// rows[0..n) (n >= 1: every window reaches X, EveryWindowReachesX); at most
// 64 (FitsSeparable).
template <typename T>
[[gnu::always_inline]] inline int WindowRows(const T* plane, const WindowGeometry& g, int64_t od, int64_t oh,
                                             const T** rows) {
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
  rows[0] = rows[1] = plane;  // (read before written, to the compiler's eye: this quiets -Wmaybe-uninitialized)
  int n = 0;
  for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
    const int64_t id = od * g.strides[0] - g.pads_begin[0] + kd * g.dilations[0];
    if (id < 0 || id >= D) continue;
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
      const int64_t ih = oh * g.strides[1] - g.pads_begin[1] + kh * g.dilations[1];
      if (ih >= 0 && ih < H) rows[n++] = plane + (id * H + ih) * W;
    }
  }
  return n;
}

// MaxPool of one plane for float types without Indices, separably: for each
// output row, the max down the window's input rows into `row` (X's columns,
// bordered by -inf where the window reaches into the padding), then the max
// along `row` across the window's columns. Both run along rows, with no
// bounds check and nothing indexed per tap, and vectorise (the strided one
// too, through shuffles). A window's max does not depend on the order its
// taps are taken in, and every window has a tap inside X
// (EveryWindowReachesX), so -inf never stands for a whole window: the result
// is the reference's, NaN included. (Before, each of a 3x3 window's nine taps
// made its own pass over the output row: [1,192,28,28] at stride 1 took 378
// us, ten times its memory bound.)
template <typename T>
[[gnu::always_inline]] inline void MaxPoolPlaneBody(const T* plane, const WindowGeometry& g, T* __restrict y,
                                                    T* __restrict row) {
  const int64_t W = g.in[2], OW = g.out[2];
  const int64_t sw = g.strides[2], dw = g.dilations[2], kw = g.kernel[2], pw = g.pads_begin[2];
  const int64_t span = (OW - 1) * sw + (kw - 1) * dw + 1;
  const int64_t lo = std::min(pw, span), cols = std::clamp<int64_t>(span - pw, 0, W);
  T* __restrict in_row = row + lo;
  for (int64_t od = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      // The window's rows inside X (at least one), then their max in one
      // pass for the first two and one more pass per further row.
      const T* rows[64];
      const int n = WindowRows(plane, g, od, oh, rows);
      if (n == 1) {
        std::copy(rows[0], rows[0] + cols, in_row);
      } else {
        const T* __restrict r0 = rows[0];
        const T* __restrict r1 = rows[1];
        for (int64_t j = 0; j < cols; ++j) in_row[j] = MaxKeepNan(r0[j], r1[j]);
        for (int i = 2; i < n; ++i) {
          const T* __restrict ri = rows[i];
          for (int64_t j = 0; j < cols; ++j) in_row[j] = MaxKeepNan(in_row[j], ri[j]);
        }
      }
      T* __restrict yr = y + (od * g.out[1] + oh) * OW;
      if (kw == 3 && dw == 1 && sw <= 2) {  // the common windows, in one pass
        if (sw == 1) {
          for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = MaxKeepNan(MaxKeepNan(row[ow], row[ow + 1]), row[ow + 2]);
        } else {
          for (int64_t ow = 0; ow < OW; ++ow) {
            yr[ow] = MaxKeepNan(MaxKeepNan(row[2 * ow], row[2 * ow + 1]), row[2 * ow + 2]);
          }
        }
        continue;
      }
      for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = row[ow * sw];
      for (int64_t k = 1; k < kw; ++k) {
        const T* __restrict r = row + k * dw;
        for (int64_t ow = 0; ow < OW; ++ow) yr[ow] = MaxKeepNan(yr[ow], r[ow * sw]);
      }
    }
}

// Narrow planes at stride 1 whose output keeps the width (the 3x3, pad 1
// pools of inception blocks on 28x28 to 7x7 planes): there each row loop of
// MaxPoolPlaneBody was mostly its tail ([1,832,7,7]: 205 us, about 0.25 us a
// plane), so the plane is taken as one flat row. The max along rows runs
// over all of it at once, `h`; a window that runs past a row's end is wrong
// only in the first pw and last kw - 1 - pw columns, which are then redone
// from their own row. The max down the window's rows then runs over the run
// of output rows that see all kh rows as one flat stretch, and row by row
// at the top and bottom. The same taps as the reference's, in another order:
// the same bits, NaN included.
bool FitsFlat(const WindowGeometry& g) {
  return g.in[0] == 1 && g.kernel[0] == 1 && g.strides[1] == 1 && g.strides[2] == 1 && g.dilations[1] == 1 &&
         g.dilations[2] == 1 && g.out[2] == g.in[2] && g.in[2] >= g.kernel[2] && g.in[2] < 32;
}

template <typename T>
[[gnu::always_inline]] inline void MaxPoolPlaneFlatBody(const T* __restrict x, const WindowGeometry& g,
                                                        T* __restrict y, T* __restrict h) {
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], kh = g.kernel[1], kw = g.kernel[2];
  const int64_t ph = g.pads_begin[1], pw = g.pads_begin[2], right = kw - 1 - pw, n = H * W;
  // Along the rows, flat: h[i] is the max of x[i - pw .. i + right].
  if (kw == 3) {
    for (int64_t i = pw; i < n - right; ++i) h[i] = MaxKeepNan(MaxKeepNan(x[i - pw], x[i - pw + 1]), x[i - pw + 2]);
  } else {
    for (int64_t i = pw; i < n - right; ++i) h[i] = x[i - pw];
    for (int64_t t = 1; t < kw; ++t) {
      const T* __restrict xt = x + t - pw;
      for (int64_t i = pw; i < n - right; ++i) h[i] = MaxKeepNan(h[i], xt[i]);
    }
  }
  // Each row's edge columns, from that row's taps alone.
  for (int64_t r = 0; r < H; ++r) {
    const T* xr = x + r * W;
    for (int64_t c = 0; c < W; c = (c + 1 == pw && W - right > pw) ? W - right : c + 1) {
      if (c >= pw && c < W - right) continue;  // an interior column (W - right <= pw: every column is an edge)
      const int64_t t0 = std::max<int64_t>(0, pw - c), t1 = std::min<int64_t>(kw, W - c + pw);
      T m = xr[c - pw + t0];
      for (int64_t t = t0 + 1; t < t1; ++t) m = MaxKeepNanScalar(m, xr[c - pw + t]);
      h[r * W + c] = m;
    }
  }
  // Down the rows: output rows [a, b) see all kh rows.
  const int64_t a = std::min(OH, ph), b = std::max(a, std::min(OH, H - kh + ph + 1));
  if (b > a) {
    const T* __restrict h0 = h + (a - ph) * W;
    T* __restrict ya = y + a * W;
    const int64_t len = (b - a) * W;
    if (kh == 3) {
      for (int64_t j = 0; j < len; ++j) ya[j] = MaxKeepNan(MaxKeepNan(h0[j], h0[j + W]), h0[j + 2 * W]);
    } else {
      for (int64_t j = 0; j < len; ++j) ya[j] = h0[j];
      for (int64_t k = 1; k < kh; ++k) {
        const T* __restrict hk = h0 + k * W;
        for (int64_t j = 0; j < len; ++j) ya[j] = MaxKeepNan(ya[j], hk[j]);
      }
    }
  }
  for (int64_t oh = 0; oh < OH; ++oh) {
    if (oh >= a && oh < b) continue;
    const int64_t r0 = std::max<int64_t>(0, oh - ph), r1 = std::min<int64_t>(H, oh - ph + kh);
    T* __restrict yr = y + oh * W;
    const T* __restrict hr = h + r0 * W;
    for (int64_t j = 0; j < W; ++j) yr[j] = hr[j];
    for (int64_t r = r0 + 1; r < r1; ++r) {
      const T* __restrict hn = h + r * W;
      for (int64_t j = 0; j < W; ++j) yr[j] = MaxKeepNan(yr[j], hn[j]);
    }
  }
}

// Floats of slack past each row of MaxPoolPlaneNarrowAvx2's buffer: it loads
// whole vectors past a row's last window and stores only the lanes it owns.
constexpr int64_t kRowSlack = 32;

#if defined(__x86_64__)
// MaxKeepNan, 8 lanes: b where b > a or b is NaN, else a.
[[gnu::target("avx2")]] inline __m256 MaxKeepNan8(__m256 a, __m256 b) {
  return _mm256_blendv_ps(a, b, _mm256_or_ps(_mm256_cmp_ps(b, a, _CMP_GT_OQ), _mm256_cmp_ps(b, b, _CMP_UNORD_Q)));
}

// Lanes [0, n) of 8 set, for maskload and maskstore.
[[gnu::target("avx2")]] inline __m256i FirstLanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<int64_t>(n, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// MaxPoolPlaneBody for 2- and 3-wide windows at stride 1 or 2 (the pools of
// resnets and inceptions), with the tails masked. On narrow planes the
// compiler's loops were mostly their scalar tails, each tap a compare and a
// branch that random data mispredicts half the time ([1,832,14,14] to 7x7
// at stride 2: 255 us, 0.3 us a plane). Here a row's tail is one vector:
// loads from X are masked (nothing past its end is touched), loads from a
// row run into its kRowSlack, a store runs into what is written after it
// (no masked stores: Zen 2 microcodes them), and the last vector of the
// plane's output is stored lane by lane. A `group` of output rows at a time
// is taken down the window first, into `rows` (one row of `stride` floats
// per output row, bordered by -inf that no store touches), then along: a
// load right after the stores it spans cannot be forwarded from them, and
// stalled each row's second pass when the two ran row by row on narrow
// planes (googlenet's [1,832,14,14] pool to 7x7: 111 -> 86 us in the model).
// A group fills at most 16 KiB, half of L1. Rows wider than 64 go one at
// a time (group 1): there the stall is a small part of a row, and grouped,
// resnet18's [1,64,112,112] pool took 228 us in the model against 195 row
// by row (on a Zen 5 core alone, 106 against 109). The same taps in the same order as
// MaxPoolPlaneBody: the same bits.
[[gnu::target("avx2")]] void MaxPoolPlaneNarrowAvx2(const float* plane, const WindowGeometry& g, float* y, float* rows,
                                                    int64_t stride, int64_t group) {
  const int64_t W = g.in[2], OW = g.out[2], sw = g.strides[2], pw = g.pads_begin[2];
  const int64_t kw = g.kernel[2], span = (OW - 1) * sw + kw;
  const int64_t lo = std::min(pw, span), cols = std::clamp<int64_t>(span - pw, 0, W);
  const __m256i cols_tail = FirstLanes(cols % 8);
  const __m256 minus_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  const int64_t cols_whole = cols - cols % 8, out_whole = OW - OW % 8, out_rows = g.out[0] * g.out[1];
  const int64_t plane_out = out_rows * OW;
  for (int64_t first = 0; first < out_rows; first += group) {
    const int64_t last = std::min(out_rows, first + group);
    for (int64_t o = first; o < last; ++o) {
      const float* in[64];
      const int n = WindowRows(plane, g, o / g.out[1], o % g.out[1], in);
      float* in_row = rows + (o - first) * stride + lo;
      for (int64_t j = 0; j < cols_whole; j += 8) {
        __m256 m = _mm256_loadu_ps(in[0] + j);
        for (int i = 1; i < n; ++i) m = MaxKeepNan8(m, _mm256_loadu_ps(in[i] + j));
        _mm256_storeu_ps(in_row + j, m);
      }
      if (cols_whole < cols) {
        // Lanes past X's columns become -inf, the border they stand on (or
        // columns past the last window, which no window reads).
        __m256 m = _mm256_maskload_ps(in[0] + cols_whole, cols_tail);
        for (int i = 1; i < n; ++i) m = MaxKeepNan8(m, _mm256_maskload_ps(in[i] + cols_whole, cols_tail));
        _mm256_storeu_ps(in_row + cols_whole, _mm256_blendv_ps(minus_inf, m, _mm256_castsi256_ps(cols_tail)));
      }
    }
    // Along each row: 8 outputs a step, each the max of row[s*ow .. s*ow + kw).
    for (int64_t o = first; o < last; ++o) {
      const float* row = rows + (o - first) * stride;
      float* yr = y + o * OW;
      for (int64_t ow = 0; ow < OW; ow += 8) {
        const float* r = row + ow * sw;
        __m256 m;
        if (sw == 1) {
          m = MaxKeepNan8(_mm256_loadu_ps(r), _mm256_loadu_ps(r + 1));
          if (kw == 3) m = MaxKeepNan8(m, _mm256_loadu_ps(r + 2));
        } else {
          // Even and odd columns of r[0..16) and the evens of r[2..18), each
          // in the order shuffle_ps leaves them (pairs of lanes swapped across
          // the halves), put in order once after the max.
          const __m256 a = _mm256_loadu_ps(r), b = _mm256_loadu_ps(r + 8);
          m = MaxKeepNan8(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
          if (kw == 3) {
            const __m256 c = _mm256_loadu_ps(r + 2), d = _mm256_loadu_ps(r + 10);
            m = MaxKeepNan8(m, _mm256_shuffle_ps(c, d, _MM_SHUFFLE(2, 0, 2, 0)));
          }
          m = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), _MM_SHUFFLE(3, 1, 2, 0)));
        }
        if (ow < out_whole || (o * OW + ow + 8) <= plane_out) {
          _mm256_storeu_ps(yr + ow, m);  // a row's tail runs into the next rows, written after it
        } else {
          alignas(32) float tail[8];  // not past the plane's end: Y's next plane may be another thread's
          _mm256_store_ps(tail, m);
          std::copy(tail, tail + (OW - ow), yr + ow);
        }
      }
    }
  }
}

// dense_pool.cc is built for baseline x86-64: 4-wide SSE compares and blends.
[[gnu::target("avx2")]] void MaxPoolPlaneAvx2(const float* plane, const WindowGeometry& g, float* y, float* row) {
  MaxPoolPlaneBody(plane, g, y, row);
}
[[gnu::target("avx2")]] void MaxPoolPlaneFlatAvx2(const float* plane, const WindowGeometry& g, float* y, float* h) {
  MaxPoolPlaneFlatBody(plane, g, y, h);
}

// Whether the flat body's planes keep their height as well as their width
// (the "same" pools of inception blocks): then output element i and input
// element i are the same position, and planes can run back to back as one
// stretch (MaxPoolStretchAvx2).
bool FitsStretch(const WindowGeometry& g) { return FitsFlat(g) && g.out[1] == g.in[1]; }

// A lane's position counter that wraps at `period` (its lanes all below it),
// moved on by `step` (below period too): one subtraction suffices.
[[gnu::target("avx2")]] inline __m256i WrapAdvance(__m256i v, __m256i step, __m256i period, __m256i period_m1) {
  v = _mm256_add_epi32(v, step);
  return _mm256_sub_epi32(v, _mm256_and_si256(period, _mm256_cmpgt_epi32(v, period_m1)));
}

// Lanes 0..7's places in a counter that wraps at `period`, from 0.
[[gnu::target("avx2")]] inline __m256i WrapStart(int64_t period) {
  alignas(32) int32_t v[8];
  for (int l = 0; l < 8; ++l) v[l] = static_cast<int32_t>(l % period);
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(v));
}

[[gnu::target("avx2")]] inline __m256i Splat32(int64_t v) { return _mm256_set1_epi32(static_cast<int32_t>(v)); }

// The max of m and a next tap v: MaxKeepNan8, or where no NaN can be met
// vmaxps (v > m ? v : m, the same choice).
template <bool kKeepNan>
[[gnu::target("avx2")]] inline __m256 StretchMax(__m256 m, __m256 v) {
  if constexpr (kKeepNan) return MaxKeepNan8(m, v);
  return _mm256_max_ps(v, m);
}

// One vector of MaxPoolStretchAvx2's pass along the rows: h[i..i+8) from
// x's taps, those outside their row -inf (tap t inside for lo[t] < col <
// hi[t]). kMasked near the stretch's ends, where a tap's vector would
// reach outside X: there loads are masked, lanes past `in_range` too.
template <bool kKeepNan, int KW, int PW, bool kMasked>
[[gnu::target("avx2"), gnu::always_inline]] inline void StretchRowStep(const float* x, int64_t i, int64_t kw,
                                                                       int64_t pw, __m256i col, const __m256i* lo,
                                                                       const __m256i* hi, __m256i in_range,
                                                                       float* h, __m256i& nan_seen) {
  const __m256 minus_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  if (KW) kw = KW;
  if (PW >= 0) pw = PW;
  __m256 m = minus_inf;
  for (int64_t t = 0; t < kw; ++t) {
    const float* src = x + (i - pw + t);
    // Taps left of the column can fall off the row's start, those right of it off its end.
    const __m256i ok = t < pw ? _mm256_cmpgt_epi32(col, lo[t]) : t > pw ? _mm256_cmpgt_epi32(hi[t], col) : in_range;
    const __m256 v = kMasked ? _mm256_maskload_ps(src, _mm256_and_si256(ok, in_range)) : _mm256_loadu_ps(src);
    m = StretchMax<kKeepNan>(m, t == pw ? v : _mm256_blendv_ps(minus_inf, v, _mm256_castsi256_ps(ok)));
  }
  if constexpr (!kKeepNan) {  // every element of X is some lane's own column once
    const __m256 own = kMasked ? _mm256_maskload_ps(x + i, in_range) : _mm256_loadu_ps(x + i);
    nan_seen = _mm256_or_si256(nan_seen, _mm256_castps_si256(_mm256_cmp_ps(own, own, _CMP_UNORD_Q)));
  }
  _mm256_storeu_ps(h + i, m);
}

// MaxPool of `planes` whole planes that keep their size (FitsStretch), as
// one flat stretch of n = planes * H * W elements. Pooled plane by plane,
// a 7x7 plane's six vectors came with each row's edge columns redone one at
// a time, and the loops' tails ([1,832,7,7]: 44 us against a 10.7 us
// bound). Here every vector is whole: each lane knows its column and its
// place in the plane (counters that wrap), and a tap outside its row or
// plane reads as -inf, which a max never keeps (every window has a tap
// inside X). First along the rows into `h` (n floats, with room before and
// after for the taps of the rows above and below, set once and never
// written), then down them into `y`. The same taps in the same order as
// MaxPoolPlaneFlatBody, so the same bits. kKeepNan = false takes a plain
// vmaxps, whose choice is MaxKeepNan's wherever no NaN is in sight, and
// says whether one was in X (the caller then reruns with kKeepNan = true).
// KW and KH fix the window's size at compile time (0: as g says), so that
// the tap loops unroll: with them at run time, [1,256,28,28] took 2.5x as
// long as plane by plane.
template <bool kKeepNan, int KW, int KH, int PW, int PH>
[[gnu::target("avx2")]] bool MaxPoolStretchAvx2(const float* x, const WindowGeometry& g, float* __restrict y,
                                                int64_t planes, float* __restrict h) {
  const int64_t H = g.in[1], W = g.in[2], P = H * W, n = planes * P;
  const int64_t kh = KH ? KH : g.kernel[1], kw = KW ? KW : g.kernel[2];
  const int64_t ph = PH >= 0 ? PH : g.pads_begin[1], pw = PW >= 0 ? PW : g.pads_begin[2], right = kw - 1 - pw;
  const __m256 minus_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), all = _mm256_set1_epi32(-1);
  // Tap t of column c reads column c - pw + t: inside the row for pw - t <= c < W + pw - t.
  __m256i tap_lo[32], tap_hi[32];
  for (int64_t t = 0; t < kw; ++t) tap_lo[t] = Splat32(pw - t - 1), tap_hi[t] = Splat32(W + pw - t);
  __m256i col = WrapStart(W);
  const __m256i col_step = Splat32(8 % W), col_period = Splat32(W), col_period_m1 = Splat32(W - 1);
  __m256i nan_seen = _mm256_setzero_si256();
  // Vectors [body_begin, body_end) keep every tap inside the stretch.
  const int64_t body_begin = std::min(n, (pw + 7) / 8 * 8);
  const int64_t body_end = std::max(body_begin, n - 8 - right >= 0 ? (n - 8 - right) / 8 * 8 + 8 : 0);
  int64_t i = 0;
  for (; i < body_begin; i += 8) {
    StretchRowStep<kKeepNan, KW, PW, true>(x, i, kw, pw, col, tap_lo, tap_hi,
                                       _mm256_cmpgt_epi32(Splat32(n - i), lane), h, nan_seen);
    col = WrapAdvance(col, col_step, col_period, col_period_m1);
  }
  for (; i < body_end; i += 8) {
    StretchRowStep<kKeepNan, KW, PW, false>(x, i, kw, pw, col, tap_lo, tap_hi, all, h, nan_seen);
    col = WrapAdvance(col, col_step, col_period, col_period_m1);
  }
  for (; i < n; i += 8) {
    StretchRowStep<kKeepNan, KW, PW, true>(x, i, kw, pw, col, tap_lo, tap_hi,
                                       _mm256_cmpgt_epi32(Splat32(n - i), lane), h, nan_seen);
    col = WrapAdvance(col, col_step, col_period, col_period_m1);
  }
  if constexpr (!kKeepNan) {
    if (!_mm256_testz_si256(nan_seen, nan_seen)) return true;
  }
  // Tap k of position p in its plane reads row p / W - ph + k: inside the plane for (ph - k) * W <= p < (H + ph - k) * W.
  __m256i row_lo[64], row_hi[64];
  for (int64_t k = 0; k < kh; ++k) row_lo[k] = Splat32((ph - k) * W - 1), row_hi[k] = Splat32((H + ph - k) * W);
  __m256i pos = WrapStart(P);
  const __m256i pos_step = Splat32(8 % P), pos_period = Splat32(P), pos_period_m1 = Splat32(P - 1);
  for (i = 0; i < n; i += 8) {
    __m256 m = minus_inf;
    for (int64_t k = 0; k < kh; ++k) {
      const __m256 v = _mm256_loadu_ps(h + i + (k - ph) * W);
      if (k == ph) {  // the lane's own row
        m = StretchMax<kKeepNan>(m, v);
        continue;
      }
      // Rows above can fall off the plane's top, rows below off its bottom.
      const __m256i ok = k < ph ? _mm256_cmpgt_epi32(pos, row_lo[k]) : _mm256_cmpgt_epi32(row_hi[k], pos);
      m = StretchMax<kKeepNan>(m, _mm256_blendv_ps(minus_inf, v, _mm256_castsi256_ps(ok)));
    }
    if (i + 8 <= n) {
      _mm256_storeu_ps(y + i, m);
    } else {  // the stretch's last vector: its lanes past n are another stretch's (or past Y's end)
      alignas(32) float tail[8];
      _mm256_store_ps(tail, m);
      std::copy(tail, tail + (n - i), y + i);
    }
    pos = WrapAdvance(pos, pos_step, pos_period, pos_period_m1);
  }
  return false;
}

// MaxPoolStretchAvx2 with NaNs kept only where X has one; KW, KH, PW, PH
// fix the window and its leading pads at compile time (-1 / 0: as g says).
template <int KW, int KH, int PW, int PH>
[[gnu::target("avx2")]] void MaxPoolStretchAvx2Sized(const float* x, const WindowGeometry& g, float* y,
                                                     int64_t planes, float* h) {
  if (MaxPoolStretchAvx2<false, KW, KH, PW, PH>(x, g, y, planes, h)) {
    MaxPoolStretchAvx2<true, KW, KH, PW, PH>(x, g, y, planes, h);
  }
}

// The "same" 3x3 window of inception blocks: 2-D, 3x3, stride 1, pads of
// 1, no dilation, the plane keeps its size.
bool SameThreeByThreeWindow(const WindowGeometry& g) {
  return g.in[0] == 1 && g.kernel[0] == 1 && g.kernel[1] == 3 && g.kernel[2] == 3 && g.strides[1] == 1 &&
         g.strides[2] == 1 && g.dilations[1] == 1 && g.dilations[2] == 1 && g.pads_begin[1] == 1 &&
         g.pads_begin[2] == 1 && g.out[1] == g.in[1] && g.out[2] == g.in[2];
}

// Whether such a pool runs dense_maxpool_same3x3.h's plane-at-a-time
// kernel (planes it fits), or its 512-bit stretch (planes up to
// kSame3x3StretchMaxPlane).
bool SameThreeByThree(const WindowGeometry& g) {
  return SameThreeByThreeWindow(g) && dense::MaxPoolSame3x3Fits(g.in[1], g.in[2]);
}
bool SameThreeByThreeWide(const WindowGeometry& g) {
  return SameThreeByThreeWindow(g) && g.in[1] * g.in[2] <= dense::kSame3x3StretchMaxPlane;
}

// Floats of MaxPoolStretchAvx2's buffer for `planes` planes, and where its
// `h` starts in it (after the taps of the rows above the first).
int64_t StretchFront(const WindowGeometry& g) { return g.pads_begin[1] * g.in[2]; }
int64_t StretchBufferSize(const WindowGeometry& g, int64_t planes) {
  const int64_t n = planes * g.in[1] * g.in[2];
  return StretchFront(g) + (n + 7) / 8 * 8 + (g.kernel[1] - 1 - g.pads_begin[1]) * g.in[2] + 8;
}
#endif

// Whether a plane's windows fit MaxPoolPlaneBody's list of rows.
bool FitsSeparable(const WindowGeometry& g) { return g.kernel[0] * g.kernel[1] <= 64; }

#if defined(__x86_64__)
// Whether eight planes at a time run a pool (MaxPoolEightAvx2): 2-D, 2x2 or
// 3x3 windows at stride 2, no dilation, output rows of at most 8. On wider
// planes the separable bodies share a window's work with its neighbours
// and stay ahead (ops-debug profile, 4 rounds alternating: [1,480,28,28] 3x3
// to 14x14 64 against 69 us, [1,192,56,56] 89 against 91).
bool FitsEight(const WindowGeometry& g) {
  return g.in[0] == 1 && g.kernel[0] == 1 && (g.kernel[1] == 2 || g.kernel[1] == 3) && g.kernel[2] == g.kernel[1] &&
         g.strides[1] == 2 && g.strides[2] == 2 && g.dilations[1] == 1 && g.dilations[2] == 1 && g.out[2] <= 8;
}

// The strided pools of inception networks on small planes, eight planes at
// a time with the channels in the lanes (dense_lanes8.h, as the depthwise
// convolution's dense_depthwise8.h): the planes transposed into one
// -inf-bordered buffer of [rows][columns][8], each output the max of its
// window's vectors, the outputs transposed back. A plane at a time, a 7- or
// 14-wide output row is mostly the set-up of its vectors: googlenet's
// [1,832,14,14] 2x2 pool to 7x7 took 54 us in the model against
// onnxruntime's 16 (channels in the lanes, NCHWc). Here (ops-debug profile,
// 4 rounds alternating) it takes 31 us against 46, a [1,512,14,14] 3x3 one
// 24 against 30. The taps are taken in the reference's order (rows, then
// columns), MaxKeepNan8 keeps the first of equal values and any NaN: the
// reference's bits.
[[gnu::target("avx2")]] void MaxPoolEightAvx2(const float* x, int64_t x_plane, const WindowGeometry& g, float* y,
                                              int64_t y_plane, std::vector<float>& scratch) {
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2], k = g.kernel[1];
  const int64_t ph = g.pads_begin[1], pw = g.pads_begin[2], P = OH * OW;
  const int64_t PH = std::max(H + ph, (OH - 1) * 2 + k), PW = std::max(W + pw, (OW - 1) * 2 + k);
  const int64_t in_floats = PH * PW * 8, out_floats = (P + 7) / 8 * 8 * 8;
  scratch.resize(static_cast<size_t>(in_floats + out_floats));
  float* in = scratch.data();
  float* out = in + in_floats;
  std::fill(out + P * 8, out + out_floats, 0.0f);  // read by the transpose back, never stored
  dense::InterleavePlanes8(x, x_plane, H, W, ph, pw, PH, PW, -std::numeric_limits<float>::infinity(), in);
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float* r0 = in + 2 * oh * PW * 8;
    float* o = out + oh * OW * 8;
    for (int64_t ow = 0; ow < OW; ++ow) {
      const float* t = r0 + 2 * ow * 8;
      __m256 m = _mm256_loadu_ps(t);
      m = MaxKeepNan8(m, _mm256_loadu_ps(t + 8));
      if (k == 3) m = MaxKeepNan8(m, _mm256_loadu_ps(t + 16));
      for (int64_t r = 1; r < k; ++r) {
        const float* tr = t + r * PW * 8;
        m = MaxKeepNan8(m, _mm256_loadu_ps(tr));
        m = MaxKeepNan8(m, _mm256_loadu_ps(tr + 8));
        if (k == 3) m = MaxKeepNan8(m, _mm256_loadu_ps(tr + 16));
      }
      _mm256_storeu_ps(o + ow * 8, m);
    }
  }
  dense::DeinterleavePlanes8(out, P, y, y_plane);
}
#endif

// MaxPool of planes [begin, end) of X for float types without Indices,
// each by the fastest body that fits, with `buffer` set up once for all.
template <typename T>
void MaxPoolPlanesSeparable(const T* x, const WindowGeometry& g, T* y, int64_t begin, int64_t end,
                            std::vector<T>& buffer) {
  const int64_t in_sz = g.in_size(), out_sz = g.out_size();
  const bool avx2 = std::is_same_v<T, float> && dense::HasAvx2();
#if defined(__x86_64__)
  if constexpr (std::is_same_v<T, float>) {
    if (avx2 && dense::WideBlocks() && dense::MaxPoolS2Avx512Fits(g)) {
      // Stride 2 along the rows in 512-bit vectors, straight from X
      // (dense_maxpool_s2.h), narrow rows two to a vector.
      dense::MaxPoolS2PlanesAvx512(x + begin * in_sz, g, y + begin * out_sz, end - begin);
      return;
    }
    if (avx2 && FitsEight(g)) {
      // Whole runs of eight planes; the rest a plane at a time below.
      for (; begin + 8 <= end; begin += 8) MaxPoolEightAvx2(x + begin * in_sz, in_sz, g, y + begin * out_sz, out_sz, buffer);
      if (begin == end) return;
    }
    if (avx2 && SameThreeByThreeWide(g) && dense::WideBlocks()) {
      // The block's planes as one stretch in 512-bit vectors; with a NaN in
      // them, the stretch body, which keeps it.
      const int64_t planes = end - begin;
      buffer.resize(static_cast<size_t>(std::max(planes * in_sz, StretchBufferSize(g, planes))));
      if (!dense::MaxPoolSame3x3StretchAvx512(x + begin * in_sz, planes, g.in[1], g.in[2], y + begin * out_sz,
                                              buffer.data())) {
        std::fill(buffer.begin(), buffer.end(), 0.0f);
        MaxPoolStretchAvx2Sized<3, 3, 1, 1>(x + begin * in_sz, g, y + begin * out_sz, planes,
                                            buffer.data() + StretchFront(g));
      }
      return;
    }
    if (avx2 && SameThreeByThree(g)) {
      // A plane at a time (dense_maxpool_same3x3.h); one with a NaN in it
      // by the stretch body, which keeps the NaN.
      buffer.assign(static_cast<size_t>(StretchBufferSize(g, 1)), 0.0f);
      float* h = buffer.data() + StretchFront(g);
      for (int64_t nc = begin; nc < end; ++nc) {
        if (!dense::MaxPoolSame3x3PlaneAvx2(x + nc * in_sz, g.in[1], g.in[2], y + nc * out_sz, h)) {
          MaxPoolStretchAvx2Sized<3, 3, 1, 1>(x + nc * in_sz, g, y + nc * out_sz, 1, h);
        }
      }
      return;
    }
    if (avx2 && FitsStretch(g)) {
      // Planes in stretches of about 16 KiB, so that `h` is still in L1 when read back.
      const int64_t per = std::max<int64_t>(1, 4096 / in_sz);
      buffer.assign(static_cast<size_t>(StretchBufferSize(g, per)), 0.0f);
      float* h = buffer.data() + StretchFront(g);
      for (int64_t nc = begin; nc < end; nc += per) {
        const int64_t planes = std::min(per, end - nc);
        if (g.kernel[1] == 3 && g.kernel[2] == 3 && g.pads_begin[1] == 1 && g.pads_begin[2] == 1) {
          MaxPoolStretchAvx2Sized<3, 3, 1, 1>(x + nc * in_sz, g, y + nc * out_sz, planes, h);
        } else {
          MaxPoolStretchAvx2Sized<0, 0, -1, -1>(x + nc * in_sz, g, y + nc * out_sz, planes, h);
        }
      }
      return;
    }
  }
#endif
  if (FitsFlat(g)) {
    buffer.resize(static_cast<size_t>(g.in[1] * g.in[2]));
#if defined(__x86_64__)
    if constexpr (std::is_same_v<T, float>) {
      if (avx2) {
        for (int64_t nc = begin; nc < end; ++nc) {
          MaxPoolPlaneFlatAvx2(x + nc * in_sz, g, y + nc * out_sz, buffer.data());
        }
        return;
      }
    }
#endif
    for (int64_t nc = begin; nc < end; ++nc) MaxPoolPlaneFlatBody(x + nc * in_sz, g, y + nc * out_sz, buffer.data());
    return;
  }
  // [0, span): the padded columns a row's windows read; outside X they stay -inf
  // (the bodies store only inside X's columns, so one fill serves every plane).
  const int64_t span = (g.out[2] - 1) * g.strides[2] + (g.kernel[2] - 1) * g.dilations[2] + 1;
  constexpr T kLowest = -std::numeric_limits<T>::infinity();
#if defined(__x86_64__)
  if constexpr (std::is_same_v<T, float>) {
    const int64_t kw = g.kernel[2], sw = g.strides[2];
    if (avx2 && (kw == 2 || kw == 3) && g.dilations[2] == 1 && (sw == 1 || sw == 2)) {
      // Rows up to 64 wide in groups (MaxPoolPlaneNarrowAvx2); wider ones row by row, as their reads from X
      // then overlap the stores. googlenet's [1,192,56,56] pool had taken 148 us in groups, 135 row by row
      // (2 Zen 2 cores); on one Zen 5 core, 97 against 128 (ops-debug profile --mode kernel, 5 rounds
      // alternating; [1,64,112,112] 106 against 109).
      const int64_t stride = span + kRowSlack;
      const int64_t group = span <= 64 ? std::clamp<int64_t>(4096 / stride, 1, g.out[0] * g.out[1]) : 1;
      buffer.assign(static_cast<size_t>(group * stride), kLowest);
      for (int64_t nc = begin; nc < end; ++nc) {
        MaxPoolPlaneNarrowAvx2(x + nc * in_sz, g, y + nc * out_sz, buffer.data(), stride, group);
      }
      return;
    }
  }
#endif
  buffer.assign(static_cast<size_t>(span), kLowest);
#if defined(__x86_64__)
  if constexpr (std::is_same_v<T, float>) {
    if (avx2) {
      for (int64_t nc = begin; nc < end; ++nc) MaxPoolPlaneAvx2(x + nc * in_sz, g, y + nc * out_sz, buffer.data());
      return;
    }
  }
#endif
  for (int64_t nc = begin; nc < end; ++nc) MaxPoolPlaneBody(x + nc * in_sz, g, y + nc * out_sz, buffer.data());
}

template <typename T>
Status MaxPoolTyped(KernelContext& ctx, const WindowGeometry& g) {
  using C = typename ComputeTypeOf<T>::type;
  OPSCOPE_ASSIGN_OR_RETURN(const Tensor x, ctx.in(0).Contiguous());
  const bool col_major = ctx.attrs().i("storage_order") != 0;
  const T* xp = x.data<T>();
  T* yp = ctx.out(0).data<T>();
  int64_t* ip = ctx.num_outputs() > 1 ? ctx.out(1).data<int64_t>() : nullptr;
  const int64_t in_sz = g.in_size(), out_sz = g.out_size();
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (ip == nullptr && FitsSeparable(g) && EveryWindowReachesX(g)) {
      return ctx.ParallelFor("maxpool_rows", x.dim(0) * x.dim(1), [&](int64_t begin, int64_t end) {
        thread_local std::vector<T> buffer;
        MaxPoolPlanesSeparable(xp, g, yp, begin, end, buffer);
      }, 16);
    }
  }
  return ctx.ParallelFor("maxpool", x.dim(0) * x.dim(1), [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const T* plane = xp + nc * in_sz;
      T* y = yp + nc * out_sz;
      int64_t* idx = ip ? ip + nc * out_sz : nullptr;
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            C best = std::numeric_limits<C>::lowest();
            int64_t best_at = -1;
            bool seen_nan = false;
            for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
              const int64_t id = od * g.strides[0] - g.pads_begin[0] + kd * g.dilations[0];
              if (id < 0 || id >= g.in[0]) continue;
              for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
                const int64_t ih = oh * g.strides[1] - g.pads_begin[1] + kh * g.dilations[1];
                if (ih < 0 || ih >= g.in[1]) continue;
                const T* row = plane + (id * g.in[1] + ih) * g.in[2];
                for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                  const int64_t iw = ow * g.strides[2] - g.pads_begin[2] + kw * g.dilations[2];
                  if (iw < 0 || iw >= g.in[2]) continue;
                  const C v = static_cast<C>(row[iw]);
                  if (best_at < 0 || v > best) {
                    best = v;
                    best_at = SpatialIndex(id, ih, iw, g, col_major);
                  }
                  if constexpr (!std::numeric_limits<C>::is_integer) seen_nan = seen_nan || std::isnan(v);
                }
              }
            }
            if (seen_nan) best = std::numeric_limits<C>::quiet_NaN();
            *y++ = static_cast<T>(best);
            if (idx) *idx++ = nc * in_sz + std::max<int64_t>(best_at, 0);
          }
    }
  }, 16);
}

Status MaxPoolCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(WindowGeometry g, PoolGeometry("MaxPool", ctx.in(0).shape(), ctx.attrs()));
  g = dense::As3d(g);
  switch (ctx.in(0).dtype()) {
    case DType::kF64: return MaxPoolTyped<double>(ctx, g);
    case DType::kF32: return MaxPoolTyped<float>(ctx, g);
    case DType::kF16: return MaxPoolTyped<Half>(ctx, g);
    case DType::kI8: return MaxPoolTyped<int8_t>(ctx, g);
    case DType::kU8: return MaxPoolTyped<uint8_t>(ctx, g);
    default: return UnimplementedError(std::string("MaxPool: dtype ") + DTypeName(ctx.in(0).dtype()));
  }
}

// Window bounds of output o along dimension `dim`: [lo, hi) inside X, and
// the window's extent counted when padding counts (clipped to the padded
// extent).
inline void AverageWindow(const WindowGeometry& g, int dim, int64_t o, int64_t& lo, int64_t& hi, int64_t& padded) {
  const int64_t start = o * g.strides[dim] - g.pads_begin[dim];
  const int64_t stop = start + (g.kernel[dim] - 1) * g.dilations[dim] + 1;
  lo = std::max<int64_t>(start, 0);
  hi = std::min<int64_t>(stop, g.in[dim]);
  padded = std::min<int64_t>(stop, g.in[dim] + g.pads_end[dim]) - start;
}

// AveragePool of one plane (AveragePool has no dilations). The outputs of a
// row whose windows lie inside X's columns (all but the first pw / sw and a
// few at the end) are summed a tap column at a time across the row, which
// vectorises: for each of the window's rows, then each of its columns, every
// such output adds its tap. Each output still adds its taps in the window's
// row-major order, from zero, as the edge outputs (one at a time) and the
// reference do: the same sums. (One output at a time, [1,64,112,112] 3x3
// at stride 2 took 1.5 ms against MaxPool's 0.12.)
template <typename T>
[[gnu::always_inline]] inline void AveragePoolPlaneBody(const T* plane, const WindowGeometry& g, bool include_pad,
                                                        T* __restrict y, dense::AccOf<T>* __restrict acc) {
  using C = dense::AccOf<T>;
  const int64_t W = g.in[2], OW = g.out[2], sw = g.strides[2], pw = g.pads_begin[2], kw = g.kernel[2];
  // Outputs [oa, ob): window columns [ow * sw - pw, ow * sw - pw + kw) inside [0, W).
  const int64_t oa = std::min(OW, (pw + sw - 1) / sw);
  const int64_t ob = std::max(oa, W - kw + pw >= 0 ? std::min(OW, (W - kw + pw) / sw + 1) : oa);
  for (int64_t od = 0; od < g.out[0]; ++od) {
    int64_t d0, d1, dp;
    AverageWindow(g, 0, od, d0, d1, dp);
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      int64_t h0, h1, hp;
      AverageWindow(g, 1, oh, h0, h1, hp);
      const int64_t rows = std::max<int64_t>(0, d1 - d0) * std::max<int64_t>(0, h1 - h0);
      T* __restrict yr = y + (od * g.out[1] + oh) * OW;
      auto one = [&](int64_t ow) {
        int64_t w0, w1, wp;
        AverageWindow(g, 2, ow, w0, w1, wp);
        C sum = 0;
        for (int64_t id = d0; id < d1; ++id)
          for (int64_t ih = h0; ih < h1; ++ih) {
            const T* row = plane + (id * g.in[1] + ih) * W;
            for (int64_t iw = w0; iw < w1; ++iw) sum += static_cast<C>(row[iw]);
          }
        const int64_t count = include_pad ? dp * hp * wp : rows * std::max<int64_t>(0, w1 - w0);
        yr[ow] = static_cast<T>(sum / static_cast<C>(count));
      };
      for (int64_t ow = 0; ow < oa; ++ow) one(ow);
      for (int64_t ow = oa; ow < ob; ++ow) acc[ow] = 0;
      for (int64_t id = d0; id < d1; ++id)
        for (int64_t ih = h0; ih < h1; ++ih) {
          const T* row = plane + (id * g.in[1] + ih) * W - pw;
          for (int64_t k = 0; k < kw; ++k) {
            const T* __restrict r = row + k;
            if (sw == 1) {
              for (int64_t ow = oa; ow < ob; ++ow) acc[ow] += static_cast<C>(r[ow]);
            } else {
              for (int64_t ow = oa; ow < ob; ++ow) acc[ow] += static_cast<C>(r[ow * sw]);
            }
          }
        }
      const C count = static_cast<C>(include_pad ? dp * hp * kw : rows * kw);
      for (int64_t ow = oa; ow < ob; ++ow) yr[ow] = static_cast<T>(acc[ow] / count);
      for (int64_t ow = ob; ow < OW; ++ow) one(ow);
    }
  }
}

#if defined(__x86_64__)
// dense_pool.cc is built for baseline x86-64: the row loops in 8 lanes.
[[gnu::target("avx2")]] void AveragePoolPlaneAvx2(const float* plane, const WindowGeometry& g, bool include_pad,
                                                  float* y, float* acc) {
  AveragePoolPlaneBody(plane, g, include_pad, y, acc);
}
#endif

template <typename T>
Status AveragePoolTyped(KernelContext& ctx, const WindowGeometry& g) {
  using C = dense::AccOf<T>;
  OPSCOPE_ASSIGN_OR_RETURN(const Tensor x, ctx.in(0).Contiguous());
  const bool include_pad = ctx.attrs().i("count_include_pad") != 0;
  const T* xp = x.data<T>();
  T* yp = ctx.out(0).data<T>();
  const int64_t in_sz = g.in_size(), out_sz = g.out_size();
  [[maybe_unused]] const bool avx2 = std::is_same_v<T, float> && dense::HasAvx2();
  return ctx.ParallelFor("averagepool", x.dim(0) * x.dim(1), [&](int64_t begin, int64_t end) {
    std::vector<C> acc(static_cast<size_t>(g.out[2]));
    for (int64_t nc = begin; nc < end; ++nc) {
#if defined(__x86_64__)
      if constexpr (std::is_same_v<T, float>) {
        if (avx2) {
          AveragePoolPlaneAvx2(xp + nc * in_sz, g, include_pad, yp + nc * out_sz, acc.data());
          continue;
        }
      }
#endif
      AveragePoolPlaneBody(xp + nc * in_sz, g, include_pad, yp + nc * out_sz, acc.data());
    }
  }, 16);
}

Status AveragePoolCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(WindowGeometry g, PoolGeometry("AveragePool", ctx.in(0).shape(), ctx.attrs()));
  g = dense::As3d(g);
  return DispatchFloat(ctx.in(0).dtype(), ctx.op_name(),
                       [&]<typename scalar_t>() { return AveragePoolTyped<scalar_t>(ctx, g); });
}

// ---- references -----------------------------------------------------------------------------------

// Visits every window tap (`taps`: dense::KernelTaps) of output position
// `o`: fn(inside, flat spatial input index).
template <typename Fn>
void ForEachTap(const WindowGeometry& g, const std::vector<std::vector<int64_t>>& taps, const std::vector<int64_t>& o,
                Fn fn) {
  for (const std::vector<int64_t>& kp : taps) {
    bool inside = true, in_padded = true;
    int64_t flat = 0;
    for (int i = 0; i < g.spatial(); ++i) {
      const int64_t p = o[i] * g.strides[i] - g.pads_begin[i] + kp[i] * g.dilations[i];
      inside = inside && p >= 0 && p < g.in[i];
      in_padded = in_padded && p < g.in[i] + g.pads_end[i];
      flat = flat * g.in[i] + std::clamp<int64_t>(p, 0, g.in[i] - 1);
    }
    fn(inside, in_padded, flat);
  }
}

Status MaxPoolReference(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(WindowGeometry g, PoolGeometry("MaxPool", ctx.in(0).shape(), ctx.attrs()));
  const bool col_major = ctx.attrs().i("storage_order") != 0;
  const std::vector<double> x = kernels::ToDoubles(ctx.in(0));
  const int64_t planes = ctx.in(0).dim(0) * ctx.in(0).dim(1), in_sz = g.in_size(), out_sz = g.out_size();
  std::vector<double> y(planes * out_sz);
  const std::vector<std::vector<int64_t>> taps = dense::KernelTaps(g.kernel);
  for (int64_t nc = 0; nc < planes; ++nc) {
    for (int64_t o = 0; o < out_sz; ++o) {
      double best = 0;
      int64_t best_at = 0;
      bool any = false, nan = false;
      ForEachTap(g, taps, dense::Unflatten(o, g.out), [&](bool inside, bool, int64_t flat) {
        if (!inside) return;
        const double v = x[nc * in_sz + flat];
        if (std::isnan(v)) nan = true;
        if (!any || v > best) {  // the first maximum wins
          best = v;
          best_at = flat;
          any = true;
        }
      });
      y[nc * out_sz + o] = nan ? std::numeric_limits<double>::quiet_NaN() : best;
      if (ctx.num_outputs() > 1) {
        std::vector<int64_t> p = dense::Unflatten(best_at, g.in);
        int64_t flat = 0;
        if (col_major) {
          for (int i = g.spatial() - 1; i >= 0; --i) flat = flat * g.in[i] + p[i];
        } else {
          flat = best_at;
        }
        ctx.out(1).data<int64_t>()[nc * out_sz + o] = nc * in_sz + flat;
      }
    }
  }
  kernels::FromDoubles(ctx.out(0), y);
  return Status::Ok();
}

Status AveragePoolReference(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(WindowGeometry g, PoolGeometry("AveragePool", ctx.in(0).shape(), ctx.attrs()));
  const bool include_pad = ctx.attrs().i("count_include_pad") != 0;
  const std::vector<double> x = kernels::ToDoubles(ctx.in(0));
  const int64_t planes = ctx.in(0).dim(0) * ctx.in(0).dim(1), in_sz = g.in_size(), out_sz = g.out_size();
  std::vector<double> y(planes * out_sz);
  const std::vector<std::vector<int64_t>> taps = dense::KernelTaps(g.kernel);
  for (int64_t nc = 0; nc < planes; ++nc) {
    for (int64_t o = 0; o < out_sz; ++o) {
      double sum = 0;
      int64_t count = 0;
      ForEachTap(g, taps, dense::Unflatten(o, g.out), [&](bool inside, bool in_padded, int64_t flat) {
        if (inside) sum += x[nc * in_sz + flat];
        if (inside || (include_pad && in_padded)) ++count;
      });
      y[nc * out_sz + o] = sum / static_cast<double>(count);
    }
  }
  kernels::FromDoubles(ctx.out(0), y);
  return Status::Ok();
}

// ---- GlobalAveragePool ----------------------------------------------------------------------------

Status GlobalAveragePoolInfer(InferContext& c) {
  const Shape& x = c.input(0).shape;
  if (x.rank() < 3) {
    return InvalidArgumentError("GlobalAveragePool: input X has shape " + x.ToString() +
                                "; expected [N, C, spatial...] with rank >= 3");
  }
  std::vector<int64_t> out(x.rank(), 1);
  out[0] = x[0];
  out[1] = x[1];
  c.SetOutput(0, c.input(0).dtype, Shape(out));
  return Status::Ok();
}

#if defined(__x86_64__)
// GlobalAveragePoolCpu's float planes [begin, end) with its eight partial
// sums as one vector of eight doubles: each lane adds its floats in the same
// order, then the tail, the lanes and the division as there, so the same
// bits. This file's baseline code added two doubles an instruction: 1280
// 7x7 planes (mobilenet_v2's last) took 21 us on one core.
[[gnu::target("avx512f")]] void GlobalAveragePlanesAvx512(const float* x, int64_t sp, int64_t begin, int64_t end,
                                                          float* y) {
  for (int64_t nc = begin; nc < end; ++nc) {
    const float* p = x + nc * sp;
    __m512d lanes = _mm512_setzero_pd();
    int64_t j = 0;
    for (; j + 8 <= sp; j += 8) lanes = _mm512_add_pd(lanes, _mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(p + j)));
    double acc[8];
    _mm512_storeu_pd(acc, lanes);
    for (; j < sp; ++j) acc[0] += static_cast<double>(p[j]);
    for (int l = 1; l < 8; ++l) acc[0] += acc[l];
    y[nc] = static_cast<float>(acc[0] / static_cast<double>(sp));
  }
}
#endif

Status GlobalAveragePoolCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(const Tensor x, ctx.in(0).Contiguous());
  const int64_t planes = x.dim(0) * x.dim(1), sp = planes ? x.numel() / planes : 0;
  return DispatchFloat(x.dtype(), ctx.op_name(), [&]<typename scalar_t>() {
    const scalar_t* xp = x.data<scalar_t>();
    scalar_t* yp = ctx.out(0).data<scalar_t>();
    // Planes in blocks of about "block_inputs" elements (cut at 64 planes,
    // [1,64,112,112] was one block on one thread), each summed in eight
    // partial sums combined in order, as ReduceMean's rows are
    // (reduce_ops.cc): one chain of dependent adds ran at 6x the memory bound,
    // and float32 planes average to ReduceMean's bits over the same axes.
    const int64_t grain = dense::OutputsPerBlock(ctx, sp);
#if defined(__x86_64__)
    if constexpr (std::is_same_v<scalar_t, float>) {
      if (dense::WideBlocks()) {
        return ctx.ParallelFor("globalaveragepool", planes, [&](int64_t begin, int64_t end) {
          GlobalAveragePlanesAvx512(xp, sp, begin, end, yp);
        }, grain);
      }
    }
#endif
    return ctx.ParallelFor("globalaveragepool", planes, [&](int64_t begin, int64_t end) {
      constexpr int kLanes = 8;
      for (int64_t nc = begin; nc < end; ++nc) {
        double acc[kLanes] = {};
        const scalar_t* p = xp + nc * sp;
        int64_t j = 0;
        for (; j + kLanes <= sp; j += kLanes) {
          for (int l = 0; l < kLanes; ++l) acc[l] += ToDouble(p[j + l]);
        }
        for (; j < sp; ++j) acc[0] += ToDouble(p[j]);
        for (int l = 1; l < kLanes; ++l) acc[0] += acc[l];
        yp[nc] = FromDouble<scalar_t>(acc[0] / static_cast<double>(sp));
      }
    }, grain);
  });
}

Status GlobalAveragePoolReference(KernelContext& ctx) {
  const std::vector<double> x = kernels::ToDoubles(ctx.in(0));
  const int64_t planes = ctx.in(0).dim(0) * ctx.in(0).dim(1);
  const int64_t sp = planes ? static_cast<int64_t>(x.size()) / planes : 0;
  std::vector<double> y(planes, 0.0);
  for (int64_t nc = 0; nc < planes; ++nc) {
    for (int64_t j = 0; j < sp; ++j) y[nc] += x[nc * sp + j];
    y[nc] /= static_cast<double>(sp);
  }
  kernels::FromDoubles(ctx.out(0), y);
  return Status::Ok();
}

Cost PoolCost(const OpCall& c) {
  int64_t kvol = 1;
  for (int64_t k : c.attrs().ints("kernel_shape")) kvol *= k;
  int64_t written = 0;
  for (int i = 0; i < c.num_outputs(); ++i) written += c.out(i).bytes();
  return Cost{.bytes_read = c.in(0).bytes(), .bytes_written = written,
              .flops = static_cast<double>(c.out(0).numel()) * static_cast<double>(kvol)};
}

}  // namespace

OPSCOPE_OP("MaxPool")
    .Doc("max over each window; optional Indices into X's flat storage (storage_order 0 row / 1 column major)")
    .Input("X", "T").Output("Y", "T").OptionalOutput("Indices", "I")
    .TypeConstraint("T", {DType::kF16, DType::kF32, DType::kF64, DType::kI8, DType::kU8})
    .TypeConstraint("I", {DType::kI64})
    .Attr("auto_pad", "NOTSET", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"})
    .Attr("ceil_mode", 0).Attr("dilations", std::vector<int64_t>{}).RequiredAttr("kernel_shape", AttrType::kInts)
    .Attr("pads", std::vector<int64_t>{}).Attr("storage_order", 0).Attr("strides", std::vector<int64_t>{})
    .Infer(MaxPoolInfer)
    .Cost(PoolCost)
    .Tunable("block", {16, 4, 64})
    .Reference(MaxPoolReference)
    .Kernel("cpu", MaxPoolCpu, "maxpool_cpu");

OPSCOPE_OP("AveragePool")
    .Doc("mean over each window; count_include_pad counts padding in the divisor")
    .Input("X", "T").Output("Y", "T")
    .TypeConstraint("T", {DType::kF16, DType::kF32, DType::kF64})
    .Attr("auto_pad", "NOTSET", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"})
    .Attr("ceil_mode", 0).Attr("count_include_pad", 0).RequiredAttr("kernel_shape", AttrType::kInts)
    .Attr("pads", std::vector<int64_t>{}).Attr("strides", std::vector<int64_t>{})
    .Infer(AveragePoolInfer)
    .Cost(PoolCost)
    .Tunable("block", {16, 4, 64})
    .Reference(AveragePoolReference)
    .Kernel("cpu", AveragePoolCpu, "averagepool_cpu");

OPSCOPE_OP("GlobalAveragePool")
    .Doc("mean over all spatial dims: [N, C, ...] -> [N, C, 1, ...]")
    .Input("X", "T").Output("Y", "T")
    .TypeConstraint("T", {DType::kF16, DType::kF32, DType::kF64})
    .Infer(GlobalAveragePoolInfer)
    .Cost([](const OpCall& c) {
      return Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes(),
                  .flops = static_cast<double>(c.in(0).numel())};
    })
    .Tunable("block_inputs", {32768, 8192, 131072})
    .Reference(GlobalAveragePoolReference)
    .Kernel("cpu", GlobalAveragePoolCpu, "globalaveragepool_cpu");

}  // namespace opscope
