// Relu: the pattern every built-in unary op follows (ew_unary.h): the kernel's
// math over the compute type (float for f16/bf16, the integer itself for
// integers), and an independent reference in double.
#include "ops/builtin/ew_unary.h"

namespace opscope {
namespace {

struct ReluOp {
  static constexpr bool kIntegerMath = true;
  template <typename C> static C Kernel(C x, const ew::UnaryParams&) { return x < C(0) ? C(0) : x; }  // NaN passes
  static double Reference(double x, const ew::UnaryParams&) { return std::isnan(x) ? x : std::max(x, 0.0); }
};

}  // namespace

OPSCOPE_OP("Relu")
    .Doc("y = max(x, 0)")
    .Input("X", "T").Output("Y", "T")
    .TypeConstraint("T", ew::SignedNumeric())
    .SameShape()
    .Cost(ew::ElementwiseCost(1))
    .Tunable("block", ew::BlockChoices())
    .Reference(ew::UnaryReference<ReluOp>)
    .Kernel("cpu", ew::UnaryCpu<ReluOp>, "relu_cpu");

}  // namespace opscope
