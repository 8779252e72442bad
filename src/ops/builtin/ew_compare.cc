// Binary elementwise ops with a bool output (Equal Less Greater And; ONNX
// opset 13) and PRelu (opset 16: slope broadcasts toward X only).
#include "ops/builtin/ew_binary.h"

namespace opscope {
namespace {

using ew::TypeSet;

struct PReluOp {
  // Both arms computed, then chosen: with trapping math (the default) the
  // compiler may not hoist a multiply out of a branch, and the branch is
  // mispredicted on half of real data; a select vectorises.
  template <typename C> static C Kernel(C x, C slope) {
    const C scaled = ew::WrapMul(slope, x);
    return x < C(0) ? scaled : x;
  }
  static double Reference(double x, double slope) { return x >= 0 ? x : slope * x; }
};
struct EqualOp {
  template <typename C> static bool Kernel(C a, C b) { return a == b; }
  static double Reference(double a, double b) { return a == b ? 1 : 0; }
};
struct LessOp {
  template <typename C> static bool Kernel(C a, C b) { return a < b; }
  static double Reference(double a, double b) { return a < b ? 1 : 0; }
};
struct GreaterOp {
  template <typename C> static bool Kernel(C a, C b) { return a > b; }
  static double Reference(double a, double b) { return a > b ? 1 : 0; }
};
struct AndOp {
  template <typename C> static bool Kernel(C a, C b) { return a && b; }
  static double Reference(double a, double b) { return (a != 0 && b != 0) ? 1 : 0; }
};

// PRelu's slope broadcasts to X only (unidirectional); the output is X's shape.
Status InferPRelu(InferContext& c) {
  const Shape& x = c.input(0).shape;
  const Shape& slope = c.input(1).shape;
  auto b = BroadcastShapes(x, slope);
  if (!b.ok() || *b != x) {
    return InvalidArgumentError("PRelu: slope of shape " + slope.ToString() +
                                " does not broadcast to X of shape " + x.ToString() +
                                " (slope may only broadcast toward X)");
  }
  c.SetOutput(0, c.input(0).dtype, x);
  return Status::Ok();
}

}  // namespace


OPSCOPE_EW_BINARY_OP("Equal", EqualOp, ew::All(), TypeSet::kAll, true, 1)
    .Doc("C = A == B (bool, numpy broadcasting)").TypeConstraint("T1", {DType::kBool});
OPSCOPE_EW_BINARY_OP("Less", LessOp, ew::Numeric(), TypeSet::kNumeric, true, 1)
    .Doc("C = A < B (bool, numpy broadcasting)").TypeConstraint("T1", {DType::kBool});
OPSCOPE_EW_BINARY_OP("Greater", GreaterOp, ew::Numeric(), TypeSet::kNumeric, true, 1)
    .Doc("C = A > B (bool, numpy broadcasting)").TypeConstraint("T1", {DType::kBool});
OPSCOPE_EW_BINARY_OP("And", AndOp, std::vector<DType>{DType::kBool}, TypeSet::kBool, true, 1)
    .Doc("C = A and B (bool, numpy broadcasting)").TypeConstraint("T1", {DType::kBool});


OPSCOPE_OP("PRelu")
    .Doc("Y = X < 0 ? slope * X : X; slope broadcasts to X (unidirectional)")
    .Input("X", "T").Input("slope", "T").Output("Y", "T")
    .TypeConstraint("T", ew::FloatsAndInts())
    .Infer(InferPRelu)
    .Cost(ew::ElementwiseCost(2))
    .Tunable("block", ew::BlockChoices())
    .Reference(ew::BinaryReference<PReluOp>)
    .Kernel("cpu", ew::BinaryCpu<PReluOp, TypeSet::kNumeric>, "prelu_cpu");

}  // namespace opscope
