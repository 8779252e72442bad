// Normalisations: BatchNormalization (opset 15: inference, and training_mode=1
// with running statistics), InstanceNormalization, LayerNormalization (opset
// 17, with the optional Mean / InvStdDev outputs) and LpNormalization (p = 1
// or 2: the "L2-normalize" op). Kernels run one block per normalised slice
// and sum in double (eight partial sums, SumOfD; float rows through the AVX2 table's moments); the references are plain loops over doubles.
#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/builtin/dense_util.h"
#include "ops/builtin/ew_vecmath.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

const std::vector<DType> kFloat3 = {DType::kF16, DType::kF32, DType::kF64};
const std::vector<DType> kFloat4 = {DType::kF16, DType::kF32, DType::kF64, DType::kBF16};

// Per-element typed load/store for the few kernels below that read a
// contiguous typed buffer; compiled per dtype, no virtual calls.
template <typename T>
inline double Ld(const T* p, int64_t i) { return ToDouble(p[i]); }
template <typename T>
inline void St(T* p, int64_t i, double v) { p[i] = FromDouble<T>(v); }

// Sums of term(p[j]) over p[0..n) (p[j], (p[j] - m)^2, |p[j]|), in double, in eight partial sums
// combined at the end: one double chain per element could not vectorise (no
// reassociation without fast-math), and held LayerNormalization and
// InstanceNormalization at 4x their memory bound. The eight sums are named
// variables, which stay in registers: as an array g++ kept them in memory,
// and every step waited on a store and a load (the sums were two thirds of
// LayerNormalization's time). The order is fixed, so the result is the same
// from run to run and thread count to thread count.
template <typename T, typename F>
double SumOfD(const T* p, int64_t n, const F& term) {
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    a0 += term(Ld(p, j));
    a1 += term(Ld(p, j + 1));
    a2 += term(Ld(p, j + 2));
    a3 += term(Ld(p, j + 3));
    a4 += term(Ld(p, j + 4));
    a5 += term(Ld(p, j + 5));
    a6 += term(Ld(p, j + 6));
    a7 += term(Ld(p, j + 7));
  }
  double tail = 0;
  for (; j < n; ++j) tail += term(Ld(p, j));
  return (((a0 + a4) + (a1 + a5)) + ((a2 + a6) + (a3 + a7))) + tail;
}

template <typename T>
double SumD(const T* p, int64_t n) {
  return SumOfD(p, n, [](double v) { return v; });
}

template <typename T>
double SumSquaredDeviationsD(const T* p, int64_t n, double m) {
  return SumOfD(p, n, [m](double v) { return (v - m) * (v - m); });
}

// A normalised slice's mean and sum of squared deviations: float rows
// through the AVX2 table's moments where the CPU has it, the rest through
// the two sums above. `vm` is ew::Avx2VecMath(), looked up once per kernel.
// `next_out` is the next slice's output (nullptr for the last), which the
// AVX2 moments fetch into cache along with the next slice.
template <typename T>
void Moments(const T* p, int64_t n, const ew::VecMath* vm, double* mean, double* squared_deviations, const T* next_out) {
  if constexpr (std::is_same_v<T, float>) {
    if (vm != nullptr) return vm->moments(p, n, mean, squared_deviations, next_out);
  }
  *mean = SumD(p, n) / static_cast<double>(n);
  *squared_deviations = SumSquaredDeviationsD(p, n, *mean);
}

int64_t SpatialSize(const Shape& s) {
  int64_t n = 1;
  for (int i = 2; i < s.rank(); ++i) n *= s[i];
  return n;
}

// ---- BatchNormalization ---------------------------------------------------------------------

