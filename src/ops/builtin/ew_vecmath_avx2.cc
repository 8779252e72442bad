// ew_vecmath.h's AVX2 table. This file alone is compiled with -mavx2 -mfma
// (src/CMakeLists.txt, outside any unity batch) and is reached only through
// Avx2VecMath, which checks the CPU first.
#include "ops/builtin/ew_vecmath.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "ops/builtin/ew_unary.h"

// sleef.h declares its __m256 functions only when the including file is built for AVX.
#include <sleef.h>

namespace opscope::ew {
namespace {

// A step written once for each of n blocks (or lane groups) before the next
// step: the blocks' independent chains side by side for the core to overlap.
#define OPSCOPE_EACH(h, n) _Pragma("GCC unroll 8") for (int h = 0; h < (n); ++h)

// Applies `f` (an __m256 -> __m256 callable) to eight blocks of eight floats
// a step, then one block at a time; the last n % 8 go through a zero-padded
// lane buffer, so no load or store passes the end. Independent blocks in one
// step, scheduled together (src/CMakeLists.txt), keep the core busy while
// each waits on its chain of fmas: erf 2.0 ns an element one block a step,
// 1.2 with four, 0.98 with six, 0.93 with eight (bench/vecmath_ulps_benchmark),
// where unrolling without the scheduling had gained nothing.
// Flattened, so that f and what it calls are inlined: g++ had kept Gelu's
// lambda out of line, a call per block (2.2 ns an element against erf's 2.0).
template <typename F>
__attribute__((flatten)) void Map8(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m256 r[8];
    OPSCOPE_EACH(b, 8) r[b] = f(_mm256_loadu_ps(x + i + 8 * b));
    OPSCOPE_EACH(b, 8) _mm256_storeu_ps(y + i + 8 * b, r[b]);
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  if (i == n) return;
  alignas(32) float lane[8] = {};
  const size_t rest = static_cast<size_t>(n - i) * sizeof(float);
  std::memcpy(lane, x + i, rest);
  _mm256_store_ps(lane, f(_mm256_load_ps(lane)));
  std::memcpy(y + i, lane, rest);
}

// The lane functions are inlined into each loop: called (g++ kept them out
// of line), each call spilled the caller's constants and realigned the stack.
#define OPSCOPE_LANES inline __attribute__((always_inline))


// c[0] x^(N-1) + ... + c[N-1] by Horner's rule in fmas, coefficients highest first.
template <size_t N>
OPSCOPE_LANES __m256 Horner(__m256 x, const float (&c)[N]) {
  __m256 p = _mm256_set1_ps(c[0]);
#pragma GCC unroll 16  // unrolled, the coefficients are constants; a loop read them from a stack array
  for (size_t i = 1; i < N; ++i) p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(c[i]));
  return p;
}

__m256 Splat(double v) { return _mm256_set1_ps(static_cast<float>(v)); }

// expm1 in float, eight lanes, without SLEEF's expm1f (Elu and Selu at 3.1x
// to 3.3x their memory bound with it): x = k ln2 + r with |r| <= ln2/2, a
// polynomial for expm1(r) = r + r^2 G(r) (G fitted here, minimax in relative
// error), then expm1(x) = 2^k expm1(r) + 2^k - 1, taken as
// 2 (h expm1(r) + h - 1/2) with h = 2^(k-1) so that k = 128 (x up to the
// overflow at 88.72) needs no 2^128. For k = 0 the result is the polynomial's
// own, so small x keeps its relative accuracy, subnormals included. Bound: kExpm1MaxUlps.
OPSCOPE_LANES __m256 Expm1Lanes(__m256 x) {
  // Clamped so 2^(k-1) is a normal float: below -20 expm1 rounds to -1, above
  // 89 it overflows anyway. max/min with the bound first keep a NaN x.
  const __m256 c = _mm256_min_ps(_mm256_set1_ps(89.0f), _mm256_max_ps(_mm256_set1_ps(-20.0f), x));
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(c, _mm256_set1_ps(1.4426950408889634f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // r = c - k ln2 in two steps: the first is exact (ln2's float has 24 bits, |k| <= 128).
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693147182464599609375f), c);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-1.904654323148236e-09f), r);
  const __m256 g = Horner(r, {0.00019845867063850164f, 0.001394061604514718f, 0.008333389647305012f, 0.041666362434625626f,
      0.1666666567325592f, 0.5f});
  const __m256 p = _mm256_fmadd_ps(_mm256_mul_ps(r, r), g, r);
  // h = 2^(k-1), built in the exponent field.
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(126)), 23);
  const __m256 h = _mm256_castsi256_ps(e);
  const __m256 two = _mm256_set1_ps(2.0f);
  const __m256 scaled = _mm256_mul_ps(two, _mm256_fmadd_ps(h, p, _mm256_sub_ps(h, _mm256_set1_ps(0.5f))));
  // k = 0: the polynomial itself (halving and doubling would round a subnormal).
  return _mm256_blendv_ps(scaled, p, _mm256_cmp_ps(k, _mm256_setzero_ps(), _CMP_EQ_OQ));
}

