// File: ops/builtin/ew_vecmath.h
// float32 transcendental functions over contiguous spans, eight lanes at a
// time, with SLEEF's 1-ULP AVX2 functions (Debian's libsleef): exp, log,
// tanh, erf and expm1/log1p where an op needs them. libm's scalar call per
// element held Exp, Log, Erf, Sigmoid, Tanh, Softplus, Gelu, Elu and Selu at
// 5x to 40x their memory bound (bench/builtin_roofline.sh); these are within
// SLEEF's stated 1.0 ULP of the exact result, against the ops' double
// references as before. Only where the CPU has AVX2 and FMA (the one file
// that uses them is compiled for them and called only then); elsewhere, and
// with OPSCOPE_SCALAR_MATH set, the ops keep their scalar loops.
//
//   if (const ew::VecMath* m = ew::Avx2VecMath()) m->exp(x, y, n, params);
#pragma once

#include <cstdint>

namespace opscope::ew {

struct UnaryParams;

// y[i] = f(x[i]) for i < n; x and y may be the same array.
using SpanFn = void (*)(const float* x, float* y, int64_t n, const UnaryParams& p);

struct VecMath {
  SpanFn exp, log, tanh, erf, sigmoid, softplus, elu, selu, gelu;  // gelu: erf or tanh form, by p
};

// The AVX2 table, or nullptr when the CPU lacks AVX2 or FMA.
const VecMath* Avx2VecMath();

}  // namespace opscope::ew
