// Conv and ConvTranspose (ONNX opset 11 semantics, current at 17), 1-D to 3-D.
// Conv runs one of three paths, each in blocks over the device's workers
// with the bias and activation (FusedConv) applied to each block as it is
// written: depthwise convolutions a direct loop; float windows wider than
// one tap with a long inner dimension dense_smallk.h's shifted GEMM on the
// padded (and, where strided, phase-split) input, nothing unfolded
// (UsesShifted); the rest tiles of im2col + GEMM (OpenBLAS, or the small-k
// kernel for a short inner dimension; 1x1 stride-1 convolutions read X as
// it is). ConvTranspose is one GEMM per (image, group) followed by col2im.
// 16-bit floats run in float. The references are direct nested loops in
// double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "core/frozen_buffer.h"
#include "ops/builtin/dense_blas.h"
#include "ops/builtin/dense_cuts.h"
#include "ops/builtin/dense_depthwise8.h"
#include "ops/builtin/dense_depthwise_rows.h"
#include "ops/builtin/dense_epilogue.h"
#include "ops/builtin/dense_smallk.h"
#include "ops/builtin/dense_util.h"
#include "ops/kernel_util.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace opscope {
namespace {

using dense::WindowGeometry;

const std::vector<DType> kConvTypes = {DType::kF16, DType::kF32, DType::kF64};

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t d : v) p *= d;
  return p;
}

// ---- geometry -------------------------------------------------------------------------------

struct ConvDims {
  int64_t n, c, m, group;
  WindowGeometry g;  // spatial geometry, N-D
};

StatusOr<std::vector<int64_t>> KernelShape(std::string_view op, const Shape& w, const Attrs& attrs) {
  std::vector<int64_t> from_w(w.dims().begin() + 2, w.dims().end());
  std::vector<int64_t> k = attrs.ints("kernel_shape");
  if (k.empty()) return from_w;
  if (k != from_w) {
    return InvalidArgumentError(std::string(op) + ": attribute kernel_shape=" + dense::Join(k) +
                                " does not match the spatial dims of W " + w.ToString());
  }
  return k;
}

Status CheckCommon(std::string_view op, const Shape& x, const Shape& w, int64_t group) {
  const std::string o(op);
  if (x.rank() < 3 || x.rank() > 5) {
    return InvalidArgumentError(o + ": input X has shape " + x.ToString() +
                                "; expected [N, C, spatial...] with 1 to 3 spatial dims");
  }
  if (w.rank() != x.rank()) {
    return InvalidArgumentError(o + ": input W has shape " + w.ToString() + " but X " + x.ToString() + " has rank " +
                                std::to_string(x.rank()) + "; W must have the same rank");
  }
  if (group < 1) return InvalidArgumentError(o + ": attribute group=" + std::to_string(group) + " must be >= 1");
  return Status::Ok();
}

StatusOr<ConvDims> ConvShapes(const Shape& x, const Shape& w, const Shape* b, const Attrs& attrs) {
  const int64_t group = attrs.i("group", 1);
  OPSCOPE_RETURN_IF_ERROR(CheckCommon("Conv", x, w, group));
  ConvDims d{x[0], x[1], w[0], group, {}};
  if (d.c % group != 0 || d.m % group != 0) {
    return InvalidArgumentError("Conv: group=" + std::to_string(group) + " must divide the input channels of X " +
                                x.ToString() + " and the output channels of W " + w.ToString());
  }
  if (w[1] != d.c / group) {
    return InvalidArgumentError("Conv: W " + w.ToString() + " has " + std::to_string(w[1]) +
                                " input channels per group; X " + x.ToString() + " with group=" +
                                std::to_string(group) + " needs " + std::to_string(d.c / group));
  }
  if (b != nullptr && (b->rank() != 1 || (*b)[0] != d.m)) {
    return InvalidArgumentError("Conv: bias B has shape " + b->ToString() + "; expected [" + std::to_string(d.m) +
                                "] (one per output channel of W " + w.ToString() + ")");
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, KernelShape("Conv", w, attrs));
  OPSCOPE_ASSIGN_OR_RETURN(d.g, dense::SlidingWindow("Conv", x, kernel, attrs, false));
  return d;
}

Shape OutShape(const ConvDims& d) {
  std::vector<int64_t> out = {d.n, d.m};
  out.insert(out.end(), d.g.out.begin(), d.g.out.end());
  return Shape(out);
}

// ConvTranspose: W is [C, M/group, k...]; the output size comes from
// output_shape, auto_pad or pads.
StatusOr<ConvDims> ConvTransposeShapes(const Shape& x, const Shape& w, const Shape* b, const Attrs& attrs) {
  const int64_t group = attrs.i("group", 1);
  OPSCOPE_RETURN_IF_ERROR(CheckCommon("ConvTranspose", x, w, group));
  ConvDims d{x[0], x[1], w[1] * group, group, {}};
  if (w[0] != d.c || d.c % group != 0) {
    return InvalidArgumentError("ConvTranspose: W " + w.ToString() + " must have " + std::to_string(d.c) +
                                " rows (the channels of X " + x.ToString() + "), divisible by group=" +
                                std::to_string(group));
  }
  if (b != nullptr && (b->rank() != 1 || (*b)[0] != d.m)) {
    return InvalidArgumentError("ConvTranspose: bias B has shape " + b->ToString() + "; expected [" +
                                std::to_string(d.m) + "] (one per output channel)");
  }
  const int n = x.rank() - 2;
  WindowGeometry& g = d.g;
  g.in.assign(x.dims().begin() + 2, x.dims().end());
  OPSCOPE_ASSIGN_OR_RETURN(g.kernel, KernelShape("ConvTranspose", w, attrs));
  auto per_dim = [&](const char* name, int64_t fallback, std::vector<int64_t>& v) -> Status {
    v = attrs.ints(name);
    if (v.empty()) v.assign(n, fallback);
    if (static_cast<int>(v.size()) != n) {
      return InvalidArgumentError("ConvTranspose: attribute " + std::string(name) + "=" + dense::Join(v) +
                                  " has " + std::to_string(v.size()) + " values; expected " + std::to_string(n));
    }
    return Status::Ok();
  };
  std::vector<int64_t> out_pad;
  OPSCOPE_RETURN_IF_ERROR(per_dim("strides", 1, g.strides));
  OPSCOPE_RETURN_IF_ERROR(per_dim("dilations", 1, g.dilations));
  OPSCOPE_RETURN_IF_ERROR(per_dim("output_padding", 0, out_pad));
  for (int i = 0; i < n; ++i) {
    if (g.strides[i] < 1 || g.dilations[i] < 1) {
      return InvalidArgumentError("ConvTranspose: strides=" + dense::Join(g.strides) + " and dilations=" +
                                  dense::Join(g.dilations) + " must be >= 1");
    }
  }
  const std::string auto_pad = attrs.s("auto_pad", "NOTSET");
  std::vector<int64_t> out_shape = attrs.ints("output_shape");
  if (!out_shape.empty()) {
    if (static_cast<int>(out_shape.size()) == n + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    if (static_cast<int>(out_shape.size()) != n) {
      return InvalidArgumentError("ConvTranspose: attribute output_shape=" + dense::Join(attrs.ints("output_shape")) +
                                  " must give the " + std::to_string(n) + " spatial output dims");
    }
  }
  std::vector<int64_t> pads = attrs.ints("pads");
  if (!pads.empty() && static_cast<int>(pads.size()) != 2 * n) {
    return InvalidArgumentError("ConvTranspose: attribute pads=" + dense::Join(pads) + " has " +
                                std::to_string(pads.size()) + " values; expected " + std::to_string(2 * n));
  }
  g.pads_begin.assign(n, 0);
  g.pads_end.assign(n, 0);
  g.out.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    const int64_t full = g.strides[i] * (g.in[i] - 1) + out_pad[i] + (g.kernel[i] - 1) * g.dilations[i] + 1;
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    if (!out_shape.empty() || same) {
      g.out[i] = !out_shape.empty() ? out_shape[i] : g.in[i] * g.strides[i];
      // total < 0 (output_shape beyond the natural size) adds outputs; floor
      // division puts the odd one at the end, as ONNX's reference does.
      const int64_t total = full - g.out[i];
      const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      g.pads_begin[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      g.pads_end[i] = total - g.pads_begin[i];
    } else {
      if (auto_pad == "NOTSET" && !pads.empty()) {
        g.pads_begin[i] = pads[i];
        g.pads_end[i] = pads[i + n];
      }
      g.out[i] = full - g.pads_begin[i] - g.pads_end[i];
    }
    if (g.out[i] < 1) {
      return InvalidArgumentError("ConvTranspose: output spatial dim " + std::to_string(i) + " would be " +
                                  std::to_string(g.out[i]) + " (X " + x.ToString() + ", pads " +
                                  dense::Join(pads) + ")");
    }
  }
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    return InvalidArgumentError("ConvTranspose: attribute auto_pad='" + auto_pad +
                                "'; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  }
  return d;
}

Status ConvInfer(InferContext& c) {
  const Shape* b = c.has_input(2) ? &c.input(2).shape : nullptr;
  OPSCOPE_ASSIGN_OR_RETURN(ConvDims d, ConvShapes(c.input(0).shape, c.input(1).shape, b, c.attrs()));
  c.SetOutput(0, c.input(0).dtype, OutShape(d));
  return Status::Ok();
}

Status ConvTransposeInfer(InferContext& c) {
  const Shape* b = c.has_input(2) ? &c.input(2).shape : nullptr;
  OPSCOPE_ASSIGN_OR_RETURN(ConvDims d, ConvTransposeShapes(c.input(0).shape, c.input(1).shape, b, c.attrs()));
  c.SetOutput(0, c.input(0).dtype, OutShape(d));
  return Status::Ok();
}

// ---- Conv kernel ----------------------------------------------------------------------------------

// Depthwise (one input channel per group): a direct loop per output channel,
// one output row at a time. Each input row the window reads adds its taps'
// weights times the input into the whole output row, so the innermost loop
// runs along the row (it vectorises; contiguous at stride 1) instead of over
// a handful of taps with a bounds check each. Where every tap of the row is
// inside X (the interior) a 3-wide row adds its three taps in one pass;
// elsewhere each tap adds over the outputs it reaches. Every output still
// sums its in-range taps in the same order, from zero: the results are the
// same bits as one tap at a time.
template <typename C>
void DepthwiseChannel(const C* x, const C* w, const WindowGeometry& g, const std::vector<dense::TapReach>& taps,
                      C* y) {
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2], OW = g.out[2], KW = g.kernel[2];
  const int64_t sw = g.strides[2];
  // The interior [in_lo, in_hi]: outputs every tap of a row reaches (none: in_lo = OW).
  int64_t in_lo = 0, in_hi = OW - 1;
  for (const dense::TapReach& t : taps) in_lo = std::max(in_lo, t.lo), in_hi = std::min(in_hi, t.hi);
  if (in_lo > in_hi) in_lo = OW, in_hi = OW - 1;
  for (int64_t od = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      C* yr = y + (od * g.out[1] + oh) * OW;
      std::fill(yr, yr + OW, C(0));
      const C* wk = w;
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        const int64_t id = od * g.strides[0] - g.pads_begin[0] + kd * g.dilations[0];
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh, wk += KW) {
          const int64_t ih = oh * g.strides[1] - g.pads_begin[1] + kh * g.dilations[1];
          if (id < 0 || id >= D || ih < 0 || ih >= H) continue;
          const C* xr = x + (id * H + ih) * W;
          // Adds tap kw over the outputs [lo, hi].
          auto tap = [&](int64_t kw, int64_t lo, int64_t hi) {
            const C wv = wk[kw];
            const int64_t off = taps[kw].off;
            if (sw == 1) {
              for (int64_t ow = lo; ow <= hi; ++ow) yr[ow] += wv * xr[ow + off];
            } else {
              for (int64_t ow = lo; ow <= hi; ++ow) yr[ow] += wv * xr[ow * sw + off];
            }
          };
          if (KW == 3) {
            const C w0 = wk[0], w1 = wk[1], w2 = wk[2];
            const C* x0 = xr + taps[0].off;
            const C* x1 = xr + taps[1].off;
            const C* x2 = xr + taps[2].off;
            if (sw == 1) {
              for (int64_t ow = in_lo; ow <= in_hi; ++ow) yr[ow] = yr[ow] + w0 * x0[ow] + w1 * x1[ow] + w2 * x2[ow];
            } else {
              for (int64_t ow = in_lo; ow <= in_hi; ++ow)
                yr[ow] = yr[ow] + w0 * x0[ow * sw] + w1 * x1[ow * sw] + w2 * x2[ow * sw];
            }
          } else {
            for (int64_t kw = 0; kw < KW; ++kw) tap(kw, std::max(taps[kw].lo, in_lo), std::min(taps[kw].hi, in_hi));
          }
          // The edges: outputs some tap of the row does not reach.
          for (int64_t kw = 0; kw < KW; ++kw) {
            tap(kw, taps[kw].lo, std::min(taps[kw].hi, in_lo - 1));
            tap(kw, std::max(taps[kw].lo, in_hi + 1), taps[kw].hi);
          }
        }
      }
    }
}

// Whether a 3x3 window's nine weights are all finite.
inline bool FiniteNine(const float* w) {
  bool finite = true;
  for (int i = 0; i < 9; ++i) finite = finite && std::isfinite(w[i]);
  return finite;
}

// Whether a channel's depthwise window can run Depthwise3x3: 2-D, 3x3, no
// dilation, every weight finite.
template <typename C>
bool Is3x3WithFiniteWeights(const WindowGeometry& g, const C* w) {
  // Element by element: comparing with a std::vector built here allocated
  // twice a channel (malloc and free, 5% of [1,384,14,14]'s samples).
  const std::vector<int64_t>&k = g.kernel, &dl = g.dilations;
  if (k.size() != 3 || k[0] != 1 || k[1] != 3 || k[2] != 3) return false;
  if (dl.size() != 3 || dl[0] != 1 || dl[1] != 1 || dl[2] != 1) return false;
  for (int i = 0; i < 9; ++i) {
    if (!std::isfinite(static_cast<double>(w[i]))) return false;
  }
  return true;
}

