// Test helpers for the shape, data-movement and reduction ops: build tensors,
// run an op through the dispatcher on the cpu device and as its reference,
// and compare outputs element by element.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "capture/dispatcher.h"
#include "opscope/fill.h"
#include "opscope/op.h"

namespace opscope::shape_test {

inline Tensor Make(DType dt, const Shape& shape, const std::vector<double>& values) {
  auto t = Tensor::Empty(dt, shape);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(static_cast<int64_t>(values.size()), shape.numel());
  for (size_t i = 0; i < values.size() && t.ok(); ++i) t->FlatSetFromDouble(static_cast<int64_t>(i), values[i]);
  return *t;
}

inline Tensor F32(const Shape& shape, const std::vector<double>& values) { return Make(DType::kF32, shape, values); }

// A 1-D int64 tensor (shape, axes, pads, ... inputs).
inline Tensor I64s(const std::vector<int64_t>& v) {
  auto t = Tensor::Empty(DType::kI64, Shape({static_cast<int64_t>(v.size())}));
  EXPECT_TRUE(t.ok());
  for (size_t i = 0; i < v.size(); ++i) t->data<int64_t>()[i] = v[i];
  return *t;
}

// 0, 1, 2, ... in the given dtype (exact in every dtype for small shapes).
inline Tensor Iota(DType dt, const Shape& shape) {
  std::vector<double> v(shape.numel());
  for (size_t i = 0; i < v.size(); ++i) v[i] = dt == DType::kBool ? double(i % 3 == 0) : double(i % 200);
  return Make(dt, shape, v);
}

inline Tensor Random(DType dt, const Shape& shape, uint64_t seed, double lo = -3, double hi = 3) {
  auto t = Tensor::Empty(dt, shape);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!IsSigned(dt) && lo < 0) lo = 0;  // a negative double into an unsigned type is undefined
  FillSpec spec{.kind = IsFloat(dt) ? FillKind::kUniform : FillKind::kInt, .seed = seed, .low = lo, .high = hi};
  EXPECT_TRUE(Fill(*t, spec).ok());
  return *t;
}

inline StatusOr<OpRun> RunCpu(const std::string& op, const std::vector<Tensor>& in, Attrs attrs = {},
                              int num_outputs = -1, std::map<std::string, int64_t> tunables = {}) {
  OPSCOPE_ASSIGN_OR_RETURN(Device * cpu, GetDevice("cpu"));
  return Dispatcher::Global().Run(op, in, std::move(attrs),
                                  RunOptions{.device = cpu, .tunables = std::move(tunables), .num_outputs = num_outputs});
}

inline StatusOr<OpRun> RunReference(const std::string& op, const std::vector<Tensor>& in, Attrs attrs = {},
                                    int num_outputs = -1) {
  return Dispatcher::Global().Run(op, in, std::move(attrs), RunOptions{.num_outputs = num_outputs});
}

inline std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.FlatGetAsDouble(i);
  return v;
}

// Runs the op on cpu; checks output `out`'s shape and every element.
inline void ExpectOutput(const std::string& op, const std::vector<Tensor>& in, Attrs attrs, const Shape& shape,
                         const std::vector<double>& expected, int out = 0, int num_outputs = -1) {
  auto r = RunCpu(op, in, attrs, num_outputs);
  ASSERT_TRUE(r.ok()) << op << ": " << r.status().ToString();
  ASSERT_GT(static_cast<int>(r->outputs.size()), out);
  const Tensor& y = r->outputs[out];
  EXPECT_EQ(y.shape(), shape) << op << " output " << out << " shape " << y.shape().ToString();
  ASSERT_EQ(y.numel(), static_cast<int64_t>(expected.size())) << op;
  for (int64_t i = 0; i < y.numel(); ++i) {
    double got = y.FlatGetAsDouble(i), want = expected[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << op << " element " << i << ": got " << got << ", want NaN";
    } else {
      EXPECT_NEAR(got, want, 1e-6 * (1 + std::fabs(want))) << op << " element " << i;
    }
  }
}

// abs/rel tolerance of a kernel whose result is rounded to `dt`, against a double reference.
inline double Tolerance(DType dt) {
  switch (dt) {
    case DType::kF64: return 1e-12;
    case DType::kF32: return 2e-6;
    case DType::kF16: return 2e-3;
    case DType::kBF16: return 1.6e-2;
    default: return 0;
  }
}

// Runs the op on cpu and as its reference; every output must agree within
// `tol` (relative to 1 + |expected|); tol < 0 picks Tolerance(dtype).
inline void ExpectMatchesReference(const std::string& op, const std::vector<Tensor>& in, Attrs attrs = {},
                                   int num_outputs = -1, double tol = -1) {
  auto k = RunCpu(op, in, attrs, num_outputs);
  ASSERT_TRUE(k.ok()) << op << ": " << k.status().ToString();
  auto r = RunReference(op, in, attrs, num_outputs);
  ASSERT_TRUE(r.ok()) << op << " reference: " << r.status().ToString();
  ASSERT_EQ(k->outputs.size(), r->outputs.size());
  for (size_t o = 0; o < k->outputs.size(); ++o) {
    const Tensor& a = k->outputs[o];
    const Tensor& e = r->outputs[o];
    ASSERT_EQ(a.shape(), e.shape()) << op << " output " << o;
    const double t = tol >= 0 ? tol : Tolerance(a.dtype());
    int bad = 0;
    for (int64_t i = 0; i < a.numel() && bad < 5; ++i) {
      double got = a.FlatGetAsDouble(i), want = e.FlatGetAsDouble(i);
      if (std::isnan(want) && std::isnan(got)) continue;
      if (!(std::fabs(got - want) <= t * (1 + std::fabs(want)))) {
        ++bad;
        ADD_FAILURE() << op << " " << a.Describe() << " output " << o << " element " << i << ": kernel " << got
                      << ", reference " << want;
      }
    }
  }
}

// The op must fail with a message containing every one of `parts`.
inline void ExpectError(const std::string& op, const std::vector<Tensor>& in, Attrs attrs,
                        const std::vector<std::string>& parts, int num_outputs = -1) {
  auto r = RunCpu(op, in, attrs, num_outputs);
  ASSERT_FALSE(r.ok()) << op << " should have failed";
  for (const auto& p : parts) {
    EXPECT_NE(r.status().message().find(p), std::string::npos)
        << op << ": message lacks '" << p << "': " << r.status().message();
  }
}

inline Attrs A(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Attrs a;
  for (const auto& [k, v] : kv) a.Set(k, v);
  return a;
}

}  // namespace opscope::shape_test
