// ReduceSum, ReduceMean and ReduceMax. Axes come as the optional input of
// opset 18 (13 for ReduceSum) or as the attribute of the opsets before, which
// the dispatcher turns into that input (OpDef::AttrAsInput). No axes means
// every axis, unless noop_with_empty_axes=1.
//
// Accumulation: f16/bf16 in float, f32 and f64 in double (running sums in
// double keep f32 sums far below f32's rounding for any size we run; rows are
// summed in 8 interleaved partials for speed), integers in int64. Max works
// in the element's compute type, NaN wins.
//
// Kernel plan: size-1 dims dropped, neighbouring dims with the same role
// merged. One reduced group -> (outer, R, inner) read straight from the input,
// with `inner` accumulators per output run so rows are read contiguously.
// Several reduced groups -> a strided copy to [kept..., reduced...] first.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/builtin/dense_util.h"
#include "ops/builtin/shape_util.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

using shape_ops::IntsToString;

enum class ReduceKind { kSum, kMean, kMax };

// The axes to reduce for this call (empty = all, unless noop).
std::vector<int64_t> AxesOf(const Tensor* axes_input) {
  return axes_input ? kernels::ToInt64s(*axes_input) : std::vector<int64_t>{};
}

bool IsNoop(std::string_view op, const Attrs& attrs, const std::vector<int64_t>& axes) {
  return axes.empty() && attrs.i("noop_with_empty_axes") != 0;
}

// Which dims are reduced.
StatusOr<std::vector<bool>> ReducedDims(std::string_view op, const std::vector<int64_t>& axes, int rank) {
  std::vector<bool> r(rank, axes.empty());
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int> norm, shape_ops::NormalizeAxes(op, "axes", axes, rank));
  for (int a : norm) r[a] = true;
  return r;
}

Status InferReduce(InferContext& c) {
  const Shape& in = c.input(0).shape;
  std::vector<int64_t> axes;
  if (c.has_input(1)) {
    OPSCOPE_ASSIGN_OR_RETURN(axes, shape_ops::ValueInts(c, 1, "axes"));
  }
  if (IsNoop(c.op_name(), c.attrs(), axes)) {
    c.SetOutput(0, c.input(0).dtype, in);
    return Status::Ok();
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<bool> red, ReducedDims(c.op_name(), axes, in.rank()));
  const bool keep = c.attrs().i("keepdims", 1) != 0;
  std::vector<int64_t> dims;
  for (int d = 0; d < in.rank(); ++d) {
    if (!red[d]) dims.push_back(in[d]);
    else if (keep) dims.push_back(1);
  }
  c.SetOutput(0, c.input(0).dtype, Shape(dims));
  return Status::Ok();
}

// ---- kernel ----------------------------------------------------------------------

template <typename T>
using SumAcc = std::conditional_t<std::is_integral_v<T>, int64_t,
                                  std::conditional_t<sizeof(T) == 2, float, double>>;

template <typename Acc, typename T>
inline Acc Load(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return static_cast<Acc>(static_cast<float>(v));
  else return static_cast<Acc>(v);
}