// One output row of a 3x3 window from three input rows: out[i] sums the taps
// w[3 kh + kw] * rkh[i + kw] (stride 1) or, at stride 2, of rows split into
// even and odd columns, w * ekh[i], w * okh[i], w * ekh[i + 1]; in that
// order, from zero, a multiply then an add each (no FMA: the bits stay those
// of DepthwiseChannel). The float forms also come as AVX2 clones: dense_conv.cc
// is built for baseline x86-64, whose 4-wide SSE ran these loops at half speed.
// Rows under 16 outputs stay on SSE: 8-wide, a 7- or 14-wide row runs mostly
// as its scalar tail ([1,192,28,28] at stride 2 took 121 us against 96).
template <typename C>
[[gnu::always_inline]] inline void DwRowS1Body(const C* r0, const C* r1, const C* r2, const C* w, C* out, int64_t n) {
  const C w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];
  for (int64_t i = 0; i < n; ++i) {
    C acc = C(0);
    acc += w0 * r0[i], acc += w1 * r0[i + 1], acc += w2 * r0[i + 2];
    acc += w3 * r1[i], acc += w4 * r1[i + 1], acc += w5 * r1[i + 2];
    acc += w6 * r2[i], acc += w7 * r2[i + 1], acc += w8 * r2[i + 2];
    out[i] = acc;
  }
}

template <typename C>
[[gnu::always_inline]] inline void DwRowS2Body(const C* e0, const C* e1, const C* e2, int64_t odd, const C* w, C* out,
                                               int64_t n) {
  const C w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];
  const C *o0 = e0 + odd, *o1 = e1 + odd, *o2 = e2 + odd;
  for (int64_t i = 0; i < n; ++i) {
    C acc = C(0);
    acc += w0 * e0[i], acc += w1 * o0[i], acc += w2 * e0[i + 1];
    acc += w3 * e1[i], acc += w4 * o1[i], acc += w5 * e1[i + 1];
    acc += w6 * e2[i], acc += w7 * o2[i], acc += w8 * e2[i + 1];
    out[i] = acc;
  }
}

// Padded row `src` (X's row, pw zeros before it, zeros after) split into its
// even columns (pe of them) and odd ones (po); only the border is zeroed.
// (Baseline code: an AVX2 clone of it ran 5% slower, 379 against 362 us at
// [1,96,112,112], and the loop waits on X's rows coming from memory anyway.)
template <typename C>
void SplitRow(const C* src, int64_t W, int64_t pw, C* even, int64_t pe, C* odd, int64_t po) {
  // Padded column p holds X's column p - pw: even[j] is p = 2j, odd[j] p = 2j + 1.
  const int64_t even_lo = (pw + 1) / 2, even_hi = std::min(pe, (W + pw + 1) / 2);
  const int64_t odd_lo = pw / 2, odd_hi = std::min(po, (W + pw) / 2);
  std::fill(even, even + even_lo, C(0));
  for (int64_t j = even_lo; j < even_hi; ++j) even[j] = src[2 * j - pw];
  std::fill(even + even_hi, even + pe, C(0));
  std::fill(odd, odd + odd_lo, C(0));
  for (int64_t j = odd_lo; j < odd_hi; ++j) odd[j] = src[2 * j + 1 - pw];
  std::fill(odd + odd_hi, odd + po, C(0));
}

#if defined(__x86_64__)
[[gnu::target("avx2")]] void DwRowS1Avx2(const float* r0, const float* r1, const float* r2, const float* w, float* out,
                                         int64_t n) {
  DwRowS1Body(r0, r1, r2, w, out, n);
}
[[gnu::target("avx2")]] void DwRowS2Avx2(const float* e0, const float* e1, const float* e2, int64_t odd,
                                         const float* w, float* out, int64_t n) {
  DwRowS2Body(e0, e1, e2, odd, w, out, n);
}
#endif

template <typename C>
void DwRowS1(const C* r0, const C* r1, const C* r2, const C* w, C* out, int64_t n) {
#if defined(__x86_64__)
  if constexpr (std::is_same_v<C, float>) {
    if (n >= 16 && dense::HasAvx2()) return DwRowS1Avx2(r0, r1, r2, w, out, n);
  }
#endif
  DwRowS1Body(r0, r1, r2, w, out, n);
}

template <typename C>
void DwRowS2(const C* e0, const C* e1, const C* e2, int64_t odd, const C* w, C* out, int64_t n) {
#if defined(__x86_64__)
  if constexpr (std::is_same_v<C, float>) {
    if (n >= 16 && dense::HasAvx2()) return DwRowS2Avx2(e0, e1, e2, odd, w, out, n);
  }
#endif
  DwRowS2Body(e0, e1, e2, odd, w, out, n);
}

// dst[0, wq): zeros, then src[l - lo] at l in [lo, hi), then zeros: a padded
// row. As std::fill, std::copy and std::fill it was three library calls a
// row (memset@plt for one float, memmove for 56): conv_phases of a 3x3 over
// [1,64,56,56] took 95 us, a thirteenth of the convolution, for 800 KB; 60
// now. Here, where the borders are at most a vector and the row at least one,
// a vector of zeros at each end, then the row over them in whole vectors,
// the last one overlapping the one before: no masked stores (slow on AMD).
#if defined(__x86_64__)
[[gnu::target("avx2")]] bool PadRowAvx2(const float* src, int64_t lo, int64_t hi, int64_t wq, float* dst) {
  if (wq < 8 || hi - lo < 8 || lo > 8 || wq - hi > 8) return false;
  _mm256_storeu_ps(dst, _mm256_setzero_ps());
  _mm256_storeu_ps(dst + wq - 8, _mm256_setzero_ps());
  int64_t l = lo;
  for (; l + 8 <= hi; l += 8) _mm256_storeu_ps(dst + l, _mm256_loadu_ps(src + (l - lo)));
  if (l < hi) _mm256_storeu_ps(dst + hi - 8, _mm256_loadu_ps(src + (hi - 8 - lo)));
  return true;
}
#endif

void PadRow(const float* src, int64_t lo, int64_t hi, int64_t wq, float* dst) {
#if defined(__x86_64__)
  static const bool avx2 = dense::HasAvx2();
  if (avx2 && PadRowAvx2(src, lo, hi, wq, dst)) return;
#endif
  std::fill(dst, dst + lo, 0.0f);
  std::copy(src, src + (hi - lo), dst + lo);
  std::fill(dst + hi, dst + wq, 0.0f);
}

// Whether a 3x3 depthwise at stride 2 runs Depthwise3x3RowsS2 (float,
// AVX2: dense_depthwise_rows.h) rather than eight channels at a time: one
// plane deep, pads of one before, no dilation, rows of 24 outputs or more
// whose last tap is inside the input row. Against the eight-channel kernel
// (ops-debug profile, Clip, medians of 4 to 6 rounds alternating):
// [1,96,112,112] 188 -> 128 us, [1,144,56,56] 88 -> 80; rows of 16 and 20
// outputs came out even, and of 14 slower ([1,192,28,28] 37 -> 44: two
// vectors a row for 14 outputs, and the set-up of each row). In 512-bit
// vectors (WideBlocks) rows of 9 outputs or more, two rows at a time
// (dense_depthwise_rows.cc has the figures): [1,192,28,28] 37 -> 22 us on
// one core, [1,144,56,56] 68 -> 47, [1,96,112,112] 128 -> 113.
bool DepthwiseS2RowsFit(const WindowGeometry& g) {
  return dense::DepthwiseRowsFit() && g.in[0] == 1 && g.kernel == std::vector<int64_t>{1, 3, 3} &&
         g.dilations == std::vector<int64_t>{1, 1, 1} && g.strides[1] == 2 && g.strides[2] == 2 &&
         g.pads_begin[1] == 1 && g.pads_begin[2] == 1 &&
         ((dense::WideBlocks() && g.out[2] >= 9) || (g.out[2] >= 24 && 2 * g.out[2] <= g.in[2]));
}

// Whether a 3x3 depthwise at stride 1 that keeps its plane's size (pads of
// one) runs Depthwise3x3SamePlaneWide: float, 512-bit vectors, straight
// from X, rows of 9 or more (narrower ones two to a vector: a row a
// vector had lost to eight channels at a time, [1,960,7,7] 43 us against
// 37). ops-debug profile --mode kernel,
// FusedConv with Clip, 5 rounds alternating with the padded copies, one
// core / two: [1,576,14,14] 64 -> 37 / 41 -> 24 us, [1,192,28,28]
// 61 -> 36 / 34 -> 23, [1,144,56,56] 129 -> 98 / 74 -> 55, [1,32,112,112]
// 91 -> 64 / 51 -> 38; mobilenet_v2's span 2329 -> 2241 us (7 rounds
// alternating) before the loads and the channel's set-up were trimmed.
bool DepthwiseSamePlaneFits(const WindowGeometry& g) {
  return dense::DepthwiseRowsFit() && dense::WideBlocks() && g.in[0] == 1 &&
         g.kernel == std::vector<int64_t>{1, 3, 3} && g.dilations == std::vector<int64_t>{1, 1, 1} &&
         g.strides[1] == 1 && g.strides[2] == 1 && g.pads_begin[1] == 1 && g.pads_begin[2] == 1 &&
         g.out[1] == g.in[1] && g.out[2] == g.in[2] && g.out[2] >= 9;
}

// The rows kernel a 3x3 depthwise op's channels take, decided once an op
// (the fits build vectors: 960 channels of 7x7 spent more on that than on
// their sums).
enum class DepthwiseRows { kCopied, kStride2, kSamePlane, kNarrow };

// Whether a 3x3 depthwise with output rows of at most 8 runs
// Depthwise3x3NarrowPlanesWide (two output rows a 512-bit vector, a run
// of channels a call): pads of one before, stride 1 or 2, input rows of at
// most 16. Against eight channels at a time, one core: [1,960,7,7] 37 ->
// 26 us, [1,576,14,14] at stride 2 33 -> 17 (dense_depthwise_rows.cc).
bool DepthwiseNarrowPlaneFits(const WindowGeometry& g) {
  const int64_t s = g.strides[1];
  return dense::DepthwiseRowsFit() && dense::WideBlocks() && g.in[0] == 1 &&
         g.kernel == std::vector<int64_t>{1, 3, 3} && g.dilations == std::vector<int64_t>{1, 1, 1} &&
         (s == 1 || s == 2) && g.strides[2] == s && g.pads_begin[1] == 1 && g.pads_begin[2] == 1 &&
         g.in[2] <= 16 && g.out[2] <= 8;
}

DepthwiseRows DepthwiseRowsOf(const WindowGeometry& g) {
  if (DepthwiseS2RowsFit(g)) return DepthwiseRows::kStride2;
  if (DepthwiseSamePlaneFits(g)) return DepthwiseRows::kSamePlane;
  if (DepthwiseNarrowPlaneFits(g)) return DepthwiseRows::kNarrow;
  return DepthwiseRows::kCopied;
}

