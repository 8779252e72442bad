// File: ops/builtin/dense_epilogue.h
// The bias-and-activation tail of FusedConv, FusedGemm and FusedMatMul
// (attributes activation, activation_alpha, activation_min/max,
// activation_approximate; FusedConv's residual input Z), and the one kernel
// entry each dense op has with such a tail.
//
// The dense kernels apply it to each stretch of output right after computing
// it (one conv channel row, one GEMM tile), while it is still in cache: not a
// second pass over the whole tensor. A per-element switch over the activation
// after the kernel took 45% of mobilenet_v2's time on the cpu device; here the
// switch runs once per stretch and the loop under it vectorises (Sigmoid,
// Tanh and Gelu in float through ew_vecmath.h's span functions).
// The reference kernels apply Apply<double> to the reference output.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "opscope/op.h"

namespace opscope::dense {

enum class Act { kNone, kRelu, kSigmoid, kTanh, kLeakyRelu, kClip, kGelu, kGeluTanh };

struct Epilogue {
  Act act = Act::kNone;
  double alpha = 0.01, lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  // FusedConv's Z (the other branch of a skip connection), added after the
  // bias and before the activation, element for element: a stretch p of the
  // buffer that starts at `residual_out` gets residual[(p - residual_out) + i].
  // The kernel entry points them at Z and at the buffer it writes (Y, or the
  // float copy of a 16-bit Y), so each stretch of output the epilogue runs on
  // takes its Z with it, whichever path wrote it. Null: no Z.
  const void* residual = nullptr;
  const void* residual_out = nullptr;

  // From the fused op's attributes; an unknown activation names `op`.
  static StatusOr<Epilogue> From(std::string_view op, const Attrs& a);

  // A Clip bound in C: beyond C's range it is that infinity (converting an
  // out-of-range double to float is undefined behaviour, not an infinity).
  template <typename C>
  static C Bound(double v) {
    if (v > static_cast<double>(std::numeric_limits<C>::max())) return std::numeric_limits<C>::infinity();
    if (v < static_cast<double>(std::numeric_limits<C>::lowest())) return -std::numeric_limits<C>::infinity();
    return static_cast<C>(v);
  }

  // One element: the scalar form, in the reference's double too.
  template <typename C>
  C Apply(C x) const {
    switch (act) {
      case Act::kNone: return x;
      case Act::kRelu: return x < C(0) ? C(0) : x;
      case Act::kSigmoid: return C(1) / (C(1) + std::exp(-x));
      case Act::kTanh: return std::tanh(x);
      case Act::kLeakyRelu: return x < C(0) ? C(alpha) * x : x;
      case Act::kClip: return x < Bound<C>(lo) ? Bound<C>(lo) : (x > Bound<C>(hi) ? Bound<C>(hi) : x);
      case Act::kGelu: return C(0.5) * x * (C(1) + std::erf(x * C(M_SQRT1_2)));
      case Act::kGeluTanh: {
        const C k = C(0.7978845608028654);  // sqrt(2/pi)
        return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
      }
    }
    return x;
  }

  // p[i] = act(p[i] + bias (+ Z's element)) for i < n: one channel's row of a convolution.
  void Run(float* p, int64_t n, float bias) const;
  void Run(double* p, int64_t n, double bias) const;
  // p[i] = act(p[i] + bias[i]), bias may be null: one row of a GEMM's output.
  void Run(float* p, int64_t n, const float* bias) const;
  void Run(double* p, int64_t n, const double* bias) const;
};

// FusedConv's Z against its output Y: the same dtype and shape, or an
// error that names `op`, input Z and what was expected.
Status CheckResidual(std::string_view op, DType z_dtype, const Shape& z_shape, DType y_dtype, const Shape& y_shape);

// The cpu kernels of Conv, Gemm and MatMul with `e` applied to their output
// as they write it (Epilogue{} for the plain ops). MatMul's bias, when
// `bias` is given, is one value per output column; ConvCpu reads FusedConv's
// Z from input 3 where there is one.
Status ConvCpu(KernelContext& ctx, const Epilogue& e);
Status GemmCpu(KernelContext& ctx, const Epilogue& e);
Status MatMulCpu(KernelContext& ctx, const Epilogue& e, const Tensor* bias);

}  // namespace opscope::dense