// e^y for y in [-104, 88.7] (callers clamp; a NaN passes through), cheaper
// than SLEEF's expf, which takes every float: e^r = 1 + r + r^2 G(r) with
// |r| <= ln2/2 (G fitted here, minimax in relative error, 0.06 ULPs), times
// 2^k, k = round(y / ln2); with kSubnormal, as two powers of two, so that
// results down in the subnormals (y < -87.3) round once.
template <bool kSubnormal>
OPSCOPE_LANES __m256 ExpLanes(__m256 y) {
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(y, _mm256_set1_ps(1.4426950408889634f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693147182464599609375f), y);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-1.904654323148236e-09f), r);
  const __m256 g = Horner(r, {0.0013814592966809869f, 0.008368708193302155f, 0.04166838899254799f, 0.1666652113199234f,
      0.4999999403953552f});
  const __m256 er = _mm256_add_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(_mm256_mul_ps(r, r), g, r));
  const __m256i ki = _mm256_cvtps_epi32(k);
  if constexpr (!kSubnormal) {
    return _mm256_mul_ps(er, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(ki, _mm256_set1_epi32(127)), 23)));
  }
  const __m256i k1 = _mm256_srai_epi32(ki, 1), k2 = _mm256_sub_epi32(ki, k1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(er, s1), s2);
}

// e^x over every float: ExpLanes with x clamped to [-104, 89], past which
// e^x rounds to 0 or overflows (k = 128 still makes 2^64 * 2^64). Bound: kExpMaxUlps.
OPSCOPE_LANES __m256 ExpAllLanes(__m256 x) {
  return ExpLanes<true>(_mm256_min_ps(_mm256_set1_ps(89.0f), _mm256_max_ps(_mm256_set1_ps(-104.0f), x)));
}

void Exp(const float* x, float* y, int64_t n, const UnaryParams&) {
  Map8(x, y, n, [](__m256 v) { return ExpAllLanes(v); });
}

// log in float, eight lanes, without SLEEF's logf (Log at 2.6x its memory
// bound with it): x = 2^k m with m in [sqrt(1/2), sqrt(2)), f = m - 1,
// s = f / (2 + f), and log(1 + f) = f - (f^2/2 - s (f^2/2 + R(s^2))) as
// fdlibm arranges it, R fitted here (minimax, relative error); then
// k ln2 added in two parts, the high one inside the last fma (exact product).
// Subnormal x is scaled by 2^23 first. Bound: kLogMaxUlps.
OPSCOPE_LANES __m256 LogLanes(__m256 x) {
  const __m256 sub = _mm256_and_ps(_mm256_cmp_ps(x, _mm256_set1_ps(1.17549435e-38f), _CMP_LT_OQ),
                                   _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ));
  const __m256 xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(8388608.0f)), sub);
  const __m256i bits = _mm256_castps_si256(xs);
  __m256i k = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
  k = _mm256_sub_epi32(k, _mm256_and_si256(_mm256_castps_si256(sub), _mm256_set1_epi32(23)));
  __m256 m = _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffff)), _mm256_set1_epi32(0x3f800000)));
  const __m256 big = _mm256_cmp_ps(m, _mm256_set1_ps(1.41421356f), _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(m, _mm256_set1_ps(0.5f)), big);
  k = _mm256_sub_epi32(k, _mm256_castps_si256(big));  // big is all ones: -(-1)
  const __m256 dk = _mm256_cvtepi32_ps(k);
  const __m256 f = _mm256_sub_ps(m, _mm256_set1_ps(1.0f));
  const __m256 s = _mm256_div_ps(f, _mm256_add_ps(_mm256_set1_ps(2.0f), f));
  const __m256 z = _mm256_mul_ps(s, s);
  const __m256 r = _mm256_mul_ps(Horner(z, {0.29870879650115967f, 0.39977577328681946f, 0.6666677594184875f}), z);
  const __m256 hfsq = _mm256_mul_ps(_mm256_set1_ps(0.5f), _mm256_mul_ps(f, f));
  // hfsq - (s (hfsq + R) + k ln2_lo), then f minus that, then + k ln2_hi.
  const __m256 inner = _mm256_fmadd_ps(s, _mm256_add_ps(hfsq, r), _mm256_mul_ps(dk, _mm256_set1_ps(9.0580006145e-06f)));
  const __m256 low = _mm256_sub_ps(f, _mm256_sub_ps(hfsq, inner));
  __m256 out = _mm256_fmadd_ps(dk, _mm256_set1_ps(6.9313812256e-01f), low);
  // log(+inf) = +inf, log(+-0) = -inf, log(x < 0) and log(NaN) = NaN.
  out = _mm256_blendv_ps(out, _mm256_set1_ps(INFINITY), _mm256_cmp_ps(x, _mm256_set1_ps(INFINITY), _CMP_EQ_OQ));
  out = _mm256_blendv_ps(out, _mm256_set1_ps(-INFINITY), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ));
  return _mm256_blendv_ps(out, _mm256_set1_ps(NAN), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NGE_UQ));
}

