// The unary elementwise framework. An op is a struct with
//   static constexpr bool kIntegerMath;           // integers computed natively (else in double)
//   template <typename C> static C Kernel(C x, const UnaryParams& p);  // the cpu kernel's math
//   static double Reference(double x, const UnaryParams& p);           // the golden, in double
//   static SpanFn Vec(const VecMath& m);   // optional: float32 over spans (ew_vecmath.h)
// and registers UnaryCpu<Op> / UnaryReference<Op> as its kernels:
//
//   OPSCOPE_OP("Relu").Input("X").Output("Y").TypeConstraint("T", ew::SignedNumeric()).SameShape()
//       .Cost(ew::ElementwiseCost(1)).Tunable("block", ew::BlockChoices())
//       .Reference(ew::UnaryReference<ReluOp>).Kernel("cpu", ew::UnaryCpu<ReluOp>, "relu_cpu");
#pragma once

#include <string>

#include "ops/builtin/ew_util.h"
#include "ops/builtin/ew_vecmath.h"

namespace opscope::ew {

// The attributes the unary ops take, read once per call (absent ones are 0).
// Each op declares only those it uses, and reading an undeclared name fails
// the launch: so take the ones that are there rather than ask for all four.
struct UnaryParams {
  double alpha = 0, beta = 0, gamma = 0;
  bool tanh_approximation = false;  // Gelu approximate=tanh
  static UnaryParams From(const Attrs& a) {
    UnaryParams p;
    for (const auto& [name, value] : a.all()) {
      if (name == "alpha") p.alpha = a.f(name);
      if (name == "beta") p.beta = a.f(name);
      if (name == "gamma") p.gamma = a.f(name);
      if (name == "approximate") p.tanh_approximation = a.s(name) == "tanh";
    }
    return p;
  }
};

// float32 through a span function (ew_vecmath.h) over each block.
inline Status UnarySpans(KernelContext& ctx, std::string_view kernel, const Tensor& x_in, Tensor& out, SpanFn f,
                         const UnaryParams& p) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor x, x_in.Contiguous());
  const float* px = x.data<float>();
  float* po = out.data<float>();
  return ctx.ParallelFor(kernel, out.numel(), [&](int64_t s, int64_t e) { f(px + s, po + s, e - s, p); });
}

// An op with `static SpanFn Vec(const VecMath&)` runs float32 through it
// where the CPU has the vector table; everything else through Kernel.
template <typename Op>
Status UnaryCpu(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const UnaryParams p = UnaryParams::From(ctx.attrs());
  const std::string kernel = KernelName(ctx.op_name());
  if constexpr (requires(const VecMath& m) { Op::Vec(m); }) {
    const VecMath* m = x.dtype() == DType::kF32 ? Avx2VecMath() : nullptr;
    if (m != nullptr) return UnarySpans(ctx, kernel, x, ctx.out(0), Op::Vec(*m), p);
  }
  return DispatchNumeric(x.dtype(), ctx.op_name(), [&]<typename scalar_t>() {
    using C = ComputeT<scalar_t, Op::kIntegerMath>;
    return UnaryMap<scalar_t, scalar_t, C>(ctx, kernel, x, ctx.out(0), [&p](C v) { return Op::template Kernel<C>(v, p); });
  });
}

template <typename Op>
Status UnaryReference(KernelContext& ctx) {
  const UnaryParams p = UnaryParams::From(ctx.attrs());
  std::vector<double> v = kernels::ToDoubles(ctx.in(0));
  for (double& d : v) d = Op::Reference(d, p);
  StoreReference(ctx.out(0), v);
  return Status::Ok();
}

}  // namespace opscope::ew
