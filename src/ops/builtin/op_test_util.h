// Test helpers for every built-in op's unit tests: build tensors, run an op
// through the dispatcher on the cpu device or as its reference, and judge the
// kernel the way users' ops are judged: through the op harness
// (opscope/harness.h) and the compare engine (opscope/compare.h) at its
// per-dtype defaults, unless a test says why it needs another bound.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capture/dispatcher.h"
#include "ops/builtin/dense_smallk.h"
#include "opscope/compare.h"
#include "opscope/fill.h"
#include "opscope/harness.h"
#include "opscope/op.h"

namespace opscope::op_test {

// ---- tensors ------------------------------------------------------------------------

inline Tensor Make(DType dt, const Shape& shape, const std::vector<double>& values) {
  auto t = Tensor::Empty(dt, shape);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(static_cast<int64_t>(values.size()), shape.numel());
  for (size_t i = 0; i < values.size() && t.ok(); ++i) t->FlatSetFromDouble(static_cast<int64_t>(i), values[i]);
  return *t;
}

inline Tensor Values(DType dt, const Shape& shape, const std::vector<double>& values) { return Make(dt, shape, values); }

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

// Seeded uniform values in [lo, hi] (whole numbers for integer dtypes).
inline Tensor Random(DType dt, const Shape& shape, uint64_t seed, double lo = -3, double hi = 3) {
  auto t = Tensor::Empty(dt, shape);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!IsSigned(dt) && lo < 0) lo = 0;  // a negative double into an unsigned type is undefined
  FillSpec spec{.kind = IsFloat(dt) ? FillKind::kUniform : FillKind::kInt, .seed = seed, .low = lo, .high = hi};
  EXPECT_TRUE(Fill(*t, spec).ok());
  return *t;
}

inline std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.FlatGetAsDouble(i);
  return v;
}

inline Attrs A(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Attrs a;
  for (const auto& [k, v] : kv) a.Set(k, v);
  return a;
}

inline Attrs ParseAttrs(const std::string& op, const std::string& text) {
  auto schema = OpRegistry::Global().Lookup(op);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  if (!schema.ok()) return Attrs();
  auto a = (*schema)->ParseAttrs(text);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? *a : Attrs();
}

inline constexpr DType kFloatTypes[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16};

// ---- running --------------------------------------------------------------------------

inline StatusOr<OpRun> RunCpu(const std::string& op, const std::vector<Tensor>& in, Attrs attrs = {},
                              int num_outputs = -1, std::map<std::string, int64_t> tunables = {}) {
  OPSCOPE_ASSIGN_OR_RETURN(Device * cpu, GetDevice("cpu"));
  return Dispatcher::Global().Run(op, in, std::move(attrs),
                                  RunOptions{.device = cpu, .tunables = std::move(tunables), .num_outputs = num_outputs});
}

inline StatusOr<OpRun> RunCpu(const std::string& op, const std::vector<Tensor>& in, const std::string& attrs,
                              int num_outputs = -1) {
  return RunCpu(op, in, ParseAttrs(op, attrs), num_outputs);
}

inline StatusOr<OpRun> RunReference(const std::string& op, const std::vector<Tensor>& in, Attrs attrs = {},
                                    int num_outputs = -1) {
  return Dispatcher::Global().Run(op, in, std::move(attrs), RunOptions{.num_outputs = num_outputs});
}

inline std::string ErrorOf(const StatusOr<OpRun>& r) { return r.ok() ? "(no error)" : r.status().message(); }

// Runs `body` with the 512-bit kernels off, then on (where the CPU has
// them: on other CPUs both passes run the 256-bit ones), each pass traced
// by what ran, and leaves the setting as it found it.
inline void ForWideBlocksOffAndOn(const std::function<void()>& body) {
  for (const bool wide : {false, true}) {
    const bool was = dense::SetWideBlocks(wide);
    SCOPED_TRACE(dense::WideBlocks() ? "512-bit kernels" : "256-bit kernels");
    body();
    dense::SetWideBlocks(was);
  }
}

// Whether `run` made a launch named `name` (which of an op's paths ran).
inline bool Launched(const OpRun& run, std::string_view name) {
  for (const KernelLaunchInfo& l : run.launches) {
    if (l.name == name) return true;
  }
  return false;
}

