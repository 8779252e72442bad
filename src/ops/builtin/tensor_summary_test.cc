// The readback ops behind `ops-debug run --readback stats|sample`: the
// device kernel and the reference agree, and the numbers are the right ones.
#include <gtest/gtest.h>

#include <cmath>

#include "capture/dispatcher.h"

namespace opscope {
namespace {

TEST(TensorStats, CountsNonFiniteApartAndSummarisesTheRest) {
  Tensor x = *Tensor::Empty(DType::kF32, Shape({200000}));
  for (int64_t i = 0; i < x.numel(); ++i) x.FlatSetFromDouble(i, static_cast<double>(i % 10) - 2);
  x.FlatSetFromDouble(7, NAN);
  x.FlatSetFromDouble(70000, INFINITY);
  Device* cpu = *GetDevice("cpu");
  for (Device* device : {cpu, static_cast<Device*>(nullptr)}) {
    auto run = Dispatcher::Global().Run("opscope_tensor_stats", {x}, {}, RunOptions{.device = device});
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    Tensor s = *ToHost(run->outputs[0]);
    ASSERT_EQ(s.numel(), 7);
    EXPECT_EQ(s.FlatGetAsDouble(0), 200000);  // count
    EXPECT_EQ(s.FlatGetAsDouble(1), 1);       // NaN
    EXPECT_EQ(s.FlatGetAsDouble(2), 1);       // Inf
    EXPECT_EQ(s.FlatGetAsDouble(3), -2);      // min
    EXPECT_EQ(s.FlatGetAsDouble(4), 7);       // max
    // Finite values: 20,000 of each of -2..7 less the NaN at i=7 (value 5) and the Inf at i=70000 (value -2).
    const double sum = 20000.0 * 25 - 5 + 2, n = 199998;
    EXPECT_NEAR(s.FlatGetAsDouble(5), sum / n, 1e-12);
  }
}

TEST(TensorSample, TakesEveryStrideThElementRowMajor) {
  Tensor x = *Tensor::Empty(DType::kI32, Shape({100, 100}));
  for (int64_t i = 0; i < x.numel(); ++i) x.FlatSetFromDouble(i, static_cast<double>(i));
  Attrs attrs;
  attrs.Set("count", int64_t{1000});
  auto run = Dispatcher::Global().Run("opscope_tensor_sample", {x}, attrs, RunOptions{.device = *GetDevice("cpu")});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  Tensor s = *ToHost(run->outputs[0]);
  ASSERT_EQ(s.numel(), 1000);  // stride 10
  for (int64_t k = 0; k < s.numel(); k += 97) EXPECT_EQ(s.FlatGetAsDouble(k), 10.0 * k);
}

}  // namespace
}  // namespace opscope