template <typename T, typename A>
inline T Store(A v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

template <typename T, ReduceKind K>
struct Reducer {
  using Acc = std::conditional_t<K == ReduceKind::kMax, typename ComputeTypeOf<T>::type, SumAcc<T>>;
  static Acc Init() {
    if constexpr (K != ReduceKind::kMax) return Acc(0);
    else if constexpr (std::numeric_limits<Acc>::has_infinity) return -std::numeric_limits<Acc>::infinity();
    else return std::numeric_limits<Acc>::lowest();
  }
  static void Add(Acc& acc, T x) {
    Acc v = Load<Acc>(x);
    if constexpr (K != ReduceKind::kMax) {
      acc += v;
    } else if constexpr (std::is_floating_point_v<Acc>) {
      if (v > acc || v != v) acc = v;  // a NaN, once seen, stays
    } else {
      if (v > acc) acc = v;
    }
  }
  // Folds one partial result into another.
  static void Combine(Acc& acc, Acc v) {
    if constexpr (K != ReduceKind::kMax) {
      acc += v;
    } else if constexpr (std::is_floating_point_v<Acc>) {
      if (v > acc || v != v) acc = v;
    } else {
      if (v > acc) acc = v;
    }
  }
  static T Final(Acc acc, int64_t count) {
    if constexpr (K == ReduceKind::kMean) {
      if constexpr (std::is_integral_v<T>) return static_cast<T>(count ? static_cast<double>(acc) / count : 0.0);
      else return Store<T>(count ? static_cast<double>(acc) / static_cast<double>(count)
                                 : std::numeric_limits<double>::quiet_NaN());
    }
    return Store<T>(acc);
  }
};

// Reduces the middle dim of a contiguous (outer, r, inner) block. The
// blocks are cut in outputs, each of which reads r inputs, to about the
// "block_inputs" tunable's count of inputs each: cut at 4096 outputs,
// [1,256,56,56] over its planes was one block on one thread (367 us, 3.5x
// its memory bound). Each output's sum runs in the same order however the
// outputs are cut.
template <typename T, ReduceKind K>
Status ReduceOuterRInner(KernelContext& ctx, const T* x, T* y, int64_t outer, int64_t r, int64_t inner) {
  using R = Reducer<T, K>;
  using Acc = typename R::Acc;
  const int64_t grain = dense::OutputsPerBlock(ctx, r);
  if (inner == 1) {
    return ctx.ParallelFor("reduce_rows_cpu", outer, [&](int64_t b, int64_t e) {
      // Eight independent partials: the adds overlap instead of waiting on one chain.
      constexpr int kLanes = 8;
      for (int64_t o = b; o < e; ++o) {
        Acc acc[kLanes];
        for (Acc& a : acc) a = R::Init();
        const T* row = x + o * r;
        int64_t k = 0;
        for (; k + kLanes <= r; k += kLanes) {
          for (int j = 0; j < kLanes; ++j) R::Add(acc[j], row[k + j]);
        }
        for (; k < r; ++k) R::Add(acc[0], row[k]);
        for (int j = 1; j < kLanes; ++j) R::Combine(acc[0], acc[j]);
        y[o] = R::Final(acc[0], r);
      }
    }, grain);
  }
  // Columns in runs of up to 1024 at least, each read contiguously down the
  // r rows (in runs of 64, [8,512,768] over its middle axis went 0.74 -> 0.8-2.5 ms).
  const int64_t column_grain = std::max(grain, std::min<int64_t>(inner, 1024));
  return ctx.ParallelFor("reduce_columns_cpu", outer * inner, [&](int64_t b, int64_t e) {
    std::vector<Acc> acc;
    int64_t o = b / inner, i0 = b % inner;
    while (b < e) {
      const int64_t i1 = std::min(inner, i0 + (e - b));
      acc.assign(i1 - i0, R::Init());
      Acc* a = acc.data();
      const int64_t w = i1 - i0;
      for (int64_t k = 0; k < r; ++k) {
        const T* row = x + (o * r + k) * inner + i0;
        for (int64_t i = 0; i < w; ++i) R::Add(a[i], row[i]);
      }
      for (int64_t i = 0; i < w; ++i) y[o * inner + i0 + i] = R::Final(a[i], r);
      b += i1 - i0;
      i0 = 0;
      ++o;
    }
  }, column_grain);
}

template <typename T, ReduceKind K>
Status ReduceTyped(KernelContext& ctx, const std::vector<bool>& red) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor x, ctx.in(0).Contiguous());
  Tensor& y = ctx.out(0);
  // Merge dims into groups of one role each (size-1 dims carry no role).
  std::vector<int64_t> size;
  std::vector<bool> role;
  std::vector<std::vector<int>> members;
  for (int d = 0; d < x.rank(); ++d) {
    if (x.dim(d) == 1) continue;
    if (!role.empty() && role.back() == red[d]) {
      size.back() *= x.dim(d);
      members.back().push_back(d);
    } else {
      size.push_back(x.dim(d));
      role.push_back(red[d]);
      members.push_back({d});
    }
  }
  int reduced_groups = 0;
  for (bool b : role) reduced_groups += b;
  if (reduced_groups <= 1) {
    int64_t outer = 1, r = 1, inner = 1;
    bool after = false;
    for (size_t g = 0; g < size.size(); ++g) {
      if (role[g]) { r = size[g]; after = true; }
      else (after ? inner : outer) *= size[g];
    }
    return ReduceOuterRInner<T, K>(ctx, x.data<T>(), y.data<T>(), outer, r, inner);
  }
  // Several reduced groups: gather to [kept..., reduced...], then reduce rows.
  const size_t es = sizeof(T);
  std::vector<int64_t> in_strides = shape_ops::ContiguousByteStrides(x.shape(), es);
  shape_ops::CopyPlan plan;
  int64_t kept = 1, r = 1;
  for (int pass = 0; pass < 2; ++pass) {
    for (int d = 0; d < x.rank(); ++d) {
      if (red[d] != (pass == 1)) continue;
      plan.shape.push_back(x.dim(d));
      plan.src_strides.push_back(in_strides[d]);
      (pass ? r : kept) *= x.dim(d);
    }
  }
  plan.dst_strides = shape_ops::ContiguousByteStrides(Shape(plan.shape), es);
  OPSCOPE_ASSIGN_OR_RETURN(Tensor tmp, Tensor::Empty(x.dtype(), Shape({kept, r})));
  OPSCOPE_RETURN_IF_ERROR(shape_ops::RunStridedCopy(ctx, "reduce_gather_cpu", static_cast<char*>(tmp.raw_data()),
                                                    static_cast<const char*>(x.raw_data()), plan, es));
  return ReduceOuterRInner<T, K>(ctx, tmp.data<T>(), y.data<T>(), kept, r, 1);
}

