// The span functions (ew_vecmath.h: SLEEF's, and our erf) against the
// double-precision math they stand for, at every length around the eight-lane blocks (the tail goes
// through a padded lane buffer: nothing past n may be read or written), in
// place and not, and on the values where float math is easiest to get wrong.
#include "ops/builtin/ew_vecmath.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/builtin/ew_unary.h"

namespace opscope::ew {
namespace {


struct Case {
  const char* name;
  SpanFn VecMath::*fn;
  double (*exact)(double, const UnaryParams&);
  double max_ulps;  // SLEEF's 1.0 or our function's stated bound; a rounding more for each factor an op applies after it
};

const UnaryParams kParams{.alpha = 1.6732631921768188, .gamma = 1.0507010221481323};

const Case kCases[] = {
    {"exp", &VecMath::exp, [](double x, const UnaryParams&) { return std::exp(x); }, kExpMaxUlps},
    {"log", &VecMath::log, [](double x, const UnaryParams&) { return std::log(x); }, kLogMaxUlps},  // of |x| here
    {"tanh", &VecMath::tanh, [](double x, const UnaryParams&) { return std::tanh(x); }, kTanhMaxUlps},
    {"erf", &VecMath::erf, [](double x, const UnaryParams&) { return std::erf(x); }, kErfMaxUlps},
    {"sigmoid", &VecMath::sigmoid, [](double x, const UnaryParams&) { return 1 / (1 + std::exp(-x)); }, 3},
    {"softplus", &VecMath::softplus, [](double x, const UnaryParams&) { return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0); }, kSoftplusMaxUlps},
    // alpha times our expm1: one more rounding each time a factor is applied.
    {"elu", &VecMath::elu, [](double x, const UnaryParams& p) { return x < 0 ? p.alpha * std::expm1(x) : x; }, kExpm1MaxUlps + 1},
    {"selu", &VecMath::selu, [](double x, const UnaryParams& p) { return p.gamma * (x > 0 ? x : p.alpha * std::expm1(x)); }, kExpm1MaxUlps + 2},
};

TEST(VecMath, TheTableIsThereWhereTheCpuHasAvx2AndFma) {
  const bool cpu = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (std::getenv("OPSCOPE_SCALAR_MATH") != nullptr) GTEST_SKIP() << "OPSCOPE_SCALAR_MATH is set";
  EXPECT_EQ(Avx2VecMath() != nullptr, cpu);
}

TEST(VecMath, EveryLengthAroundTheLanesWithinItsUlpsAndNothingPastTheEnd) {
  const VecMath* m = Avx2VecMath();
  if (m == nullptr) GTEST_SKIP() << "no AVX2+FMA here: the ops run their scalar loops";
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0, 3);
  const float canary = 12345.0f;
  for (const Case& c : kCases) {
    for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 23, 63, 64, 65, 1000}) {
      std::vector<float> x(n), y(n + 8, canary);
      for (float& v : x) v = c.fn == &VecMath::log ? std::fabs(normal(rng)) : normal(rng);
      (m->*c.fn)(x.data(), y.data(), n, kParams);
      double worst = 0;
      for (int64_t i = 0; i < n; ++i) worst = std::max(worst, FloatUlps(y[i], c.exact(x[i], kParams)));
      EXPECT_LE(worst, c.max_ulps) << c.name << " n=" << n;
      for (int64_t i = n; i < n + 8; ++i) EXPECT_EQ(y[i], canary) << c.name << " wrote y[" << i << "], n=" << n;
      std::vector<float> z = x;  // in place, as a fused chain may call it
      (m->*c.fn)(z.data(), z.data(), n, kParams);
      EXPECT_TRUE(std::equal(z.begin(), z.end(), y.begin())) << c.name << " in place, n=" << n;
    }
  }
}

