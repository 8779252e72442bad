#include "analysis/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace opscope {
namespace {

Tensor Make(DType dtype, Shape shape, std::vector<double> values) {
  auto t = Tensor::Empty(dtype, shape);
  EXPECT_TRUE(t.ok());
  for (size_t i = 0; i < values.size(); ++i) t->FlatSetFromDouble(static_cast<int64_t>(i), values[i]);
  return *t;
}

TEST(Compare, MixedRuleCountsMismatchesAndFindsTheWorst) {
  Tensor e = Make(DType::kF64, Shape({2, 3}), {1, 2, 3, 100, 0, -4});
  Tensor a = Make(DType::kF32, Shape({2, 3}), {1, 2.5, 3, 100.0005, 0, -4});
  auto r = CompareTensors(a, e, Tolerance{.atol = 1e-3, .rtol = 1e-5});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->total, 6);
  // 0.5 > 1e-3 + 2e-5 fails; |0.0005| <= 1e-3 + 1e-3 passes.
  EXPECT_EQ(r->mismatched, 1);
  EXPECT_FALSE(r->passed());
  EXPECT_EQ(r->max_abs_index, 1);
  EXPECT_EQ(r->max_abs_coords, (std::vector<int64_t>{0, 1}));
  EXPECT_DOUBLE_EQ(r->max_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(r->expected_at_max_abs, 2.0);
  EXPECT_DOUBLE_EQ(r->actual_at_max_abs, 2.5);
  EXPECT_EQ(r->first_mismatch_index, 1);
  EXPECT_DOUBLE_EQ(r->max_rel_err, 0.25);
}

TEST(Compare, NanAndInfinityMatchOnlyThemselves) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Tensor e = Make(DType::kF64, Shape({5}), {nan, inf, -inf, 1, nan});
  Tensor a = Make(DType::kF64, Shape({5}), {nan, inf, inf, nan, 2});
  auto r = CompareTensors(a, e, DefaultTolerance(DType::kF64));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->mismatched, 3);  // -inf vs inf, 1 vs NaN, NaN vs 2
  EXPECT_EQ(r->first_mismatch_index, 2);
  EXPECT_EQ(r->nan_actual, 2);
  EXPECT_EQ(r->nan_expected, 2);
  EXPECT_TRUE(std::isinf(r->max_abs_err));
}

TEST(Compare, IntegersAreExactAndShapesMustAgree) {
  EXPECT_EQ(DefaultTolerance(DType::kI32).atol, 0);
  EXPECT_EQ(DefaultTolerance(DType::kF16).rtol, 1e-3);
  Tensor e = Make(DType::kI32, Shape({3}), {1, 2, 3});
  Tensor a = Make(DType::kI32, Shape({3}), {1, 2, 4});
  auto r = CompareTensors(a, e, DefaultTolerance(DType::kI32));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->mismatched, 1);
  auto bad = CompareTensors(a, Make(DType::kI32, Shape({1, 3}), {1, 2, 3}), Tolerance{});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("differ in shape"), std::string::npos) << bad.status().message();
}

TEST(Compare, EachRuleJudgesByItsOwnBound) {
  Tensor e = Make(DType::kF64, Shape({4}), {0, 1, 100, -2});
  Tensor a = Make(DType::kF64, Shape({4}), {0.05, 1.05, 100.5, -2});
  // errors 0.05, 0.05, 0.5, 0
  auto abs = CompareTensors(a, e, Tolerance{.atol = 0.1, .rule = CompareRule::kAbsolute});
  ASSERT_TRUE(abs.ok());
  EXPECT_EQ(abs->mismatched, 1);  // only 0.5 > 0.1
  // max(0.1, 0.01*|e|): 100 -> 1 allows 0.5; near zero the 0.1 floor decides.
  auto rel = CompareTensors(a, e, Tolerance{.atol = 0.1, .rtol = 0.01, .rule = CompareRule::kRelative});
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ(rel->mismatched, 0);
  auto rel_tight = CompareTensors(a, e, Tolerance{.atol = 0.01, .rtol = 0.01, .rule = CompareRule::kRelative});
  ASSERT_TRUE(rel_tight.ok());
  EXPECT_EQ(rel_tight->mismatched, 2);  // 0.05 vs 0.01 at e=0 and at e=1
  auto mixed = CompareTensors(a, e, Tolerance{.atol = 0.04, .rtol = 0.01});
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(mixed->mismatched, 2);  // 0.05 > 0.04 at e=0; 0.05 <= 0.05 at e=1; 0.5 <= 1.04
  EXPECT_EQ(mixed->first_mismatch_index, 0);
  EXPECT_EQ(DescribeTolerance(mixed->tolerance), "|a-e| <= 0.04 + 0.01*|e|");
}