Status BatchNormInfer(InferContext& c) {
  const Shape& x = c.input(0).shape;
  if (x.rank() < 2) {
    return InvalidArgumentError("BatchNormalization: input X has shape " + x.ToString() +
                                "; expected [N, C, ...] with rank >= 2");
  }
  const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (int i = 1; i < 5; ++i) {
    OPSCOPE_RETURN_IF_ERROR(dense::CheckVector("BatchNormalization", c.input(i), names[i], x[1]));
  }
  const bool training = c.attrs().i("training_mode") != 0;
  if (!training && c.num_outputs() > 1) {
    return InvalidArgumentError("BatchNormalization: outputs running_mean and running_var exist only with "
                                "training_mode=1 (got training_mode=0 and " + std::to_string(c.num_outputs()) +
                                " outputs)");
  }
  c.SetOutput(0, c.input(0).dtype, x);
  for (int i = 1; i < c.num_outputs(); ++i) c.SetOutput(i, c.input(3).dtype, Shape({x[1]}));
  return Status::Ok();
}

template <typename T>
Status BatchNormTyped(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(const Tensor x, ctx.in(0).Contiguous());
  const Shape& s = x.shape();
  const int64_t n = s[0], ch = s[1], sp = SpatialSize(s);
  const double eps = ctx.attrs().f("epsilon", 1e-5), momentum = ctx.attrs().f("momentum", 0.9);
  const bool training = ctx.attrs().i("training_mode") != 0;
  const std::vector<double> scale = kernels::ToDoubles(ctx.in(1)), bias = kernels::ToDoubles(ctx.in(2));
  std::vector<double> mean = kernels::ToDoubles(ctx.in(3)), var = kernels::ToDoubles(ctx.in(4));
  const T* xp = x.data<T>();
  T* yp = ctx.out(0).data<T>();
  if (training) {
    // Batch statistics per channel (biased variance), as ONNX's training mode.
    std::vector<double> bm(ch), bv(ch);
    OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor("batchnorm_stats", ch, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < n; ++i) {
          const T* p = xp + (i * ch + c) * sp;
          for (int64_t j = 0; j < sp; ++j) sum += Ld(p, j);
        }
        const double m = sum / static_cast<double>(n * sp);
        for (int64_t i = 0; i < n; ++i) {
          const T* p = xp + (i * ch + c) * sp;
          for (int64_t j = 0; j < sp; ++j) sq += (Ld(p, j) - m) * (Ld(p, j) - m);
        }
        bm[c] = m;
        bv[c] = sq / static_cast<double>(n * sp);
      }
    }, 1));
    for (int o = 1; o < ctx.num_outputs(); ++o) {
      Tensor& r = ctx.out(o);
      for (int64_t c = 0; c < ch; ++c) {
        const double running = o == 1 ? mean[c] * momentum + bm[c] * (1 - momentum)
                                      : var[c] * momentum + bv[c] * (1 - momentum);
        r.FlatSetFromDouble(c, running);
      }
    }
    mean = bm;
    var = bv;
  }
  using C = dense::AccOf<T>;
  std::vector<C> a(ch), b(ch);
  for (int64_t c = 0; c < ch; ++c) {
    const double inv = 1.0 / std::sqrt(var[c] + eps);
    a[c] = static_cast<C>(scale[c] * inv);
    b[c] = static_cast<C>(bias[c] - mean[c] * scale[c] * inv);
  }
  return ctx.ParallelFor("batchnorm_apply", n * ch, [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const C av = a[nc % ch], bv = b[nc % ch];
      const T* p = xp + nc * sp;
      T* q = yp + nc * sp;
      for (int64_t j = 0; j < sp; ++j) q[j] = static_cast<T>(static_cast<C>(p[j]) * av + bv);
    }
  }, 16);
}

Status BatchNormCpu(KernelContext& ctx) {
  return DispatchFloat(ctx.in(0).dtype(), ctx.op_name(),
                       [&]<typename scalar_t>() { return BatchNormTyped<scalar_t>(ctx); });
}

