// The unary elementwise ops besides Relu (relu.cc): activations and math
// functions, ONNX opset 17 (Gelu: opset 20). Each op is its kernel math over
// the compute type and an independent double-precision reference; the
// transcendental ones also name their float32 span function (Vec,
// ew_vecmath.h), which runs instead of Kernel where the CPU has AVX2 and FMA.
#include <cmath>

#include "ops/builtin/ew_unary.h"

namespace opscope {
namespace {

using ew::UnaryParams;

// The float-math ops compute integers (where ONNX allows them) in double.
struct FloatMath {
  static constexpr bool kIntegerMath = false;
};

struct LeakyReluOp : FloatMath {
  // Both arms, then a select (see PRelu in ew_compare.cc): it vectorises.
  template <typename C> static C Kernel(C x, const UnaryParams& p) {
    const C scaled = C(p.alpha) * x;
    return x < C(0) ? scaled : x;
  }
  static double Reference(double x, const UnaryParams& p) { return x >= 0 ? x : p.alpha * x; }
};

struct EluOp : FloatMath {
  static ew::SpanFn Vec(const ew::VecMath& m) { return m.elu; }
  template <typename C> static C Kernel(C x, const UnaryParams& p) {
    return x < C(0) ? C(p.alpha) * std::expm1(x) : x;
  }
  static double Reference(double x, const UnaryParams& p) { return x >= 0 ? x : p.alpha * (std::exp(x) - 1.0); }
};

struct SeluOp : FloatMath {
  static ew::SpanFn Vec(const ew::VecMath& m) { return m.selu; }
  template <typename C> static C Kernel(C x, const UnaryParams& p) {
    return C(p.gamma) * (x > C(0) ? x : C(p.alpha) * std::expm1(x));
  }
  static double Reference(double x, const UnaryParams& p) {
    return x > 0 ? p.gamma * x : p.gamma * (p.alpha * std::exp(x) - p.alpha);
  }
};

struct HardSigmoidOp : FloatMath {
  template <typename C> static C Kernel(C x, const UnaryParams& p) {
    C y = C(p.alpha) * x + C(p.beta);
    y = y < C(0) ? C(0) : y;
    return y > C(1) ? C(1) : y;
  }
  static double Reference(double x, const UnaryParams& p) { return std::max(0.0, std::min(1.0, p.alpha * x + p.beta)); }
};

struct SoftplusOp : FloatMath {
  static ew::SpanFn Vec(const ew::VecMath& m) { return m.softplus; }
  // log(1 + e^x) without overflow: x + log(1 + e^-x) for positive x.
  template <typename C> static C Kernel(C x, const UnaryParams&) {
    return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  static double Reference(double x, const UnaryParams&) {
    if (x > 30) return x + std::exp(-x);  // log(1 + e^x) = x + log(1 + e^-x) ~ x + e^-x
    return std::log(1.0 + std::exp(x));
  }
};

struct SigmoidOp : FloatMath {
  static ew::SpanFn Vec(const ew::VecMath& m) { return m.sigmoid; }
  template <typename C> static C Kernel(C x, const UnaryParams&) { return C(1) / (C(1) + std::exp(-x)); }
  static double Reference(double x, const UnaryParams&) { return 1.0 / (1.0 + std::exp(-x)); }
};

struct TanhOp : FloatMath {
  static ew::SpanFn Vec(const ew::VecMath& m) { return m.tanh; }
  template <typename C> static C Kernel(C x, const UnaryParams&) { return std::tanh(x); }
  static double Reference(double x, const UnaryParams&) { return std::tanh(x); }
};

struct ErfOp : FloatMath {
  static ew::SpanFn Vec(const ew::VecMath& m) { return m.erf; }
  template <typename C> static C Kernel(C x, const UnaryParams&) { return std::erf(x); }
  static double Reference(double x, const UnaryParams&) { return std::erf(x); }
};

struct GeluOp : FloatMath {
  static ew::SpanFn Vec(const ew::VecMath& m) { return m.gelu; }
  template <typename C> static C Kernel(C x, const UnaryParams& p) {
    if (p.tanh_approximation) {
      const C k = C(0.7978845608028654);  // sqrt(2/pi)
      return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
    }
    return C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476)));
  }
  static double Reference(double x, const UnaryParams& p) {
    const double pi = 3.14159265358979323846;
    if (p.tanh_approximation) return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * std::pow(x, 3))));
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  }
};

