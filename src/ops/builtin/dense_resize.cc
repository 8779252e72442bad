// Resize (ONNX opset 13): modes nearest (every nearest_mode) and linear
// (N-linear), with every coordinate_transformation_mode, from scales or sizes,
// over any number of dims. Cubic is rejected as unimplemented.
//
// The kernel precomputes, per dim, which source index (nearest) or which two
// source indices and weights (linear) each output coordinate reads; nearest is
// then one gather, linear one 1-D pass per resized dim (separable, as N-linear
// interpolation is). The reference evaluates every output element on its own,
// summing the 2^rank corners of its cell.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/builtin/dense_util.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

struct ResizePlan {
  Shape out;
  std::vector<double> scales;  // per dim; out / in when sizes were given
  std::vector<double> roi;     // 2 * rank values for tf_crop_and_resize, else empty
};

StatusOr<ResizePlan> PlanResize(const Shape& x, const Tensor* roi, const Tensor* scales, const Tensor* sizes,
                                const Attrs& attrs) {
  const std::string mode = attrs.s("mode", "nearest");
  if (mode == "cubic") {
    return UnimplementedError("Resize: mode 'cubic' is not implemented (modes nearest and linear are)");
  }
  const bool has_scales = scales != nullptr && scales->numel() > 0;
  const bool has_sizes = sizes != nullptr && sizes->numel() > 0;
  if (has_scales == has_sizes) {
    return InvalidArgumentError(std::string("Resize: exactly one of the inputs scales and sizes must be given") +
                                (has_scales ? " (got both)" : " (got neither; they must be constant)"));
  }
  ResizePlan p;
  std::vector<int64_t> out(x.rank());
  if (has_scales) {
    const std::vector<double> s = kernels::ToDoubles(*scales);
    if (static_cast<int>(s.size()) != x.rank()) {
      return InvalidArgumentError("Resize: scales has " + std::to_string(s.size()) + " values; expected " +
                                  std::to_string(x.rank()) + " (one per dim of X " + x.ToString() + ")");
    }
    for (int i = 0; i < x.rank(); ++i) {
      if (!(s[i] > 0)) {
        return InvalidArgumentError("Resize: scales[" + std::to_string(i) + "]=" + std::to_string(s[i]) +
                                    " must be > 0");
      }
      out[i] = static_cast<int64_t>(std::floor(s[i] * static_cast<double>(x[i])));
    }
    p.scales = s;
  } else {
    const std::vector<int64_t> s = kernels::ToInt64s(*sizes);
    if (static_cast<int>(s.size()) != x.rank()) {
      return InvalidArgumentError("Resize: sizes has " + std::to_string(s.size()) + " values; expected " +
                                  std::to_string(x.rank()) + " (one per dim of X " + x.ToString() + ")");
    }
    for (int i = 0; i < x.rank(); ++i) {
      if (s[i] < 0) return InvalidArgumentError("Resize: sizes=" + dense::Join(s) + " must be >= 0");
      out[i] = s[i];
      p.scales.push_back(x[i] ? static_cast<double>(s[i]) / static_cast<double>(x[i]) : 1.0);
    }
  }
  p.out = Shape(out);
  if (roi != nullptr && attrs.s("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize") {
    p.roi = kernels::ToDoubles(*roi);
  }
  return p;
}

// tf_crop_and_resize reads a box from roi: starts then ends, one per dim.
Status CheckRoi(const Attrs& attrs, bool has_roi, int64_t roi_numel, const Shape& x) {
  if (attrs.s("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize") return Status::Ok();
  if (!has_roi || roi_numel != 2 * x.rank()) {
    return InvalidArgumentError("Resize: coordinate_transformation_mode tf_crop_and_resize needs input roi with " +
                                std::to_string(2 * x.rank()) + " values (starts then ends per dim of X " +
                                x.ToString() + ")" + (has_roi ? "; got " + std::to_string(roi_numel) : ""));
  }
  return Status::Ok();
}

Status ResizeInfer(InferContext& c) {
  const Shape& x = c.input(0).shape;
  OPSCOPE_RETURN_IF_ERROR(CheckRoi(c.attrs(), c.has_input(1), c.has_input(1) ? c.input(1).numel() : 0, x));
  OPSCOPE_ASSIGN_OR_RETURN(ResizePlan p, PlanResize(x, nullptr, c.input_value(2), c.input_value(3), c.attrs()));
  c.SetOutput(0, c.input(0).dtype, p.out);
  return Status::Ok();
}

// ---- kernel ---------------------------------------------------------------------------------------

// Source coordinate of output coordinate `o` along one dim.
struct CoordMap {
  std::string mode;
  double scale;
  int64_t in_len, out_len;
  double roi_start = 0, roi_end = 1;

  double operator()(int64_t o) const {
    const double resized = scale * static_cast<double>(in_len);  // ONNX uses scale * length, not floor of it
    const double x = static_cast<double>(o);
    if (mode == "align_corners") return resized == 1 ? 0.0 : x * (in_len - 1) / (resized - 1);
    if (mode == "asymmetric") return x / scale;
    if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
    if (mode == "pytorch_half_pixel") return resized > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    if (mode == "tf_crop_and_resize") {
      const double span = (roi_end - roi_start) * (in_len - 1);
      return (resized > 1 ? x * span / (resized - 1) : span / 2) + roi_start * (in_len - 1);
    }
    return (x + 0.5) / scale - 0.5;  // half_pixel
  }
  bool Outside(double s) const { return mode == "tf_crop_and_resize" && (s < 0 || s > in_len - 1); }
};

CoordMap MapFor(const ResizePlan& p, const Shape& x, int dim, const Attrs& attrs) {
  CoordMap m{attrs.s("coordinate_transformation_mode", "half_pixel"), p.scales[dim], x[dim], p.out[dim]};
  if (!p.roi.empty()) {
    m.roi_start = p.roi[dim];
    m.roi_end = p.roi[dim + x.rank()];
  }
  return m;
}

int64_t NearestIndex(double s, const std::string& nearest_mode, int64_t in_len) {
  double r;
  if (nearest_mode == "round_prefer_ceil") r = std::floor(s + 0.5);
  else if (nearest_mode == "floor") r = std::floor(s);
  else if (nearest_mode == "ceil") r = std::ceil(s);
  else r = std::ceil(s - 0.5);  // round_prefer_floor
  return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in_len - 1);
}

template <typename T>
Status ResizeNearestTyped(KernelContext& ctx, const ResizePlan& p, const Tensor& x) {
  const Shape& in = x.shape();
  const int rank = in.rank();
  const std::string nm = ctx.attrs().s("nearest_mode", "round_prefer_floor");
  const T extrapolation = FromDouble<T>(ctx.attrs().f("extrapolation_value", 0.0));
  const std::vector<int64_t> in_strides = in.ContiguousStrides();
  // Per dim: source element offset of each output coordinate, -1 outside the roi.
  std::vector<std::vector<int64_t>> src(rank);
  for (int d = 0; d < rank; ++d) {
    const CoordMap m = MapFor(p, in, d, ctx.attrs());
    for (int64_t o = 0; o < p.out[d]; ++o) {
      const double s = m(o);
      src[d].push_back(m.Outside(s) ? -1 : NearestIndex(s, nm, in[d]) * in_strides[d]);
    }
  }
  const T* xp = x.data<T>();
  T* yp = ctx.out(0).data<T>();
  const int64_t last = rank ? p.out[rank - 1] : 1;
  const int64_t rows = last ? p.out.numel() / last : 0;
  return ctx.ParallelFor("resize_nearest", rows, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(std::max(rank - 1, 0));
    for (int64_t r = begin; r < end; ++r) {
      int64_t rem = r, base = 0;
      bool outside = false;
      for (int d = rank - 2; d >= 0; --d) {
        idx[d] = rem % p.out[d];
        rem /= p.out[d];
        const int64_t s = src[d][idx[d]];
        outside = outside || s < 0;
        base += s;
      }
      T* y = yp + r * last;
      if (rank == 0) {
        y[0] = xp[0];
        continue;
      }
      const std::vector<int64_t>& lastsrc = src[rank - 1];
      for (int64_t j = 0; j < last; ++j) y[j] = outside || lastsrc[j] < 0 ? extrapolation : xp[base + lastsrc[j]];
    }
  }, 64);
}