template <ReduceKind K>
Status ReduceCpu(KernelContext& ctx) {
  std::vector<int64_t> axes = AxesOf(ctx.has_input(1) ? &ctx.in(1) : nullptr);
  if (IsNoop(ctx.op_name(), ctx.attrs(), axes)) return shape_ops::CopyInto(ctx, "reduce_noop_cpu", ctx.in(0), ctx.out(0));
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<bool> red, ReducedDims(ctx.op_name(), axes, ctx.in(0).rank()));
  switch (ctx.in(0).dtype()) {
    case DType::kF64: return ReduceTyped<double, K>(ctx, red);
    case DType::kF32: return ReduceTyped<float, K>(ctx, red);
    case DType::kF16: return ReduceTyped<Half, K>(ctx, red);
    case DType::kBF16: return ReduceTyped<BFloat16, K>(ctx, red);
    case DType::kI64: return ReduceTyped<int64_t, K>(ctx, red);
    case DType::kI32: return ReduceTyped<int32_t, K>(ctx, red);
    case DType::kI8: return ReduceTyped<int8_t, K>(ctx, red);
    case DType::kU8: return ReduceTyped<uint8_t, K>(ctx, red);
    default: return UnimplementedError(std::string(ctx.op_name()) + ": dtype " + DTypeName(ctx.in(0).dtype()));
  }
}

// ---- reference ---------------------------------------------------------------------