// The 3x3 depthwise of mobilenets, a channel at a time, with the bias and
// activation (`e`) applied to each output row as it is written, while the
// row is in L1. Every output sums all nine taps in one pass along its row,
// reading zero-bordered copies of the input rows, so there are no edge cases
// (at 7x7 the edges had been most of the work). A tap on the border adds
// weight * 0, which leaves every sum as DepthwiseChannel leaves it (the same
// taps in the same order) up to the sign of a zero; a non-finite weight
// would make that product NaN where DepthwiseChannel skips the tap, hence
// Is3x3WithFiniteWeights.
//
// Float at stride 1 on an AVX2 CPU runs two output rows at a time with the
// tail in registers (dense_depthwise_rows.h), with AVX-512 and pads of one
// straight from X (DepthwiseSamePlaneFits), at stride 2 a row at a time or
// two (DepthwiseS2RowsFit); the rest as follows.
// Strides 1 (rows 32 wide and more) and 2 stream the plane: three padded
// input rows in a ring, each row copied once, from X straight into the ring,
// and each output row computed from them. Before, the whole plane was copied
// into a padded buffer (and, at stride 2, split into even and odd columns in
// a second pass) and the epilogue made one more pass: five passes over a
// 50 KB plane, which left [1,96,112,112] at stride 2 at 36% of its memory bound.
// `rows`: DepthwiseRowsOf(g), for floats.
template <typename C>
void Depthwise3x3(const C* x, const C* w, const WindowGeometry& g, C bias, const dense::Epilogue& e,
                  DepthwiseRows rows, std::vector<C>& pad, C* y) {
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2], sh = g.strides[1], sw = g.strides[2];
  const int64_t ph = g.pads_begin[1], pw = g.pads_begin[2];
  // Padded rows and columns: the input at (ph, pw), every tap of every output inside.
  const int64_t PH = std::max(H + ph, (OH - 1) * sh + 3), PW = std::max(W + pw, (OW - 1) * sw + 3);
  // The bias and activation over the rows written so far, once they make a
  // stretch of at least 512 outputs (2 KB in float, still in L1) or the plane
  // is done: a call per 28-wide row had cost [1,144,56,56] at stride 2 10%.
  struct {
    const dense::Epilogue& e;
    C* y;
    int64_t OW, OH, done;
    C bias;
    void Rows(int64_t rows) {
      if ((rows - done) * OW < 512 && rows < OH) return;
      e.Run(y + done * OW, (rows - done) * OW, bias);
      done = rows;
    }
  } epilogue{e, y, OW, OH, 0, bias};
  // The input row of padded row r, or null where r is padding.
  auto input_row = [&](int64_t r) -> const C* { return r - ph >= 0 && r - ph < H ? x + (r - ph) * W : nullptr; };

  if constexpr (std::is_same_v<C, float>) {
    if (rows != DepthwiseRows::kCopied) {
      // Straight from X, the tail in registers where it fits.
      const bool fused = dense::DepthwiseRowTailFits(e);
      const dense::DepthwiseRowTail tail = fused ? dense::DepthwiseRowTailOf(e, bias) : dense::DepthwiseRowTail{};
      if (rows == DepthwiseRows::kStride2) {
        dense::Depthwise3x3RowsS2(x, H, W, OH, w, y, OW, tail);
      } else if (rows == DepthwiseRows::kNarrow) {
        const dense::NarrowPlanesArgs plane{.x = x, .x_plane = H * W, .h = H, .w = W, .stride = sh, .w9 = w,
                                            .bias = fused ? &bias : nullptr, .y = y, .y_plane = OH * OW,
                                            .oh = OH, .ow = OW, .count = 1};
        dense::Depthwise3x3NarrowPlanesWide(plane, tail);
      } else {
        dense::Depthwise3x3SamePlaneWide(x, H, W, w, y, tail);
      }
      if (!fused) e.Run(y, OH * OW, bias);
      return;
    }
    if (sh == 1 && sw == 1 && OW >= 8 && dense::DepthwiseRowsFit()) {
      // Two output rows at a time (dense_depthwise_rows.h), with the bias
      // and activation in the same pass where they are Relu or Clip.
      const bool fused = dense::DepthwiseRowTailFits(e);
      const dense::DepthwiseRowTail tail = fused ? dense::DepthwiseRowTailOf(e, bias) : dense::DepthwiseRowTail{};
      if (OW < 32) {
        // Narrow planes from the padded plane, in one call: a call per two
        // rows cost [1,384,14,14] 49 -> 66 us.
        pad.assign(PH * PW, 0.0f);
        for (int64_t ih = 0; ih < H; ++ih) std::copy(x + ih * W, x + (ih + 1) * W, pad.data() + (ih + ph) * PW + pw);
        dense::Depthwise3x3RowsS1(pad.data(), PW, OH, w, y, OW, tail);
        if (!fused) e.Run(y, OH * OW, bias);
        return;
      }
      // Wider ones 16 output rows at a time from their 18 padded rows, each
      // copied from X just before it is read: the rows stay in L1, where a
      // padded 112x112 plane (52 KB) would not. The last two rows of a
      // stretch are the first two of the next.
      constexpr int64_t kStretch = 16;
      thread_local std::vector<float> stretch;
      stretch.resize((kStretch + 2) * PW);
      float* const rows = stretch.data();  // once: each thread_local access is a __tls_get_addr call
      for (int64_t oh0 = 0; oh0 < OH; oh0 += kStretch) {
        const int64_t n = std::min(kStretch, OH - oh0);
        int64_t r = 0;  // rows' row r is padded row oh0 + r
        if (oh0 > 0) {
          std::copy(rows + kStretch * PW, rows + (kStretch + 2) * PW, rows);
          r = 2;
        }
        // PadRow: whole vectors, the zeros at each end first (the rows are
        // read only once all 18 are written, so its overlapping stores do
        // not stall the loads, as they did a row of the ring at a time).
        for (; r < n + 2; ++r) {
          float* dst = rows + r * PW;
          if (const float* src = input_row(oh0 + r)) {
            PadRow(src, pw, pw + W, PW, dst);
          } else {
            std::fill(dst, dst + PW, 0.0f);
          }
        }
        dense::Depthwise3x3RowsS1(rows, PW, n, w, y + oh0 * OW, OW, tail);
        if (!fused) epilogue.Rows(oh0 + n);
      }
      return;
    }
  }
  if (sh == 1 && sw == 1 && OW >= 32) {
    thread_local std::vector<C> ring;
    ring.resize(3 * PW);
    int64_t held[3] = {-1, -1, -1};  // the padded row each slot holds
    auto row = [&](int64_t r) -> const C* {
      C* dst = ring.data() + (r % 3) * PW;
      if (held[r % 3] != r) {
        held[r % 3] = r;
        if (const C* src = input_row(r)) {
          std::fill(dst, dst + pw, C(0));
          std::copy(src, src + W, dst + pw);
          std::fill(dst + pw + W, dst + PW, C(0));
        } else {
          std::fill(dst, dst + PW, C(0));
        }
      }
      return dst;
    };
    for (int64_t oh = 0; oh < OH; ++oh) {
      const C* r0 = row(oh);
      const C* r1 = row(oh + 1);
      const C* r2 = row(oh + 2);
      DwRowS1(r0, r1, r2, w, y + oh * OW, OW);
      epilogue.Rows(oh + 1);
    }
    return;
  }
  // At stride 2 each padded row is split into its even and odd columns, so
  // the taps 2ow, 2ow + 1, 2ow + 2 are even[ow], odd[ow], even[ow + 1] and
  // the loop along the row reads contiguous memory (it vectorises).
  const int64_t PE = (PW + 1) / 2, PO = PW / 2, RS = PE + PO;
  if (sh == 2 && sw == 2 && OW >= 32) {
    thread_local std::vector<C> ring;
    ring.resize(3 * RS);
    int64_t held[3] = {-1, -1, -1};
    auto row = [&](int64_t r) -> const C* {
      C* even = ring.data() + (r % 3) * RS;
      if (held[r % 3] != r) {
        held[r % 3] = r;
        if (const C* src = input_row(r)) {
          SplitRow(src, W, pw, even, PE, even + PE, PO);
        } else {
          std::fill(even, even + RS, C(0));
        }
      }
      return even;
    };
    for (int64_t oh = 0; oh < OH; ++oh) {
      const C* e0 = row(2 * oh);
      const C* e1 = row(2 * oh + 1);
      const C* e2 = row(2 * oh + 2);
      DwRowS2(e0, e1, e2, PE, w, y + oh * OW, OW);
      epilogue.Rows(oh + 1);
    }
    return;
  }
  pad.assign(PH * PW, C(0));
  for (int64_t ih = 0; ih < H; ++ih) std::copy(x + ih * W, x + (ih + 1) * W, pad.data() + (ih + ph) * PW + pw);
  if (sh == 2 && sw == 2) {
    // Narrower rows (where eight channels at a time cannot run,
    // dense_depthwise8.h): the plane padded and split whole, then a row at a time.
    // Streamed, a row's set-up (its zeroed borders, two calls) cost more than
    // the 7 to 28 outputs it feeds: [1,576,14,14] took 192 us against 137.
    thread_local std::vector<C> split;
    split.resize(PH * RS);
    for (int64_t r = 0; r < PH; ++r) {
      const C* src = pad.data() + r * PW;
      C* even = split.data() + r * RS;
      C* odd = even + PE;
      for (int64_t j = 0; j < PE; ++j) even[j] = src[2 * j];
      for (int64_t j = 0; j < PO; ++j) odd[j] = src[2 * j + 1];
    }
    for (int64_t oh = 0; oh < OH; ++oh) {
      const C* e0 = split.data() + 2 * oh * RS;
      DwRowS2(e0, e0 + RS, e0 + 2 * RS, PE, w, y + oh * OW, OW);
      epilogue.Rows(oh + 1);
    }
    return;
  }
  if (sh == 1 && sw == 1) {
    // Narrow planes (mobilenet's 14x14, and its 7x7 where eight channels at a
    // time cannot run, dense_depthwise8.h): one loop over the padded
    // grid, output p' = oh * PW + ow reading pad[p' + kh * PW + kw], then the
    // rows copied out without the grid's extra columns. Row by row, a 7-wide
    // row ran as scalar code with the loop's set-up around it: [1,960,7,7]
    // took 187 us in mobilenet_v2 against a 12 us bound. The taps add in
    // the same order, so the sums are the same bits.
    thread_local std::vector<C> grid;
    const int64_t n = (OH - 1) * PW + OW;
    grid.resize(n);
    C* out = grid.data();
    DwRowS1(pad.data(), pad.data() + PW, pad.data() + 2 * PW, w, out, n);
    for (int64_t oh = 0; oh < OH; ++oh) std::copy(out + oh * PW, out + oh * PW + OW, y + oh * OW);
    e.Run(y, OH * OW, bias);
    return;
  }
  // Other strides (3, or unequal ones), from the padded plane.
  const C w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];
  for (int64_t oh = 0; oh < OH; ++oh) {
    const C* r0 = pad.data() + oh * sh * PW;
    const C* r1 = r0 + PW;
    const C* r2 = r1 + PW;
    C* yr = y + oh * OW;
    for (int64_t ow = 0; ow < OW; ++ow) {
      const int64_t i = ow * sw;
      C acc = C(0);
      acc += w0 * r0[i], acc += w1 * r0[i + 1], acc += w2 * r0[i + 2];
      acc += w3 * r1[i], acc += w4 * r1[i + 1], acc += w5 * r1[i + 2];
      acc += w6 * r2[i], acc += w7 * r2[i + 1], acc += w8 * r2[i + 2];
      yr[ow] = acc;
    }
    epilogue.Rows(oh + 1);
  }
}

// How the GEMM path splits one image-group's output [mg, P] into blocks:
// `tile` output positions (GEMM columns) by `rows` output channels. A block's
// im2col columns [K, tile] and output [rows, tile] stay in the core's cache,
// so the bias and activation run on the output while it is there, and the
// blocks spread over the device's workers, each a single-threaded GEMM (the
// device's threads are the only threads: dense_blas.h).
struct GemmTiles {
  int64_t tile, rows;
};

GemmTiles ChooseTiles(int64_t K, int64_t mg, int64_t P, int64_t elem_bytes, int workers, int64_t tile_tunable) {
  // At least four blocks, or one per worker where there are more: the same
  // cuts on every machine up to four cores.
  const int64_t want = std::max(workers, 4);
  GemmTiles t{tile_tunable, mg};
  // About 512 KiB of columns and output per block, in steps of 16 columns,
  // and no fewer than 64: OpenBLAS packs the block's rows of W on every call,
  // which a narrower tile repeats for little work (a 512 x 16 x 4608 tile of
  // resnet18's last layer ran at a quarter of the GEMM peak). 192 KiB gave
  // resnet18's 56x56 layers 64-column tiles: 2.16 ms a conv against 1.75 at
  // 256 (ops-debug sweep --tunable tile), and resnet18's run 39-43 ms
  // against 36-39 with 512 KiB (inspector-cli run, 3 rounds alternating).
  if (t.tile <= 0) t.tile = std::clamp<int64_t>((512 << 10) / (elem_bytes * (K + mg)) / 16 * 16, 64, 1024);
  t.tile = std::min(t.tile, P);
  int64_t col_blocks = (P + t.tile - 1) / t.tile;
  // Whole rounds of `want` blocks: 17 blocks of a 56x56 layer on 2 workers
  // left one running alone for a tenth of the convolution (1.55 ms against
  // 1.40 of work). A multiple of 4 is whole rounds on 1, 2 and 4 workers.
  if (tile_tunable <= 0 && col_blocks > 1) col_blocks = std::min(P, (col_blocks + want - 1) / want * want);
  // Even tiles, not full ones and a sliver (196 columns: 4 x 49, not 3 x 64 + 4).
  // (Rounded up to whole steps of 16 columns, resnet18's run was no faster:
  // 38.7-43.7 ms against 37.5-41.8, 3 rounds alternating.)
  if (tile_tunable <= 0) t.tile = (P + col_blocks - 1) / col_blocks;
  if (col_blocks >= want) return t;
  // Too few column blocks (late layers: 7x7 positions, hundreds of channels):
  // split the output channels, in steps of 16, so each block packs its own
  // rows of W;
  if (mg >= 32) {
    const int64_t parts = std::min<int64_t>((want + col_blocks - 1) / col_blocks, mg / 16);
    t.rows = ((mg + parts - 1) / parts + 15) / 16 * 16;
  }
  // and where the channels are too few for that, narrower tiles, down to 16 columns.
  const int64_t row_blocks = (mg + t.rows - 1) / t.rows;
  if (tile_tunable <= 0 && col_blocks * row_blocks < want) {
    const int64_t cols_wanted = (want + row_blocks - 1) / row_blocks;
    t.tile = std::min(t.tile, std::max<int64_t>(16, ((P + cols_wanted - 1) / cols_wanted + 15) / 16 * 16));
  }
  return t;
}

// The column blocks of an n-column GEMM output cut as ChooseTiles says: with
// the tile tunable set, `tile` columns each; otherwise whole 16-column panels
// (a partial one runs masked loads and stores) as evenly as they go into
// ChooseTiles' count of blocks, which rounding each tile up to whole panels
// would change (a 56x56 layer's 203 panels in 18 tiles of 12 make 17).
// Rounded up, so the larger of two neighbouring blocks comes first: the
// workers take blocks in order, and 3, 4, 3, 4 panels on two of them ran 3 +
// 3 on one and 4 + 4 on the other.
//
// With `pair` (the shifted GEMM on 512-bit blocks, which takes its panels
// two at a time) the cuts fall between pairs of panels: a block of an odd
// number ran its last panel alone, at two thirds of a pair's rate.
//
// Where the units are few, rounding up can leave a sliver (a 14x14 plane's
// 196 columns as 64, 64, 64 and 4): dense_cuts.h weighs other cuts for the
// device's workers and keeps the one that finishes first.
struct ColumnBlocks {
  int64_t n, tile, count, units, unit;
  bool tile_given;
  std::vector<int64_t> cuts;  // count + 1 starts (tile not given)
  ColumnBlocks(int64_t n_cols, int64_t t, bool given, bool pair = false, int workers = 1, int64_t row_blocks = 1)
      : n(n_cols), tile(t), count(0), units(0), unit(pair ? 2 * dense::kPanel : dense::kPanel), tile_given(given) {
    units = (n + unit - 1) / unit;
    count = std::min((n + tile - 1) / tile, tile_given ? n : units);
    if (tile_given) return;
    cuts = dense::ColumnCuts(n, unit, count, workers, row_blocks);
    count = static_cast<int64_t>(cuts.size()) - 1;
  }
  // Block b's columns [p0, p1).
  void Range(int64_t b, int64_t& p0, int64_t& p1) const {
    if (tile_given) {
      p0 = b * tile, p1 = std::min(n, p0 + tile);
      return;
    }
    p0 = cuts[b], p1 = cuts[b + 1];
  }
};

