// Clip (ONNX opset 13): output = min(max(input, min), max) with min and max
// optional scalar inputs (absent: the type's lowest / highest). NaN inputs stay
// NaN; min > max gives max everywhere, as numpy's clip.
#include <limits>

#include "ops/builtin/ew_util.h"

namespace opscope {
namespace {

Status InferClip(InferContext& c) {
  for (int i = 1; i < 3; ++i) {
    if (c.has_input(i) && c.input(i).numel() != 1) {
      return InvalidArgumentError(std::string("Clip: input ") + (i == 1 ? "min" : "max") +
                                  " must be a scalar, got shape " + c.input(i).shape.ToString());
    }
  }
  c.SetOutput(0, c.input(0).dtype, c.input(0).shape);
  return Status::Ok();
}

template <typename T>
Status ClipTyped(KernelContext& ctx) {
  using C = typename ComputeTypeOf<T>::type;
  C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
  if constexpr (std::numeric_limits<C>::has_infinity) {
    lo = -std::numeric_limits<C>::infinity();
    hi = std::numeric_limits<C>::infinity();
  }
  // min and max are one-element tensors the host can read (cpu device).
  if (ctx.has_input(1)) lo = static_cast<C>(*ctx.in(1).data<T>());
  if (ctx.has_input(2)) hi = static_cast<C>(*ctx.in(2).data<T>());
  return ew::UnaryMap<T, T, C>(ctx, "clip_cpu", ctx.in(0), ctx.out(0), [lo, hi](C v) {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
  });
}

Status ClipCpu(KernelContext& ctx) {
  return DispatchNumeric(ctx.in(0).dtype(), ctx.op_name(),
                         [&]<typename scalar_t>() { return ClipTyped<scalar_t>(ctx); });
}

Status ClipReference(KernelContext& ctx) {
  const double inf = std::numeric_limits<double>::infinity();
  const double lo = ctx.has_input(1) ? kernels::ToDoubles(ctx.in(1))[0] : -inf;
  const double hi = ctx.has_input(2) ? kernels::ToDoubles(ctx.in(2))[0] : inf;
  std::vector<double> v = kernels::ToDoubles(ctx.in(0));
  for (double& d : v) {
    if (d < lo) d = lo;
    if (d > hi) d = hi;
  }
  ew::StoreReference(ctx.out(0), v);
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("Clip")
    .Doc("output = min(max(input, min), max); min and max are optional scalars")
    .Input("input", "T").OptionalInput("min", "T").OptionalInput("max", "T").Output("output", "T")
    .TypeConstraint("T", ew::Numeric())
    .AttrAsInput("min", AttrType::kFloat, 1).AttrAsInput("max", AttrType::kFloat, 2)  // opsets 1-10
    .Infer(InferClip)
    .Cost(ew::ElementwiseCost(2))
    .Tunable("block", ew::BlockChoices())
    .Reference(ClipReference)
    .Kernel("cpu", ClipCpu, "clip_cpu");

}  // namespace opscope