template <typename T>
Status ResizeLinearTyped(KernelContext& ctx, const ResizePlan& p, const Tensor& x) {
  using C = std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>,
                               float, double>;
  const Shape& in = x.shape();
  const int rank = in.rank();
  const C extrapolation = static_cast<C>(ctx.attrs().f("extrapolation_value", 0.0));
  std::vector<C> cur(x.numel()), next;
  const T* xp = x.data<T>();
  for (int64_t i = 0; i < x.numel(); ++i) cur[i] = static_cast<C>(ToDouble(xp[i]));
  std::vector<int64_t> dims = in.dims();
  for (int d = 0; d < rank; ++d) {
    const CoordMap m = MapFor(p, in, d, ctx.attrs());
    const int64_t out_len = p.out[d], in_len = in[d];
    struct Tap { int64_t i0, i1; C w1; bool outside; };
    std::vector<Tap> taps(out_len);
    bool identity = out_len == in_len;
    for (int64_t o = 0; o < out_len; ++o) {
      const double s = m(o);
      const double f = std::floor(s);
      const int64_t x0 = static_cast<int64_t>(f);
      taps[o] = {std::clamp<int64_t>(x0, 0, in_len - 1), std::clamp<int64_t>(x0 + 1, 0, in_len - 1),
                 static_cast<C>(s - f), m.Outside(s)};
      identity = identity && s == static_cast<double>(o);
    }
    if (identity) continue;  // this dim maps every coordinate onto itself
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < d; ++i) outer *= dims[i];
    for (int i = d + 1; i < rank; ++i) inner *= dims[i];
    next.assign(outer * out_len * inner, C(0));
    OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor("resize_linear_pass", outer * out_len, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t o = r / out_len, j = r % out_len;
        const Tap& t = taps[j];
        C* dst = next.data() + r * inner;
        if (t.outside) {
          std::fill(dst, dst + inner, extrapolation);
          continue;
        }
        const C* a = cur.data() + (o * in_len + t.i0) * inner;
        const C* b = cur.data() + (o * in_len + t.i1) * inner;
        const C w0 = C(1) - t.w1;
        for (int64_t i = 0; i < inner; ++i) dst[i] = w0 * a[i] + t.w1 * b[i];
      }
    }, 64));
    cur.swap(next);
    dims[d] = out_len;
  }
  T* yp = ctx.out(0).data<T>();
  for (int64_t i = 0; i < ctx.out(0).numel(); ++i) yp[i] = FromDouble<T>(static_cast<double>(cur[i]));
  return Status::Ok();
}

