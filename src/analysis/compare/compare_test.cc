#include "opscope/compare.h"

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

// float32 pairs with planted NaN, infinities, zeros, subnormals and mismatches.
void PlantedPair(const Shape& shape, Tensor& actual, Tensor& expected) {
  actual = *Tensor::Empty(DType::kF32, shape);
  expected = *Tensor::Empty(DType::kF32, shape);
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 11;
  };
  float* a = actual.data<float>();
  float* e = expected.data<float>();
  for (int64_t i = 0; i < shape.numel(); ++i) {
    const double unit = static_cast<double>(next()) / 9007199254740992.0 - 0.5;  // [-0.5, 0.5)
    float ev = static_cast<float>(unit * std::pow(10.0, static_cast<int>(next() % 14) - 7));
    float av = ev * (1.0f + 1e-7f * static_cast<float>(next() % 8));
    switch (next() % 400) {
      case 0: av = NAN; break;
      case 1: ev = NAN; break;
      case 2: av = ev = NAN; break;
      case 3: av = INFINITY; break;
      case 4: ev = -INFINITY; break;
      case 5: av = ev = INFINITY; break;
      case 6: ev = 0; break;
      case 7: av = -0.0f, ev = 0; break;
      case 8: ev = 1e-40f, av = 3e-40f; break;  // float32 subnormals
      case 9: case 10: case 11: av += 0.01f; break;
      case 12: av = ev + static_cast<float>(next() % 1000); break;
      default: break;
    }
    a[i] = av;
    e[i] = ev;
  }
}

void ExpectSame(const CompareResult& x, const CompareResult& y, bool same_sums) {
  EXPECT_EQ(x.total, y.total);
  EXPECT_EQ(x.mismatched, y.mismatched);
  EXPECT_EQ(x.first_mismatch_index, y.first_mismatch_index);
  EXPECT_EQ(x.max_abs_err, y.max_abs_err);
  EXPECT_EQ(x.max_abs_index, y.max_abs_index);
  EXPECT_EQ(x.expected_at_max_abs, y.expected_at_max_abs);
  EXPECT_EQ(x.actual_at_max_abs, y.actual_at_max_abs);
  EXPECT_EQ(x.max_rel_err, y.max_rel_err);
  EXPECT_EQ(x.max_rel_index, y.max_rel_index);
  EXPECT_EQ(x.max_ulp, y.max_ulp);
  EXPECT_EQ(x.finite_pairs, y.finite_pairs);
  EXPECT_EQ(x.nan_actual, y.nan_actual);
  EXPECT_EQ(x.nan_expected, y.nan_expected);
  EXPECT_EQ(x.inf_actual, y.inf_actual);
  EXPECT_EQ(x.inf_expected, y.inf_expected);
  EXPECT_EQ(x.nan_only_actual, y.nan_only_actual);
  EXPECT_EQ(x.inf_only_actual, y.inf_only_actual);
  ASSERT_EQ(x.histogram.size(), y.histogram.size());
  for (size_t i = 0; i < x.histogram.size(); ++i) {
    EXPECT_EQ(x.histogram[i].Label(), y.histogram[i].Label());
    EXPECT_EQ(x.histogram[i].count, y.histogram[i].count) << x.histogram[i].Label();
    EXPECT_EQ(x.histogram[i].mismatched, y.histogram[i].mismatched) << x.histogram[i].Label();
    EXPECT_EQ(x.histogram[i].max_abs_err, y.histogram[i].max_abs_err) << x.histogram[i].Label();
    if (same_sums) {
      EXPECT_EQ(x.histogram[i].sum_abs_err, y.histogram[i].sum_abs_err) << x.histogram[i].Label();
    }
  }
  ASSERT_EQ(x.worst.size(), y.worst.size());
  for (size_t i = 0; i < x.worst.size(); ++i) {
    EXPECT_EQ(x.worst[i].index, y.worst[i].index);
    EXPECT_EQ(x.worst[i].abs_err, y.worst[i].abs_err);
  }
  EXPECT_EQ(x.mismatches_by_dim, y.mismatches_by_dim);
  EXPECT_EQ(x.pattern, y.pattern);
  if (same_sums) {
    EXPECT_EQ(x.mean_abs_err, y.mean_abs_err);
    EXPECT_EQ(x.rmse, y.rmse);
    EXPECT_EQ(x.cosine, y.cosine);
    EXPECT_EQ(x.abs_err_by_dim, y.abs_err_by_dim);
  } else {
    // Partial sums are added in another order.
    EXPECT_NEAR(x.mean_abs_err, y.mean_abs_err, 1e-12 * std::fabs(x.mean_abs_err));
    EXPECT_NEAR(x.rmse, y.rmse, 1e-12 * x.rmse);
    EXPECT_NEAR(x.cosine, y.cosine, 1e-12);
  }
}