void Log(const float* x, float* y, int64_t n, const UnaryParams&) {
  Map8(x, y, n, [](__m256 v) { return LogLanes(v); });
}

// tanh in float, eight lanes, without SLEEF's tanhf (4.2x the memory bound):
//   |x| < atanh(1/2): x + x^3 Q(x^2), Q fitted here (minimax, relative error);
//   beyond:           1 - 2 / (e^(2|x|) + 1), with an exp of its own for that range.
// The sign is or-ed back on, so tanh(-x) = -tanh(x) and tanh(-0) = -0. Bound: kTanhMaxUlps.
OPSCOPE_LANES __m256 TanhLanes(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  const __m256 u = _mm256_mul_ps(a, a);
  const __m256 q = Horner(u, {-0.006279472727328539f, 0.021075153723359108f, -0.05385309457778931f, 0.13332593441009521f,
      -0.33333316445350647f});
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(a, u), q, a);
  const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f);
  // e^(2|x|) for |x| clamped to 9.1, from which tanh rounds to 1.
  const __m256 big = ExpLanes<false>(_mm256_add_ps(_mm256_min_ps(_mm256_set1_ps(9.1f), a), _mm256_min_ps(_mm256_set1_ps(9.1f), a)));
  const __m256 large = _mm256_sub_ps(one, _mm256_div_ps(two, _mm256_add_ps(big, one)));
  // NaN takes the large piece (NaN through exp).
  const __m256 t = _mm256_blendv_ps(large, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.5493061443340549f), _CMP_LT_OQ));
  return _mm256_or_ps(t, _mm256_and_ps(x, sign));
}

void Tanh(const float* x, float* y, int64_t n, const UnaryParams&) {
  Map8(x, y, n, [](__m256 v) { return TanhLanes(v); });
}

// erf in float, eight lanes, without SLEEF's erff (3.9 ns an element here,
// against its expf's 0.4-0.7: Gelu, exact form, after a transformer's
// first linear layer costs half a millisecond with it). Polynomials fitted
// here (minimax in relative error, numpy, then rounded to float) on two
// pieces of |x|:
//   |x| < 0.875:           x * (c0 + x^2 Q(x^2)), c0 = 2/sqrt(pi) in two floats;
//   0.875 <= |x| < 3.9375: 1 - exp(S(|x| - 2.40625) - x^2) (our exp), S fitted to
//                           log(erfc(x)) + x^2, smooth where erfc is not;
//   beyond:                1 (erf(3.9375) rounds to 1 in float).
// Its error, measured over every float (bench/vecmath_ulps_benchmark.cc
// --exhaustive): at most kErfMaxUlps (ew_vecmath.h) against double erf.
OPSCOPE_LANES __m256 ErfLanes(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  const __m256 u = _mm256_mul_ps(a, a);
  // The small piece: c0 = 1.1283791670955126 as a float and its remainder.
  const __m256 q = Horner(u, {-0.0006239310023374856f, 0.005039776675403118f, -0.026797275990247726f, 0.11282649636268616f,
      -0.3761257529258728f});
  const __m256 c0_hi = _mm256_set1_ps(1.128379225730896f), c0_lo = _mm256_set1_ps(-5.863538343753305e-08f);
  const __m256 small = _mm256_fmadd_ps(a, c0_hi, _mm256_fmadd_ps(_mm256_mul_ps(a, u), q, _mm256_mul_ps(a, c0_lo)));
  // The large piece.
  const __m256 t = _mm256_sub_ps(a, _mm256_set1_ps(2.40625f));
  const __m256 s = Horner(t, {1.6146944972206256e-06f, -1.450578656658763e-05f, 8.651947428006679e-05f,
      -0.0004662604187615216f, 0.0023727123625576496f, -0.011708640493452549f, 0.05927804112434387f,
      -0.36349424719810486f, -1.5232492685317993f});
  const __m256 one = _mm256_set1_ps(1.0f);
  // s - u lies in [-18.4, 0] for every |x| < 3.9375 (-1.53 to -18.3 where the large piece is kept):
  // e^(s - u) is a normal float there, so neither the clamp nor the two-step
  // scaling for subnormal results is needed; the lanes past 3.9375 (even
  // infinite ones, whose exp is garbage) are replaced by 1 below.
  const __m256 large = _mm256_sub_ps(one, ExpLanes<false>(_mm256_sub_ps(s, u)));
  // NaN takes the large piece (NaN through exp); infinities and the tail, 1.
  __m256 r = _mm256_blendv_ps(one, large, _mm256_cmp_ps(a, _mm256_set1_ps(3.9375f), _CMP_NGE_UQ));
  r = _mm256_blendv_ps(r, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.875f), _CMP_LT_OQ));
  return _mm256_or_ps(r, _mm256_and_ps(x, sign));
}

