// Variadic elementwise ops (ONNX opset 13): Max, Min, Sum, Mean over any
// number of inputs with numpy broadcasting across all of them. The kernel
// folds left: acc = f(x0, x1), then acc = f(acc, xk) in place. Max and Min
// propagate NaN, like numpy's maximum/minimum.
#include <cmath>

#include "ops/builtin/ew_util.h"

namespace opscope {
namespace {

struct MaxOp {
  template <typename C> static C Kernel(C a, C b) { return (a > b || a != a) ? a : b; }
  static double Reference(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
};
struct MinOp {
  template <typename C> static C Kernel(C a, C b) { return (a < b || a != a) ? a : b; }
  static double Reference(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }
};
struct SumOp {
  template <typename C> static C Kernel(C a, C b) { return ew::WrapAdd(a, b); }
  static double Reference(double a, double b) { return a + b; }
};

template <typename Op, typename T>
Status FoldTyped(KernelContext& ctx, const std::string& kernel, bool mean) {
  using C = typename ComputeTypeOf<T>::type;
  // f16/bf16 fold in a float32 buffer and round once at the end, so the
  // result does not depend on the order or number of inputs.
  using Acc = std::conditional_t<ew::kIsFloat16<T>, float, T>;
  Tensor& out = ctx.out(0);
  Tensor acc = out;
  if constexpr (!std::is_same_v<Acc, T>) {
    OPSCOPE_ASSIGN_OR_RETURN(acc, Tensor::Empty(DType::kF32, out.shape()));
  }
  auto f = [](C a, C b) { return Op::template Kernel<C>(a, b); };
  if (ctx.num_inputs() == 1) {
    OPSCOPE_RETURN_IF_ERROR((ew::UnaryMap<T, Acc, C>(ctx, kernel, ctx.in(0), acc, [](C v) { return v; })));
  } else {
    OPSCOPE_RETURN_IF_ERROR((ew::BinaryMap<T, T, Acc, C, C>(ctx, kernel, ctx.in(0), ctx.in(1), acc, f)));
    for (int k = 2; k < ctx.num_inputs(); ++k) {
      OPSCOPE_RETURN_IF_ERROR((ew::AccumulateMap<Acc, T, C>(ctx, kernel, acc, ctx.in(k), f)));
    }
  }
  Acc* p = acc.data<Acc>();
  if (mean) {
    const C count = static_cast<C>(ctx.num_inputs());
    OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor(kernel, acc.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) p[i] = ew::Convert<Acc>(ew::Load<C>(p[i]) / count);
    }));
  }
  if constexpr (!std::is_same_v<Acc, T>) {
    T* q = out.data<T>();
    OPSCOPE_RETURN_IF_ERROR(ctx.ParallelFor(kernel, out.numel(), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) q[i] = ew::Convert<T>(p[i]);
    }));
  }
  return Status::Ok();
}

template <typename Op, bool kMean = false>
Status FoldCpu(KernelContext& ctx) {
  const DType dt = ctx.in(0).dtype();
  const std::string kernel = ew::KernelName(ctx.op_name());
  return DispatchNumeric(dt, ctx.op_name(),
                         [&]<typename scalar_t>() { return FoldTyped<Op, scalar_t>(ctx, kernel, kMean); });
}

template <typename Op, bool kMean = false>
Status FoldReference(KernelContext& ctx) {
  Tensor& out = ctx.out(0);
  std::vector<double> acc = ew::BroadcastToDoubles(ctx.in(0), out.shape());
  for (int k = 1; k < ctx.num_inputs(); ++k) {
    std::vector<double> x = ew::BroadcastToDoubles(ctx.in(k), out.shape());
    for (size_t i = 0; i < acc.size(); ++i) acc[i] = Op::Reference(acc[i], x[i]);
  }
  if (kMean) {
    for (double& v : acc) v /= ctx.num_inputs();
  }
  ew::StoreReference(out, acc);
  return Status::Ok();
}

}  // namespace

#define EW_VARIADIC(NAME, OUT, KERNEL, REFERENCE, TYPES)   \
  OPSCOPE_OP(NAME)                                         \
      .VariadicInput("data_0", "T").Output(OUT, "T")       \
      .TypeConstraint("T", TYPES)                          \
      .Infer(ew::InferBroadcastSame)                       \
      .Cost(ew::ElementwiseCost(1))                        \
      .Tunable("block", ew::BlockChoices())                \
      .Reference(REFERENCE)                                \
      .Kernel("cpu", KERNEL, ew::KernelName(NAME))

EW_VARIADIC("Max", "max", FoldCpu<MaxOp>, FoldReference<MaxOp>, ew::Numeric())
    .Doc("elementwise maximum of all inputs (numpy broadcasting; NaN propagates)");
EW_VARIADIC("Min", "min", FoldCpu<MinOp>, FoldReference<MinOp>, ew::Numeric())
    .Doc("elementwise minimum of all inputs (numpy broadcasting; NaN propagates)");
EW_VARIADIC("Sum", "sum", FoldCpu<SumOp>, FoldReference<SumOp>, ew::Floats())
    .Doc("elementwise sum of all inputs (numpy broadcasting)");
EW_VARIADIC("Mean", "mean", (FoldCpu<SumOp, true>), (FoldReference<SumOp, true>), ew::Floats())
    .Doc("elementwise mean of all inputs (numpy broadcasting)");

#undef EW_VARIADIC

}  // namespace opscope