Status BatchNormReference(KernelContext& ctx) {
  const Shape& s = ctx.in(0).shape();
  const int64_t n = s[0], ch = s[1], sp = SpatialSize(s);
  const double eps = ctx.attrs().f("epsilon", 1e-5), momentum = ctx.attrs().f("momentum", 0.9);
  const std::vector<double> x = kernels::ToDoubles(ctx.in(0));
  const std::vector<double> scale = kernels::ToDoubles(ctx.in(1)), bias = kernels::ToDoubles(ctx.in(2));
  std::vector<double> mean = kernels::ToDoubles(ctx.in(3)), var = kernels::ToDoubles(ctx.in(4));
  if (ctx.attrs().i("training_mode") != 0) {
    std::vector<double> out_mean(ch), out_var(ch);
    for (int64_t c = 0; c < ch; ++c) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < sp; ++j) sum += x[(i * ch + c) * sp + j];
      const double m = sum / static_cast<double>(n * sp);
      double sq = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < sp; ++j) sq += (x[(i * ch + c) * sp + j] - m) * (x[(i * ch + c) * sp + j] - m);
      const double v = sq / static_cast<double>(n * sp);
      out_mean[c] = mean[c] * momentum + m * (1 - momentum);
      out_var[c] = var[c] * momentum + v * (1 - momentum);
      mean[c] = m;
      var[c] = v;
    }
    if (ctx.num_outputs() > 1) kernels::FromDoubles(ctx.out(1), out_mean);
    if (ctx.num_outputs() > 2) kernels::FromDoubles(ctx.out(2), out_var);
  }
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < ch; ++c)
      for (int64_t j = 0; j < sp; ++j) {
        const int64_t k = (i * ch + c) * sp + j;
        y[k] = (x[k] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + bias[c];
      }
  kernels::FromDoubles(ctx.out(0), y);
  return Status::Ok();
}

// ---- InstanceNormalization ------------------------------------------------------------------

Status InstanceNormInfer(InferContext& c) {
  const Shape& x = c.input(0).shape;
  if (x.rank() < 3) {
    return InvalidArgumentError("InstanceNormalization: input X has shape " + x.ToString() +
                                "; expected [N, C, spatial...] with rank >= 3");
  }
  OPSCOPE_RETURN_IF_ERROR(dense::CheckVector("InstanceNormalization", c.input(1), "scale", x[1]));
  OPSCOPE_RETURN_IF_ERROR(dense::CheckVector("InstanceNormalization", c.input(2), "B", x[1]));
  c.SetOutput(0, c.input(0).dtype, x);
  return Status::Ok();
}

template <typename T>
Status InstanceNormTyped(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(const Tensor x, ctx.in(0).Contiguous());
  const int64_t ch = x.dim(1), sp = SpatialSize(x.shape());
  const double eps = ctx.attrs().f("epsilon", 1e-5);
  const std::vector<double> scale = kernels::ToDoubles(ctx.in(1)), bias = kernels::ToDoubles(ctx.in(2));
  const T* xp = x.data<T>();
  T* yp = ctx.out(0).data<T>();
  using C = dense::AccOf<T>;
  const ew::VecMath* vm = ew::Avx2VecMath();
  return ctx.ParallelFor("instancenorm", x.dim(0) * ch, [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const T* p = xp + nc * sp;
      double m, sq;
      Moments(p, sp, vm, &m, &sq, nc + 1 < end ? yp + (nc + 1) * sp : nullptr);
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(sp) + eps);
      const C a = static_cast<C>(scale[nc % ch] * inv), b = static_cast<C>(bias[nc % ch] - m * scale[nc % ch] * inv);
      T* q = yp + nc * sp;
      for (int64_t j = 0; j < sp; ++j) q[j] = static_cast<T>(static_cast<C>(p[j]) * a + b);
    }
  }, 4);
}

Status InstanceNormCpu(KernelContext& ctx) {
  return DispatchFloat(ctx.in(0).dtype(), ctx.op_name(),
                       [&]<typename scalar_t>() { return InstanceNormTyped<scalar_t>(ctx); });
}