// The row blocks of ChooseTiles' `rows`: as many as blocks of `rows` make,
// cut in steps of 16 rows as evenly as they go (rounded up, as ColumnBlocks
// does: the larger of two neighbouring blocks first). Blocks of
// `rows` each and a sliver left one worker idle: mobilenet_v2's 960 -> 160
// 1x1 over 7x7 made 48, 48, 48 and 16 rows, 96 rows on one worker and 64 on
// the other; as 48, 32, 48, 32 it is 80 and 80.
struct RowBlocks {
  int64_t m, count, units;
  RowBlocks(int64_t m_rows, int64_t rows)
      : m(m_rows), count((m_rows + rows - 1) / rows), units((m_rows + 15) / 16) {}
  // Block b's rows [m0, m1).
  void Range(int64_t b, int64_t& m0, int64_t& m1) const {
    auto start = [&](int64_t i) { return std::min(m, (i * units + count - 1) / count * 16); };
    m0 = start(b), m1 = start(b + 1);
  }
};

// dst[i] = src[2 i] for i < n: the columns of a stride-2 tap. One element at
// a time, that loop was a third of mobilenet_v2's stem (3 -> 32 channels at
// stride 2 over 224x224, K = 27): two vectors of src make eight outputs,
// their even lanes shuffled together. The last vector read ends at
// src[2 i + 15], so the vectors stop where that passes src[2 (n - 1)], the
// last element the row has (no read past the tensor's end).
#if defined(__x86_64__)
[[gnu::target("avx2")]] int64_t EveryOtherAvx2(const float* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 9 <= n; i += 8) {
    const __m256 lo = _mm256_loadu_ps(src + 2 * i), hi = _mm256_loadu_ps(src + 2 * i + 8);
    // [lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6], then the 64-bit pairs in order.
    const __m256 even = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    _mm256_storeu_ps(dst + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), _MM_SHUFFLE(3, 1, 2, 0))));
  }
  return i;
}
#endif

template <typename C>
void EveryOther(const C* src, int64_t n, C* dst) {
  int64_t i = 0;
#if defined(__x86_64__)
  if constexpr (std::is_same_v<C, float>) {
    if (dense::HasAvx2()) i = EveryOtherAvx2(src, n, dst);
  }
#endif
  for (; i < n; ++i) dst[i] = src[2 * i];
}

// Rows [r0, r1) and columns [p0, p1) of one image-group's im2col matrix into
// col[r1 - r0, p1 - p0].
template <typename C>
void Im2ColTile(const C* x, const WindowGeometry& g, const std::vector<dense::TapReach>& taps, int64_t r0,
                int64_t r1, int64_t p0, int64_t p1, C* col) {
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
  const int64_t oH = g.out[1], oW = g.out[2];
  const int64_t kvol = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t sw = g.strides[2];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t c = r / kvol, kk = r % kvol;
    const int64_t kd = kk / (g.kernel[1] * g.kernel[2]);
    const int64_t kh = (kk / g.kernel[2]) % g.kernel[1];
    const int64_t kw = kk % g.kernel[2];
    const C* xc = x + c * D * H * W;
    const int64_t off = taps[kw].off, lo = taps[kw].lo, hi = taps[kw].hi;
    C* dst = col + (r - r0) * (p1 - p0);
    for (int64_t p = p0; p < p1;) {
      // One stretch of an output row: ow in [ow0, ow0 + len): zeros, inputs, zeros.
      const int64_t ow0 = p % oW, row = p / oW, oh = row % oH, od = row / oH;
      const int64_t len = std::min(oW - ow0, p1 - p);
      const int64_t id = od * g.strides[0] - g.pads_begin[0] + kd * g.dilations[0];
      const int64_t ih = oh * g.strides[1] - g.pads_begin[1] + kh * g.dilations[1];
      if (id < 0 || id >= D || ih < 0 || ih >= H) {
        std::fill(dst, dst + len, C(0));
      } else {
        const C* src = xc + (id * H + ih) * W;
        const int64_t a = std::clamp(lo, ow0, ow0 + len), b = std::clamp(hi + 1, a, ow0 + len);
        std::fill(dst, dst + (a - ow0), C(0));
        if (sw == 1) {
          std::copy(src + a + off, src + b + off, dst + (a - ow0));
        } else if (sw == 2) {
          EveryOther(src + a * 2 + off, b - a, dst + (a - ow0));
        } else {
          for (int64_t ow = a; ow < b; ++ow) dst[ow - ow0] = src[ow * sw + off];
        }
        std::fill(dst + (b - ow0), dst + len, C(0));
      }
      dst += len;
      p += len;
    }
  }
}

// The clamp a fused activation becomes where a kernel applies it as it
// stores (none, ReLU, Clip); `applied` says whether that is all of it.
struct StoreClamp {
  float lo, hi;
  bool applied;
};

StoreClamp ClampOf(const dense::Epilogue& e) {
  const float inf = std::numeric_limits<float>::infinity();
  // Z is added before the activation, so the kernel stores the raw sums.
  if (e.residual != nullptr) return {-inf, inf, false};
  return {e.act == dense::Act::kRelu   ? 0.0f
          : e.act == dense::Act::kClip ? dense::Epilogue::Bound<float>(e.lo)
                                       : -inf,
          e.act == dense::Act::kClip ? dense::Epilogue::Bound<float>(e.hi) : inf,
          e.act == dense::Act::kNone || e.act == dense::Act::kRelu || e.act == dense::Act::kClip};
}

// The grid a convolution runs on as a shifted GEMM. The input is padded
// and, along a dimension of stride s, split into s phases (the padded
// elements at i with i % s = a, for a < s), each a plane of q = ceil(padded
// / s) elements: a tap at t = k * dilation of that dimension then reads phase
// t % s shifted by t / s, so every tap is one shift of one phase plane for
// any stride. Output (od, oh, ow) is at (od q1 + oh) q2 + ow of the phase
// planes' grid, whose rows are q wide where the output's are narrower: the
// GEMM's columns are the outputs themselves, each row of them one run of
// the grid (dense::ColumnRun), and the grid's extra columns are never
// computed.
struct PhaseGrid {
  int64_t s[3], q[3];  // stride and phase-plane extent per dimension
  int64_t plane = 1;   // elements of one phase plane
  int64_t phases = 1;  // phase planes per channel
  bool identity = false;  // no padding, stride 1: the grid is X itself

  explicit PhaseGrid(const WindowGeometry& g) {
    bool pads = false;
    for (int i = 0; i < 3; ++i) {
      s[i] = g.strides[i];
      q[i] = (g.in[i] + g.pads_begin[i] + g.pads_end[i] + s[i] - 1) / s[i];
      plane *= q[i];
      phases *= s[i];
      pads |= g.pads_begin[i] != 0 || g.pads_end[i] != 0;
    }
    identity = !pads && phases == 1;
  }
  // Where tap (c, kd, kh, kw) starts: its phase plane, shifted.
  int64_t Offset(const WindowGeometry& g, int64_t c, const int64_t (&k)[3]) const {
    int64_t phase = c, shift = 0;
    for (int i = 0; i < 3; ++i) {
      const int64_t t = k[i] * g.dilations[i];
      phase = phase * s[i] + t % s[i];
      shift = shift * q[i] + t / s[i];
    }
    return phase * plane + shift;
  }
};

// One image-group's cg channels of X (xg) into the phase planes of `grid`
// at dst: every element written, the padding as zeros.
Status FillPhaseGrid(KernelContext& ctx, const WindowGeometry& g, const PhaseGrid& grid, const float* xg, int64_t cg,
                     float* xgrid) {
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2], Hq = grid.q[1], Wq = grid.q[2];
  // A block a phase of a channel: by channels, the stem's 3 (a 7x7 stride 2
  // over 224x224, 4 phases each) went 2 and 1 onto two workers.
  return ctx.ParallelFor("conv_phases", cg * grid.phases, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t c = u / grid.phases, ph = u % grid.phases;
      const int64_t a[3] = {ph / (grid.s[1] * grid.s[2]), (ph / grid.s[2]) % grid.s[1], ph % grid.s[2]};
      float* dst = xgrid + (c * grid.phases + ph) * grid.plane;
      // Element (i, j, l) of phase a is X at (i s0 + a0 - pad0, ...), zero outside X.
      for (int64_t i = 0; i < grid.q[0]; ++i) {
        const int64_t xi = i * grid.s[0] + a[0] - g.pads_begin[0];
        for (int64_t j = 0; j < Hq; ++j, dst += Wq) {
          const int64_t xj = j * grid.s[1] + a[1] - g.pads_begin[1];
          if (xi < 0 || xi >= D || xj < 0 || xj >= H) {
            std::fill(dst, dst + Wq, 0.0f);
            continue;
          }
          // Grid columns [lo, hi) read X at l * s2 + shift; the rest are padding.
          const float* src = xg + ((c * D + xi) * H + xj) * W;
          const int64_t s2 = grid.s[2], shift = a[2] - g.pads_begin[2];
          const int64_t lo = std::min(Wq, shift >= 0 ? 0 : (-shift + s2 - 1) / s2);
          const int64_t hi = std::clamp<int64_t>(W - shift > 0 ? (W - shift + s2 - 1) / s2 : 0, lo, Wq);
          if (s2 == 1) {
            PadRow(src + lo + shift, lo, hi, Wq, dst);
            continue;
          }
          // The borders a column or two: stores, not memset calls; at stride 2
          // the row's columns two vectors at a time (EveryOther). One element
          // at a time, with a memset call at each end, the fill took a tenth
          // of a 3x3 at stride 2 over [1,64,56,56] on one core (perf); the
          // convolution now runs 1.05x faster there (ops-debug profile, one
          // core, 10 rounds alternating, 10 of 10).
          for (int64_t l = 0; l < lo; ++l) dst[l] = 0.0f;
          if (s2 == 2) {
            EveryOther(src + lo * 2 + shift, hi - lo, dst + lo);
          } else {
            for (int64_t l = lo; l < hi; ++l) dst[l] = src[l * s2 + shift];
          }
          for (int64_t l = hi; l < Wq; ++l) dst[l] = 0.0f;
        }
      }
    }
  }, std::max<int64_t>(1, (int64_t{1} << 14) / grid.plane));
}

// Where tap k (channel k / kvol, tap k % kvol) of the grid starts: channel
// c's taps are channel 0's moved by c whole channels of phase planes
// (PhaseGrid::Offset), so only channel 0's kvol taps take the divisions.
// Worked out for every k (seven 64-bit divisions each), on the launching
// thread while the other worker waits for the GEMM's blocks: resnet18's
// last 3x3s (K = 4608) ran 1.02-1.05x faster in the model without them.
std::vector<int64_t> TapOffsets(const WindowGeometry& g, const PhaseGrid& grid, int64_t K) {
  const int64_t kvol = g.kernel_size();
  std::vector<int64_t> off(static_cast<size_t>(K));
  for (int64_t kk = 0; kk < std::min(kvol, K); ++kk) {
    const int64_t taps[3] = {kk / (g.kernel[1] * g.kernel[2]), (kk / g.kernel[2]) % g.kernel[1], kk % g.kernel[2]};
    off[kk] = grid.Offset(g, 0, taps);
  }
  const int64_t channel = grid.phases * grid.plane;
  for (int64_t k = kvol; k < K; ++k) off[k] = off[k - kvol] + channel;
  return off;
}

// Whether the shifted GEMM reads X's planes straight, with the taps that
// fall outside masked (dense_smallk.h's PlaneBorders), rather than a padded
// grid: one plane deep, stride 1, no dilation, and the output plane the
// input's size (a 3x3 with pads of 1, a 5x5 with 2: resnet's and
// googlenet's). conv_phases had written the grid, every element of it, for
// the packing to read once: for a 3x3 over [1,64,56,56], 861 KB written and
// read again, from the other core's cache for half of it.
bool ReadsPlaneStraight(const WindowGeometry& g) {
  return g.in[0] == 1 && g.out[0] == 1 && g.kernel[0] == 1 && g.strides == std::vector<int64_t>{1, 1, 1} &&
         g.dilations == std::vector<int64_t>{1, 1, 1} && g.out[1] == g.in[1] && g.out[2] == g.in[2];
}

// Tap k's shift in X (channel k / kvol, tap (i, j) = k % kvol) for
// ReadsPlaneStraight: c h w + (i - ph) w + (j - pw).
std::vector<int64_t> StraightTapOffsets(const WindowGeometry& g, int64_t K) {
  const int64_t H = g.in[1], W = g.in[2], kw = g.kernel[2], kvol = g.kernel_size();
  std::vector<int64_t> off(static_cast<size_t>(K));
  for (int64_t kk = 0; kk < std::min(kvol, K); ++kk) {
    off[kk] = (kk / kw - g.pads_begin[1]) * W + kk % kw - g.pads_begin[2];
  }
  for (int64_t k = kvol; k < K; ++k) off[k] = off[k - kvol] + H * W;
  return off;
}

