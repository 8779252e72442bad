// Loads, but its kernel reads "epz" where the op declares "eps": the launch
// must fail naming the op and both names, not run with epz = 0.
#include "opscope/op.h"

namespace {

opscope::Status ScaleBy(opscope::KernelContext& ctx, double eps) {
  for (int64_t i = 0; i < ctx.in(0).numel(); ++i) {
    ctx.out(0).FlatSetFromDouble(i, ctx.in(0).FlatGetAsDouble(i) / (1.0 + eps));
  }
  return opscope::Status::Ok();
}

opscope::Status TypoKernel(opscope::KernelContext& ctx) { return ScaleBy(ctx, ctx.attrs().f("epz")); }
opscope::Status Reference(opscope::KernelContext& ctx) { return ScaleBy(ctx, ctx.attrs().f("eps")); }

}  // namespace

OPSCOPE_OP("typo_norm").Input("x").Output("y").Attr("eps", 1e-6).SameShape().Reference(Reference)
    .Kernel("cpu", TypoKernel);
