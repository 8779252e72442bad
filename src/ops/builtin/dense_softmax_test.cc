#include <gtest/gtest.h>

#include <cmath>

#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;

TEST(DenseSoftmax, HandCheckedAndStableForLargeInputs) {
  const double e = std::exp(1.0), sum = 1 + e + e * e;
  for (double offset : {0.0, 10000.0}) {
    Tensor x = Values(DType::kF32, Shape({1, 3}), {offset, offset + 1, offset + 2});
    auto s = RunCpu("Softmax", {x});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_NEAR(s->outputs[0].FlatGetAsDouble(0), 1 / sum, 1e-6);
    EXPECT_NEAR(s->outputs[0].FlatGetAsDouble(2), e * e / sum, 1e-6);
    auto l = RunCpu("LogSoftmax", {x});
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    EXPECT_NEAR(l->outputs[0].FlatGetAsDouble(0), -std::log(sum), 1e-5);
  }
}

TEST(DenseSoftmax, MatchesReferenceForEveryFloatDtypeAndAxis) {
  for (DType t : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      Tensor x = Random(t, Shape({3, 4, 5}), 7, -4, 4);
      for (const char* axis : {"", "axis=0", "axis=1", "axis=-2"}) ExpectMatchesReference(op, {x}, axis);
    }
  }
}

TEST(DenseSoftmax, BadAxisNamesTheProblem) {
  ExpectError(RunCpu("Softmax", {Random(DType::kF32, Shape({2, 3}), 1)}, "axis=2"), {"axis=2", "[2,3]"});
  ExpectError(RunCpu("LogSoftmax", {Random(DType::kI32, Shape({2, 3}), 1)}), {"dtype int32"});
}

}  // namespace
}  // namespace opscope