Status InstanceNormReference(KernelContext& ctx) {
  const Shape& s = ctx.in(0).shape();
  const int64_t ch = s[1], sp = SpatialSize(s);
  const double eps = ctx.attrs().f("epsilon", 1e-5);
  const std::vector<double> x = kernels::ToDoubles(ctx.in(0));
  const std::vector<double> scale = kernels::ToDoubles(ctx.in(1)), bias = kernels::ToDoubles(ctx.in(2));
  std::vector<double> y(x.size());
  for (int64_t nc = 0; nc < s[0] * ch; ++nc) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < sp; ++j) m += x[nc * sp + j];
    m /= static_cast<double>(sp);
    for (int64_t j = 0; j < sp; ++j) v += (x[nc * sp + j] - m) * (x[nc * sp + j] - m);
    v /= static_cast<double>(sp);
    for (int64_t j = 0; j < sp; ++j) y[nc * sp + j] = (x[nc * sp + j] - m) / std::sqrt(v + eps) * scale[nc % ch] + bias[nc % ch];
  }
  kernels::FromDoubles(ctx.out(0), y);
  return Status::Ok();
}

// ---- LayerNormalization ---------------------------------------------------------------------

StatusOr<DType> StashDType(int64_t stash_type) {
  switch (stash_type) {  // onnx.TensorProto.DataType values
    case 1: return DType::kF32;
    case 11: return DType::kF64;
    case 16: return DType::kBF16;
    default:
      return InvalidArgumentError("LayerNormalization: attribute stash_type=" + std::to_string(stash_type) +
                                  "; expected 1 (float), 11 (double) or 16 (bfloat16)");
  }
}

// Checks `p` broadcasts (numpy rules, towards X's normalised dims) to `norm`.
Status CheckBroadcastTo(const Shape& p, const Shape& norm, const char* name, const Shape& x, int axis) {
  bool ok = p.rank() <= norm.rank();
  for (int i = 0; ok && i < p.rank(); ++i) {
    const int64_t pd = p[p.rank() - 1 - i], nd = norm[norm.rank() - 1 - i];
    ok = pd == 1 || pd == nd;
  }
  if (!ok) {
    return InvalidArgumentError(std::string("LayerNormalization: input ") + name + " has shape " + p.ToString() +
                                "; it must broadcast to the normalised dims " + norm.ToString() + " of X " +
                                x.ToString() + " (axis=" + std::to_string(axis) + ")");
  }
  return Status::Ok();
}

struct LayerNormDims {
  int axis;
  int64_t outer, inner;
  Shape norm, stat;
};

StatusOr<LayerNormDims> LayerNormShapes(const Shape& x, const Attrs& attrs) {
  if (x.rank() < 1) return InvalidArgumentError("LayerNormalization: input X must have rank >= 1");
  auto axis = NormalizeAxis(attrs.i("axis", -1), x.rank());
  if (!axis.ok()) {
    return InvalidArgumentError("LayerNormalization: attribute axis=" + std::to_string(attrs.i("axis", -1)) +
                                " is out of range for X " + x.ToString());
  }
  LayerNormDims d{*axis, 1, 1, {}, {}};
  std::vector<int64_t> norm, stat;
  for (int i = 0; i < x.rank(); ++i) {
    if (i < d.axis) {
      d.outer *= x[i];
      stat.push_back(x[i]);
    } else {
      d.inner *= x[i];
      norm.push_back(x[i]);
      stat.push_back(1);
    }
  }
  d.norm = Shape(norm);
  d.stat = Shape(stat);
  return d;
}

Status LayerNormInfer(InferContext& c) {
  const Shape& x = c.input(0).shape;
  OPSCOPE_ASSIGN_OR_RETURN(LayerNormDims d, LayerNormShapes(x, c.attrs()));
  OPSCOPE_RETURN_IF_ERROR(CheckBroadcastTo(c.input(1).shape, d.norm, "Scale", x, d.axis));
  if (c.has_input(2)) OPSCOPE_RETURN_IF_ERROR(CheckBroadcastTo(c.input(2).shape, d.norm, "B", x, d.axis));
  OPSCOPE_ASSIGN_OR_RETURN(DType u, StashDType(c.attrs().i("stash_type", 1)));
  c.SetOutput(0, c.input(0).dtype, x);
  for (int i = 1; i < c.num_outputs(); ++i) c.SetOutput(i, u, d.stat);
  return Status::Ok();
}