Status ResizeCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(const Tensor x, ctx.in(0).Contiguous());
  const Tensor* roi = ctx.has_input(1) ? &ctx.in(1) : nullptr;
  const Tensor* scales = ctx.has_input(2) ? &ctx.in(2) : nullptr;
  const Tensor* sizes = ctx.has_input(3) ? &ctx.in(3) : nullptr;
  OPSCOPE_ASSIGN_OR_RETURN(ResizePlan p, PlanResize(x.shape(), roi, scales, sizes, ctx.attrs()));
  const bool linear = ctx.attrs().s("mode", "nearest") == "linear";
  Status st;
  OPSCOPE_SWITCH_ALL(x.dtype(), {
    st = linear ? ResizeLinearTyped<scalar_t>(ctx, p, x) : ResizeNearestTyped<scalar_t>(ctx, p, x);
  });
  return st;
}

// ---- reference ------------------------------------------------------------------------------------

Status ResizeReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor* roi = ctx.has_input(1) ? &ctx.in(1) : nullptr;
  const Tensor* scales = ctx.has_input(2) ? &ctx.in(2) : nullptr;
  const Tensor* sizes = ctx.has_input(3) ? &ctx.in(3) : nullptr;
  OPSCOPE_ASSIGN_OR_RETURN(ResizePlan p, PlanResize(x.shape(), roi, scales, sizes, ctx.attrs()));
  const std::string ctm = ctx.attrs().s("coordinate_transformation_mode", "half_pixel");
  const std::string nearest_mode = ctx.attrs().s("nearest_mode", "round_prefer_floor");
  const bool linear = ctx.attrs().s("mode", "nearest") == "linear";
  const double extrapolation = ctx.attrs().f("extrapolation_value", 0.0);
  const std::vector<double> v = kernels::ToDoubles(x);
  const int rank = x.rank();
  const std::vector<int64_t> strides = x.shape().ContiguousStrides();
  std::vector<double> y(p.out.numel());
  std::vector<double> src(rank);
  for (int64_t flat = 0; flat < p.out.numel(); ++flat) {
    int64_t rem = flat;
    bool outside = false;
    for (int d = rank - 1; d >= 0; --d) {
      const double o = static_cast<double>(rem % p.out[d]);
      rem /= p.out[d];
      const double len = static_cast<double>(x.dim(d)), scale = p.scales[d], resized = scale * len;
      double s;
      if (ctm == "half_pixel") {
        s = (o + 0.5) / scale - 0.5;
      } else if (ctm == "pytorch_half_pixel") {
        s = resized > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
      } else if (ctm == "align_corners") {
        s = resized == 1 ? 0.0 : o * (len - 1) / (resized - 1);
      } else if (ctm == "asymmetric") {
        s = o / scale;
      } else if (ctm == "tf_half_pixel_for_nn") {  // opset 11 only; kept so converted models still run
        s = (o + 0.5) / scale;
      } else {  // tf_crop_and_resize
        const double a = p.roi[d], b = p.roi[d + rank];
        s = resized > 1 ? a * (len - 1) + o * (b - a) * (len - 1) / (resized - 1) : 0.5 * (a + b) * (len - 1);
        outside = outside || s < 0 || s > len - 1;
      }
      src[d] = s;
    }
    if (outside) {
      y[flat] = extrapolation;
      continue;
    }
    auto clampi = [&](double i, int d) { return std::min<double>(std::max<double>(i, 0), x.dim(d) - 1); };
    if (!linear) {
      int64_t off = 0;
      for (int d = 0; d < rank; ++d) {
        const double s = src[d];
        double r = nearest_mode == "floor"               ? std::floor(s)
                   : nearest_mode == "ceil"              ? std::ceil(s)
                   : nearest_mode == "round_prefer_ceil" ? (s - std::floor(s) >= 0.5 ? std::ceil(s) : std::floor(s))
                                                         : (s - std::floor(s) > 0.5 ? std::ceil(s) : std::floor(s));
        off += static_cast<int64_t>(clampi(r, d)) * strides[d];
      }
      y[flat] = v[off];
      continue;
    }
    // N-linear: every corner of the cell, weighted by the product of 1-D weights.
    double acc = 0;
    for (int64_t corner = 0; corner < (int64_t{1} << rank); ++corner) {
      double w = 1;
      int64_t off = 0;
      for (int d = 0; d < rank; ++d) {
        const double lo = std::floor(src[d]), frac = src[d] - lo;
        const bool hi = (corner >> d) & 1;
        w *= hi ? frac : 1 - frac;
        off += static_cast<int64_t>(clampi(hi ? lo + 1 : lo, d)) * strides[d];
      }
      if (w != 0) acc += w * v[off];
    }
    y[flat] = acc;
  }
  kernels::FromDoubles(ctx.out(0), y);
  return Status::Ok();
}