TEST(VecMath, EdgeValuesAsTheScalarKernelsGiveThem) {
  const VecMath* m = Avx2VecMath();
  if (m == nullptr) GTEST_SKIP() << "no AVX2+FMA here: the ops run their scalar loops";
  const float inf = INFINITY, nan = NAN;
  const std::vector<float> x = {-inf, inf, nan, 0.0f, -0.0f, 88.0f, 89.0f, -104.0f, -87.0f, 1e-30f, 20.0f, -20.0f};
  std::vector<float> y(x.size());
  m->exp(x.data(), y.data(), x.size(), kParams);
  const std::vector<float> exp = {0, inf, nan, 1, 1, std::exp(88.0f), inf, std::exp(-104.0f), std::exp(-87.0f), 1,
                                  std::exp(20.0f), std::exp(-20.0f)};
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(exp[i])) {
      EXPECT_TRUE(std::isnan(y[i])) << "exp(" << x[i] << ")";
    } else {
      EXPECT_LE(FloatUlps(y[i], std::exp(static_cast<double>(x[i]))), kExpMaxUlps) << "exp(" << x[i] << ") = " << y[i];
    }
  }
  m->sigmoid(x.data(), y.data(), x.size(), kParams);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(y[3], 0.5f);
  m->tanh(x.data(), y.data(), x.size(), kParams);
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_TRUE(std::signbit(y[4])) << "tanh(-0) is -0";
  EXPECT_EQ(y[5], 1.0f);
  EXPECT_EQ(y[10], 1.0f);
  EXPECT_EQ(y[11], -1.0f);
  // Elu with alpha = 1 is expm1 below zero: -1 at -inf, the subnormal itself near 0, NaN kept.
  UnaryParams unit;
  unit.alpha = 1;
  const std::vector<float> neg = {-inf, -1e-45f, -1e-30f, nan, -88.0f, -17.0f, -0.0f};
  std::vector<float> elu(neg.size());
  m->elu(neg.data(), elu.data(), neg.size(), unit);
  EXPECT_EQ(elu[0], -1.0f);
  EXPECT_EQ(elu[1], -1e-45f);
  EXPECT_EQ(elu[2], -1e-30f);
  EXPECT_TRUE(std::isnan(elu[3]));
  EXPECT_EQ(elu[4], -1.0f);
  EXPECT_LE(FloatUlps(elu[5], std::expm1(-17.0)), 1);
  EXPECT_TRUE(elu[6] == 0.0f && std::signbit(elu[6])) << "elu(-0) is -0";
  // Softplus: inf at inf, 0 at -inf, x itself far above 0, e^x far below.
  m->softplus(x.data(), y.data(), x.size(), kParams);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], inf);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_LE(FloatUlps(y[3], std::log(2.0)), 1);
  EXPECT_EQ(y[5], 88.0f);
  EXPECT_LE(FloatUlps(y[7], std::exp(-104.0)), 1);
  EXPECT_LE(FloatUlps(y[11], std::log1p(std::exp(-20.0))), kSoftplusMaxUlps);
  std::vector<float> pos = {0.0f, inf, 1.0f, -1.0f, 1e-45f};
  std::vector<float> logs(pos.size());
  m->log(pos.data(), logs.data(), pos.size(), kParams);
  EXPECT_EQ(logs[0], -inf);
  EXPECT_EQ(logs[1], inf);
  EXPECT_EQ(logs[2], 0.0f);
  EXPECT_TRUE(std::isnan(logs[3]));
  EXPECT_LE(FloatUlps(logs[4], std::log(static_cast<double>(1e-45f))), 1);
}

TEST(VecMath, GeluInBothFormsWithinFourUlpsOfItsDoubleFormula) {
  const VecMath* m = Avx2VecMath();
  if (m == nullptr) GTEST_SKIP() << "no AVX2+FMA here: the ops run their scalar loops";
  std::vector<float> x(1001);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -8.0f + 16.0f * static_cast<float>(i) / 1000.0f;
  std::vector<float> y(x.size());
  for (bool tanh_form : {false, true}) {
    UnaryParams p;
    p.tanh_approximation = tanh_form;
    m->gelu(x.data(), y.data(), x.size(), p);
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double want = tanh_form ? 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
                                    : 0.5 * v * (1 + std::erf(v * 0.7071067811865476));
      // Near -8 the result is a tiny difference of two near-equal terms: held to an absolute 1e-6 there.
      EXPECT_TRUE(FloatUlps(y[i], want) <= 4 || std::fabs(y[i] - want) <= 1e-6) << (tanh_form ? "tanh" : "erf") << " gelu("
                                                                           << v << ") = " << y[i] << " vs " << want;
    }
  }
}