void Erf(const float* x, float* y, int64_t n, const UnaryParams&) {
  Map8(x, y, n, [](__m256 v) { return ErfLanes(v); });  // a lambda, inlined: not a call per eight floats
}

// 1 / (1 + e^-x), as the scalar kernel computes it.
void Sigmoid(const float* x, float* y, int64_t n, const UnaryParams&) {
  const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  Map8(x, y, n, [&](__m256 v) {
    return _mm256_div_ps(one, _mm256_add_ps(one, ExpAllLanes(_mm256_sub_ps(zero, v))));
  });
}

// max(x, 0) + log1p(e^-|x|): the scalar kernel's two arms in one expression.
// log1p(t) for t = e^-|x| in (0, 1] without SLEEF's log1pf (Softplus at 4.1x
// its memory bound with it): log1p(t) = 2 atanh(s) = 2s + 2s^3 R(s^2) with
// s = t / (2 + t) in [0, 1/3], R fitted here (minimax, relative error). Bound: kSoftplusMaxUlps.
void Softplus(const float* x, float* y, int64_t n, const UnaryParams&) {
  const __m256 zero = _mm256_setzero_ps(), two = _mm256_set1_ps(2.0f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  Map8(x, y, n, [&](__m256 v) {
    // e^-|x|, clamped at -104, where it rounds to 0 (its subnormals are kept).
    const __m256 t = ExpLanes<true>(_mm256_max_ps(_mm256_set1_ps(-104.0f), _mm256_or_ps(v, sign)));
    const __m256 s = _mm256_div_ps(t, _mm256_add_ps(two, t));
    const __m256 w = _mm256_mul_ps(s, s);
    const __m256 r = Horner(w, {0.1400594711303711f, 0.14000912010669708f, 0.2001076340675354f, 0.3333320915699005f});
    const __m256 s2 = _mm256_add_ps(s, s);
    const __m256 log1p = _mm256_fmadd_ps(_mm256_mul_ps(s2, w), r, s2);
    return _mm256_add_ps(_mm256_max_ps(v, zero), log1p);
  });
}

// x < 0 ? alpha * expm1(x) : x
void Elu(const float* x, float* y, int64_t n, const UnaryParams& p) {
  const __m256 alpha = Splat(p.alpha), zero = _mm256_setzero_ps();
  Map8(x, y, n, [&](__m256 v) {
    const __m256 neg = _mm256_mul_ps(alpha, Expm1Lanes(v));
    return _mm256_blendv_ps(v, neg, _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
  });
}

// gamma * (x > 0 ? x : alpha * expm1(x))
void Selu(const float* x, float* y, int64_t n, const UnaryParams& p) {
  const __m256 alpha = Splat(p.alpha), gamma = Splat(p.gamma), zero = _mm256_setzero_ps();
  Map8(x, y, n, [&](__m256 v) {
    const __m256 neg = _mm256_mul_ps(alpha, Expm1Lanes(v));
    return _mm256_mul_ps(gamma, _mm256_blendv_ps(neg, v, _mm256_cmp_ps(v, zero, _CMP_GT_OQ)));
  });
}

// 0.5 x (1 + erf(x / sqrt 2)), or with approximate=tanh 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void Gelu(const float* x, float* y, int64_t n, const UnaryParams& p) {
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
  if (p.tanh_approximation) {
    const __m256 k = _mm256_set1_ps(0.7978845608028654f), c = _mm256_set1_ps(0.044715f);
    Map8(x, y, n, [&](__m256 v) {
      const __m256 cube = _mm256_mul_ps(_mm256_mul_ps(c, v), _mm256_mul_ps(v, v));
      const __m256 t = TanhLanes(_mm256_mul_ps(k, _mm256_add_ps(v, cube)));
      return _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, t));
    });
    return;
  }
  const __m256 r = _mm256_set1_ps(0.7071067811865476f);
  Map8(x, y, n, [&](__m256 v) {
    const __m256 e = ErfLanes(_mm256_mul_ps(v, r));
    return _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, e));
  });
}