TEST(Compare, EveryDtypePairAndThreadCountGivesTheSameResult) {
  // Long enough for three threads (64Ki elements each at least).
  const Shape shape({4, 50, 1000});
  Tensor a32, e32;
  PlantedPair(shape, a32, e32);
  Tensor a64 = *a32.CastTo(DType::kF64), e64 = *e32.CastTo(DType::kF64);
  for (const Tolerance& tol : {DefaultTolerance(DType::kF32), Tolerance{.atol = 1e-4, .rule = CompareRule::kAbsolute},
                               Tolerance{.atol = 1e-6, .rtol = 1e-3, .rule = CompareRule::kRelative},
                               Tolerance{.rule = CompareRule::kBitExact}}) {
    SCOPED_TRACE(DescribeTolerance(tol));
    const CompareOptions one{.worst_k = 16, .threads = 1};
    auto f32 = CompareTensors(a32, e32, tol, one);
    auto f32_f64 = CompareTensors(a32, e64, tol, one);
    auto f64 = CompareTensors(a64, e64, tol, one);
    auto threaded = CompareTensors(a32, e32, tol, CompareOptions{.worst_k = 16, .threads = 3});
    ASSERT_TRUE(f32.ok() && f32_f64.ok() && f64.ok() && threaded.ok());
    EXPECT_GT(f32->mismatched, 1000);
    EXPECT_GT(f32->nan_only_actual, 0);
    EXPECT_GT(f32->inf_only_actual, 0);
    EXPECT_GE(f32->histogram.size(), 10u);
    // Each element is judged on its values as doubles, whatever the dtypes held them.
    ExpectSame(*f32, *f32_f64, true);
    ExpectSame(*f32, *f64, true);
    ExpectSame(*f32, *threaded, false);
  }
}

