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

}  // namespace
}  // namespace opscope