// Whether the shifted GEMM runs a convolution (ops-debug profile against
// the kernels it replaced, 2 rounds alternating):
// - a window wider than one tap: 1x1 convolutions run OpenBLAS or the
//   small-k kernel on X as it is (a 1x1 over 7x7 with K = 512 ran 353 us
//   against OpenBLAS's 285);
// - K past the small-k kernel's 256, or past 128 when strided: below that
//   the small-k kernel on im2col tiles ran as fast or faster (K = 72 over
//   112x112: 601 us against 541-563; mobilenet's 3x3 stride-2 stem, K = 27:
//   405 against 357-369), but not at resnet's 7x7 stride-2 stem, K = 147,
//   where strided im2col is slow (1.75 ms against 2.25-2.38).
// With 512-bit blocks (dense::WideBlocks), K past 48 at stride 1 and any K
// when strided: there the shifted GEMM (or the position GEMM, over 256
// outputs or fewer) beat the small-k kernel on im2col tiles (one-node
// models, inspector-cli run on two cores, node medians of 5 rounds
// alternating, on a Zen 5): at stride 1, googlenet's 24 -> 64 over 14x14
// 48 -> 31 us, 16 -> 48 over 14x14 31 -> 21, 28 -> 64 over 28x28 113 ->
// 86, 16 -> 64 over 56x56 190 -> 168, 8 -> 16 over 56x56 50 -> 48; at
// stride 2, mobilenet_v2's stem (3 -> 32 from 224x224) 115 -> 97, 12 -> 64
// from 28x28 33 -> 28. Not at stride 1 with K = 27 or 36: VGG's 3 -> 64
// over 224x224 512 -> 756, 4 -> 32 over 56x56 49 -> 51 (a slab of 27 taps
// is too short to pay for storing each block's sums).
bool UsesShifted(const WindowGeometry& g, int64_t K) {
  const bool strided = g.strides != std::vector<int64_t>{1, 1, 1};
  if (dense::WideBlocks()) return g.kernel_size() > 1 && (strided || K > 48);
  return g.kernel_size() > 1 && K > (strided ? 128 : dense::kSmallK);
}

// Whether a 1x1 convolution (stride 1: B is X's rows as they are, one run
// of columns) runs the shifted GEMM rather than OpenBLAS: K past the small-k
// kernel's, a plane of 128 positions or more (a 7x7 plane's 49 columns
// leave most of a panel empty) and 64 output channels or more, over which
// packing X's panels once pays. googlenet's 14x14 1x1 convolutions in the
// model (inspector-cli run --streams 1, node medians, 5 or 6 rounds
// alternating): 480 -> 192 channels 270 -> 212 us, 528 -> 256 378 -> 304,
// 512 -> 112 180 -> 143, 512 -> 64 107 -> 94; mobilenet_v2's 384 -> 64 84
// -> 74. With fewer channels OpenBLAS stays ahead (ops-debug profile, 5
// rounds alternating): 512 -> 48 53 against 68 us, 512 -> 16 28 against 42.
//
// With 512-bit blocks (dense::WideBlocks) the shifted GEMM runs at twice
// the rate of Debian's OpenBLAS, whose kernels are 256-bit: then from 32
// positions and 8 channels (ops-debug profile --mode kernel, one core, 5
// rounds alternating, on a Zen 5: googlenet's 1x1s 480 -> 16 over 14x14
// 36 -> 26 us, 512 -> 24 51 -> 34, 528 -> 32 73 -> 44, 512 -> 48 111 ->
// 58; over 7x7, 832 -> 32 36 -> 28, 832 -> 48 52 -> 46, 832 -> 128 117 ->
// 81). Over fewer positions OpenBLAS stayed ahead (1024 -> 256 over 1x1
// 46 against 53, 512 -> 32 over 5x5 15 against 18).
bool ShiftedPointwise(const WindowGeometry& g, int64_t K, int64_t M) {
  const bool wide = dense::WideBlocks();
  return g.kernel_size() == 1 && g.strides == std::vector<int64_t>{1, 1, 1} && K > dense::kSmallK &&
         g.out_size() >= (wide ? 32 : 128) && M >= (wide ? 8 : 64);
}

// A float convolution as dense_smallk.h's shifted GEMM: each image-group's
// input padded and split into phases once (PhaseGrid), tap (c, kd, kh, kw)
// its phase plane shifted, and each block's output written straight to Y,
// a run of the grid per output row. No im2col matrix is written: each slab's panels are copied straight
// from the grid, one copy of the K x P unfolded columns where im2col and
// OpenBLAS's packing made two (a quarter of a 3x3 conv's time).
//
// With FusedConv's Z (`z`, Y's shape), each block starts at bias + Z and the
// GEMM adds the products to it (no row_init), so a ReLU is still applied as
// the kernel stores and nothing makes a pass of its own over the block. `e`
// carries the activation alone.
Status ShiftedConv(KernelContext& ctx, dense::ShiftedGemmFn gemm, const ConvDims& d, const WindowGeometry& g,
                   const float* x, const float* w, const float* bias, const float* z, const dense::Epilogue& e,
                   int workers, float* y) {
  const int64_t cg = d.c / d.group, mg = d.m / d.group, kvol = g.kernel_size(), K = cg * kvol;
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
  const int64_t oH = g.out[1], oW = g.out[2], P = g.out[0] * oH * oW;
  const PhaseGrid grid(g);
  const int64_t Hq = grid.q[1], Wq = grid.q[2];
  // Padded and strided or dilated: the phase grid; padded at stride 1 with
  // the plane's size kept: X as it is, the borders masked.
  const bool straight = !grid.identity && ReadsPlaneStraight(g);
  const dense::PlaneBorders borders{H, W, g.kernel[1], g.kernel[2], g.pads_begin[1], g.pads_begin[2]};
  const std::vector<int64_t> off = straight ? StraightTapOffsets(g, K) : TapOffsets(g, grid, K);
  GemmTiles t = ChooseTiles(K, mg, P, sizeof(float), workers, ctx.tunable("tile", 0));
  // Each block packs its own columns of X: where ChooseTiles split the
  // output channels (OpenBLAS packs W's rows a block), every row block
  // packed the same columns again. Whole panels of columns first, down to
  // one a block, as many blocks as ChooseTiles wanted (googlenet's 512 -> 64
  // 1x1 over 14x14: 122 us in blocks of 16 rows, 94 in blocks of columns,
  // OpenBLAS 107).
  const int64_t panels = (P + dense::kPanel - 1) / dense::kPanel;
  if (ctx.tunable("tile", 0) <= 0 && t.rows < mg) {
    const int64_t blocks = ((P + t.tile - 1) / t.tile) * ((mg + t.rows - 1) / t.rows);
    if (panels >= blocks) t = GemmTiles{(P + blocks - 1) / blocks, mg};
  }
  const RowBlocks rows_of(mg, t.rows);
  const ColumnBlocks cols_of(P, t.tile, ctx.tunable("tile", 0) > 0, dense::WideBlocks(), workers, rows_of.count);
  const int64_t col_blocks = cols_of.count, row_blocks = rows_of.count;
  const StoreClamp clamp = ClampOf(e);
  // Not zeroed first: conv_phases writes every element of the grid, its
  // padding too (a zeroed vector was a memset of the whole grid per call,
  // 3% of a 3x3 conv's time over 56x56).
  const bool gridded = !grid.identity && !straight;
  // The launching thread's grid, kept between calls: new memory each call
  // (613 KB for a 7x7 stride-2 stem over 224x224) came cold from DRAM.
  thread_local std::vector<float> grid_buffer;
  if (gridded) grid_buffer.resize(static_cast<size_t>(cg * grid.phases * grid.plane));
  float* const xgrid = gridded ? grid_buffer.data() : nullptr;
  std::vector<float> zeros(static_cast<size_t>(mg), 0.0f);
  for (int64_t n = 0; n < d.n; ++n) {
    for (int64_t grp = 0; grp < d.group; ++grp) {
      const float* xg = x + (n * d.c + grp * cg) * D * H * W;
      float* yg = y + (n * d.m + grp * mg) * P;
      const float* zg = z != nullptr ? z + (n * d.m + grp * mg) * P : nullptr;
      const float* bg = bias != nullptr ? bias + grp * mg : zeros.data();
      if (gridded) OPSCOPE_RETURN_IF_ERROR(FillPhaseGrid(ctx, g, grid, xg, cg, xgrid));
      const float* src = gridded ? xgrid : xg;
      OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor("conv_shifted_gemm", col_blocks * row_blocks,
                                              [&](int64_t begin, int64_t end) {
        thread_local std::vector<dense::ColumnRun> runs;
        for (int64_t b = begin; b < end; ++b) {
          int64_t p0, p1;
          cols_of.Range(b % col_blocks, p0, p1);
          int64_t m0, m1;
          rows_of.Range(b / col_blocks, m0, m1);
          // Output p = (od, oh, ow) reads the grid at (od * Hq + oh) * Wq + ow:
          // a run per output row of the block.
          runs.clear();
          // Straight from X's plane: the block's columns are one run (output p reads p + off).
          if (straight) runs.push_back({0, p1 - p0, p0});
          for (int64_t p = p0; p < p1 && !straight;) {
            const int64_t row = p / oW, ow = p % oW, len = std::min(p1 - p, oW - ow);
            runs.push_back({p - p0, len, ((row / oH) * Hq + row % oH) * Wq + ow});
            p += len;
          }
          // With Z the block starts at bias + Z: no row_init, the GEMM adds to C.
          if (zg != nullptr) {
            for (int64_t m = m0; m < m1; ++m) {
              const float* zr = zg + m * P;
              float* yr = yg + m * P;
              for (int64_t p = p0; p < p1; ++p) yr[p] = bg[m] + zr[p];
            }
          }
          gemm(m1 - m0, p1 - p0, K, w + (grp * mg + m0) * K, K, src, off.data(), runs.data(),
               static_cast<int64_t>(runs.size()), yg + m0 * P + p0, P, zg != nullptr ? nullptr : bg + m0, clamp.lo,
               clamp.hi, straight ? &borders : nullptr);
          if (!clamp.applied) {
            for (int64_t m = m0; m < m1; ++m) e.Run(yg + m * P + p0, p1 - p0, 0.0f);
          }
        }
      }, 1));
    }
  }
  return Status::Ok();
}

// A float convolution with few outputs a plane (PositionConvFits) whose W
// is a model's weights (frozen) as dense_smallk.h's position GEMM: W^T's
// panels packed once and kept beside W, each output position a row read where it lies
// in the padded (phase) grid, the channels the panels' columns. Blocks as
// PositionTiles cuts them; each block's C^T starts at bias (+ Z) in
// a scratch of whole panels and is written out to Y's rows transposed, the
// activation clamped or run as it goes. The sums are the shifted GEMM's:
// the same bits.
// How PositionConv cuts its P positions by np panels of 16 channels: runs
// of at most 96 positions by runs of at most six panels (the C^T scratch
// 96 x 96 floats, 36 KB), each as even as they go. Of those cuts, the one
// whose slowest worker is done first, the blocks taken in turn: a block
// costs its positions times its panels, plus kPanelRead positions a panel
// for reading the panel's slabs of W^T once more, from L3 (64 bytes a tap
// against 32 flops a tap and position: about 7 positions' time at 30 GB/s
// and 110 GFLOP/s a core, more with both cores reading; at 7 googlenet's
// inception4a, 96 -> 208 over 14x14, went to four runs of positions and
// ran 0.98x, 0 of 6 rounds; at 20 it keeps three). Fewer blocks on a tie,
// and at least two panels a block where there are two (the model had put
// 13 panels in 52 blocks of one for a few percent it could not promise).
// Before, blocks of 64 channels and 96 positions: 5 blocks for 160 -> 320
// over 7x7 (googlenet's inception5a), 3 on one worker and 2 on the other.
// With `wide` (512-bit blocks, which take panels three or two at a time:
// dense_smallk_avx2.cc's PositionPanels) the panels are cut in threes or in
// pairs, whichever finishes first (threes on a tie: eight positions by
// three panels a block ran a 160 -> 320 3x3 over 14x14 865 -> 814-839 us on
// one core, against pairs); blocks of five had run their fifth panel
// alone, at two thirds of a pair's rate (inception4e's 160 -> 320 over
// 14x14: a seventh of its time in blocks of one panel), and threes alone
// left 20 panels over 7x7 as seven blocks on two workers (inception5a's
// 3x3, 143 -> 183 us).
struct PositionTiles {
  int64_t pos_blocks = 1, chan_blocks = 1, panels = 1, unit = 1, units = 1;
  static constexpr int64_t kMaxPositions = 96, kMaxPanels = 6, kPanelRead = 20;
  PositionTiles(int64_t P, int64_t M, int workers, bool wide) : panels((M + dense::kPanel - 1) / dense::kPanel) {
    const int64_t w = std::max(workers, 1);
    int64_t best = -1, best_blocks = 0;
    for (const int64_t u : wide ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{1}) {
      const int64_t us = (panels + u - 1) / u;
      const int64_t pb0 = (P + kMaxPositions - 1) / kMaxPositions;
      const int64_t most = std::max<int64_t>(1, kMaxPanels / u), fewest = (us + most - 1) / most;
      const int64_t cb_max = u == 1 ? std::max<int64_t>(1, panels / 2) : us;
      for (int64_t pb = pb0; pb <= std::min(P, 4 * pb0); ++pb) {
        for (int64_t cb = fewest; cb <= std::max(fewest, cb_max); ++cb) {
          const int64_t pos = (P + pb - 1) / pb, pan = std::min(panels, (us + cb - 1) / cb * u), blocks = pb * cb;
          const int64_t finish = (blocks + w - 1) / w * pan * (pos + kPanelRead);
          if (best < 0 || finish < best || (finish == best && blocks < best_blocks)) {
            best = finish, best_blocks = blocks, pos_blocks = pb, chan_blocks = cb, unit = u, units = us;
          }
        }
      }
    }
    // The grid's blocks: positions vary fastest, so blocks taken together
    // read the same panels of W^T. Cuts rounded up, the larger runs first:
    // the workers take the blocks in order, and the last ones taken decide
    // when the slowest is done (13 panels as 3, 3, 3 and 4 ran inception4a
    // 0.92-0.96x in the rounds the machine kept its speed).
    for (int64_t ci = 0; ci < chan_blocks; ++ci) {
      for (int64_t pi = 0; pi < pos_blocks; ++pi) {
        int64_t p0, p1;
        RunRange(pi, P, p0, p1);
        blocks_.push_back({p0, p1, std::min(M, Cut(ci, units, chan_blocks) * unit * dense::kPanel),
                          std::min(M, Cut(ci + 1, units, chan_blocks) * unit * dense::kPanel)});
      }
    }
    SplitLeftOver(P, w);
  }
  int64_t count() const { return static_cast<int64_t>(blocks_.size()); }
  // Block b's positions [p0, p1) and channels [m0, m1).
  void Range(int64_t b, int64_t& p0, int64_t& p1, int64_t& m0, int64_t& m1) const {
    p0 = blocks_[b].p0, p1 = blocks_[b].p1, m0 = blocks_[b].m0, m1 = blocks_[b].m1;
  }
  // Run pi of positions [p0, p1): what PackPositions gathers at once.
  void RunRange(int64_t pi, int64_t P, int64_t& p0, int64_t& p1) const {
    p0 = Cut(pi, P, pos_blocks), p1 = Cut(pi + 1, P, pos_blocks);
  }