// The same bytes: two paths that must give the same bits.
inline bool SameBits(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// ---- judging ----------------------------------------------------------------------------

// A bound other than the dtype's default: |a-e| <= tol + tol*|e| (tol 0: equal values).
inline ToleranceSpec Within(double tol) {
  if (tol == 0) return ToleranceSpec{.rule = "abs", .atol = 0.0};
  return ToleranceSpec{.rule = "mixed", .atol = tol, .rtol = tol};
}

// The cpu kernel against the op's reference, every output, through the op
// harness; a failure prints the harness's whole report (where, how, pattern).
inline void ExpectMatchesReference(const std::string& op, const std::vector<Tensor>& in, Attrs attrs = {},
                                   int num_outputs = -1, ToleranceSpec tolerance = {}) {
  OpRunRequest request{.op = op, .input_tensors = in, .attr_values = std::move(attrs), .num_outputs = num_outputs,
                       .tolerance = tolerance};
  auto report = RunOpInstance(request);
  ASSERT_TRUE(report.ok()) << op << ": " << report.status().ToString();
  if (report->passed()) return;
  std::ostringstream text;
  PrintOpReport(*report, text);
  ADD_FAILURE() << op << " does not match its reference:\n" << text.str();
}

inline void ExpectMatchesReference(const std::string& op, const std::vector<Tensor>& in, const std::string& attrs,
                                   int num_outputs = -1, ToleranceSpec tolerance = {}) {
  ExpectMatchesReference(op, in, ParseAttrs(op, attrs), num_outputs, tolerance);
}

// The compare engine at the dtype's defaults (or `tolerance`) on one tensor
// against known values; `what` names it in a failure.
inline void ExpectTensor(const Tensor& actual, const std::vector<double>& expected, const std::string& what,
                         ToleranceSpec tolerance = {}) {
  ASSERT_EQ(actual.numel(), static_cast<int64_t>(expected.size())) << what << ": " << actual.Describe();
  // Floats are judged against float64 values, integers and bool against their own dtype.
  const DType e_dtype = IsFloat(actual.dtype()) ? DType::kF64 : actual.dtype();
  Tensor e = Make(e_dtype, actual.shape(), expected);
  auto tol = ResolveTolerance(tolerance, actual.dtype());
  ASSERT_TRUE(tol.ok()) << tol.status().ToString();
  auto c = CompareTensors(actual, e, *tol, CompareOptions{.worst_k = 5});
  ASSERT_TRUE(c.ok()) << what << ": " << c.status().ToString();
  if (c->passed()) return;
  std::ostringstream text;
  PrintComparison(what, actual.Describe(), *c, text);
  ADD_FAILURE() << text.str();
}

// Runs the op on cpu; checks output `out`'s shape and every element.
inline void ExpectOutput(const std::string& op, const std::vector<Tensor>& in, Attrs attrs, const Shape& shape,
                         const std::vector<double>& expected, int out = 0, int num_outputs = -1) {
  auto r = RunCpu(op, in, attrs, num_outputs);
  ASSERT_TRUE(r.ok()) << op << ": " << r.status().ToString();
  ASSERT_GT(static_cast<int>(r->outputs.size()), out);
  const Tensor& y = r->outputs[out];
  EXPECT_EQ(y.shape(), shape) << op << " output " << out << " shape " << y.shape().ToString();
  ExpectTensor(y, expected, op + " output " + std::to_string(out));
}

// Runs the op on cpu; checks every element of output 0.
inline void ExpectValues(const std::string& op, const std::vector<Tensor>& in, const std::vector<double>& expected,
                         Attrs attrs = {}, ToleranceSpec tolerance = {}) {
  auto r = RunCpu(op, in, attrs);
  ASSERT_TRUE(r.ok()) << op << ": " << r.status().ToString();
  ExpectTensor(r->outputs[0], expected, op, tolerance);
}

// Expects the call to fail with a message holding every one of `parts`.
inline void ExpectError(const StatusOr<OpRun>& r, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok()) << "expected an error holding '" << parts.at(0) << "'";
  for (const std::string& p : parts) {
    EXPECT_NE(r.status().message().find(p), std::string::npos) << r.status().message() << "\n  lacks: " << p;
  }
}

inline void ExpectError(const std::string& op, const std::vector<Tensor>& in, Attrs attrs,
                        const std::vector<std::string>& parts, int num_outputs = -1) {
  ExpectError(RunCpu(op, in, std::move(attrs), num_outputs), parts);
}

}  // namespace opscope::op_test