// pow through both of its paths (ours in double for plain blocks, SLEEF's
// for blocks with a zero, subnormal, infinity or NaN), at lengths around its
// 32-lane steps, with an exponent per element and one for all: within
// kPowMaxUlps of double pow, signs of negative bases to integer powers
// included, and nothing written past n.
TEST(VecMath, PowWithinItsUlpsAtEveryLengthAndExponentForm) {
  const VecMath* m = Avx2VecMath();
  if (m == nullptr) GTEST_SKIP() << "no AVX2+FMA here: Pow keeps its scalar loop";
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> log_base(-30.0f, 30.0f), coin(0.0f, 1.0f);
  std::normal_distribution<float> exponent(0.0f, 4.0f);
  const float canary = 12345.0f;
  for (int64_t n : {1, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 1000}) {
    std::vector<float> x(n), y(n), z(n + 8, canary);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = std::pow(10.0f, log_base(rng)) * (coin(rng) < 0.3f ? -1.0f : 1.0f);
      y[i] = coin(rng) < 0.4f ? std::round(exponent(rng)) : exponent(rng);
      if (n == 1000 && i % 97 == 0) x[i] = i % 2 ? 0.0f : 1e-40f;  // blocks for SLEEF
    }
    m->pow(x.data(), y.data(), 1, z.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_LE(FloatUlps(z[i], std::pow(static_cast<double>(x[i]), static_cast<double>(y[i]))), kPowMaxUlps)
          << "pow(" << x[i] << ", " << y[i] << ") = " << z[i] << ", n=" << n;
    }
    for (int64_t i = n; i < n + 8; ++i) EXPECT_EQ(z[i], canary) << "wrote z[" << i << "], n=" << n;
    for (const float e : {-3.0f, -0.5f, 0.5f, 1.0f / 3, 3.0f, 2.5f}) {
      m->pow(x.data(), &e, 0, z.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_LE(FloatUlps(z[i], std::pow(static_cast<double>(x[i]), static_cast<double>(e))), kPowMaxUlps)
            << "pow(" << x[i] << ", " << e << ") = " << z[i] << ", n=" << n;
      }
    }
  }
  // Large exponents magnify log2's error a hundredfold: bases across
  // [0.6, 1.6], where log2's series runs to its widest argument (m near
  // sqrt 2 and sqrt 1/2), to powers whose results still are normal floats.
  std::vector<float> x(8192), z(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.6f + static_cast<float>(i) / static_cast<float>(x.size());
  for (const float e : {-150.3f, 127.9f, 60.7f}) {
    m->pow(x.data(), &e, 0, z.data(), static_cast<int64_t>(x.size()));
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      worst = std::max(worst, FloatUlps(z[i], std::pow(static_cast<double>(x[i]), static_cast<double>(e))));
    }
    EXPECT_LE(worst, kPowMaxUlps) << "pow(x in [0.6, 1.6], " << e << ")";
  }
}

// The statistics LayerNormalization and InstanceNormalization take of each
// row, against two passes in long double, at every length around the
// sixteen-float blocks, and on a row whose mean dwarfs its spread (where one
// pass of sum and sum of squares would lose every digit of the variance).
TEST(VecMath, MomentsAsTwoExactPassesGiveThem) {
  const VecMath* m = Avx2VecMath();
  if (m == nullptr) GTEST_SKIP() << "no AVX2+FMA here: the norms sum in their plain loops";
  std::mt19937 rng(11);
  for (float offset : {0.0f, 1e4f}) {
    std::normal_distribution<float> normal(offset, offset == 0 ? 3.0f : 1e-2f);
    for (int64_t n : {1, 7, 15, 16, 17, 31, 33, 1000, 1029}) {
      std::vector<float> x(n);
      for (float& v : x) v = normal(rng);
      long double sum = 0, sq = 0;
      for (float v : x) sum += v;
      const long double mean = sum / n;
      for (float v : x) sq += (v - mean) * (v - mean);
      double got_mean = 0, got_sq = 0;
      m->moments(x.data(), n, &got_mean, &got_sq, n > 16 ? x.data() : nullptr);
      EXPECT_NEAR(got_mean, static_cast<double>(mean), 1e-13 * std::fabs(static_cast<double>(mean)) + 1e-15)
          << "n=" << n << " offset " << offset;
      EXPECT_NEAR(got_sq, static_cast<double>(sq), 1e-9 * static_cast<double>(sq) + 1e-300) << "n=" << n << " offset " << offset;
    }
  }
}

// LayerNormalization's normalise pass against the formula in double, at
// lengths around its eight-lane steps, in place too.
TEST(VecMath, NormApplyAsTheFormulaInDouble) {
  const VecMath* m = Avx2VecMath();
  if (m == nullptr) GTEST_SKIP() << "no AVX2+FMA here: LayerNormalization keeps its plain loop";
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.5f, 2.0f);
  for (int64_t n : {1, 7, 8, 9, 17, 1029}) {
    std::vector<float> x(n), scale(n), bias(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = normal(rng);
      scale[i] = normal(rng);
      bias[i] = normal(rng);
    }
    const float mean = 0.37f, inv = 1.9f;
    m->norm_apply(x.data(), y.data(), n, mean, inv, scale.data(), bias.data());
    std::vector<float> z = x;
    m->norm_apply(z.data(), z.data(), n, mean, inv, scale.data(), bias.data());
    for (int64_t i = 0; i < n; ++i) {
      const double t = (static_cast<double>(x[i]) - mean) * inv * scale[i];
      const double want = t + bias[i];
      EXPECT_NEAR(y[i], want, 4e-7 * (std::fabs(t) + std::fabs(bias[i]))) << "n=" << n << " i=" << i;
      EXPECT_EQ(z[i], y[i]) << "in place, n=" << n << " i=" << i;
    }
  }
}

}  // namespace
}  // namespace opscope::ew