Cost ResizeCost(const OpCall& c) {
  const bool linear = c.attrs().s("mode", "nearest") == "linear";
  return Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes(),
              .flops = (linear ? 3.0 * c.in(0).shape.rank() : 0.0) * static_cast<double>(c.out(0).numel())};
}

}  // namespace

OPSCOPE_OP("Resize")
    .Doc("resize by scales or to sizes: nearest or (N-)linear, every coordinate_transformation_mode")
    .Input("X", "T1").OptionalInput("roi", "T2").ValueInput("scales", "TS", true).ValueInput("sizes", "TI", true)
    .Output("Y", "T1")
    .TypeConstraint("T1", AllDTypes())
    .TypeConstraint("T2", {DType::kF16, DType::kF32, DType::kF64})
    .TypeConstraint("TS", {DType::kF32})
    .TypeConstraint("TI", {DType::kI64})
    .Attr("coordinate_transformation_mode", "half_pixel",
          {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize",
           "tf_half_pixel_for_nn"})
    .Attr("cubic_coeff_a", -0.75f).Attr("exclude_outside", 0).Attr("extrapolation_value", 0.0f)
    .Attr("mode", "nearest", {"nearest", "linear", "cubic"})
    .Attr("nearest_mode", "round_prefer_floor", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
    .Infer(ResizeInfer)
    .Cost(ResizeCost)
    .Tunable("block", {64, 16, 256})
    .Reference(ResizeReference)
    .Kernel("cpu", ResizeCpu, "resize_cpu");

}  // namespace opscope