// a + b x in double, four lanes: the pairs of Estrin's scheme below.
OPSCOPE_LANES __m256d Fma(__m256d b, __m256d x, double a) { return _mm256_fmadd_pd(b, x, _mm256_set1_pd(a)); }
OPSCOPE_LANES __m256d Fma(double b, __m256d x, double a) { return Fma(_mm256_set1_pd(b), x, a); }

// pow(x, y) for float lanes whose |x| is a normal float and whose y is
// finite (PowBlocks sends the other blocks to SLEEF): 2^(y log2|x|) computed
// in double, then rounded once to float, so the only error worth counting is
// that last rounding (kPowMaxUlps). SLEEF's powf, the float path before,
// held Pow at 5.9x its memory bound (5.6 ns an element).
//   log2|x| = e + log2(m), m in [sqrt(1/2), sqrt(2)): ln(m) = 2 atanh(s) with
//     s = (m - 1) / (m + 1), |s| <= 0.1716, by its series through s^13
//     (the next term is below 2^-39 of the sum);
//   2^t = 2^k 2^f, k = round(t), |f| <= 1/2, 2^f by its Taylor series through
//     f^9 (error below 2^-37); t is clamped to +-200, far past float's
//     overflow and underflow, so 2^k stays a normal double and the rounding
//     to float makes the infinities and zeros (and subnormals) itself.
// A negative x gives |x|^y with y's parity as the sign where y is an integer,
// and NaN where it is not, as C's pow.
//
// The work is in double, four lanes a group, and every step is written for
// all the groups of B blocks (2B groups) before the next: one group after
// another, the out-of-order core held little more than one group's chain of
// dependent steps (some 90 cycles) in flight, and waited on it (5 ns an
// element with the polynomials by Horner's rule, 4.1 by Estrin's, on this
// project's Zen 2 machine; bench/vecmath_ulps_benchmark's BM_Pow).