struct ExpOp : FloatMath {
  static ew::SpanFn Vec(const ew::VecMath& m) { return m.exp; }
  template <typename C> static C Kernel(C x, const UnaryParams&) { return std::exp(x); }
  static double Reference(double x, const UnaryParams&) { return std::exp(x); }
};

struct LogOp : FloatMath {
  static ew::SpanFn Vec(const ew::VecMath& m) { return m.log; }
  template <typename C> static C Kernel(C x, const UnaryParams&) { return std::log(x); }
  static double Reference(double x, const UnaryParams&) { return std::log(x); }
};

struct SqrtOp : FloatMath {
  template <typename C> static C Kernel(C x, const UnaryParams&) { return std::sqrt(x); }
  static double Reference(double x, const UnaryParams&) { return std::sqrt(x); }
};

struct AbsOp {
  static constexpr bool kIntegerMath = true;
  template <typename C> static C Kernel(C x, const UnaryParams&) {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_integral_v<C>) {
      return x < 0 ? ew::WrapNeg(x) : x;  // abs(MIN) wraps to MIN, as numpy
    } else {
      return std::fabs(x);
    }
  }
  static double Reference(double x, const UnaryParams&) { return x < 0 ? -x : (x == 0 ? 0.0 : x); }
};

struct NegOp {
  static constexpr bool kIntegerMath = true;
  template <typename C> static C Kernel(C x, const UnaryParams&) { return ew::WrapNeg(x); }
  static double Reference(double x, const UnaryParams&) { return -x; }
};

}  // namespace

#define EW_UNARY(NAME, OP, TYPES, FLOPS, KERNEL) \
  OPSCOPE_OP(NAME)                               \
      .Input("X", "T").Output("Y", "T")          \
      .TypeConstraint("T", TYPES)                \
      .SameShape()                               \
      .Cost(ew::ElementwiseCost(FLOPS))          \
      .Tunable("block", ew::BlockChoices())      \
      .Reference(ew::UnaryReference<OP>)         \
      .Kernel("cpu", ew::UnaryCpu<OP>, KERNEL)

EW_UNARY("LeakyRelu", LeakyReluOp, ew::Floats(), 2, "leakyrelu_cpu").Doc("y = x < 0 ? alpha * x : x").Attr("alpha", 0.01f);
EW_UNARY("Elu", EluOp, ew::Floats(), 4, "elu_cpu").Doc("y = x < 0 ? alpha * (exp(x) - 1) : x").Attr("alpha", 1.0f);
EW_UNARY("Selu", SeluOp, ew::Floats(), 5, "selu_cpu")
    .Doc("y = gamma * (x > 0 ? x : alpha * (exp(x) - 1))")
    .Attr("alpha", 1.67326319217681884765625f)
    .Attr("gamma", 1.05070102214813232421875f);
EW_UNARY("HardSigmoid", HardSigmoidOp, ew::Floats(), 4, "hardsigmoid_cpu")
    .Doc("y = max(0, min(1, alpha * x + beta))")
    .Attr("alpha", 0.2f)
    .Attr("beta", 0.5f);
EW_UNARY("Softplus", SoftplusOp, ew::Floats(), 4, "softplus_cpu").Doc("y = log(exp(x) + 1)");
EW_UNARY("Sigmoid", SigmoidOp, ew::Floats(), 4, "sigmoid_cpu").Doc("y = 1 / (1 + exp(-x))");
EW_UNARY("Tanh", TanhOp, ew::Floats(), 6, "tanh_cpu").Doc("y = tanh(x)");
EW_UNARY("Erf", ErfOp, ew::Numeric(), 8, "erf_cpu").Doc("y = erf(x)");
EW_UNARY("Gelu", GeluOp, ew::Floats(), 10, "gelu_cpu")
    .Doc("y = 0.5 * x * (1 + erf(x / sqrt(2))); approximate=tanh uses the tanh formula (ONNX opset 20)")
    .Attr("approximate", "none", {"none", "tanh"});
EW_UNARY("Exp", ExpOp, ew::Floats(), 4, "exp_cpu").Doc("y = exp(x)");
EW_UNARY("Log", LogOp, ew::Floats(), 4, "log_cpu").Doc("y = log(x)");
EW_UNARY("Sqrt", SqrtOp, ew::Floats(), 1, "sqrt_cpu").Doc("y = sqrt(x)");
EW_UNARY("Abs", AbsOp, ew::Numeric(), 1, "abs_cpu").Doc("y = |x|");
EW_UNARY("Neg", NegOp, ew::SignedNumeric(), 1, "neg_cpu").Doc("y = -x");

#undef EW_UNARY

}  // namespace opscope
