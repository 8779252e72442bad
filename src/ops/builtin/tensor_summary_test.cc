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

// The unsigned types: stats see their values (beyond int64 for uint64), and a
// sample is the elements themselves, bit for bit, on the device and in the reference.
TEST(TensorSample, UnsignedElementsComeBackExactly) {
  Device* cpu = *GetDevice("cpu");
  Tensor x = *Tensor::Empty(DType::kU64, Shape({6}));
  const uint64_t big = (uint64_t{1} << 63) + 1;
  for (int64_t i = 0; i < 6; ++i) x.data<uint64_t>()[i] = big + 2 * static_cast<uint64_t>(i);
  Attrs attrs;
  attrs.Set("count", int64_t{3});
  for (Device* device : {cpu, static_cast<Device*>(nullptr)}) {
    auto run = Dispatcher::Global().Run("opscope_tensor_sample", {x}, attrs, RunOptions{.device = device});
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    Tensor s = *ToHost(run->outputs[0]);
    ASSERT_EQ(s.dtype(), DType::kU64);
    ASSERT_EQ(s.numel(), 3);
    for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(s.data<uint64_t>()[k], big + 4 * static_cast<uint64_t>(k)) << k;
  }
  for (DType dtype : {DType::kU16, DType::kU32, DType::kU64}) {
    Tensor u = *Tensor::Empty(dtype, Shape({4}));
    for (int64_t i = 0; i < 4; ++i) u.FlatSetFromDouble(i, 65535.0 - 1000.0 * static_cast<double>(i));
    for (Device* device : {cpu, static_cast<Device*>(nullptr)}) {
      auto run = Dispatcher::Global().Run("opscope_tensor_stats", {u}, {}, RunOptions{.device = device});
      ASSERT_TRUE(run.ok()) << DTypeName(dtype) << ": " << run.status().ToString();
      Tensor s = *ToHost(run->outputs[0]);
      EXPECT_EQ(s.FlatGetAsDouble(3), 62535) << DTypeName(dtype);  // min
      EXPECT_EQ(s.FlatGetAsDouble(4), 65535) << DTypeName(dtype);  // max
    }
  }
}

}  // namespace
}  // namespace opscope