 private:
  struct Block {
    int64_t p0, p1, m0, m1;
  };
  std::vector<Block> blocks_;
  static int64_t Cut(int64_t i, int64_t n, int64_t parts) { return (i * n + parts - 1) / parts; }
  // When the slowest of w workers is done with `b`, each block taken in
  // order by the first worker free, at kPanelRead positions a panel more.
  static int64_t Finish(const std::vector<Block>& b, int64_t w) {
    std::vector<int64_t> free_at(static_cast<size_t>(w), 0);
    for (const Block& k : b) {
      const int64_t pan = (k.m1 - k.m0 + dense::kPanel - 1) / dense::kPanel;
      *std::min_element(free_at.begin(), free_at.end()) += pan * (k.p1 - k.p0 + kPanelRead);
    }
    return *std::max_element(free_at.begin(), free_at.end());
  }
  // One run of positions whose channel blocks do not go evenly onto the
  // workers (mobilenet_v2's 960 -> 160 over 7x7: five pairs of panels, three
  // on one of two workers, 0.74 of two cores' speed): the last ones split
  // by positions, a part for each worker, where that is done sooner.
  void SplitLeftOver(int64_t P, int64_t w) {
    const int64_t left = chan_blocks % w;
    if (pos_blocks != 1 || w < 2 || left == 0 || P < 2 * w) return;
    std::vector<Block> split(blocks_.begin(), blocks_.end() - left);
    for (auto it = blocks_.end() - left; it != blocks_.end(); ++it) {
      for (int64_t part = 0; part < w; ++part) split.push_back({Cut(part, P, w), Cut(part + 1, P, w), it->m0, it->m1});
    }
    if (Finish(split, w) < Finish(blocks_, w)) blocks_ = std::move(split);
  }
};

Status PositionConv(KernelContext& ctx, dense::PositionGemmFn gemm, dense::PositionsOutFn out,
                    const dense::PackedPanels& wt, const ConvDims& d, const WindowGeometry& g, const float* x,
                    const float* bias, const float* z, const dense::Epilogue& e, float* y) {
  const int64_t cg = d.c, M = d.m, K = cg * g.kernel_size();
  const int64_t oH = g.out[1], oW = g.out[2], P = g.out[0] * oH * oW;
  // A 1x1 window without pads (PositionPointwiseFits) reads X in place, at
  // any stride: output (od, oh, ow) at X's (od s0, oh s1, ow s2), channel c
  // a plane further on; its positions are gathered (packed) before the
  // GEMM, so no grid is written. Other windows read the padded (phase) grid.
  const bool pack = g.kernel_size() == 1;
  const PhaseGrid grid(g);
  const bool gridded = !grid.identity && !pack;
  // Tap k's start: channel k of X (a 1x1 read in place), or of the grid.
  std::vector<int64_t> off(static_cast<size_t>(pack ? K : 0));
  for (int64_t c = 0; c < static_cast<int64_t>(off.size()); ++c) off[c] = c * g.in_size();
  if (!pack) off = TapOffsets(g, grid, K);
  const StoreClamp clamp = ClampOf(e);
  const int workers = ctx.device() != nullptr ? std::max(1, ctx.device()->info().compute_units) : 1;
  const PositionTiles tiles(P, M, workers, dense::WideBlocks());
  thread_local std::vector<float> grid_buffer;  // kept between calls, as ShiftedConv's
  if (gridded) grid_buffer.resize(static_cast<size_t>(cg * grid.phases * grid.plane));
  float* const xgrid = gridded ? grid_buffer.data() : nullptr;
  // Each run of positions gathered once an image (PackPositions), for every
  // block of channels that reads it; the GEMM then reads rows[p] + 6 tap.
  std::vector<int64_t> run_at(static_cast<size_t>(tiles.pos_blocks + 1), 0);
  for (int64_t pi = 0; pi < tiles.pos_blocks; ++pi) {
    int64_t p0, p1;
    tiles.RunRange(pi, P, p0, p1);
    run_at[pi + 1] = run_at[pi] + (pack ? dense::PackedPositionsFloats(p1 - p0, K) : 0);
  }
  // The launching thread's buffer, kept between calls (a 1x1 over 7x7 with
  // K = 960 packs 200 KB: fresh pages each call). Named by pointer: a worker
  // naming a thread_local would get its own.
  thread_local std::vector<float> pack_buffer;
  pack_buffer.resize(static_cast<size_t>(run_at.back()));
  float* const packed = pack_buffer.data();
  std::vector<const float*> grid_rows(static_cast<size_t>(P)), rows(pack ? P : 0);
  std::vector<int64_t> off6(pack ? K : 0);
  for (int64_t p = 0; p < static_cast<int64_t>(off6.size()); ++p) off6[p] = 6 * p;
  for (int64_t pi = 0; pack && pi < tiles.pos_blocks; ++pi) {
    int64_t p0, p1;
    tiles.RunRange(pi, P, p0, p1);
    dense::PackedPositionBases(p1 - p0, K, packed + run_at[pi], rows.data() + p0);
  }
  for (int64_t n = 0; n < d.n; ++n) {
    const float* xn = x + n * d.c * g.in_size();
    float* yn = y + n * M * P;
    const float* zn = z != nullptr ? z + n * M * P : nullptr;
    if (gridded) OPSCOPE_RETURN_IF_ERROR(FillPhaseGrid(ctx, g, grid, xn, cg, xgrid));
    const float* src = gridded ? xgrid : xn;
    // Output p = (od, oh, ow) reads the grid at (od * Hq + oh) * Wq + ow, or
    // X in place at ((od s0) H + oh s1) W + ow s2.
    for (int64_t p = 0; p < P; ++p) {
      const int64_t row = p / oW, od = row / oH, oh = row % oH, ow = p % oW;
      grid_rows[p] = pack ? src + ((od * g.strides[0]) * g.in[1] + oh * g.strides[1]) * g.in[2] + ow * g.strides[2]
                          : src + (od * grid.q[1] + oh) * grid.q[2] + ow;
    }
    if (pack) {
      OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor("conv_position_pack", K, [&](int64_t k0, int64_t k1) {
        for (int64_t pi = 0; pi < tiles.pos_blocks; ++pi) {
          int64_t p0, p1;
          tiles.RunRange(pi, P, p0, p1);
          dense::PackPositions(p1 - p0, K, k0, k1, grid_rows.data() + p0, off.data(), packed + run_at[pi]);
        }
      }, std::max<int64_t>(1, (int64_t{1} << 14) / P)));
    }
    const float* const* base_of = pack ? rows.data() : grid_rows.data();
    const int64_t* off_of = pack ? off6.data() : off.data();
    OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor("conv_position_gemm", tiles.count(),
                                            [&](int64_t begin, int64_t end) {
      thread_local std::vector<float> ct;
      for (int64_t b = begin; b < end; ++b) {
        int64_t p0, p1, m0, m1;
        tiles.Range(b, p0, p1, m0, m1);
        const int64_t np = p1 - p0, ld = (m1 - m0 + dense::kPanel - 1) / dense::kPanel * dense::kPanel;
        // Each row of C^T starts as the bias row (a copy), plus Z's column where there is one.
        ct.resize(static_cast<size_t>(np * ld));
        for (int64_t j = 0; j < np; ++j) {
          float* cj = ct.data() + j * ld;
          if (bias != nullptr) std::copy(bias + m0, bias + m1, cj);
          else std::fill(cj, cj + (m1 - m0), 0.0f);
          std::fill(cj + (m1 - m0), cj + ld, 0.0f);
          if (zn != nullptr) {
            for (int64_t m = m0; m < m1; ++m) cj[m - m0] += zn[m * P + p0 + j];
          }
        }
        gemm(np, K, base_of + p0, off_of, wt, m0, m1, ct.data(), ld);
        // std::max(x, lo) then std::min(x, hi), transposed into Y's rows: NaN
        // stays NaN, -0.0 stays -0.0 (the kernels' clamp).
        out(np, m1 - m0, ct.data(), ld, yn + m0 * P + p0, P, clamp.lo, clamp.hi);
        for (int64_t m = m0; !clamp.applied && m < m1; ++m) e.Run(yn + m * P + p0, np, 0.0f);
      }
    }, 1));
  }
  return Status::Ok();
}

// W^T's panels (W [M, K] read as op(B) = W^T: k = K, n = M), kept beside W
// where W is frozen (a model's weights) and float32; nullptr otherwise, and
// the shifted GEMM runs instead, with the same bits. (Packed for one call,
// the transposing copy cost more than the position GEMM saves: 3.2-4.0 ms
// against 1.8 for a 3x3 over 7x7, 512 -> 512 channels.)
std::shared_ptr<const dense::PackedPanels> KeptPanelsOfW(const Tensor& wt, const float* w, int64_t K, int64_t M) {
  if (wt.dtype() != DType::kF32 || !wt.is_contiguous() || w != wt.data<float>()) return nullptr;
  return std::static_pointer_cast<const dense::PackedPanels>(FrozenDerived(wt, "conv_wt_panels", [&] {
    return std::static_pointer_cast<const void>(dense::PackPanels(w, K, true, K, M));
  }));
}

// Whether a float convolution with a frozen W runs PositionConv rather than
// ShiftedConv: one group, at most 256 outputs a plane, and a window the
// shifted GEMM would run. With W's panels kept (`ops-debug profile` with W
// frozen), 5 rounds alternating, medians: a 3x3 over 7x7, 512 -> 512
// channels, 1596 -> 1286 us; 160 -> 320, 584 -> 489; 832 -> 48, 646 -> 524;
// over 14x14, 256 -> 256, 1277 -> 1202.
//
// And 1x1 convolutions without pads over at most 64 positions (7x7) with
// 128 output channels or more, their X packed first (PackPositions): there they
// ran OpenBLAS (K > 256) or the small-k kernel, whose 16-column panels hold
// a 7x7 plane's 49 columns as three and a part. In the model (inspector-cli
// run --streams 1, node medians, 6 rounds alternating): mobilenet_v2's
// 320 -> 1280 338 -> 257 us, 160 -> 960 145-149 -> 105-107, 960 -> 320 237
// -> 205, 960 -> 160 128 -> 120; googlenet's 832 -> 128 to 384 1.11-1.20x
// on one core. Not with fewer channels, where the pack is most of the work
// (832 -> 32 and 48 0.74-0.79x), nor over 14x14 (mobilenet_v2's 0.69-0.93x),
// nor unpacked (X's rows 49 floats apart: 0.83-0.95x before). At stride 2,
// where they had unfolded strided im2col tiles for the small-k kernel,
// resnet18's 256 -> 512 downsample onto 7x7 221 -> 143 us (1.59x paired, 8
// of 8; 1.45x on one core). Strided, up to 256 positions: resnet18's 128 ->
// 256 downsample onto 14x14 on the 512-bit blocks (a Zen 5) 82 -> 66 us on
// one core (4 rounds alternating), 55.5 -> 50.3 in the model (6 rounds,
// lower in each).
bool PositionPointwiseFits(const ConvDims& d, const WindowGeometry& g, int64_t P) {
  const bool strided = g.strides != std::vector<int64_t>{1, 1, 1};
  return g.kernel_size() == 1 && (P <= 64 || (strided && P <= 256)) && d.m >= 128 &&
         g.pads_begin == std::vector<int64_t>{0, 0, 0};
}

bool PositionConvFits(const ConvDims& d, const WindowGeometry& g, int64_t K, int64_t P) {
  return d.group == 1 && P <= 256 && (UsesShifted(g, K) || PositionPointwiseFits(d, g, P));
}