TEST(Compare, BitExactTellsSignedZerosApartAndUlpCountsSteps) {
  Tensor e = Make(DType::kF32, Shape({3}), {0.0, 1.0, 2.0});
  Tensor a = Make(DType::kF32, Shape({3}), {-0.0, 1.0, 2.0});
  auto exact = CompareTensors(a, e, Tolerance{.rule = CompareRule::kBitExact});
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->mismatched, 1);
  // 1 + 3 float32 steps (2^-23 each) from 1.
  const double three_ulp = 1.0 + 3 * std::ldexp(1.0, -23);
  Tensor b = Make(DType::kF32, Shape({3}), {0.0, three_ulp, 2.0});
  auto ulp2 = CompareTensors(b, e, Tolerance{.rule = CompareRule::kUlp, .max_ulp = 2});
  auto ulp3 = CompareTensors(b, e, Tolerance{.rule = CompareRule::kUlp, .max_ulp = 3});
  ASSERT_TRUE(ulp2.ok() && ulp3.ok());
  EXPECT_EQ(ulp2->max_ulp, 3);
  EXPECT_EQ(ulp2->mismatched, 1);
  EXPECT_EQ(ulp3->mismatched, 0);
}

TEST(Compare, MeanRmseCosineAndRelativeMaxByHand) {
  Tensor e = Make(DType::kF64, Shape({4}), {1, 2, 3, 4});
  Tensor a = Make(DType::kF64, Shape({4}), {1, 2, 3, 6});
  auto r = CompareTensors(a, e, Tolerance{});
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->mean_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(r->rmse, 1.0);                             // sqrt(4/4)
  EXPECT_NEAR(r->cosine, 38.0 / std::sqrt(30.0 * 50.0), 1e-15);  // a.e / |a||e|
  EXPECT_DOUBLE_EQ(r->max_rel_err, 0.5);
  EXPECT_EQ(r->max_rel_coords, (std::vector<int64_t>{3}));
  EXPECT_EQ(r->expected_at_max_rel, 4);
  EXPECT_EQ(r->actual_at_max_rel, 6);
}

TEST(Compare, NanOnlyInActualIsItsOwnFinding) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  Tensor e = Make(DType::kF32, Shape({4}), {1, nan, 3, 4});
  Tensor a = Make(DType::kF32, Shape({4}), {nan, nan, inf, 4});
  auto r = CompareTensors(a, e, DefaultTolerance(DType::kF32));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->nan_actual, 2);
  EXPECT_EQ(r->nan_expected, 1);
  EXPECT_EQ(r->nan_only_actual, 1);
  EXPECT_EQ(r->inf_only_actual, 1);
  EXPECT_EQ(r->mismatched, 2);
  EXPECT_EQ(r->finite_pairs, 1);
  ASSERT_GE(r->worst.size(), 2u);
  EXPECT_TRUE(std::isinf(r->worst[0].abs_err));  // mismatches rank first
}

TEST(Compare, HistogramByDecadeOfExpected) {
  Tensor e = Make(DType::kF64, Shape({6}), {0, 0.005, 0.5, 0.9, 5, 1000});
  Tensor a = Make(DType::kF64, Shape({6}), {0, 0.005, 0.7, 0.9, 5, 1000});
  auto r = CompareTensors(a, e, Tolerance{.atol = 1e-3});
  ASSERT_TRUE(r.ok());
  std::vector<std::string> labels;
  for (const HistogramBin& b : r->histogram) labels.push_back(b.Label());
  EXPECT_EQ(labels, (std::vector<std::string>{"0", "[1e-3,1e-2)", "[1e-1,1e0)", "[1e0,1e1)", "[1e3,1e4)"}));
  EXPECT_EQ(r->histogram[2].count, 2);
  EXPECT_EQ(r->histogram[2].mismatched, 1);
  EXPECT_NEAR(r->histogram[2].max_abs_err, 0.2, 1e-12);
  EXPECT_EQ(r->histogram[1].mismatched, 0);
}