template <int B>
OPSCOPE_LANES void PowLanes(const __m256 (&x)[B], const __m256 (&y)[B], __m256 (&out)[B]) {
  constexpr int H = 2 * B;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m128 mh[H], yh[H];
  __m128i eh[H];
  OPSCOPE_EACH(b, B) {
    const __m256i bits = _mm256_castps_si256(_mm256_andnot_ps(sign, x[b]));
    __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
    __m256 m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffff)),
                                                   _mm256_set1_epi32(0x3f800000)));
    const __m256 high = _mm256_cmp_ps(m, _mm256_set1_ps(1.41421356f), _CMP_GT_OQ);
    m = _mm256_blendv_ps(m, _mm256_mul_ps(m, _mm256_set1_ps(0.5f)), high);
    e = _mm256_sub_epi32(e, _mm256_castps_si256(high));  // high lanes are -1: e + 1
    mh[2 * b] = _mm256_castps256_ps128(m);
    mh[2 * b + 1] = _mm256_extractf128_ps(m, 1);
    eh[2 * b] = _mm256_castsi256_si128(e);
    eh[2 * b + 1] = _mm256_extracti128_si256(e, 1);
    yh[2 * b] = _mm256_castps256_ps128(y[b]);
    yh[2 * b + 1] = _mm256_extractf128_ps(y[b], 1);
  }
  const __m256d one = _mm256_set1_pd(1.0);
  __m256d sd[H], s2[H], s4[H], t[H];
  OPSCOPE_EACH(h, H) {
    const __m256d md = _mm256_cvtps_pd(mh[h]);
    sd[h] = _mm256_div_pd(_mm256_sub_pd(md, one), _mm256_add_pd(md, one));
  }
  OPSCOPE_EACH(h, H) s2[h] = _mm256_mul_pd(sd[h], sd[h]);
  OPSCOPE_EACH(h, H) s4[h] = _mm256_mul_pd(s2[h], s2[h]);
  // The polynomials by Estrin's scheme: shorter chains than Horner's. The
  // series in u = s^2: (1 + u/3) + u^2 (1/5 + u/7) + u^4 ((1/9 + u/11) + u^2/13).
  OPSCOPE_EACH(h, H) {
    const __m256d series = _mm256_fmadd_pd(
        _mm256_fmadd_pd(_mm256_set1_pd(1.0 / 13), s4[h], Fma(1.0 / 11, s2[h], 1.0 / 9)), _mm256_mul_pd(s4[h], s4[h]),
        _mm256_fmadd_pd(Fma(1.0 / 7, s2[h], 1.0 / 5), s4[h], Fma(1.0 / 3, s2[h], 1.0)));
    // log2|x| = e + 2 s series / ln 2
    const __m256d log2x = _mm256_fmadd_pd(_mm256_mul_pd(sd[h], series), _mm256_set1_pd(2 * 1.4426950408889634),
                                          _mm256_cvtepi32_pd(eh[h]));
    t[h] = _mm256_mul_pd(_mm256_cvtps_pd(yh[h]), log2x);
  }
  __m128 r[H];
  OPSCOPE_EACH(h, H) {
    const __m256d tc = _mm256_min_pd(_mm256_set1_pd(200.0), _mm256_max_pd(_mm256_set1_pd(-200.0), t[h]));
    // k = round(t) by the 1.5 * 2^52 shifter: its low bits are then k as a
    // 64-bit integer, for 2^k's exponent (vroundpd and vcvtpd2dq cost more).
    const __m256d shifted = _mm256_add_pd(tc, _mm256_set1_pd(0x1.8p52));
    const __m256d f = _mm256_sub_pd(tc, _mm256_sub_pd(shifted, _mm256_set1_pd(0x1.8p52)));
    const __m256d f2 = _mm256_mul_pd(f, f), f4 = _mm256_mul_pd(f2, f2);
    // (ln 2)^i / i!, i = 0..9, paired
    const __m256d p01 = Fma(0.6931471805599453, f, 1.0), p23 = Fma(0.055504108664821576, f, 0.2402265069591007);
    const __m256d p45 = Fma(0.0013333558146428441, f, 0.009618129107628477);
    const __m256d p67 = Fma(1.5252733804059838e-05, f, 0.00015403530393381606);
    const __m256d p89 = Fma(1.0178086009239696e-07, f, 1.3215486790144305e-06);
    const __m256d p = _mm256_fmadd_pd(p89, _mm256_mul_pd(f4, f4),
                                      _mm256_fmadd_pd(_mm256_fmadd_pd(p67, f2, p45), f4, _mm256_fmadd_pd(p23, f2, p01)));
    const __m256i scale = _mm256_slli_epi64(_mm256_add_epi64(_mm256_castpd_si256(shifted), _mm256_set1_epi64x(1023)), 52);
    r[h] = _mm256_cvtpd_ps(_mm256_mul_pd(p, _mm256_castsi256_pd(scale)));
  }
  OPSCOPE_EACH(b, B) {
    const __m256 v = _mm256_set_m128(r[2 * b + 1], r[2 * b]);
    // y's parity: an integer below 2^24 in magnitude converts exactly; past it
    // every float is even (and past 2^31 the conversion's 0x80000000 is too).
    const __m256 integer =
        _mm256_cmp_ps(_mm256_round_ps(y[b], _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), y[b], _CMP_EQ_OQ);
    const __m256 odd = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtps_epi32(y[b]), 31));
    const __m256 negative = _mm256_and_ps(x[b], sign);
    const __m256 signed_v = _mm256_or_ps(v, _mm256_and_ps(negative, odd));
    out[b] = _mm256_blendv_ps(signed_v, _mm256_set1_ps(NAN), _mm256_andnot_ps(integer, negative));
  }
}

// Whether every |x| of the block is a normal float and every y finite.
OPSCOPE_LANES bool PlainPow(__m256 x, __m256 y) {
  const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), ay = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), y);
  const __m256 big = _mm256_set1_ps(3.40282347e38f);
  const __m256 plain = _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(ax, _mm256_set1_ps(1.17549435e-38f), _CMP_GE_OQ),
                                                   _mm256_cmp_ps(ax, big, _CMP_LE_OQ)),
                                     _mm256_cmp_ps(ay, big, _CMP_LE_OQ));
  return _mm256_movemask_ps(plain) == 0xff;
}

// B blocks of pow: PowLanes where every block is plain; otherwise each block
// by itself, a plain one through PowLanes<1>, any other through SLEEF's
// powf (1.0 ULP), which keeps C99's special cases (zeros, infinities, NaNs,
// subnormal bases).
template <int B>
OPSCOPE_LANES void PowBlocks(const __m256 (&x)[B], const __m256 (&y)[B], __m256 (&z)[B]) {
  bool plain = true;
  OPSCOPE_EACH(b, B) plain = plain && PlainPow(x[b], y[b]);
  if (plain) return PowLanes<B>(x, y, z);
  OPSCOPE_EACH(b, B) {
    if (PlainPow(x[b], y[b])) {
      __m256 one[1];
      PowLanes<1>({x[b]}, {y[b]}, one);
      z[b] = one[0];
    } else {
      z[b] = Sleef_powf8_u10avx2(x[b], y[b]);
    }
  }
}

