// The binary elementwise framework (numpy broadcasting). An op is a struct with
//   template <typename C> static auto Kernel(C a, C b);  // the cpu kernel's math
//   static double Reference(double a, double b);          // the golden, in double
// registered with BinaryCpu<Op, kTypes, kBoolOut> and BinaryReference<Op>.
#pragma once

#include <string>

#include "ops/builtin/ew_util.h"

namespace opscope::ew {

enum class TypeSet { kNumeric, kAll, kBool };

template <typename Op, typename T, bool kBoolOut>
Status BinaryTyped(KernelContext& ctx, const std::string& kernel) {
  using C = typename ComputeTypeOf<T>::type;
  using O = std::conditional_t<kBoolOut, bool, T>;
  return BinaryMap<T, T, O, C, C>(ctx, kernel, ctx.in(0), ctx.in(1), ctx.out(0),
                                  [](C a, C b) { return Op::template Kernel<C>(a, b); });
}

template <typename Op, TypeSet kTypes, bool kBoolOut = false>
Status BinaryCpu(KernelContext& ctx) {
  const DType dt = ctx.in(0).dtype();
  const std::string kernel = KernelName(ctx.op_name());
  Status st = UnimplementedError(std::string(ctx.op_name()) + ": no cpu kernel for dtype " + DTypeName(dt));
  if constexpr (kTypes == TypeSet::kBool) {
    if (dt == DType::kBool) st = BinaryTyped<Op, bool, kBoolOut>(ctx, kernel);
  } else if constexpr (kTypes == TypeSet::kAll) {
    OPSCOPE_SWITCH_ALL(dt, st = (BinaryTyped<Op, scalar_t, kBoolOut>(ctx, kernel)));
  } else {
    OPSCOPE_SWITCH_NUMERIC(dt, st = (BinaryTyped<Op, scalar_t, kBoolOut>(ctx, kernel)));
  }
  return st;
}

template <typename Op>
Status BinaryReference(KernelContext& ctx) {
  Tensor& out = ctx.out(0);
  std::vector<double> a = BroadcastToDoubles(ctx.in(0), out.shape());
  std::vector<double> b = BroadcastToDoubles(ctx.in(1), out.shape());
  std::vector<double> v(a.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = Op::Reference(a[i], b[i]);
  StoreReference(out, v);
  return Status::Ok();
}

}  // namespace opscope::ew

// Registers a broadcasting binary op whose kernel and reference come from OP
// (a struct with Kernel and Reference); BOOL_OUT ops write bool ("T1").
#define OPSCOPE_EW_BINARY_OP(NAME, OP, TYPES, TYPESET, BOOL_OUT, FLOPS)                       \
  OPSCOPE_OP(NAME)                                                                         \
      .Input("A", "T").Input("B", "T").Output("C", BOOL_OUT ? "T1" : "T")                  \
      .TypeConstraint("T", TYPES)                                                          \
      .Infer(BOOL_OUT ? ::opscope::ew::InferBroadcastBool : ::opscope::ew::InferBroadcastSame) \
      .Cost(::opscope::ew::ElementwiseCost(FLOPS))                                         \
      .Tunable("block", ::opscope::ew::BlockChoices())                                     \
      .Reference(::opscope::ew::BinaryReference<OP>)                                       \
      .Kernel("cpu", ::opscope::ew::BinaryCpu<OP, TYPESET, BOOL_OUT>, ::opscope::ew::KernelName(NAME))
