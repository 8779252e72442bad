#include <gtest/gtest.h>

#include <cmath>

#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;

const DType kFloat3[] = {DType::kF32, DType::kF64, DType::kF16};
const DType kFloat4[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};

TEST(DenseBatchNorm, HandCheckedInference) {
  // channel 0: (x - 1) / sqrt(4) * 2 + 0.5 ; channel 1: (x - 0) / 1 * 1 + 0
  Tensor x = Values(DType::kF32, Shape({1, 2, 2}), {3, 5, -1, 2});
  auto r = RunCpu("BatchNormalization",
                  {x, Values(DType::kF32, Shape({2}), {2, 1}), Values(DType::kF32, Shape({2}), {0.5, 0}),
                   Values(DType::kF32, Shape({2}), {1, 0}), Values(DType::kF32, Shape({2}), {4, 1})},
                  "epsilon=0");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FLOAT_EQ(r->outputs[0].FlatGetAsDouble(0), 2.5);
  EXPECT_FLOAT_EQ(r->outputs[0].FlatGetAsDouble(1), 4.5);
  EXPECT_FLOAT_EQ(r->outputs[0].FlatGetAsDouble(2), -1);
  EXPECT_FLOAT_EQ(r->outputs[0].FlatGetAsDouble(3), 2);
}

TEST(DenseBatchNorm, TrainingModeUsesBatchStatistics) {
  // One channel, values 1..4: batch mean 2.5, biased variance 1.25.
  Tensor x = Values(DType::kF32, Shape({2, 1, 2}), {1, 2, 3, 4});
  Tensor one = Values(DType::kF32, Shape({1}), {1}), zero = Values(DType::kF32, Shape({1}), {0});
  auto r = RunCpu("BatchNormalization", {x, one, zero, zero, one}, "epsilon=0,momentum=0.5,training_mode=1", 3);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->outputs[0].FlatGetAsDouble(0), (1 - 2.5) / std::sqrt(1.25), 1e-6);
  EXPECT_NEAR(r->outputs[1].FlatGetAsDouble(0), 0.5 * 0 + 0.5 * 2.5, 1e-6);
  EXPECT_NEAR(r->outputs[2].FlatGetAsDouble(0), 0.5 * 1 + 0.5 * 1.25, 1e-6);
}

TEST(DenseBatchNorm, MatchesReferenceForEveryFloatDtype) {
  for (DType t : kFloat4) {
    Tensor x = Random(t, Shape({2, 3, 4, 5}), 1);
    Tensor s = Random(t, Shape({3}), 2), b = Random(t, Shape({3}), 3), m = Random(t, Shape({3}), 4);
    Tensor v = Random(t, Shape({3}), 5, 0.5, 2.0);
    ExpectMatchesReference("BatchNormalization", {x, s, b, m, v});
    ExpectMatchesReference("BatchNormalization", {x, s, b, m, v}, "training_mode=1", 3);
  }
}

TEST(DenseBatchNorm, BadInputsNameTheProblem) {
  Tensor x = Random(DType::kF32, Shape({2, 3, 4}), 1), v3 = Random(DType::kF32, Shape({3}), 2);
  ExpectError(RunCpu("BatchNormalization", {x, Random(DType::kF32, Shape({4}), 2), v3, v3, v3}),
              {"scale", "[4]", "expected [3]"});
  ExpectError(RunCpu("BatchNormalization", {x, v3, v3, v3, v3}, "", 3), {"training_mode=1"});
}

TEST(DenseInstanceNorm, HandCheckedAndMatchesReference) {
  Tensor x = Values(DType::kF32, Shape({1, 1, 4}), {1, 2, 3, 4});
  auto r = RunCpu("InstanceNormalization",
                  {x, Values(DType::kF32, Shape({1}), {2}), Values(DType::kF32, Shape({1}), {1})}, "epsilon=0");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->outputs[0].FlatGetAsDouble(0), 2 * (1 - 2.5) / std::sqrt(1.25) + 1, 1e-5);
  for (DType t : kFloat3) {
    ExpectMatchesReference("InstanceNormalization",
                                 {Random(t, Shape({2, 3, 5, 4}), 1), Random(t, Shape({3}), 2), Random(t, Shape({3}), 3)});
  }
  ExpectError(RunCpu("InstanceNormalization", {Random(DType::kF32, Shape({2, 3, 5}), 1),
                                               Random(DType::kF32, Shape({2}), 2), Random(DType::kF32, Shape({3}), 3)}),
              {"scale", "expected [3]"});
}

