// Test helpers for the elementwise ops: build tensors, run an op through the
// dispatcher on the cpu device and as its reference, and compare the two.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "capture/dispatcher.h"
#include "opscope/fill.h"
#include "opscope/op.h"

namespace opscope::ew_test {

inline Tensor Make(DType dt, const Shape& shape, const std::vector<double>& values) {
  auto t = Tensor::Empty(dt, shape);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(static_cast<int64_t>(values.size()), shape.numel());
  for (size_t i = 0; i < values.size(); ++i) t->FlatSetFromDouble(static_cast<int64_t>(i), values[i]);
  return *t;
}

inline Tensor Random(DType dt, const Shape& shape, uint64_t seed, double lo = -3, double hi = 3) {
  auto t = Tensor::Empty(dt, shape);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  FillSpec spec{.kind = IsFloat(dt) ? FillKind::kUniform : FillKind::kInt, .seed = seed, .low = lo, .high = hi};
  EXPECT_TRUE(Fill(*t, spec).ok());
  return *t;
}

inline StatusOr<OpRun> RunCpu(const std::string& op, const std::vector<Tensor>& in, Attrs attrs = {}) {
  OPSCOPE_ASSIGN_OR_RETURN(Device * cpu, GetDevice("cpu"));
  return Dispatcher::Global().Run(op, in, std::move(attrs), RunOptions{.device = cpu});
}

inline StatusOr<OpRun> RunReference(const std::string& op, const std::vector<Tensor>& in, Attrs attrs = {}) {
  return Dispatcher::Global().Run(op, in, std::move(attrs), RunOptions{});
}

// Runs the op on cpu, checks every element against `expected`.
inline void ExpectValues(const std::string& op, const std::vector<Tensor>& in, const std::vector<double>& expected,
                         Attrs attrs = {}, double tol = 1e-6) {
  auto r = RunCpu(op, in, attrs);
  ASSERT_TRUE(r.ok()) << op << ": " << r.status().ToString();
  const Tensor& y = r->outputs[0];
  ASSERT_EQ(y.numel(), static_cast<int64_t>(expected.size())) << op;
  for (int64_t i = 0; i < y.numel(); ++i) {
    double got = y.FlatGetAsDouble(i), want = expected[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << op << " element " << i << ": got " << got << ", want NaN";
    } else if (std::isinf(want)) {
      EXPECT_EQ(got, want) << op << " element " << i;
    } else {
      EXPECT_NEAR(got, want, tol * (1 + std::fabs(want))) << op << " element " << i;
    }
  }
}

// abs/rel tolerance of a kernel computing in (or rounding to) `dt` against a double reference.
inline double Tolerance(DType dt) {
  switch (dt) {
    case DType::kF64: return 1e-12;
    case DType::kF32: return 1e-5;
    case DType::kF16: return 4e-3;
    case DType::kBF16: return 2e-2;
    default: return 0;
  }
}

// The cpu kernel against the reference: |k - r| <= tol * (1 + |r|), NaN
// where the reference has NaN, equal infinities. tol < 0: by output dtype.
inline void ExpectMatchesReference(const std::string& op, const std::vector<Tensor>& in, Attrs attrs = {},
                                   double tol = -1) {
  auto k = RunCpu(op, in, attrs);
  ASSERT_TRUE(k.ok()) << op << ": " << k.status().ToString();
  auto r = RunReference(op, in, attrs);
  ASSERT_TRUE(r.ok()) << op << " reference: " << r.status().ToString();
  const Tensor& a = k->outputs[0];
  const Tensor& e = r->outputs[0];
  ASSERT_EQ(a.shape(), e.shape()) << op;
  if (tol < 0) tol = Tolerance(a.dtype());
  int bad = 0;
  for (int64_t i = 0; i < a.numel() && bad < 5; ++i) {
    double got = a.FlatGetAsDouble(i), want = e.FlatGetAsDouble(i);
    bool ok = std::isnan(want) ? std::isnan(got)
              : std::isinf(want) ? got == want
                                 : std::fabs(got - want) <= tol * (1 + std::fabs(want));
    if (!ok) {
      ++bad;
      ADD_FAILURE() << op << " " << a.Describe() << " element " << i << ": kernel " << got << ", reference " << want;
    }
  }
}

inline std::string ErrorOf(const StatusOr<OpRun>& r) { return r.ok() ? "(no error)" : r.status().message(); }

inline constexpr DType kFloatTypes[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16};

}  // namespace opscope::ew_test
