// Cast (ONNX opset 13): attribute `to` is a TensorProto data type number.
// Conversions follow numpy's astype: float -> int truncates, NaN and
// out-of-range give the minimum of int64 (to int64, uint32, uint64) or of
// int32 (to int32 and narrower), then the low bits; anything -> bool is != 0; every float -> f16 /
// bf16 rounds once, to nearest even (f64 -> f16 does not round twice via f32).
#include <cmath>
#include <limits>

#include "ops/builtin/ew_util.h"

namespace opscope {
namespace {

struct OnnxType {
  int64_t number;
  const char* name;
  bool supported;
  DType dtype;
};

constexpr OnnxType kOnnxTypes[] = {
    {1, "float", true, DType::kF32},       {2, "uint8", true, DType::kU8},
    {3, "int8", true, DType::kI8},         {4, "uint16", true, DType::kU16},
    {5, "int16", true, DType::kI16},       {6, "int32", true, DType::kI32},
    {7, "int64", true, DType::kI64},       {8, "string", false, DType::kU8},
    {9, "bool", true, DType::kBool},       {10, "float16", true, DType::kF16},
    {11, "double", true, DType::kF64},     {12, "uint32", true, DType::kU32},
    {13, "uint64", true, DType::kU64},     {14, "complex64", false, DType::kU8},
    {15, "complex128", false, DType::kU8}, {16, "bfloat16", true, DType::kBF16},
};

StatusOr<DType> TargetDType(int64_t to) {
  std::string supported;
  for (const OnnxType& t : kOnnxTypes) {
    if (t.supported) supported += (supported.empty() ? "" : ", ") + std::to_string(t.number) + " (" + t.name + ")";
  }
  for (const OnnxType& t : kOnnxTypes) {
    if (t.number != to) continue;
    if (t.supported) return t.dtype;
    return InvalidArgumentError("Cast: attribute 'to' = " + std::to_string(to) + " (" + t.name +
                                ") is a type opscope does not have; supported: " + supported);
  }
  return InvalidArgumentError("Cast: attribute 'to' = " + std::to_string(to) +
                              " is not an ONNX TensorProto data type; supported: " + supported);
}

Status InferCast(InferContext& c) {
  OPSCOPE_ASSIGN_OR_RETURN(DType to, TargetDType(c.attrs().i("to", -1)));
  c.SetOutput(0, to, c.input(0).shape);
  return Status::Ok();
}

template <typename From>
Status CastFrom(KernelContext& ctx) {
  Status st = InternalError(std::string("Cast: no conversion to ") + DTypeName(ctx.out(0).dtype()));
  OPSCOPE_SWITCH_ALL(ctx.out(0).dtype(), {
    using To = scalar_t;
    st = ew::UnaryMap<From, To, From>(ctx, "cast_cpu", ctx.in(0), ctx.out(0),
                                      [](From v) { return ew::Convert<To>(v); });
  });
  return st;
}

// float32 <-> float16 over spans (dtype.h's HalvesFromFloats): F16C's
// conversions where the CPU has them, the same bits as element by element.
template <typename From, typename To, void (*kSpan)(const From*, To*, int64_t)>
Status CastSpans(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor x, ctx.in(0).Contiguous());
  const From* px = x.data<From>();
  To* py = ctx.out(0).data<To>();
  return ctx.ParallelFor("cast_cpu", ctx.out(0).numel(), [&](int64_t s, int64_t e) { kSpan(px + s, py + s, e - s); });
}

Status CastCpu(KernelContext& ctx) {
  const DType from = ctx.in(0).dtype(), to = ctx.out(0).dtype();
  if (from == DType::kF32 && to == DType::kF16) return CastSpans<float, Half, HalvesFromFloats>(ctx);
  if (from == DType::kF16 && to == DType::kF32) return CastSpans<Half, float, FloatsFromHalves>(ctx);
  Status st = InternalError(std::string("Cast: no conversion from ") + DTypeName(ctx.in(0).dtype()));
  OPSCOPE_SWITCH_ALL(ctx.in(0).dtype(), st = CastFrom<scalar_t>(ctx));
  return st;
}

// ---- reference: the rounding rules written out in double ------------------------------

// Rounds v to a binary format with `precision` significand bits, minimum
// normal exponent `emin` and largest finite value `max_finite`, to nearest
// even; beyond max_finite (after rounding) is infinity.
double RoundToFormat(double v, int precision, int emin, double max_finite) {
  if (!std::isfinite(v) || v == 0) return v;
  int e;
  std::frexp(v, &e);  // v = m * 2^e, 0.5 <= |m| < 1: the leading bit is 2^(e-1)
  int lead = std::max(e - 1, emin);
  double quantum = std::ldexp(1.0, lead - (precision - 1));
  double r = std::nearbyint(v / quantum) * quantum;  // default rounding mode: to nearest even
  if (std::fabs(r) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return r;
}

double ReferenceCast(double v, DType to) {
  switch (to) {
    case DType::kF64: return v;
    case DType::kF32: return RoundToFormat(v, 24, -126, 3.4028234663852886e38);
    case DType::kF16: return RoundToFormat(v, 11, -14, 65504.0);
    case DType::kBF16: return RoundToFormat(v, 8, -126, 3.3895313892515355e38);
    case DType::kBool: return v != 0 ? 1 : 0;
    case DType::kU64:
      if (v >= 9223372036854775808.0) return v < 18446744073709551616.0 ? std::trunc(v) : 0;
      [[fallthrough]];
    case DType::kI64:
    case DType::kU32:  // through int64, then StoreReference keeps the low bits
      if (std::isnan(v) || v < -9223372036854775808.0 || v >= 9223372036854775808.0) return -9223372036854775808.0;
      return std::trunc(v);
    default:  // int32 and narrower: through int32, then StoreReference keeps the low bits
      if (std::isnan(v) || v < -2147483648.0 || v >= 2147483648.0) return -2147483648.0;
      return std::trunc(v);
  }
}

Status CastReference(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(DType to, TargetDType(ctx.attrs().i("to", -1)));
  std::vector<double> v = kernels::ToDoubles(ctx.in(0));
  for (double& d : v) d = ReferenceCast(d, to);
  ew::StoreReference(ctx.out(0), v);
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("Cast")
    .Doc("output = input converted to the type `to` (ONNX TensorProto number: 1 float, 2 uint8, 3 int8, "
         "4 uint16, 5 int16, 6 int32, 7 int64, 9 bool, 10 float16, 11 double, 12 uint32, 13 uint64, 16 bfloat16), "
         "as numpy's astype")
    .Input("input", "T1").Output("output", "T2")
    .TypeConstraint("T1", ew::All())
    .TypeConstraint("T2", ew::All())
    .RequiredAttr("to", AttrType::kInt)
    .Infer(InferCast)
    .Cost(ew::ElementwiseCost(1))
    .Tunable("block", ew::BlockChoices())
    .Reference(CastReference)
    .Kernel("cpu", CastCpu, "cast_cpu");

}  // namespace opscope