template <typename T>
Status ConvTyped(KernelContext& ctx, const ConvDims& d, const Tensor& xt, const Tensor& wt, const Tensor* bt,
                 const Tensor* zt, const dense::Epilogue& epilogue) {
  using C = dense::AccOf<T>;
  const WindowGeometry g = dense::As3d(d.g);
  std::vector<C> x_buf, w_buf, b_buf, y_buf, z_buf;
  const C* x = dense::LoadAs<T, C>(xt, x_buf);
  const C* w = dense::LoadAs<T, C>(wt, w_buf);
  const C* bias = bt ? dense::LoadAs<T, C>(*bt, b_buf) : nullptr;
  Tensor& yt = ctx.out(0);
  C* y;
  if constexpr (std::is_same_v<T, C>) {
    y = yt.data<T>();
  } else {
    y_buf.resize(yt.numel());
    y = y_buf.data();
  }
  // FusedConv's Z: the GEMM paths start each block at bias + Z and add the
  // products to it, then run the activation alone (`act`); the depthwise
  // paths, which write each output once, add it in the epilogue (`e`).
  const C* z = zt != nullptr ? dense::LoadAs<T, C>(*zt, z_buf) : nullptr;
  const dense::Epilogue& act = epilogue;
  dense::Epilogue e = epilogue;
  e.residual = z;
  e.residual_out = y;
  const int64_t cg = d.c / d.group, mg = d.m / d.group;
  const int64_t in_sz = g.in_size(), P = g.out_size(), kvol = g.kernel_size(), K = cg * kvol;
  const int workers = ctx.device() != nullptr ? std::max(1, ctx.device()->info().compute_units) : 1;

  if (cg == 1 && d.group > 1) {
    const std::vector<dense::TapReach> taps = dense::RowReaches(g);
    // Small float planes, one input channel per output channel: eight
    // channels at a time where all their weights are finite (dense_depthwise8.h).
    const DepthwiseRows rows = std::is_same_v<C, float> ? DepthwiseRowsOf(g) : DepthwiseRows::kCopied;
    const bool eight = std::is_same_v<C, float> && mg == 1 && dense::Depthwise3x3EightFits(g) &&
                       rows == DepthwiseRows::kCopied;
    // A block is whole channels, at least 16K outputs of them (whole runs of
    // eight for `eight`), in whole rounds over the workers.
    const int64_t grain =
        dense::WholeRoundsBlock(d.n * d.m, (int64_t{1} << 14) / std::max<int64_t>(P, 1), eight ? 8 : 1, workers);
    // Rows straight from X with the tail in registers: the channel's plane
    // goes to its kernel at once, nothing else decided a channel (through
    // Depthwise3x3's set-up and checks [1,576,14,14] took 3-5% longer), and
    // narrow planes go a run of channels a call.
    const bool direct = rows != DepthwiseRows::kCopied && dense::DepthwiseRowTailFits(e);
    const dense::DepthwiseRowTail direct_tail = direct ? dense::DepthwiseRowTailOf(e, 0.0f) : dense::DepthwiseRowTail{};
    OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor("conv_depthwise", d.n * d.m, [&](int64_t begin, int64_t end) {
      thread_local std::vector<C> pad;
      for (int64_t nm = begin; nm < end; ++nm) {
        const int64_t n = nm / d.m, m = nm % d.m, c = m / mg;
        if constexpr (std::is_same_v<C, float>) {
          if (direct && rows == DepthwiseRows::kNarrow && FiniteNine(w + m * kvol)) {
            // The run of this image's channels from m on with finite weights,
            // in one call (output channel j reading input channel j: mg is 1).
            int64_t count = 1;
            while (mg == 1 && nm + count < end && m + count < d.m && FiniteNine(w + (m + count) * kvol)) ++count;
            const dense::NarrowPlanesArgs planes{.x = x + (n * d.c + c) * in_sz, .x_plane = in_sz, .h = g.in[1],
                                                 .w = g.in[2], .stride = g.strides[1], .w9 = w + m * kvol,
                                                 .bias = bias != nullptr ? bias + m : nullptr, .y = y + nm * P,
                                                 .y_plane = P, .oh = g.out[1], .ow = g.out[2], .count = count};
            dense::Depthwise3x3NarrowPlanesWide(planes, direct_tail);
            nm += count - 1;
            continue;
          }
          if (direct && FiniteNine(w + m * kvol)) {
            dense::DepthwiseRowTail tail = direct_tail;
            tail.bias = bias != nullptr ? bias[m] : 0.0f;
            const float* xc = x + (n * d.c + c) * in_sz;
            if (rows == DepthwiseRows::kStride2) {
              dense::Depthwise3x3RowsS2(xc, g.in[1], g.in[2], g.out[1], w + m * kvol, y + nm * P, g.out[2], tail);
            } else {
              dense::Depthwise3x3SamePlaneWide(xc, g.in[1], g.in[2], w + m * kvol, y + nm * P, tail);
            }
            continue;
          }
          // Eight channels of one image, each with finite 3x3 weights.
          bool run8 = eight && m % 8 == 0 && m + 8 <= d.m && nm + 8 <= end;
          for (int64_t i = 0; run8 && i < 8 * 9; ++i) run8 = std::isfinite(w[m * 9 + i]);
          if (run8) {
            const float* next = nm + 16 <= end ? x + (n * d.c + c + 8) * in_sz : nullptr;
            if (next != nullptr && m + 16 > d.m) next = nullptr;  // the next image's: not worth the arithmetic
            // The bias and a Relu or Clip in registers; other tails after.
            const bool fused = dense::DepthwiseRowTailFits(e);
            dense::EightTail tail;
            if (fused) {
              const dense::DepthwiseRowTail t = dense::DepthwiseRowTailOf(e, 0.0f);
              tail.clamp = t.clamp, tail.lo = t.lo, tail.hi = t.hi;
              for (int j = 0; j < 8; ++j) tail.bias[j] = bias != nullptr ? bias[m + j] : 0.0f;
            }
            dense::Depthwise3x3Eight(x + (n * d.c + c) * in_sz, in_sz, w + m * kvol, g, y + nm * P, P, next,
                                     fused ? &tail : nullptr, pad);
            for (int64_t j = 0; !fused && j < 8; ++j) e.Run(y + (nm + j) * P, P, bias != nullptr ? bias[m + j] : C(0));
            nm += 7;
            continue;
          }
        }
        const C b = bias != nullptr ? bias[m] : C(0);
        if (Is3x3WithFiniteWeights(g, w + m * kvol)) {
          Depthwise3x3(x + (n * d.c + c) * in_sz, w + m * kvol, g, b, e, rows, pad, y + nm * P);
        } else {
          DepthwiseChannel(x + (n * d.c + c) * in_sz, w + m * kvol, g, taps, y + nm * P);
          e.Run(y + nm * P, P, b);
        }
      }
    }, grain));
  } else if (std::shared_ptr<const dense::PackedPanels> wt_panels =
                 std::is_same_v<C, float> && dense::Avx2PositionGemm() != nullptr && PositionConvFits(d, g, K, P)
                     ? KeptPanelsOfW(wt, reinterpret_cast<const float*>(w), K, d.m)
                     : nullptr) {
    if constexpr (std::is_same_v<C, float>) {
      OPSCOPE_RETURN_IF_ERROR(PositionConv(ctx, dense::Avx2PositionGemm(), dense::Avx2PositionsOut(), *wt_panels, d,
                                           g, x, bias, z, act, y));
    }
  } else if (dense::ShiftedGemmFn shifted = std::is_same_v<C, float> ? dense::Avx2ShiftedGemm() : nullptr;
             shifted != nullptr && (UsesShifted(g, K) || ShiftedPointwise(g, K, mg))) {
    if constexpr (std::is_same_v<C, float>) {
      OPSCOPE_RETURN_IF_ERROR(ShiftedConv(ctx, shifted, d, g, x, w, bias, z, act, workers, y));
    }
  } else {
    const bool direct = kvol == 1 && P == in_sz && g.pads_begin == std::vector<int64_t>{0, 0, 0} &&
                        g.strides == std::vector<int64_t>{1, 1, 1};
    const GemmTiles t = ChooseTiles(K, mg, P, sizeof(C), workers, ctx.tunable("tile", 0));
    // A short inner dimension (pointwise convolutions, few input channels) in
    // float32 runs dense_smallk.h's kernel rather than OpenBLAS.
    dense::SmallKGemmFn small_k = nullptr;
    if constexpr (std::is_same_v<C, float>) {
      if (K <= dense::kSmallK) small_k = dense::Avx2SmallKGemm();
    }
    const std::vector<dense::TapReach> taps = dense::RowReaches(g);
    // What the small-k kernel applies itself: no activation, ReLU or Clip.
    const StoreClamp clamp = ClampOf(act);
    // The small-k kernel's blocks in whole panels ([1,192,28,28] 1x1 in 4
    // tiles of 196 columns had run a masked 4-column panel in each); OpenBLAS's
    // as ChooseTiles cut them.
    const RowBlocks rows_of(mg, t.rows);
    const ColumnBlocks cols_of(P, t.tile, small_k == nullptr || ctx.tunable("tile", 0) > 0, false, workers,
                               rows_of.count);
    const int64_t col_blocks = cols_of.count, row_blocks = rows_of.count;
    // Split by channels, every block would unfold the same columns: unfold
    // them all once first (few columns: 4608 x 49 at resnet18's last layer).
    const bool shared_col = !direct && row_blocks > 1;
    std::vector<C> all_cols(shared_col ? K * P : 0);
    for (int64_t n = 0; n < d.n; ++n) {
      for (int64_t grp = 0; grp < d.group; ++grp) {
        const C* xg = x + (n * d.c + grp * cg) * in_sz;
        C* yg = y + (n * d.m + grp * mg) * P;
        const C* zg = z != nullptr ? z + (n * d.m + grp * mg) * P : nullptr;
        // Rows [m0, m1), columns [p0, p1) of the block at its bias (+ Z): the GEMM adds to them.
        auto start_block = [&](int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
          for (int64_t m = m0; m < m1; ++m) {
            const C b = bias != nullptr ? bias[grp * mg + m] : C(0);
            C* yr = yg + m * P;
            if (zg != nullptr) {
              const C* zr = zg + m * P;
              for (int64_t p = p0; p < p1; ++p) yr[p] = b + zr[p];
            } else {
              std::fill(yr + p0, yr + p1, b);
            }
          }
        };
        if (shared_col) {
          OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor("conv_im2col", K, [&](int64_t r0, int64_t r1) {
            Im2ColTile(xg, g, taps, r0, r1, 0, P, all_cols.data() + r0 * P);
          }, std::max<int64_t>(1, (int64_t{1} << 14) / P)));
        }
        OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor("conv_gemm", col_blocks * row_blocks, [&](int64_t begin, int64_t end) {
          thread_local std::vector<C> col;
          for (int64_t b = begin; b < end; ++b) {
            int64_t p0, p1;
            cols_of.Range(b % col_blocks, p0, p1);
            int64_t m0, m1;
            rows_of.Range(b / col_blocks, m0, m1);
            const C* cols = (shared_col ? all_cols.data() : xg) + p0;
            int64_t ldb = P;
            if (!direct && !shared_col) {
              col.resize(K * (p1 - p0));
              Im2ColTile(xg, g, taps, 0, K, p0, p1, col.data());
              cols = col.data();
              ldb = p1 - p0;
            }
            if constexpr (std::is_same_v<C, float>) {
              if (small_k != nullptr) {
                // One pass: each row starts at its bias, a ReLU or Clip is
                // applied as the kernel stores; other activations after it.
                // With Z the block is started at bias + Z and added to.
                thread_local std::vector<float> zeros;
                const float* init = nullptr;
                if (zg != nullptr) {
                  start_block(m0, m1, p0, p1);
                } else if (bias != nullptr) {
                  init = bias + grp * mg + m0;
                } else {
                  zeros.assign(static_cast<size_t>(m1 - m0), 0.0f);
                  init = zeros.data();
                }
                small_k(m1 - m0, p1 - p0, K, w + (grp * mg + m0) * K, K, cols, ldb, yg + m0 * P + p0, P, init,
                        clamp.lo, clamp.hi);
                if (!clamp.applied) {
                  for (int64_t m = m0; m < m1; ++m) act.Run(yg + m * P + p0, p1 - p0, C(0));
                }
                continue;
              }
            }
            // The tile starts at its bias (dense::FillBlock says why) and Z, the GEMM adds to it.
            start_block(m0, m1, p0, p1);
            dense::Gemm(false, false, m1 - m0, p1 - p0, K, C(1), w + (grp * mg + m0) * K, K, cols, ldb, C(1),
                        yg + m0 * P + p0, P);
            for (int64_t m = m0; m < m1; ++m) act.Run(yg + m * P + p0, p1 - p0, C(0));
          }
        }, 1));
      }
    }
  }
  if constexpr (!std::is_same_v<T, C>) dense::StoreAs<T, C>(y, yt.numel(), yt.data<T>());
  return Status::Ok();
}

}  // namespace

Status dense::ConvCpu(KernelContext& ctx, const Epilogue& e) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor x, ctx.in(0).Contiguous());
  OPSCOPE_ASSIGN_OR_RETURN(Tensor w, ctx.in(1).Contiguous());
  Tensor b;
  if (ctx.has_input(2)) {
    OPSCOPE_ASSIGN_OR_RETURN(b, ctx.in(2).Contiguous());
  }
  const Tensor* bp = b.defined() ? &b : nullptr;
  OPSCOPE_ASSIGN_OR_RETURN(ConvDims d, ConvShapes(x.shape(), w.shape(), bp ? &b.shape() : nullptr, ctx.attrs()));
  // FusedConv's Z: Y's shape and dtype (CheckResidual refused anything else before the run).
  Tensor z;
  if (ctx.has_input(3)) {
    OPSCOPE_RETURN_IF_ERROR(CheckResidual(ctx.op_name(), ctx.in(3).dtype(), ctx.in(3).shape(), x.dtype(), OutShape(d)));
    OPSCOPE_ASSIGN_OR_RETURN(z, ctx.in(3).Contiguous());
  }
  const Tensor* zp = z.defined() ? &z : nullptr;
  switch (x.dtype()) {
    case DType::kF64: return ConvTyped<double>(ctx, d, x, w, bp, zp, e);
    case DType::kF32: return ConvTyped<float>(ctx, d, x, w, bp, zp, e);
    case DType::kF16: return ConvTyped<Half>(ctx, d, x, w, bp, zp, e);
    default: return UnimplementedError(std::string("Conv: dtype ") + DTypeName(x.dtype()));
  }
}

