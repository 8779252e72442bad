// Arithmetic binary elementwise ops with numpy broadcasting (ONNX opset 17):
// Add Sub Mul Div Pow. Integer arithmetic wraps like numpy; integer Div
// truncates toward zero.
#include "ops/builtin/ew_binary.h"

#include <cmath>
#include <optional>

#include "ops/builtin/ew_vecmath.h"

namespace opscope {
namespace {

using ew::TypeSet;

struct AddOp {
  template <typename C> static C Kernel(C a, C b) { return ew::WrapAdd(a, b); }
  static double Reference(double a, double b) { return a + b; }
};
struct SubOp {
  template <typename C> static C Kernel(C a, C b) { return ew::WrapSub(a, b); }
  static double Reference(double a, double b) { return a - b; }
};
struct MulOp {
  template <typename C> static C Kernel(C a, C b) { return ew::WrapMul(a, b); }
  static double Reference(double a, double b) { return a * b; }
};
struct DivOp {
  template <typename C> static C Kernel(C a, C b) { return ew::SafeDiv(a, b); }
  // Integer outputs are truncated toward zero by StoreReference (and x/0 -> 0).
  static double Reference(double a, double b) { return a / b; }
};
// Pow: X and Y may differ in type (T, T1); Z has X's type. Integer bases and
// double work in double, the other floats in float. An exponent of another
// dtype is widened to float64 first (exact for every T1), which keeps the
// kernel to one instantiation per base type instead of one per pair.
template <typename T, typename T1>
Status PowTyped(KernelContext& ctx, const Tensor& exponent) {
  using C = std::conditional_t<std::is_same_v<T, double> || std::is_integral_v<T> || std::is_same_v<T1, double>,
                               double, float>;
  return ew::BinaryMap<T, T1, T, C, C>(ctx, "pow_cpu", ctx.in(0), exponent, ctx.out(0),
                                       [](C a, C b) { return std::pow(a, b); });
}

// float32 ** float32 where the base fills the output and the exponent does
// too or is one number: the vector pow (ew_vecmath.h, within kPowMaxUlps)
// instead of a scalar powf per element (5.1x the memory bound); an exponent
// of exactly 2, a decomposed LayerNorm's square, is x * x, pow's correctly
// rounded value; other whole exponents up to 8 in magnitude, and 1/2, have
// cheaper forms below.
std::optional<Status> PowF32Spans(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& y = ctx.in(1);
  Tensor& z = ctx.out(0);
  if (x.dtype() != DType::kF32 || y.dtype() != DType::kF32) return std::nullopt;
  if (x.shape() != z.shape() || !x.is_contiguous()) return std::nullopt;
  const bool y_full = y.shape() == z.shape() && y.is_contiguous();
  if (!y_full && y.numel() != 1) return std::nullopt;
  const float* px = x.data<float>();
  const float* py = y.data<float>();
  float* pz = z.data<float>();
  if (!y_full && *py == 2.0f) {
    return ctx.ParallelFor("pow_cpu", z.numel(), [&](int64_t s, int64_t e) {
      const float* __restrict in = px;
      float* __restrict out = pz;
      for (int64_t i = s; i < e; ++i) out[i] = in[i] * in[i];
    });
  }
  // Other small whole exponents (x^3 of a decomposed tanh Gelu, 1/x^2) as
  // products in double, rounded once to float: x^n for |x| a float and
  // |n| <= 8 stays within double's range, each product's rounding (2^-53) is
  // far below float's, so the result is within kPowMaxUlps of pow's, at
  // memory speed instead of pow's 2.3 ns an element. IEEE arithmetic gives
  // C99's special cases for whole exponents itself: signed zeros and
  // infinities by parity, 1/0 = inf, NaN through; x^0 = 1 even for NaN.
  const float ey = *py;
  if (!y_full && ey == std::trunc(ey) && std::fabs(ey) <= 8.0f) {
    const bool reciprocal = ey < 0;
    // The power a template argument, so the loop over elements vectorises
    // (with n a variable, the inner product loop kept it scalar: 14 ms for
    // x^3 over 16M floats).
    const auto run = [&]<int N>() {
      return ctx.ParallelFor("pow_cpu", z.numel(), [&](int64_t s, int64_t e) {
        const float* __restrict in = px;
        float* __restrict out = pz;
        for (int64_t i = s; i < e; ++i) {
          const double v = in[i];
          double r = 1.0;
          for (int k = 0; k < N; ++k) r *= v;
          out[i] = static_cast<float>(reciprocal ? 1.0 / r : r);
        }
      });
    };
    switch (static_cast<int>(std::fabs(ey))) {
      case 0: return run.template operator()<0>();
      case 1: return run.template operator()<1>();
      case 2: return run.template operator()<2>();  // -2: +2 is x * x above
      case 3: return run.template operator()<3>();
      case 4: return run.template operator()<4>();
      case 5: return run.template operator()<5>();
      case 6: return run.template operator()<6>();
      case 7: return run.template operator()<7>();
      default: return run.template operator()<8>();
    }
  }
  // x^0.5 is sqrt (correctly rounded), but for pow's -0^0.5 = +0 and
  // (-inf)^0.5 = +inf, where sqrt gives -0 and NaN.
  if (!y_full && ey == 0.5f) {
    return ctx.ParallelFor("pow_cpu", z.numel(), [&](int64_t s, int64_t e) {
      const float* __restrict in = px;
      float* __restrict out = pz;
      for (int64_t i = s; i < e; ++i) {
        const float v = in[i];
        out[i] = v == -INFINITY ? INFINITY : std::sqrt(v) + 0.0f;
      }
    });
  }
  const ew::VecMath* m = ew::Avx2VecMath();
  if (m == nullptr) return std::nullopt;
  const int64_t sy = y_full ? 1 : 0;
  return ctx.ParallelFor("pow_cpu", z.numel(), [&](int64_t s, int64_t e) { m->pow(px + s, py + s * sy, sy, pz + s, e - s); });
}

Status PowCpu(KernelContext& ctx) {
  if (std::optional<Status> done = PowF32Spans(ctx)) return *done;
  const DType base = ctx.in(0).dtype();
  Tensor exponent = ctx.in(1);
  if (exponent.dtype() != base) {
    OPSCOPE_ASSIGN_OR_RETURN(exponent, exponent.CastTo(DType::kF64));
  }
  Status st = UnimplementedError(std::string("Pow: no cpu kernel for base dtype ") + DTypeName(base));
  switch (base) {
    case DType::kF64: return PowTyped<double, double>(ctx, exponent);
    case DType::kF32:
      return exponent.dtype() == base ? PowTyped<float, float>(ctx, exponent) : PowTyped<float, double>(ctx, exponent);
    case DType::kF16:
      return exponent.dtype() == base ? PowTyped<Half, Half>(ctx, exponent) : PowTyped<Half, double>(ctx, exponent);
    case DType::kBF16:
      return exponent.dtype() == base ? PowTyped<BFloat16, BFloat16>(ctx, exponent)
                                      : PowTyped<BFloat16, double>(ctx, exponent);
    case DType::kI64:
      return exponent.dtype() == base ? PowTyped<int64_t, int64_t>(ctx, exponent)
                                      : PowTyped<int64_t, double>(ctx, exponent);
    case DType::kI32:
      return exponent.dtype() == base ? PowTyped<int32_t, int32_t>(ctx, exponent)
                                      : PowTyped<int32_t, double>(ctx, exponent);
    default: return st;
  }
}

struct PowRef {
  static double Reference(double a, double b) { return std::pow(a, b); }
};

}  // namespace


OPSCOPE_EW_BINARY_OP("Add", AddOp, ew::Numeric(), TypeSet::kNumeric, false, 1).Doc("C = A + B (numpy broadcasting)");
OPSCOPE_EW_BINARY_OP("Sub", SubOp, ew::Numeric(), TypeSet::kNumeric, false, 1).Doc("C = A - B (numpy broadcasting)");
OPSCOPE_EW_BINARY_OP("Mul", MulOp, ew::Numeric(), TypeSet::kNumeric, false, 1).Doc("C = A * B (numpy broadcasting)");
OPSCOPE_EW_BINARY_OP("Div", DivOp, ew::Numeric(), TypeSet::kNumeric, false, 1)
    .Doc("C = A / B (numpy broadcasting); integers truncate toward zero, x/0 = 0");

OPSCOPE_OP("Pow")
    .Doc("Z = X ^ Y (numpy broadcasting); Y may have another numeric type; Z has X's")
    .Input("X", "T").Input("Y", "T1").Output("Z", "T")
    .TypeConstraint("T", ew::FloatsAndInts())
    .TypeConstraint("T1", ew::Numeric())
    .Infer(ew::InferBroadcastSame)
    .Cost(ew::ElementwiseCost(10))
    .Tunable("block", ew::BlockChoices())
    .Reference(ew::BinaryReference<PowRef>)
    .Kernel("cpu", PowCpu, "pow_cpu");

}  // namespace opscope
