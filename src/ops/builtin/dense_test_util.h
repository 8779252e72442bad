// Test helpers for the dense op tests: seeded random tensors, running an op
// through the dispatcher on cpu or as its reference, and comparing a kernel
// against the reference with a tolerance suited to the dtype.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "capture/dispatcher.h"
#include "opscope/op.h"

namespace opscope::dense_test {

inline Tensor Random(DType dtype, const Shape& shape, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  Tensor t = *Tensor::Empty(dtype, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = u(rng);
    if (IsInteger(dtype)) v = std::round(v);
    t.FlatSetFromDouble(i, v);
  }
  return t;
}

inline Tensor Values(DType dtype, const Shape& shape, const std::vector<double>& v) {
  Tensor t = *Tensor::Empty(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.FlatSetFromDouble(i, v.at(i));
  return t;
}

inline Attrs ParseAttrs(const std::string& op, const std::string& text) {
  auto schema = OpRegistry::Global().Lookup(op);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  auto a = (*schema)->ParseAttrs(text);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? *a : Attrs();
}

inline StatusOr<OpRun> RunCpu(const std::string& op, const std::vector<Tensor>& in, const std::string& attrs = "",
                              int num_outputs = -1) {
  OPSCOPE_ASSIGN_OR_RETURN(Device * cpu, GetDevice("cpu"));
  RunOptions o{.device = cpu, .num_outputs = num_outputs};
  return Dispatcher::Global().Run(op, in, ParseAttrs(op, attrs), o);
}

inline StatusOr<OpRun> RunReference(const std::string& op, const std::vector<Tensor>& in,
                                    const std::string& attrs = "", int num_outputs = -1) {
  RunOptions o{.num_outputs = num_outputs};
  return Dispatcher::Global().Run(op, in, ParseAttrs(op, attrs), o);
}

// |actual - expected| <= tol * (1 + |expected|): absolute near 0, relative beyond.
inline double Tolerance(DType t) {
  switch (t) {
    case DType::kF64: return 1e-9;
    case DType::kF32: return 1e-4;
    case DType::kF16: return 4e-3;
    case DType::kBF16: return 3e-2;
    default: return 0;
  }
}

inline void ExpectClose(const Tensor& actual, const Tensor& expected, double tol, const std::string& what) {
  ASSERT_EQ(actual.shape().ToString(), expected.shape().ToString()) << what;
  int bad = 0;
  for (int64_t i = 0; i < actual.numel() && bad < 5; ++i) {
    const double a = actual.FlatGetAsDouble(i), e = expected.FlatGetAsDouble(i);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (!(std::fabs(a - e) <= tol * (1 + std::fabs(e)))) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " is " << a << ", expected " << e;
    }
  }
}

// Runs the cpu kernel and the reference on the same inputs; compares every output.
inline void ExpectKernelMatchesReference(const std::string& op, const std::vector<Tensor>& in,
                                         const std::string& attrs = "", int num_outputs = -1,
                                         double tol_scale = 1.0) {
  const std::string what = op + " " + in[0].Describe() + " {" + attrs + "}";
  auto k = RunCpu(op, in, attrs, num_outputs);
  ASSERT_TRUE(k.ok()) << what << ": " << k.status().ToString();
  auto r = RunReference(op, in, attrs, num_outputs);
  ASSERT_TRUE(r.ok()) << what << ": " << r.status().ToString();
  ASSERT_EQ(k->outputs.size(), r->outputs.size());
  for (size_t i = 0; i < k->outputs.size(); ++i) {
    ExpectClose(k->outputs[i], r->outputs[i], Tolerance(k->outputs[i].dtype()) * tol_scale,
                what + " output " + std::to_string(i));
  }
}

// Expects the call to fail with a message holding every one of `parts`.
inline void ExpectError(const StatusOr<OpRun>& r, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok()) << "expected an error holding '" << parts.at(0) << "'";
  for (const std::string& p : parts) {
    EXPECT_NE(r.status().message().find(p), std::string::npos) << r.status().message() << "\n  lacks: " << p;
  }
}

}  // namespace opscope::dense_test
