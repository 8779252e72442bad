// File: ops/builtin/ew_vecmath.h
// float32 transcendental functions over contiguous spans, eight lanes at a
// time, with SLEEF's 1-ULP AVX2 functions (Debian's libsleef): exp, log,
// tanh and expm1/log1p where an op needs them; erf is our own (SLEEF's took
// 3.9 ns an element), within kErfMaxUlps over every float. libm's scalar call per
// element held Exp, Log, Erf, Sigmoid, Tanh, Softplus, Gelu, Elu and Selu at
// 5x to 40x their memory bound (bench/builtin_roofline.sh); these are within
// SLEEF's stated 1.0 ULP of the exact result, against the ops' double
// references as before. Only where the CPU has AVX2 and FMA (the one file
// that uses them is compiled for them and called only then); elsewhere, and
// with OPSCOPE_SCALAR_MATH set, the ops keep their scalar loops.
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
  if (std::isinf(want) || std::isinf(got)) return static_cast<double>(got) == want ? 0 : INFINITY;
  const float w = static_cast<float>(want);
  const double ulp = std::nextafter(std::fabs(w), INFINITY) - std::fabs(w);
  return std::fabs(static_cast<double>(got) - want) / (ulp > 0 ? ulp : std::numeric_limits<float>::denorm_min());
}

// erf's largest error against double erf, in float ULPs, over every float:
// measured by bench/erf_ulps_benchmark --exhaustive (docs/speed.md).
inline constexpr double kErfMaxUlps = 1.5;  // 1.413 at x = 0.911704242, 2026-12-06

// y[i] = f(x[i]) for i < n; x and y may be the same array.
using SpanFn = void (*)(const float* x, float* y, int64_t n, const UnaryParams& p);

struct VecMath {
  SpanFn exp, log, tanh, erf, sigmoid, softplus, elu, selu, gelu;  // gelu: erf or tanh form, by p
};

// The AVX2 table, or nullptr when the CPU lacks AVX2 or FMA.
const VecMath* Avx2VecMath();

}  // namespace opscope::ew