// Every input element is added into the output element its kept dims name.
template <ReduceKind K>
Status ReduceReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  std::vector<int64_t> axes = AxesOf(ctx.has_input(1) ? &ctx.in(1) : nullptr);
  std::vector<double> v = kernels::ToDoubles(x);
  if (IsNoop(ctx.op_name(), ctx.attrs(), axes)) {
    kernels::FromDoubles(ctx.out(0), v);
    return Status::Ok();
  }
  std::vector<bool> red(x.rank(), axes.empty());
  for (int64_t a : axes) red[a < 0 ? a + x.rank() : a] = true;
  std::vector<int64_t> kept_dims;
  for (int d = 0; d < x.rank(); ++d) kept_dims.push_back(red[d] ? 1 : x.dim(d));
  const Shape kept(kept_dims);
  const int64_t n_out = kept.numel();
  const int64_t count = n_out ? x.numel() / n_out : 0;
  std::vector<double> acc(n_out, K == ReduceKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0);
  std::vector<int64_t> k(x.rank());
  int64_t flat = 0;
  shape_ops::ForEachIndex(x.shape(), [&](const std::vector<int64_t>& i) {
    for (int d = 0; d < x.rank(); ++d) k[d] = red[d] ? 0 : i[d];
    double& a = acc[shape_ops::FlatIndex(k, kept)];
    double val = v[flat++];
    if (K == ReduceKind::kMax) a = (std::isnan(val) || std::isnan(a)) ? NAN : std::max(a, val);
    else a += val;
  });
  if (K == ReduceKind::kMean) {
    for (double& a : acc) a = count ? a / static_cast<double>(count) : NAN;
  }
  if (K == ReduceKind::kMax && count == 0) {
    // The max of nothing: -inf, or the lowest value an integer type holds.
    double lowest = -std::numeric_limits<double>::infinity();
    OPSCOPE_SWITCH_INTEGER(x.dtype(), lowest = static_cast<double>(std::numeric_limits<scalar_t>::lowest()));
    for (double& a : acc) a = lowest;
  }
  kernels::FromDoubles(ctx.out(0), acc);
  return Status::Ok();
}

Cost ReduceCost(const OpCall& c) {
  return Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes(), .flops = double(c.in(0).numel())};
}

const std::vector<DType> kSumTypes = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kI32};

}  // namespace

OPSCOPE_OP("ReduceSum")
    .Doc("Sum over axes (input; none = all, or identity when noop_with_empty_axes=1)")
    .Input("data", "T").ValueInput("axes", "I64", /*optional=*/true).Output("reduced", "T")
    .TypeConstraint("T", kSumTypes).TypeConstraint("I64", {DType::kI64})
    .AttrAsInput("axes", AttrType::kInts, 1)
    .Attr("keepdims", 1).Attr("noop_with_empty_axes", 0)
    .Infer(InferReduce)
    .Cost(ReduceCost)
    .Tunable("block_inputs", {32768, 8192, 131072})
    .Reference(ReduceReference<ReduceKind::kSum>)
    .Kernel("cpu", ReduceCpu<ReduceKind::kSum>, "reduce_sum_cpu");

OPSCOPE_OP("ReduceMean")
    .Doc("Mean over axes (input or attribute; none = all); integer means truncate toward zero")
    .Input("data", "T").ValueInput("axes", "I64", /*optional=*/true).Output("reduced", "T")
    .TypeConstraint("T", kSumTypes).TypeConstraint("I64", {DType::kI64})
    .AttrAsInput("axes", AttrType::kInts, 1)
    .Attr("keepdims", 1).Attr("noop_with_empty_axes", 0)
    .Infer(InferReduce)
    .Cost(ReduceCost)
    .Tunable("block_inputs", {32768, 8192, 131072})
    .Reference(ReduceReference<ReduceKind::kMean>)
    .Kernel("cpu", ReduceCpu<ReduceKind::kMean>, "reduce_mean_cpu");

OPSCOPE_OP("ReduceMax")
    .Doc("Max over axes (input or attribute; none = all); NaN propagates")
    .Input("data", "T").ValueInput("axes", "I64", /*optional=*/true).Output("reduced", "T")
    .TypeConstraint("T", {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kI32, DType::kI8,
                          DType::kU8})
    .TypeConstraint("I64", {DType::kI64})
    .AttrAsInput("axes", AttrType::kInts, 1)
    .Attr("keepdims", 1).Attr("noop_with_empty_axes", 0)
    .Infer(InferReduce)
    .Cost(ReduceCost)
    .Tunable("block_inputs", {32768, 8192, 131072})
    .Reference(ReduceReference<ReduceKind::kMax>)
    .Kernel("cpu", ReduceCpu<ReduceKind::kMax>, "reduce_max_cpu");

}  // namespace opscope