// A parameter broadcast out to one value per normalised element.
std::vector<double> ExpandParam(const Tensor& p, const Shape& norm) {
  std::vector<double> v = kernels::ToDoubles(p);
  std::vector<int64_t> strides = kernels::BroadcastStrides(p.shape(), p.shape().ContiguousStrides(), norm);
  std::vector<double> out(norm.numel());
  for (int64_t i = 0; i < norm.numel(); ++i) out[i] = v[kernels::FlatToOffset(i, norm, strides)];
  return out;
}

template <typename T>
Status LayerNormTyped(KernelContext& ctx, const LayerNormDims& d) {
  OPSCOPE_ASSIGN_OR_RETURN(const Tensor x, ctx.in(0).Contiguous());
  const double eps = ctx.attrs().f("epsilon", 1e-5);
  using C = dense::AccOf<T>;
  std::vector<C> scale, bias(d.inner, C(0));
  for (double v : ExpandParam(ctx.in(1), d.norm)) scale.push_back(static_cast<C>(v));
  if (ctx.has_input(2)) {
    std::vector<double> b = ExpandParam(ctx.in(2), d.norm);
    for (int64_t i = 0; i < d.inner; ++i) bias[i] = static_cast<C>(b[i]);
  }
  const T* xp = x.data<T>();
  T* yp = ctx.out(0).data<T>();
  std::vector<double> means(d.outer), invs(d.outer);
  const ew::VecMath* vm = ew::Avx2VecMath();
  OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor("layernorm", d.outer, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* p = xp + r * d.inner;
      double m, sq;
      Moments(p, d.inner, vm, &m, &sq, r + 1 < end ? yp + (r + 1) * d.inner : nullptr);
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(d.inner) + eps);
      means[r] = m;
      invs[r] = inv;
      const C mc = static_cast<C>(m), ic = static_cast<C>(inv);
      T* q = yp + r * d.inner;
      if constexpr (std::is_same_v<T, float>) {
        if (vm != nullptr) {
          vm->norm_apply(p, q, d.inner, mc, ic, scale.data(), bias.data());
          continue;
        }
      }
      for (int64_t j = 0; j < d.inner; ++j) q[j] = static_cast<T>((static_cast<C>(p[j]) - mc) * ic * scale[j] + bias[j]);
    }
  }, 16));
  if (ctx.num_outputs() > 1) kernels::FromDoubles(ctx.out(1), means);
  if (ctx.num_outputs() > 2) kernels::FromDoubles(ctx.out(2), invs);
  return Status::Ok();
}

Status LayerNormCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(LayerNormDims d, LayerNormShapes(ctx.in(0).shape(), ctx.attrs()));
  return DispatchFloat(ctx.in(0).dtype(), ctx.op_name(),
                       [&]<typename scalar_t>() { return LayerNormTyped<scalar_t>(ctx, d); });
}

Status LayerNormReference(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(LayerNormDims d, LayerNormShapes(ctx.in(0).shape(), ctx.attrs()));
  const double eps = ctx.attrs().f("epsilon", 1e-5);
  const std::vector<double> x = kernels::ToDoubles(ctx.in(0));
  const std::vector<double> scale = ExpandParam(ctx.in(1), d.norm);
  const std::vector<double> bias = ctx.has_input(2) ? ExpandParam(ctx.in(2), d.norm) : std::vector<double>(d.inner);
  std::vector<double> y(x.size()), means(d.outer), invs(d.outer);
  for (int64_t r = 0; r < d.outer; ++r) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < d.inner; ++j) m += x[r * d.inner + j];
    m /= static_cast<double>(d.inner);
    for (int64_t j = 0; j < d.inner; ++j) v += (x[r * d.inner + j] - m) * (x[r * d.inner + j] - m);
    v /= static_cast<double>(d.inner);
    means[r] = m;
    invs[r] = 1.0 / std::sqrt(v + eps);
    for (int64_t j = 0; j < d.inner; ++j) y[r * d.inner + j] = (x[r * d.inner + j] - m) * invs[r] * scale[j] + bias[j];
  }
  kernels::FromDoubles(ctx.out(0), y);
  if (ctx.num_outputs() > 1) kernels::FromDoubles(ctx.out(1), means);
  if (ctx.num_outputs() > 2) kernels::FromDoubles(ctx.out(2), invs);
  return Status::Ok();
}

