// The findings a failed compare draws (issue 24): each family on a case that
// has the bug, and the same family silent on a case that does not.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "opscope/compare.h"

namespace opscope {
namespace {

Tensor Filled(Shape shape, const std::function<double(int64_t)>& value, DType dtype = DType::kF32) {
  auto t = Tensor::Empty(dtype, shape);
  EXPECT_TRUE(t.ok());
  for (int64_t i = 0; i < shape.numel(); ++i) t->FlatSetFromDouble(i, value(i));
  return *t;
}

std::vector<double> Normal(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0, 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = static_cast<float>(dist(gen));  // exact in float32
  return v;
}

const CompareFinding* Find(const CompareResult& r, const std::string& kind, const std::string& subject = "") {
  for (const CompareFinding& f : r.findings) {
    if (f.kind == kind && (subject.empty() || f.subject == subject)) return &f;
  }
  return nullptr;
}

std::string AllText(const CompareResult& r) {
  std::string s = r.pattern;
  for (const CompareFinding& f : r.findings) s += " | " + f.text;
  return s;
}

CompareResult Compare(const Tensor& a, const Tensor& e, std::vector<CompareInput> inputs = {},
                      Tolerance tol = Tolerance{.atol = 1e-5, .rtol = 1e-5}) {
  auto r = CompareTensors(a, e, tol, CompareOptions{.inputs = std::move(inputs)});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return *r;
}

// ---- Maps from expected to actual ----

TEST(CompareFindings, AWrongFactorIsAScaleWithItsFraction) {
  const Shape s({16, 64});
  std::vector<double> x = Normal(s.numel(), 1);
  Tensor e = Filled(s, [&](int64_t i) { return x[i]; });
  Tensor a = Filled(s, [&](int64_t i) { return x[i] * 63 / 64; });  // divided by N where N-1 was meant
  CompareResult r = Compare(a, e);
  const CompareFinding* f = Find(r, "scale");
  ASSERT_NE(f, nullptr) << AllText(r);
  EXPECT_NE(f->text.find("actual = 0.9844 x expected everywhere (= 63/64, -1.6% on every element), r^2 = "), std::string::npos) << f->text;
  EXPECT_NE(f->text.find("explains 100% of elements"), std::string::npos) << f->text;
  EXPECT_NEAR(f->numbers[0].second, 63.0 / 64, 1e-7);
  EXPECT_GT(f->numbers[1].second, 0.9999);  // r^2
}

TEST(CompareFindings, ExtremeValuesAreFitWithoutTrouble) {
  // Subnormal and near-overflow magnitudes, doubled: the factor is 2, said as 2.
  const Shape s({256});
  Tensor e = Filled(s, [](int64_t i) { return (i % 2 ? 1e-310 : 1e300) * (1 + i % 7); }, DType::kF64);
  Tensor a = Filled(s, [](int64_t i) { return 2 * (i % 2 ? 1e-310 : 1e300) * (1 + i % 7); }, DType::kF64);
  CompareResult r = Compare(a, e, {}, Tolerance{.atol = 0, .rtol = 1e-6});
  const CompareFinding* f = Find(r, "scale");
  ASSERT_NE(f, nullptr) << AllText(r);
  EXPECT_EQ(f->text.rfind("actual = 2 x expected everywhere, r^2 = ", 0), 0u) << f->text;
}

TEST(CompareFindings, AConstantAddedIsAnOffset) {
  const Shape s({32, 32});
  std::vector<double> x = Normal(s.numel(), 2);
  Tensor e = Filled(s, [&](int64_t i) { return x[i]; });
  Tensor a = Filled(s, [&](int64_t i) { return x[i] + 0.5; });
  CompareResult r = Compare(a, e);
  const CompareFinding* f = Find(r, "offset");
  ASSERT_NE(f, nullptr) << AllText(r);
  EXPECT_EQ(f->text, "actual = expected + 0.5 everywhere: a constant added or dropped (explains 100% of elements)");
}

TEST(CompareFindings, SwappedDimsAreNamed) {
  const Shape s({3, 8, 8});
  std::vector<double> x = Normal(s.numel(), 3);
  Tensor e = Filled(s, [&](int64_t i) { return x[i]; });
  Tensor a = Filled(s, [&](int64_t i) {
    const int64_t b = i / 64, r = (i / 8) % 8, c = i % 8;
    return x[b * 64 + c * 8 + r];
  });
  CompareResult r = Compare(a, e);
  const CompareFinding* f = Find(r, "swap");
  ASSERT_NE(f, nullptr) << AllText(r);
  EXPECT_EQ(f->text, "actual is expected with dims 1 and 2 swapped (explains 100% of elements)");
}

TEST(CompareFindings, AnOffByOneReadIsAShift) {
  const Shape s({4, 100});
  std::vector<double> x = Normal(s.numel() + 1, 4);
  Tensor e = Filled(s, [&](int64_t i) { return x[i]; });
  // Each row reads one element early: actual[.., i] = expected[.., i-1], the first of each row from elsewhere.
  Tensor a = Filled(s, [&](int64_t i) { return i % 100 == 0 ? 7.0 : x[i - 1]; });
  CompareResult r = Compare(a, e);
  const CompareFinding* f = Find(r, "shift");
  ASSERT_NE(f, nullptr) << AllText(r);
  EXPECT_NE(f->text.find("shifted by +1 along dim 1"), std::string::npos) << f->text;
}

TEST(CompareFindings, NoiseIsNoMap) {
  const Shape s({16, 64});
  std::vector<double> x = Normal(s.numel(), 5), noise = Normal(s.numel(), 6);
  Tensor e = Filled(s, [&](int64_t i) { return x[i]; });
  Tensor a = Filled(s, [&](int64_t i) { return x[i] + 0.01 * noise[i]; });
  CompareResult r = Compare(a, e);
  ASSERT_FALSE(r.passed());
  for (const char* kind : {"scale", "offset", "swap", "reverse", "shift"}) {
    EXPECT_EQ(Find(r, kind), nullptr) << kind << ": " << AllText(r);
  }
}

// ---- Values that hold the mismatches ----

TEST(CompareFindings, ErrorsOnlyWhereTheInputIsNegative) {
  const Shape s({64, 64});
  std::vector<double> x = Normal(s.numel(), 7);
  Tensor in = Filled(s, [&](int64_t i) { return x[i]; });
  Tensor e = Filled(s, [&](int64_t i) { return x[i] > 0 ? x[i] : 0.01 * x[i]; });  // leaky relu
  Tensor a = Filled(s, [&](int64_t i) { return x[i] > 0 ? x[i] : 0.1 * x[i]; });   // the wrong slope
  CompareResult r = Compare(a, e, {{"x", in}});
  const CompareFinding* f = Find(r, "sign", "x");
  ASSERT_NE(f, nullptr) << AllText(r);
  EXPECT_EQ(f->text.rfind("errors only where x < 0 (100% of mismatches, ", 0), 0u) << f->text;
  EXPECT_EQ(f->share_of_mismatches, 1.0);
}

TEST(CompareFindings, ErrorsInAMagnitudeBandOfTheInput) {
  const Shape s({64, 64});
  std::vector<double> x = Normal(s.numel(), 8);
  Tensor in = Filled(s, [&](int64_t i) { return x[i]; });
  Tensor e = Filled(s, [&](int64_t i) { return std::tanh(x[i]); });
  // A piecewise approximation wrong on one of its pieces, |x| in [0.5, 1].
  Tensor a = Filled(s, [&](int64_t i) {
    const double m = std::fabs(x[i]);
    return std::tanh(x[i]) + (m >= 0.5 && m <= 1 ? 1e-3 : 0);
  });
  CompareResult r = Compare(a, e, {{"x", in}});
  const CompareFinding* f = Find(r, "value_band", "x");
  ASSERT_NE(f, nullptr) << AllText(r);
  EXPECT_EQ(f->text.rfind("errors only where |x| is in [0.5, 1", 0), 0u) << f->text;
}

TEST(CompareFindings, RoundingTiesOfXOverScale) {
  const Shape s({4096});
  const double scale = 0.25;
  std::mt19937 gen(9);
  std::uniform_int_distribution<int> steps(-400, 400);
  std::vector<double> x(4096);
  for (double& v : x) v = steps(gen) * scale / 2;  // x/scale lands on integers and exact halves
  Tensor in = Filled(s, [&](int64_t i) { return x[i]; });
  Tensor sc = Filled(Shape({1}), [&](int64_t) { return scale; });
  // Quantize: round half to even (the reference) vs half away from zero (the kernel).
  Tensor e = Filled(s, [&](int64_t i) { return std::nearbyint(x[i] / scale); }, DType::kI32);
  Tensor a = Filled(s, [&](int64_t i) { return std::round(x[i] / scale); }, DType::kI32);
  CompareResult r = Compare(a, e, {{"x", in}, {"scale", sc}}, DefaultTolerance(DType::kI32));
  const CompareFinding* f = Find(r, "exact_half", "x/scale");
  ASSERT_NE(f, nullptr) << AllText(r);
  EXPECT_EQ(f->text.rfind("errors only where x/scale is an exact half (a rounding tie) (100% of mismatches", 0), 0u)
      << f->text;
}

TEST(CompareFindings, CancellationIsSmallExpected) {
  const Shape s({8192});
  std::mt19937 gen(10);
  std::uniform_real_distribution<double> exponent(-6, 1);
  std::vector<double> e_values(8192);
  for (double& v : e_values) v = static_cast<float>(std::pow(10.0, exponent(gen)));
  Tensor e = Filled(s, [&](int64_t i) { return e_values[i]; }, DType::kF64);
  // An absolute error of about 2e-8 either way, as a difference of two near-equal values leaves.
  Tensor a = Filled(s, [&](int64_t i) { return e_values[i] + (i % 2 ? 2e-8 : -2.5e-8); }, DType::kF64);
  CompareResult r = Compare(a, e, {}, Tolerance{.atol = 0, .rtol = 1e-5, .rule = CompareRule::kRelative});
  const CompareFinding* f = Find(r, "value_band", "expected");
  ASSERT_NE(f, nullptr) << AllText(r);
  EXPECT_EQ(f->text.rfind("errors only where |expected| < 0.002", 0), 0u) << f->text;
  EXPECT_NE(f->text.find("cancellation"), std::string::npos) << f->text;
}

TEST(CompareFindings, TheErrorGrowsWithTheInput) {
  const Shape s({4096});
  std::vector<double> x = Normal(s.numel(), 11);
  Tensor in = Filled(s, [&](int64_t i) { return x[i]; });
  Tensor e = Filled(s, [&](int64_t i) { return std::sin(x[i]); });
  Tensor a = Filled(s, [&](int64_t i) { return std::sin(x[i]) + 1e-3 * x[i] * x[i]; });  // a truncated series
  CompareResult r = Compare(a, e, {{"x", in}});
  const CompareFinding* f = Find(r, "grows_with", "x");
  ASSERT_NE(f, nullptr) << AllText(r);
  EXPECT_EQ(f->text.rfind("the error grows with |x| (rank correlation ", 0), 0u) << f->text;
}

TEST(CompareFindings, ErrorsThatIgnoreTheValuesClaimNoBand) {
  const Shape s({64, 64});
  std::vector<double> x = Normal(s.numel(), 12);
  Tensor in = Filled(s, [&](int64_t i) { return x[i]; });
  Tensor e = Filled(s, [&](int64_t i) { return 2 * x[i]; });
  // Every 7th element wrong by a fixed amount, whatever x is.
  Tensor a = Filled(s, [&](int64_t i) { return 2 * x[i] + (i % 7 == 3 ? 0.1 : 0); });
  CompareResult r = Compare(a, e, {{"x", in}});
  ASSERT_FALSE(r.passed());
  for (const char* kind : {"sign", "value_band", "exact_half", "integer", "grows_with"}) {
    EXPECT_EQ(Find(r, kind, "x"), nullptr) << kind << ": " << AllText(r);
  }
  // The histogram is there all the same, one band per decile of x.
  ASSERT_EQ(r.value_histograms.size(), 2u);
  EXPECT_EQ(r.value_histograms[0].subject, "x");
  EXPECT_EQ(r.value_histograms[0].bands.size(), 10u);
  int64_t elements = 0, mismatches = 0;
  for (const ValueBand& b : r.value_histograms[0].bands) elements += b.elements, mismatches += b.mismatches;
  EXPECT_EQ(elements, s.numel());
  EXPECT_EQ(mismatches, r.mismatched);
}

TEST(CompareFindings, ABroadcastInputIsReadAtEachOutputsPlace) {
  // y = x + bias[c]: the kernel adds the bias twice where bias < 0.
  const Shape s({8, 16});
  std::vector<double> x = Normal(s.numel(), 13), bias = Normal(16, 14);
  Tensor xin = Filled(s, [&](int64_t i) { return x[i]; });
  Tensor bin = Filled(Shape({16}), [&](int64_t i) { return bias[i]; });
  Tensor e = Filled(s, [&](int64_t i) { return x[i] + bias[i % 16]; });
  Tensor a = Filled(s, [&](int64_t i) { return x[i] + (bias[i % 16] < 0 ? 2 : 1) * bias[i % 16]; });
  CompareResult r = Compare(a, e, {{"x", xin}, {"bias", bin}});
  const CompareFinding* f = Find(r, "sign", "bias");
  ASSERT_NE(f, nullptr) << AllText(r);
  EXPECT_EQ(f->text.rfind("errors only where bias < 0 (100% of mismatches", 0), 0u) << f->text;
}

// ---- Where: periods, long dims, diagonals, sides, a few NaNs ----

CompareResult Where(Shape s, const std::function<bool(const std::vector<int64_t>&)>& bad, bool nan = false) {
  Tensor e = Filled(s, [](int64_t) { return 0.0; });
  Tensor a = Filled(s, [&](int64_t i) { return bad(UnravelIndex(i, s)) ? (nan ? NAN : 1.0) : 0.0; });
  return Compare(a, e);
}

TEST(ComparePattern, EveryOtherBlockIsAPeriodNotARange) {
  CompareResult r = Where(Shape({4, 4096}), [](const std::vector<int64_t>& c) { return (c[1] / 512) % 2 == 1; });
  EXPECT_EQ(r.pattern, "errors only in every other block of 512 along dim 1 (blocks 1, 3, 5, ...) (100% of mismatches)");
}

TEST(ComparePattern, AContiguousRangeOfALongOneDimOutputIsARange) {
  CompareResult r = Where(Shape({1000003}), [](const std::vector<int64_t>& c) { return c[0] >= 999424; });
  EXPECT_EQ(r.pattern, "errors only in dim 0 indices 999424-1000002 (100% of mismatches)");
  // The same tail of a 2-D output.
  CompareResult r2 = Where(Shape({1000, 1000}), [](const std::vector<int64_t>& c) { return c[0] * 1000 + c[1] >= 999424; });
  EXPECT_EQ(r2.pattern, "errors only in dim 0 index 999 and dim 1 indices 424-999 (100% of mismatches)");
}

TEST(ComparePattern, RightOnlyOnTheDiagonal) {
  CompareResult r = Where(Shape({2, 16, 16}), [](const std::vector<int64_t>& c) { return c[1] != c[2]; });
  EXPECT_EQ(r.pattern, "errors everywhere except where dim 1 index == dim 2 index (right only there: 32 elements)");
  CompareResult on = Where(Shape({2, 16, 16}), [](const std::vector<int64_t>& c) { return c[1] == c[2]; });
  EXPECT_EQ(on.pattern, "errors only where dim 1 index == dim 2 index (100% of mismatches)");
}

TEST(ComparePattern, ABorderOnSomeSidesSaysWhich) {
  CompareResult r = Where(Shape({2, 4, 16, 16}), [](const std::vector<int64_t>& c) { return c[2] == 15 || c[3] == 15; });
  EXPECT_EQ(r.pattern, "errors only in the last index of dim 2 and the last index of dim 3 (100% of mismatches)");
  CompareResult all = Where(Shape({2, 4, 16, 16}), [](const std::vector<int64_t>& c) {
    return c[2] == 0 || c[2] == 15 || c[3] == 0 || c[3] == 15;
  });
  EXPECT_EQ(all.pattern, "errors only in a 1-element border on all four sides of dims 2 and 3 (100% of mismatches)");
}

TEST(ComparePattern, AFewNaNsInOneRowAreSaidAsTheyAre) {
  CompareResult r = Where(Shape({8, 16}), [](const std::vector<int64_t>& c) {
    return c[0] == 3 && (c[1] == 1 || c[1] == 7 || c[1] == 12);
  }, /*nan=*/true);
  EXPECT_EQ(r.pattern, "NaN only at dim 0 index 3 (all 3 mismatches: [3,1] [3,7] [3,12])");
}

TEST(ComparePattern, AnErrorInEveryRowIsNotConcentrated) {
  // One error per row, in a column of its own: no dim, no index stands out.
  CompareResult r = Where(Shape({13, 64}), [](const std::vector<int64_t>& c) { return c[1] == (c[0] * 37) % 64; });
  EXPECT_EQ(r.pattern.find("concentrate at"), std::string::npos) << r.pattern;
  // 7 of 13 in row 0 of 4 happens by chance more than 1 time in 1000 (p ~ 0.02): no claim.
  CompareResult seven = Where(Shape({4, 64}), [](const std::vector<int64_t>& c) {
    return (c[0] == 0 && c[1] % 9 == 0 && c[1] < 63) || (c[0] > 0 && c[1] % 32 == 5);
  });
  ASSERT_EQ(seven.mismatched, 13);
  EXPECT_EQ(seven.pattern.find("concentrate at"), std::string::npos) << seven.pattern;
}

}  // namespace
}  // namespace opscope
