#include <gtest/gtest.h>

#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;

Tensor Scales(std::vector<double> v) { return Values(DType::kF32, Shape({static_cast<int64_t>(v.size())}), v); }
Tensor Sizes(std::vector<double> v) { return Values(DType::kI64, Shape({static_cast<int64_t>(v.size())}), v); }

TEST(DenseResize, HandCheckedNearestUpsample) {
  Tensor x = Values(DType::kF32, Shape({1, 1, 2, 2}), {1, 2, 3, 4});
  auto r = RunCpu("Resize", {x, Tensor(), Scales({1, 1, 2, 3})}, "mode=nearest");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outputs[0].shape(), Shape({1, 1, 4, 6}));
  const double row0[6] = {1, 1, 1, 2, 2, 2};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r->outputs[0].FlatGetAsDouble(i), row0[i]) << i;
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(23), 4);
}

TEST(DenseResize, HandCheckedLinearAlignCorners) {
  // [0, 3] resized to 4 with align_corners: 0, 1, 2, 3.
  Tensor x = Values(DType::kF32, Shape({1, 2}), {0, 3});
  auto r = RunCpu("Resize", {x, Tensor(), Tensor(), Sizes({1, 4})}, "mode=linear,coordinate_transformation_mode=align_corners");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outputs[0].shape(), Shape({1, 4}));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(r->outputs[0].FlatGetAsDouble(i), i, 1e-6);
}

TEST(DenseResize, MatchesReferenceForEveryModeAndDtype) {
  const char* ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"};
  const char* nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  uint32_t seed = 1;
  for (DType t : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    Tensor x = Random(t, Shape({2, 3, 5, 4}), seed++);
    for (int i = 0; i < 4; ++i) {
      const std::string ctm = std::string("coordinate_transformation_mode=") + ctms[i];
      ExpectMatchesReference("Resize", {x, Tensor(), Scales({1, 1, 1.7, 0.6})}, "mode=linear," + ctm);
      ExpectMatchesReference("Resize", {x, Tensor(), Tensor(), Sizes({1, 2, 9, 7})}, "mode=linear," + ctm);
      ExpectMatchesReference("Resize", {x, Tensor(), Scales({2, 1, 0.5, 2.5})},
                                   "mode=nearest," + ctm + ",nearest_mode=" + nearest[i]);
    }
    Tensor roi = Values(DType::kF32, Shape({8}), {0, 0, 0.2, -0.1, 1, 1, 0.9, 1.3});
    ExpectMatchesReference("Resize", {x, roi, Tensor(), Sizes({2, 3, 4, 6})},
                                 "mode=linear,coordinate_transformation_mode=tf_crop_and_resize,extrapolation_value=7");
    ExpectMatchesReference("Resize", {x, roi, Tensor(), Sizes({2, 3, 4, 6})},
                                 "mode=nearest,coordinate_transformation_mode=tf_crop_and_resize");
  }
  ExpectMatchesReference("Resize", {Random(DType::kF32, Shape({1, 2, 5}), 8), Tensor(), Scales({1, 1, 1.6})},
                               "mode=nearest,coordinate_transformation_mode=tf_half_pixel_for_nn");
  ExpectMatchesReference("Resize", {Random(DType::kU8, Shape({1, 3, 4}), 9, 0, 255), Tensor(),
                                          Scales({1, 2, 1.5})}, "mode=nearest");
}

TEST(DenseResize, BadInputsNameTheProblem) {
  Tensor x = Random(DType::kF32, Shape({1, 1, 2, 2}), 1);
  ExpectError(RunCpu("Resize", {x, Tensor(), Scales({1, 1, 2, 2})}, "mode=cubic"), {"cubic", "not implemented"});
  EXPECT_EQ(RunCpu("Resize", {x, Tensor(), Scales({1, 1, 2, 2})}, "mode=cubic").status().code(),
            StatusCode::kUnimplemented);
  ExpectError(RunCpu("Resize", {x, Tensor(), Scales({2, 2})}), {"scales has 2 values", "expected 4"});
  ExpectError(RunCpu("Resize", {x, Tensor(), Scales({1, 1, 2, 2}), Sizes({1, 1, 4, 4})}), {"exactly one", "both"});
  ExpectError(RunCpu("Resize", {x, Tensor(), Scales({1, 1, 2, 2})}, "coordinate_transformation_mode=tf_crop_and_resize"),
              {"tf_crop_and_resize", "roi"});
}

}  // namespace
}  // namespace opscope