// z[i] = pow(x[i], y[i * y_stride]), 32 lanes a step (four blocks
// interleaved: 2.55 ns an element, against 3.2 for two and 3.0 for eight,
// which spill), then eight; the tail through zero-padded lane buffers, like Map8.
void Pow(const float* x, const float* y, int64_t y_stride, float* z, int64_t n) {
  const auto ys = [&](int64_t i) { return y_stride == 0 ? _mm256_set1_ps(*y) : _mm256_loadu_ps(y + i); };
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 xv[4], yv[4], out[4];
    OPSCOPE_EACH(b, 4) {
      xv[b] = _mm256_loadu_ps(x + i + 8 * b);
      yv[b] = ys(i + 8 * b);
    }
    PowBlocks<4>(xv, yv, out);
    OPSCOPE_EACH(b, 4) _mm256_storeu_ps(z + i + 8 * b, out[b]);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 out[1];
    PowBlocks<1>({_mm256_loadu_ps(x + i)}, {ys(i)}, out);
    _mm256_storeu_ps(z + i, out[0]);
  }
  if (i == n) return;
  alignas(32) float a[8] = {}, b[8] = {};
  const size_t rest = static_cast<size_t>(n - i);
  std::memcpy(a, x + i, rest * sizeof(float));
  for (size_t j = 0; j < rest; ++j) b[j] = y[(i + static_cast<int64_t>(j)) * y_stride];
  __m256 out[1];
  PowBlocks<1>({_mm256_load_ps(a)}, {_mm256_load_ps(b)}, out);
  _mm256_store_ps(a, out[0]);
  std::memcpy(z + i, a, rest * sizeof(float));
}

float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

float HorizontalMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// Three passes over a row that stays in cache after the first: the maximum,
// eight lanes at a time (the scalar loop's std::max chain and float sum did
// not vectorise: Softmax at 3.9x its memory bound); e^(x - max) into y with
// the sum in eight partial sums; then y scaled by 1 / sum, or for
// LogSoftmax, (x - max) - log(sum). A NaN anywhere makes the sum, and so the
// row, NaN, whichever maximum the lanes kept: as in the scalar loop.
void SoftmaxRow(const float* x, float* y, int64_t n, bool log_form) {
  const int64_t body = n - n % 8;
  __m256 mv = _mm256_set1_ps(-INFINITY);
  for (int64_t i = 0; i < body; i += 8) mv = _mm256_max_ps(mv, _mm256_loadu_ps(x + i));
  float mx = HorizontalMax(mv);
  for (int64_t i = body; i < n; ++i) mx = std::max(mx, x[i]);
  const __m256 m = _mm256_set1_ps(mx);
  // Four blocks a step, each with its sum, as Map8 does. Meanwhile the
  // next row (where the caller's rows are contiguous) is fetched into cache:
  // the first pass over it then reads from cache while this row's exps run,
  // instead of the two waiting on each other.
  __m256 sv = _mm256_setzero_ps();
  int64_t i4 = 0;
  if (body >= 32) {
    __m256 s4[4] = {sv, sv, sv, sv};
    for (; i4 + 32 <= body; i4 += 32) {
      _mm_prefetch(reinterpret_cast<const char*>(x + n + i4), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(x + n + i4 + 16), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(y + n + i4), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(y + n + i4 + 16), _MM_HINT_T0);
      __m256 e4[4];
      OPSCOPE_EACH(b, 4) e4[b] = ExpAllLanes(_mm256_sub_ps(_mm256_loadu_ps(x + i4 + 8 * b), m));
      OPSCOPE_EACH(b, 4) s4[b] = _mm256_add_ps(s4[b], e4[b]);
      if (!log_form) OPSCOPE_EACH(b, 4) _mm256_storeu_ps(y + i4 + 8 * b, e4[b]);
    }
    sv = _mm256_add_ps(_mm256_add_ps(s4[0], s4[1]), _mm256_add_ps(s4[2], s4[3]));
  }
  for (int64_t i = i4; i < body; i += 8) {
    const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), m);
    const __m256 e = ExpAllLanes(d);
    sv = _mm256_add_ps(sv, e);
    if (!log_form) _mm256_storeu_ps(y + i, e);
  }
  float sum = HorizontalSum(sv);
  for (int64_t i = body; i < n; ++i) {
    alignas(32) float lane[8] = {};
    lane[0] = x[i] - mx;
    _mm256_store_ps(lane, ExpAllLanes(_mm256_load_ps(lane)));
    sum += lane[0];
    if (!log_form) y[i] = lane[0];
  }
  if (log_form) {
    const float ls = std::log(sum);
    const __m256 l = _mm256_set1_ps(ls);
    for (int64_t i = 0; i < body; i += 8) _mm256_storeu_ps(y + i, _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), m), l));
    for (int64_t i = body; i < n; ++i) y[i] = (x[i] - mx) - ls;
    return;
  }
  const float inv = 1.0f / sum;
  const __m256 iv = _mm256_set1_ps(inv);
  for (int64_t i = 0; i < body; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), iv));
  for (int64_t i = body; i < n; ++i) y[i] *= inv;
}