TEST(Compare, HistogramSplitsExactlyAtPowersOfTen) {
  std::vector<double> values;
  std::vector<std::string> labels;
  for (int d : {-320, -310, -300, -45, -7, -1, 0, 1, 8, 22, 300, 307}) {
    const double p = std::pow(10.0, d);
    if (p == 0) continue;
    values.push_back(p);
    labels.push_back("[1e" + std::to_string(d) + ",1e" + std::to_string(d + 1) + ")");
    values.push_back(std::nextafter(p, 0.0));
    labels.push_back("[1e" + std::to_string(d - 1) + ",1e" + std::to_string(d) + ")");
  }
  values.push_back(std::numeric_limits<double>::denorm_min());  // 4.9e-324
  labels.push_back("[1e-324,1e-323)");
  values.push_back(std::numeric_limits<double>::max());  // 1.8e308
  labels.push_back("[1e308,1e309)");
  for (size_t i = 0; i < values.size(); ++i) {
    Tensor e = Make(DType::kF64, Shape({1}), {values[i]});
    auto r = CompareTensors(e, e, Tolerance{});
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->histogram.size(), 1u);
    EXPECT_EQ(r->histogram[0].Label(), labels[i]) << values[i];
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
  EXPECT_EQ(r.pattern, "errors only in a 1-element border on all four sides of dims 2 and 3 (100% of mismatches)");
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

namespace opscope {
namespace {

// Past 2^53 an int64 has no double of its own: a difference of one must still count.
TEST(Compare, Int64BeyondDoublePrecisionIsComparedExactly) {
  Tensor e = *Tensor::Empty(DType::kI64, Shape({3}));
  Tensor a = *Tensor::Empty(DType::kI64, Shape({3}));
  const int64_t big = int64_t{1} << 60;
  e.data<int64_t>()[0] = big, e.data<int64_t>()[1] = 5, e.data<int64_t>()[2] = big + 7;
  a.data<int64_t>()[0] = big + 1, a.data<int64_t>()[1] = 5, a.data<int64_t>()[2] = big + 7;
  auto r = CompareTensors(a, e, DefaultTolerance(DType::kI64));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->mismatched, 1);
  EXPECT_EQ(r->max_abs_err, 1);
  EXPECT_EQ(r->max_abs_index, 0);
  // An absolute tolerance of one lets it pass.
  auto loose = CompareTensors(a, e, Tolerance{.atol = 1, .rule = CompareRule::kAbsolute});
  ASSERT_TRUE(loose.ok());
  EXPECT_EQ(loose->mismatched, 0);
}

// uint64 past 2^63 is beyond int64 and double alike: off by one must still count,
// and an actual in int64 against an expected in uint64 is compared on the integers.
TEST(Compare, Uint64BeyondDoublePrecisionIsComparedExactly) {
  Tensor e = *Tensor::Empty(DType::kU64, Shape({3}));
  Tensor a = *Tensor::Empty(DType::kU64, Shape({3}));
  const uint64_t big = (uint64_t{1} << 63) + (uint64_t{1} << 40);
  e.data<uint64_t>()[0] = big, e.data<uint64_t>()[1] = 5, e.data<uint64_t>()[2] = UINT64_MAX;
  a.data<uint64_t>()[0] = big, a.data<uint64_t>()[1] = 5, a.data<uint64_t>()[2] = UINT64_MAX - 1;
  auto r = CompareTensors(a, e, DefaultTolerance(DType::kU64));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->mismatched, 1);
  EXPECT_EQ(r->max_abs_err, 1);
  EXPECT_EQ(r->max_abs_index, 2);
  EXPECT_EQ(DescribeTolerance(DefaultTolerance(DType::kU64)), DescribeTolerance(DefaultTolerance(DType::kI64)));

  Tensor e_small = *Tensor::Empty(DType::kU64, Shape({1}));
  Tensor a_i64 = *Tensor::Empty(DType::kI64, Shape({1}));
  e_small.data<uint64_t>()[0] = (uint64_t{1} << 60) + 1;
  a_i64.data<int64_t>()[0] = int64_t{1} << 60;
  auto mixed = CompareTensors(a_i64, e_small, DefaultTolerance(DType::kU64));
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(mixed->mismatched, 1);
  EXPECT_EQ(mixed->max_abs_err, 1);
}

TEST(Compare, UnsignedSixteenAndThirtyTwoBitAreExact) {
  for (DType dtype : {DType::kU16, DType::kU32}) {
    Tensor e = Make(dtype, Shape({3}), {0, 65535, 7});
    Tensor a = Make(dtype, Shape({3}), {0, 65535, 8});
    auto r = CompareTensors(a, e, DefaultTolerance(dtype));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->mismatched, 1) << DTypeName(dtype);
    EXPECT_EQ(r->max_abs_index, 2) << DTypeName(dtype);
  }
}

// An op may rightly produce nothing (Split into an empty part, a 0-row input):
// nothing mismatched out of nothing is a pass, with no statistics to make up.
TEST(Compare, EmptyTensorsPassWithZeroOfZero) {
  for (DType dtype : {DType::kF32, DType::kI64, DType::kU64, DType::kBool}) {
    Tensor e = *Tensor::Empty(dtype, Shape({0, 3}));
    Tensor a = *Tensor::Empty(dtype, Shape({0, 3}));
    auto r = CompareTensors(a, e, DefaultTolerance(dtype), CompareOptions{.worst_k = 4});
    ASSERT_TRUE(r.ok()) << DTypeName(dtype) << ": " << r.status().ToString();
    EXPECT_TRUE(r->passed()) << DTypeName(dtype);
    EXPECT_EQ(r->total, 0);
    EXPECT_EQ(r->mismatched, 0);
    EXPECT_TRUE(r->worst.empty());
  }
  // The shapes must still agree: [0,3] is not [3,0].
  EXPECT_FALSE(CompareTensors(*Tensor::Empty(DType::kF32, Shape({0, 3})), *Tensor::Empty(DType::kF32, Shape({3, 0})),
                              DefaultTolerance(DType::kF32)).ok());
}

}  // namespace
}  // namespace opscope