TEST(Compare, WorstKIsOrderedAndTheSameForAnyThreadCount) {
  auto e = Tensor::Zeros(DType::kF32, Shape({300000}));
  auto a = Tensor::Zeros(DType::kF32, Shape({300000}));
  ASSERT_TRUE(e.ok() && a.ok());
  const int64_t spots[] = {7, 123456, 299999, 150000, 5};
  for (int i = 0; i < 5; ++i) a->FlatSetFromDouble(spots[i], 1.0 + i);
  for (int threads : {1, 2, 3}) {
    auto r = CompareTensors(*a, *e, Tolerance{.atol = 0.5}, CompareOptions{.worst_k = 3, .threads = threads});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->mismatched, 5);
    ASSERT_EQ(r->worst.size(), 3u);
    EXPECT_EQ(r->worst[0].index, 5);       // error 5
    EXPECT_EQ(r->worst[1].index, 150000);  // 4
    EXPECT_EQ(r->worst[2].index, 299999);  // 3
    EXPECT_EQ(r->first_mismatch_index, 5);
    EXPECT_TRUE(r->mismatches_by_dim[0].empty());  // too long to aggregate per index
  }
}

// A [2,16,8,8] tensor of ones with errors placed by `bad`.
template <typename Bad>
CompareResult PatternCase(Bad bad) {
  Shape s({2, 16, 8, 8});
  auto e = Tensor::Zeros(DType::kF32, s);
  auto a = Tensor::Zeros(DType::kF32, s);
  EXPECT_TRUE(e.ok() && a.ok());
  for (int64_t i = 0; i < s.numel(); ++i) {
    std::vector<int64_t> c = UnravelIndex(i, s);
    a->FlatSetFromDouble(i, bad(c));
  }
  auto r = CompareTensors(*a, *e, Tolerance{.atol = 1e-3});
  EXPECT_TRUE(r.ok());
  return *r;
}

TEST(ComparePattern, BorderOfTwoDims) {
  auto r = PatternCase([](const std::vector<int64_t>& c) {
    return (c[2] == 0 || c[2] == 7 || c[3] == 0 || c[3] == 7) ? 1.0 : 0.0;
  });
  EXPECT_EQ(r.pattern, "errors only in a 1-element border of dims 2 and 3 (100% of mismatches)");
}

TEST(ComparePattern, ChannelRangeGrowingWithIndex) {
  auto r = PatternCase([](const std::vector<int64_t>& c) { return c[1] >= 8 ? 0.1 * (c[1] - 7) : 0.0; });
  EXPECT_EQ(r.pattern, "errors only in dim 1 indices 8-15, growing with the index (100% of mismatches)");
}

TEST(ComparePattern, SingleElement) {
  auto r = PatternCase([](const std::vector<int64_t>& c) {
    return c == std::vector<int64_t>{1, 3, 4, 5} ? 2.0 : 0.0;
  });
  EXPECT_EQ(r.pattern, "a single element at [1,3,4,5]");
}

TEST(ComparePattern, ScatteredErrorsClaimNoPattern) {
  // A fixed pseudo-random 3% of the elements.
  auto r = PatternCase([](const std::vector<int64_t>& c) {
    const uint64_t h = (c[0] * 131 + c[1] * 8191 + c[2] * 524287 + c[3] * 2147483647ULL) * 0x9E3779B97F4A7C15ULL;
    return (h >> 40) % 100 < 3 ? 1.0 : 0.0;
  });
  EXPECT_GT(r.mismatched, 20);
  EXPECT_EQ(r.pattern.rfind("errors scattered", 0), 0u) << r.pattern;
}

}  // namespace
}  // namespace opscope