// ---- LpNormalization ------------------------------------------------------------------------

Status LpNormInfer(InferContext& c) {
  const Shape& x = c.input(0).shape;
  const int64_t p = c.attrs().i("p", 2);
  if (p != 1 && p != 2) {
    return InvalidArgumentError("LpNormalization: attribute p=" + std::to_string(p) + "; expected 1 or 2");
  }
  if (!NormalizeAxis(c.attrs().i("axis", -1), x.rank()).ok()) {
    return InvalidArgumentError("LpNormalization: attribute axis=" + std::to_string(c.attrs().i("axis", -1)) +
                                " is out of range for input " + x.ToString());
  }
  c.SetOutput(0, c.input(0).dtype, x);
  return Status::Ok();
}

template <typename T>
Status LpNormTyped(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(const Tensor x, ctx.in(0).Contiguous());
  const int axis = *NormalizeAxis(ctx.attrs().i("axis", -1), x.rank());
  const bool l1 = ctx.attrs().i("p", 2) == 1;
  const kernels::AxisSplit s = kernels::SplitAtAxis(x.shape(), axis);
  const T* xp = x.data<T>();
  T* yp = ctx.out(0).data<T>();
  using C = dense::AccOf<T>;
  return ctx.ParallelFor("lpnorm", s.outer * s.inner, [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const int64_t base = (line / s.inner) * s.axis * s.inner + line % s.inner;
      double acc = 0;
      if (s.inner == 1) {  // a contiguous row: eight partial sums (SumOfD)
        acc = l1 ? SumOfD(xp + base, s.axis, [](double v) { return std::fabs(v); })
                 : SumOfD(xp + base, s.axis, [](double v) { return v * v; });
      } else {
        for (int64_t k = 0; k < s.axis; ++k) {
          const double v = Ld(xp, base + k * s.inner);
          acc += l1 ? std::fabs(v) : v * v;
        }
      }
      const C norm = static_cast<C>(l1 ? acc : std::sqrt(acc));
      for (int64_t k = 0; k < s.axis; ++k) {
        const int64_t i = base + k * s.inner;
        yp[i] = static_cast<T>(static_cast<C>(xp[i]) / norm);
      }
    }
  }, 256);
}

Status LpNormCpu(KernelContext& ctx) {
  return DispatchFloat(ctx.in(0).dtype(), ctx.op_name(),
                       [&]<typename scalar_t>() { return LpNormTyped<scalar_t>(ctx); });
}

Status LpNormReference(KernelContext& ctx) {
  const Shape& shape = ctx.in(0).shape();
  const int axis = *NormalizeAxis(ctx.attrs().i("axis", -1), shape.rank());
  const int64_t p = ctx.attrs().i("p", 2);
  std::vector<double> x = kernels::ToDoubles(ctx.in(0));
  int64_t inner = 1;
  for (int i = axis + 1; i < shape.rank(); ++i) inner *= shape[i];
  const int64_t len = shape.rank() ? shape[axis] : 1;
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < static_cast<int64_t>(x.size()) / std::max<int64_t>(1, len * inner); ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double n = 0;
      for (int64_t k = 0; k < len; ++k) {
        const double v = x[(o * len + k) * inner + i];
        n += p == 1 ? std::fabs(v) : v * v;
      }
      if (p == 2) n = std::sqrt(n);
      for (int64_t k = 0; k < len; ++k) y[(o * len + k) * inner + i] = x[(o * len + k) * inner + i] / n;
    }
  }
  kernels::FromDoubles(ctx.out(0), y);
  return Status::Ok();
}