namespace {

Status ConvCpu(KernelContext& ctx) { return dense::ConvCpu(ctx, dense::Epilogue{}); }

// ---- ConvTranspose kernel -------------------------------------------------------------------------

// Adds col[(m, kd, kh, kw), input position] into the output pixels those taps reach.
template <typename C>
void Col2ImChannel(const C* col, const WindowGeometry& g, int64_t m, C* y) {
  const int64_t oD = g.out[0], oH = g.out[1], oW = g.out[2];
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
  const int64_t kvol = g.kernel[0] * g.kernel[1] * g.kernel[2];
  for (int64_t kk = 0; kk < kvol; ++kk) {
    const int64_t kd = kk / (g.kernel[1] * g.kernel[2]);
    const int64_t kh = (kk / g.kernel[2]) % g.kernel[1];
    const int64_t kw = kk % g.kernel[2];
    const C* src = col + (m * kvol + kk) * D * H * W;
    for (int64_t id = 0; id < D; ++id) {
      const int64_t od = id * g.strides[0] - g.pads_begin[0] + kd * g.dilations[0];
      for (int64_t ih = 0; ih < H; ++ih, src += W) {
        const int64_t oh = ih * g.strides[1] - g.pads_begin[1] + kh * g.dilations[1];
        if (od < 0 || od >= oD || oh < 0 || oh >= oH) continue;
        C* dst = y + (od * oH + oh) * oW;
        for (int64_t iw = 0; iw < W; ++iw) {
          const int64_t ow = iw * g.strides[2] - g.pads_begin[2] + kw * g.dilations[2];
          if (ow >= 0 && ow < oW) dst[ow] += src[iw];
        }
      }
    }
  }
}

template <typename T>
Status ConvTransposeTyped(KernelContext& ctx, const ConvDims& d, const Tensor& xt, const Tensor& wt,
                          const Tensor* bt) {
  using C = dense::AccOf<T>;
  const WindowGeometry g = dense::As3d(d.g);
  std::vector<C> x_buf, w_buf, b_buf, y_buf;
  const C* x = dense::LoadAs<T, C>(xt, x_buf);
  const C* w = dense::LoadAs<T, C>(wt, w_buf);
  const C* bias = bt ? dense::LoadAs<T, C>(*bt, b_buf) : nullptr;
  Tensor& yt = ctx.out(0);
  y_buf.assign(yt.numel(), C(0));
  C* y = y_buf.data();
  const int64_t cg = d.c / d.group, mg = d.m / d.group;
  const int64_t in_sz = g.in_size(), P = g.out_size(), kvol = g.kernel_size();
  std::vector<C> col(mg * kvol * in_sz);
  for (int64_t n = 0; n < d.n; ++n) {
    for (int64_t grp = 0; grp < d.group; ++grp) {
      const C* xg = x + (n * d.c + grp * cg) * in_sz;
      const C* wg = w + grp * cg * mg * kvol;  // [cg, mg * kvol]
      OPSCOPE_RETURN_IF_ERROR(dense::ParallelGemm(
          ctx, "conv_transpose_gemm", true, false, mg * kvol, in_sz, cg, C(1), wg, mg * kvol, xg, in_sz, col.data(),
          in_sz, [&](const dense::GemmBlock& blk) { dense::FillBlock<C>(col.data(), in_sz, blk, nullptr); },
          [](const dense::GemmBlock&) {}));
      C* yg = y + (n * d.m + grp * mg) * P;
      OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor("conv_transpose_col2im", mg, [&](int64_t begin, int64_t end) {
        for (int64_t m = begin; m < end; ++m) Col2ImChannel(col.data(), g, m, yg + m * P);
      }, 4));
    }
  }
  OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor("conv_transpose_store", d.n * d.m, [&](int64_t begin, int64_t end) {
    for (int64_t nm = begin; nm < end; ++nm) {
      const C bv = bias ? bias[nm % d.m] : C(0);
      C* row = y + nm * P;
      for (int64_t p = 0; p < P; ++p) row[p] += bv;
      dense::StoreAs<T, C>(row, P, yt.data<T>() + nm * P);
    }
  }, 64));
  return Status::Ok();
}

Status ConvTransposeCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor x, ctx.in(0).Contiguous());
  OPSCOPE_ASSIGN_OR_RETURN(Tensor w, ctx.in(1).Contiguous());
  Tensor b;
  if (ctx.has_input(2)) {
    OPSCOPE_ASSIGN_OR_RETURN(b, ctx.in(2).Contiguous());
  }
  const Tensor* bp = b.defined() ? &b : nullptr;
  OPSCOPE_ASSIGN_OR_RETURN(ConvDims d,
                           ConvTransposeShapes(x.shape(), w.shape(), bp ? &b.shape() : nullptr, ctx.attrs()));
  switch (x.dtype()) {
    case DType::kF64: return ConvTransposeTyped<double>(ctx, d, x, w, bp);
    case DType::kF32: return ConvTransposeTyped<float>(ctx, d, x, w, bp);
    case DType::kF16: return ConvTransposeTyped<Half>(ctx, d, x, w, bp);
    default: return UnimplementedError(std::string("ConvTranspose: dtype ") + DTypeName(x.dtype()));
  }
}

// ---- references: direct loops over every output (Conv) or input (ConvTranspose) ----------------

int64_t Flatten(const std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  int64_t f = 0;
  for (size_t i = 0; i < dims.size(); ++i) f = f * dims[i] + idx[i];
  return f;
}

// For each position p of `from` and each kernel tap k, the flat position
// in `to` that p * stride - pad + k * dilation reaches, or -1 outside it:
// where Conv's output p reads X (from = out, to = in), and where
// ConvTranspose's input p writes Y (from = in, to = out). Worked out once,
// not for every channel.
std::vector<int64_t> TapTargets(const WindowGeometry& g, const std::vector<int64_t>& from,
                                const std::vector<int64_t>& to) {
  const int ns = g.spatial();
  const std::vector<std::vector<int64_t>> taps = dense::KernelTaps(g.kernel);
  const int64_t n_from = Product(from), kvol = static_cast<int64_t>(taps.size());
  std::vector<int64_t> at(static_cast<size_t>(n_from * kvol)), pos(ns);
  for (int64_t p = 0; p < n_from; ++p) {
    const std::vector<int64_t> pp = dense::Unflatten(p, from);
    for (int64_t k = 0; k < kvol; ++k) {
      const std::vector<int64_t>& kp = taps[static_cast<size_t>(k)];
      bool inside = true;
      for (int i = 0; i < ns; ++i) {
        pos[i] = pp[i] * g.strides[i] - g.pads_begin[i] + kp[i] * g.dilations[i];
        inside = inside && pos[i] >= 0 && pos[i] < to[i];
      }
      at[static_cast<size_t>(p * kvol + k)] = inside ? Flatten(pos, to) : -1;
    }
  }
  return at;
}

Status ConvReference(KernelContext& ctx) {
  const Shape* bs = ctx.has_input(2) ? &ctx.in(2).shape() : nullptr;
  OPSCOPE_ASSIGN_OR_RETURN(ConvDims d, ConvShapes(ctx.in(0).shape(), ctx.in(1).shape(), bs, ctx.attrs()));
  const std::vector<double> x = kernels::ToDoubles(ctx.in(0));
  const std::vector<double> w = kernels::ToDoubles(ctx.in(1));
  const std::vector<double> b = bs ? kernels::ToDoubles(ctx.in(2)) : std::vector<double>(d.m, 0.0);
  const WindowGeometry& g = d.g;
  const int64_t cg = d.c / d.group, mg = d.m / d.group;
  const int64_t out_sp = Product(g.out), in_sp = Product(g.in), kvol = Product(g.kernel);
  std::vector<double> y(d.n * d.m * out_sp);
  // Where each tap of output position o reads a channel's plane (-1: the padding).
  const std::vector<int64_t> at = TapTargets(g, g.out, g.in);
  for (int64_t n = 0; n < d.n; ++n) {
    for (int64_t m = 0; m < d.m; ++m) {
      const int64_t grp = m / mg;
      for (int64_t o = 0; o < out_sp; ++o) {
        const int64_t* at_o = at.data() + o * kvol;
        double s = b[m];
        for (int64_t ci = 0; ci < cg; ++ci) {
          const double* plane = x.data() + (n * d.c + grp * cg + ci) * in_sp;
          const double* wk = w.data() + (m * cg + ci) * kvol;
          for (int64_t k = 0; k < kvol; ++k) {
            if (at_o[k] >= 0) s += plane[at_o[k]] * wk[k];
          }
        }
        y[(n * d.m + m) * out_sp + o] = s;
      }
    }
  }
  kernels::FromDoubles(ctx.out(0), y);
  return Status::Ok();
}

Status ConvTransposeReference(KernelContext& ctx) {
  const Shape* bs = ctx.has_input(2) ? &ctx.in(2).shape() : nullptr;
  OPSCOPE_ASSIGN_OR_RETURN(ConvDims d,
                           ConvTransposeShapes(ctx.in(0).shape(), ctx.in(1).shape(), bs, ctx.attrs()));
  const std::vector<double> x = kernels::ToDoubles(ctx.in(0));
  const std::vector<double> w = kernels::ToDoubles(ctx.in(1));
  const WindowGeometry& g = d.g;
  const int64_t cg = d.c / d.group, mg = d.m / d.group;
  const int64_t out_sp = Product(g.out), in_sp = Product(g.in), kvol = Product(g.kernel);
  std::vector<double> y(d.n * d.m * out_sp, 0.0);
  if (bs != nullptr) {
    const std::vector<double> b = kernels::ToDoubles(ctx.in(2));
    for (int64_t nm = 0; nm < d.n * d.m; ++nm)
      for (int64_t o = 0; o < out_sp; ++o) y[nm * out_sp + o] = b[nm % d.m];
  }
  // Every input pixel scatters x * w into the outputs its kernel taps reach.
  const std::vector<int64_t> at = TapTargets(g, g.in, g.out);
  for (int64_t n = 0; n < d.n; ++n) {
    for (int64_t c = 0; c < d.c; ++c) {
      const int64_t grp = c / cg;
      for (int64_t i = 0; i < in_sp; ++i) {
        const int64_t* at_i = at.data() + i * kvol;
        const double xv = x[(n * d.c + c) * in_sp + i];
        for (int64_t mi = 0; mi < mg; ++mi) {
          double* ym = y.data() + (n * d.m + grp * mg + mi) * out_sp;
          const double* wk = w.data() + (c * mg + mi) * kvol;
          for (int64_t k = 0; k < kvol; ++k) {
            if (at_i[k] >= 0) ym[at_i[k]] += xv * wk[k];
          }
        }
      }
    }
  }
  kernels::FromDoubles(ctx.out(0), y);
  return Status::Ok();
}

Cost ConvCost(const OpCall& c) {
  // Each output element: (C / group) * kernel volume multiply-adds.
  const Shape& w = c.in(1).shape;
  int64_t per_out = 1;
  for (int i = 1; i < w.rank(); ++i) per_out *= w[i];
  int64_t read = c.in(0).bytes() + c.in(1).bytes();
  if (c.num_inputs() > 2 && c.in(2).present) read += c.in(2).bytes();
  return Cost{.bytes_read = read, .bytes_written = c.out(0).bytes(),
              .flops = 2.0 * static_cast<double>(c.out(0).numel()) * static_cast<double>(per_out)};
}

Cost ConvTransposeCost(const OpCall& c) {
  // Each input element scatters into (M / group) * kernel volume outputs.
  const Shape& w = c.in(1).shape;
  int64_t per_in = 1;
  for (int i = 1; i < w.rank(); ++i) per_in *= w[i];
  int64_t read = c.in(0).bytes() + c.in(1).bytes();
  if (c.num_inputs() > 2 && c.in(2).present) read += c.in(2).bytes();
  return Cost{.bytes_read = read, .bytes_written = c.out(0).bytes(),
              .flops = 2.0 * static_cast<double>(c.in(0).numel()) * static_cast<double>(per_in)};
}

}  // namespace

OPSCOPE_OP("Conv")
    .Doc("N-D convolution (1-D to 3-D) with groups, dilations, strides, pads/auto_pad and optional bias")
    .Input("X", "T").Input("W", "T").OptionalInput("B", "T").Output("Y", "T")
    .TypeConstraint("T", kConvTypes)
    .Attr("auto_pad", "NOTSET", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"})
    .Attr("dilations", std::vector<int64_t>{}).Attr("group", 1).Attr("kernel_shape", std::vector<int64_t>{})
    .Attr("pads", std::vector<int64_t>{}).Attr("strides", std::vector<int64_t>{})
    .Infer(ConvInfer)
    .Cost(ConvCost)
    // Output positions per GEMM block; 0 sizes them to the cache (ChooseTiles).
    .Tunable("tile", {0, 64, 256, 1024})
    .Reference(ConvReference)
    .Kernel("cpu", ConvCpu, "conv_cpu");

OPSCOPE_OP("ConvTranspose")
    .Doc("N-D transposed convolution (1-D to 3-D): groups, dilations, strides, pads, output_padding, output_shape")
    .Input("X", "T").Input("W", "T").OptionalInput("B", "T").Output("Y", "T")
    .TypeConstraint("T", kConvTypes)
    .Attr("auto_pad", "NOTSET", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"})
    .Attr("dilations", std::vector<int64_t>{}).Attr("group", 1).Attr("kernel_shape", std::vector<int64_t>{})
    .Attr("output_padding", std::vector<int64_t>{}).Attr("output_shape", std::vector<int64_t>{})
    .Attr("pads", std::vector<int64_t>{}).Attr("strides", std::vector<int64_t>{})
    .Infer(ConvTransposeInfer)
    .Cost(ConvTransposeCost)
    .Tunable("block", {4, 1, 16})
    .Reference(ConvTransposeReference)
    .Kernel("cpu", ConvTransposeCpu, "conv_transpose_cpu_openblas_col2im");

}  // namespace opscope
