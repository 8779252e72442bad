// File: ops/builtin/ew_vecmath.h
// float32 transcendental functions over contiguous spans, eight lanes at a
// time: our own exp, log, erf, tanh, expm1 and Softplus (SLEEF's, from
// Debian's libsleef, held those ops at 2.6x to 6x their memory bound), each
// within its k*MaxUlps below over every float, and pow: ours in double where
// the operands are plain, SLEEF's 1-ULP AVX2 powf for the special cases.
// libm's scalar call per element had held Exp, Log, Erf, Sigmoid, Tanh,
// Softplus, Gelu, Elu and Selu at 5x to 40x their memory bound
// (bench/builtin_roofline.sh); the ops' double references judge them as
// before. Only where the CPU has AVX2 and FMA (the one file that uses them is
// compiled for them and called only then); elsewhere, and with
// OPSCOPE_SCALAR_MATH set, the ops keep their scalar loops.
//
//   if (const ew::VecMath* m = ew::Avx2VecMath()) m->exp(x, y, n, params);
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace opscope::ew {

struct UnaryParams;

// Units in the last place of float between a float result and an exact
// (double) one: the unit of the bounds here, and of their tests.
inline double FloatUlps(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  // An exact value from half an ULP past float's largest rounds to infinity.
  if (std::fabs(want) >= 0x1.ffffffp127) want = std::copysign(INFINITY, want);
  if (std::isinf(want) || std::isinf(got)) return static_cast<double>(got) == want ? 0 : INFINITY;
  const float w = static_cast<float>(want);
  const double ulp = std::nextafter(std::fabs(w), INFINITY) - std::fabs(w);
  return std::fabs(static_cast<double>(got) - want) / (ulp > 0 ? ulp : std::numeric_limits<float>::denorm_min());
}

// erf's largest error against double erf, in float ULPs, over every float:
// measured by bench/erf_ulps_benchmark --exhaustive (docs/speed.md).
inline constexpr double kErfMaxUlps = 1.5;  // 1.400 at x = 0.899856031 (through our exp; 1.413 through SLEEF's), 2026-12-06
// Likewise for our exp, log, tanh, expm1 (what Elu and Selu scale) and Softplus,
// max(x, 0) + log1p(e^-|x|), over every float and its negation (2026-12-06).
inline constexpr double kExpMaxUlps = 1.1;       // 1.014 at x = 37.7786407: r = x - k ln2 rounds, then 1 + p
inline constexpr double kLogMaxUlps = 1.0;       // 0.840 at x = 1.41331851
inline constexpr double kTanhMaxUlps = 1.5;      // 1.463 at x = 0.550921023, just past the polynomial's piece
inline constexpr double kExpm1MaxUlps = 1.0;     // 0.872 at x = -0.346866608
inline constexpr double kSoftplusMaxUlps = 3.0;  // 2.862 at x = -2.74457479: e^-|x|, 2 + t, the division and the sum each round

// pow: our double-precision path (ew_vecmath_avx2.cc) rounds once to float;
// blocks with a zero, subnormal, infinite or NaN operand go through SLEEF's
// 1-ULP powf. bench/vecmath_ulps_benchmark --exhaustive pow.
inline constexpr double kPowMaxUlps = 1.0;

// y[i] = f(x[i]) for i < n; x and y may be the same array.
using SpanFn = void (*)(const float* x, float* y, int64_t n, const UnaryParams& p);

// z[i] = pow(x[i], y[i * y_stride]) for i < n, y_stride 0 (one exponent) or 1.
using PowSpanFn = void (*)(const float* x, const float* y, int64_t y_stride, float* z, int64_t n);

// One row of Softmax (or LogSoftmax with log_form) along n contiguous
// floats: y may be x. The maximum first, then e^(x - max) and its sum, then the scale.
using SoftmaxRowFn = void (*)(const float* x, float* y, int64_t n, bool log_form);

// The mean of n contiguous floats and the sum of their squared deviations
// from it, each summed in double (every float is exact there) in sixteen
// partial sums: LayerNormalization's and InstanceNormalization's statistics.
// Meanwhile the n floats after x (the next row) and the n at `next_out`
// (the next row's output, or nullptr) are fetched into cache.
using MomentsFn = void (*)(const float* x, int64_t n, double* mean, double* squared_deviations, const float* next_out);

// y[j] = (x[j] - mean) * inv * scale[j] + bias[j] for j < n: LayerNormalization's
// normalise pass over a row; y may be x.
using NormApplyFn = void (*)(const float* x, float* y, int64_t n, float mean, float inv, const float* scale,
                             const float* bias);

struct VecMath {
  SpanFn exp, log, tanh, erf, sigmoid, softplus, elu, selu, gelu;  // gelu: erf or tanh form, by p
  PowSpanFn pow;  // kPowMaxUlps
  SoftmaxRowFn softmax_row;
  MomentsFn moments;
  NormApplyFn norm_apply;
};

// The AVX2 table, or nullptr when the CPU lacks AVX2 or FMA.
const VecMath* Avx2VecMath();

}  // namespace opscope::ew