Cost PerElementCost(const OpCall& c, double flops_per_element) {
  int64_t read = 0;
  for (int i = 0; i < c.num_inputs(); ++i) if (c.in(i).present) read += c.in(i).bytes();
  int64_t written = 0;
  for (int i = 0; i < c.num_outputs(); ++i) written += c.out(i).bytes();
  return Cost{.bytes_read = read, .bytes_written = written,
              .flops = flops_per_element * static_cast<double>(c.in(0).numel())};
}

}  // namespace

OPSCOPE_OP("BatchNormalization")
    .Doc("y = (x - mean) / sqrt(var + epsilon) * scale + B per channel; training_mode=1 uses batch statistics")
    .Input("X", "T").Input("scale", "T1").Input("B", "T1").Input("input_mean", "T2").Input("input_var", "T2")
    .Output("Y", "T").OptionalOutput("running_mean", "T2").OptionalOutput("running_var", "T2")
    .TypeConstraint("T", kFloat4).TypeConstraint("T1", kFloat4).TypeConstraint("T2", kFloat4)
    .Attr("epsilon", 1e-5f).Attr("momentum", 0.9f).Attr("training_mode", 0)
    .Infer(BatchNormInfer)
    .Cost([](const OpCall& c) { return PerElementCost(c, c.attrs().i("training_mode") ? 7.0 : 2.0); })
    .Tunable("block", {16, 4, 64})
    .Reference(BatchNormReference)
    .Kernel("cpu", BatchNormCpu, "batchnorm_cpu");

OPSCOPE_OP("InstanceNormalization")
    .Doc("per (n, c) plane: y = (x - mean) / sqrt(var + epsilon) * scale[c] + B[c]")
    .Input("input", "T").Input("scale", "T").Input("B", "T").Output("output", "T")
    .TypeConstraint("T", kFloat3)
    .Attr("epsilon", 1e-5f)
    .Infer(InstanceNormInfer)
    .Cost([](const OpCall& c) { return PerElementCost(c, 7.0); })
    .Tunable("block", {4, 1, 16})
    .Reference(InstanceNormReference)
    .Kernel("cpu", InstanceNormCpu, "instancenorm_cpu");

OPSCOPE_OP("LayerNormalization")
    .Doc("normalises over dims [axis, rank): y = (x - mean) * inv_std_dev * Scale + B")
    .Input("X", "T").Input("Scale", "T").OptionalInput("B", "T")
    .Output("Y", "T").OptionalOutput("Mean", "U").OptionalOutput("InvStdDev", "U")
    .TypeConstraint("T", kFloat4).TypeConstraint("U", {DType::kF32, DType::kBF16, DType::kF64})
    .Attr("axis", -1).Attr("epsilon", 1e-5f).Attr("stash_type", 1)
    .Infer(LayerNormInfer)
    .Cost([](const OpCall& c) { return PerElementCost(c, 8.0); })
    .Tunable("block", {16, 4, 64})
    .Reference(LayerNormReference)
    .Kernel("cpu", LayerNormCpu, "layernorm_cpu");

OPSCOPE_OP("LpNormalization")
    .Doc("y = x / ||x||_p along axis (p = 1 or 2); p = 2 is L2-normalize")
    .Input("input", "T").Output("output", "T")
    .TypeConstraint("T", kFloat3)
    .Attr("axis", -1).Attr("p", 2)
    .Infer(LpNormInfer)
    .Cost([](const OpCall& c) { return PerElementCost(c, 3.0); })
    .Tunable("block", {256, 64, 1024})
    .Reference(LpNormReference)
    .Kernel("cpu", LpNormCpu, "lpnorm_cpu");

}  // namespace opscope