// Two passes, the second over a row the first left in cache: the sum, then
// the squared deviations from the mean (one pass of sum and sum of squares
// would cancel catastrophically where the mean is large against the spread).
// Four four-lane double sums a pass keep four adds in flight; g++'s SSE2 code
// for the plain loop (dense_norm.cc's SumOfD) converts and adds two floats an
// instruction.
void Moments(const float* x, int64_t n, double* mean, double* squared_deviations, const float* next_out) {
  const int64_t body = n - n % 16;
  __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
  for (int64_t i = 0; i < body; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(a)));
    s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)));
    s2 = _mm256_add_pd(s2, _mm256_cvtps_pd(_mm256_castps256_ps128(b)));
    s3 = _mm256_add_pd(s3, _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1)));
  }
  const auto total = [](__m256d a, __m256d b, __m256d c, __m256d d) {
    const __m256d v = _mm256_add_pd(_mm256_add_pd(a, b), _mm256_add_pd(c, d));
    const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
  };
  double sum = total(s0, s1, s2, s3);
  for (int64_t i = body; i < n; ++i) sum += x[i];
  const double m = sum / static_cast<double>(n);
  const __m256d mv = _mm256_set1_pd(m);
  s0 = s1 = s2 = s3 = _mm256_setzero_pd();
  const auto dev2 = [&](__m256d acc, __m128 v) {
    const __m256d d = _mm256_sub_pd(_mm256_cvtps_pd(v), mv);
    return _mm256_fmadd_pd(d, d, acc);
  };
  // The next row and its output come into cache while this row's second
  // pass runs from cache (as in SoftmaxRow): LayerNormalization 8.2 -> 6.2 ms.
  for (int64_t i = 0; i < body; i += 16) {
    _mm_prefetch(reinterpret_cast<const char*>(x + n + i), _MM_HINT_T0);
    if (next_out != nullptr) _mm_prefetch(reinterpret_cast<const char*>(next_out + i), _MM_HINT_T0);
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    s0 = dev2(s0, _mm256_castps256_ps128(a));
    s1 = dev2(s1, _mm256_extractf128_ps(a, 1));
    s2 = dev2(s2, _mm256_castps256_ps128(b));
    s3 = dev2(s3, _mm256_extractf128_ps(b, 1));
  }
  double sq = total(s0, s1, s2, s3);
  for (int64_t i = body; i < n; ++i) sq += (x[i] - m) * (x[i] - m);
  *mean = m;
  *squared_deviations = sq;
}

// Eight lanes a step with one fma where g++'s SSE2 code for the plain loop
// took four-float steps of a subtract, two multiplies and an add.
void NormApply(const float* x, float* y, int64_t n, float mean, float inv, const float* scale, const float* bias) {
  const __m256 m = _mm256_set1_ps(mean), s = _mm256_set1_ps(inv);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), m), s);
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(d, _mm256_loadu_ps(scale + i), _mm256_loadu_ps(bias + i)));
  }
  for (; i < n; ++i) y[i] = std::fma((x[i] - mean) * inv, scale[i], bias[i]);
}

}  // namespace

const VecMath* Avx2VecMath() {
  static const VecMath table{Exp, Log, Tanh, Erf, Sigmoid, Softplus, Elu, Selu, Gelu, Pow, SoftmaxRow, Moments, NormApply};
  // OPSCOPE_SCALAR_MATH=1 keeps libm's scalar loops: the A/B of docs/speed.md,
  // and a way to tell whether a numeric difference comes from this path.
  static const bool usable = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                             std::getenv("OPSCOPE_SCALAR_MATH") == nullptr;
  return usable ? &table : nullptr;
}

}  // namespace opscope::ew