TEST(DenseLayerNorm, HandCheckedWithStatistics) {
  Tensor x = Values(DType::kF32, Shape({2, 2}), {1, 3, 2, 2});
  Tensor s = Values(DType::kF32, Shape({2}), {1, 1}), b = Values(DType::kF32, Shape({2}), {0, 10});
  auto r = RunCpu("LayerNormalization", {x, s, b}, "epsilon=0", 3);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FLOAT_EQ(r->outputs[0].FlatGetAsDouble(0), -1);
  EXPECT_FLOAT_EQ(r->outputs[0].FlatGetAsDouble(1), 11);
  EXPECT_EQ(r->outputs[1].shape(), Shape({2, 1}));
  EXPECT_EQ(r->outputs[1].dtype(), DType::kF32);
  EXPECT_FLOAT_EQ(r->outputs[1].FlatGetAsDouble(0), 2);
  EXPECT_FLOAT_EQ(r->outputs[2].FlatGetAsDouble(0), 1);  // 1 / sqrt(var 1)
}

TEST(DenseLayerNorm, MatchesReferenceForEveryFloatDtypeAndAxis) {
  for (DType t : kFloat4) {
    Tensor x = Random(t, Shape({2, 3, 8}), 1);
    ExpectMatchesReference("LayerNormalization", {x, Random(t, Shape({8}), 2), Random(t, Shape({8}), 3)}, "", 3);
    ExpectMatchesReference("LayerNormalization", {x, Random(t, Shape({3, 8}), 4)}, "axis=1");
    ExpectMatchesReference("LayerNormalization", {x, Random(t, Shape({1, 8}), 5)}, "axis=-2,epsilon=0.1", 2);
  }
}

TEST(DenseLayerNorm, BadInputsNameTheProblem) {
  Tensor x = Random(DType::kF32, Shape({2, 3, 4}), 1);
  ExpectError(RunCpu("LayerNormalization", {x, Random(DType::kF32, Shape({3}), 2)}), {"Scale", "[3]", "[4]"});
  ExpectError(RunCpu("LayerNormalization", {x, Random(DType::kF32, Shape({4}), 2)}, "axis=3"), {"axis=3", "out of range"});
  ExpectError(RunCpu("LayerNormalization", {x, Random(DType::kF32, Shape({4}), 2)}, "stash_type=7"), {"stash_type=7"});
}

TEST(DenseLpNorm, HandCheckedL1AndL2) {
  Tensor x = Values(DType::kF32, Shape({2, 2}), {3, 4, -1, 3});
  auto l2 = RunCpu("LpNormalization", {x});
  ASSERT_TRUE(l2.ok()) << l2.status().ToString();
  EXPECT_FLOAT_EQ(l2->outputs[0].FlatGetAsDouble(0), 0.6);
  EXPECT_FLOAT_EQ(l2->outputs[0].FlatGetAsDouble(1), 0.8);
  auto l1 = RunCpu("LpNormalization", {x}, "p=1,axis=0");
  ASSERT_TRUE(l1.ok()) << l1.status().ToString();
  EXPECT_FLOAT_EQ(l1->outputs[0].FlatGetAsDouble(0), 0.75);   // 3 / (3 + 1)
  EXPECT_FLOAT_EQ(l1->outputs[0].FlatGetAsDouble(3), 3.0 / 7);
}

TEST(DenseLpNorm, MatchesReferenceAndRejectsBadP) {
  for (DType t : kFloat3) {
    ExpectMatchesReference("LpNormalization", {Random(t, Shape({3, 4, 5}), 1)});
    ExpectMatchesReference("LpNormalization", {Random(t, Shape({3, 4, 5}), 2)}, "axis=1,p=1");
  }
  ExpectError(RunCpu("LpNormalization", {Random(DType::kF32, Shape({3}), 1)}, "p=3"), {"p=3", "expected 1 or 2"});
}

}  // namespace
}  // namespace opscope
