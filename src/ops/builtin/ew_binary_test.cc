#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/builtin/ew_vecmath.h"
#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;

TEST(EwBinary, HandCheckedArithmeticWithBroadcasting) {
  Tensor a = Make(DType::kF32, Shape({2, 3}), {1, 2, 3, 4, 5, 6});
  Tensor b = Make(DType::kF32, Shape({3}), {10, 20, 30});
  ExpectValues("Add", {a, b}, {11, 22, 33, 14, 25, 36});
  ExpectValues("Sub", {a, b}, {-9, -18, -27, -6, -15, -24});
  ExpectValues("Mul", {a, b}, {10, 40, 90, 40, 100, 180});
  ExpectValues("Div", {b, a}, {10, 10, 10, 2.5, 4, 5});
  Tensor col = Make(DType::kF32, Shape({2, 1}), {1, 2});
  Tensor row = Make(DType::kF32, Shape({1, 3}), {0, 10, 20});
  ExpectValues("Add", {col, row}, {1, 11, 21, 2, 12, 22});  // both sides broadcast
  Tensor s = Make(DType::kF32, Shape(), {2});
  ExpectValues("Sub", {s, a}, {1, 0, -1, -2, -3, -4});  // scalar on the left
}

TEST(EwBinary, IntegerDivTruncatesAndArithmeticWraps) {
  Tensor a = Make(DType::kI32, Shape({5}), {7, -7, 7, -7, 5});
  Tensor b = Make(DType::kI32, Shape({5}), {2, 2, -2, -2, 0});
  ExpectValues("Div", {a, b}, {3, -3, -3, 3, 0});
  Tensor u = Make(DType::kU8, Shape({3}), {16, 6, 0});
  Tensor v = Make(DType::kU8, Shape({3}), {11, 5, 23});
  ExpectValues("Div", {u, v}, {1, 1, 0});  // ONNX test_div_uint8
  Tensor x = Make(DType::kI8, Shape({2}), {100, -100});
  ExpectValues("Add", {x, x}, {-56, 56});  // numpy wraps int8
  ExpectValues("Mul", {x, x}, {16, 16});
  Tensor big = Make(DType::kI32, Shape({2}), {2147483647, -2147483647 - 1.0});
  Tensor one = Make(DType::kI32, Shape({2}), {1, -1});
  ExpectValues("Add", {big, one}, {-2147483648.0, 2147483647});
  ExpectValues("Div", {big, one}, {2147483647, -2147483648.0});  // MIN / -1 wraps
  ExpectValues("Mul", {Make(DType::kI16, Shape({1}), {-32768}), Make(DType::kI16, Shape({1}), {-32768})}, {0});
}

TEST(EwBinary, PowTakesMixedTypes) {
  Tensor x = Make(DType::kF32, Shape({3}), {1, 2, 3});
  Tensor y = Make(DType::kI64, Shape({3}), {4, 5, 6});
  ExpectValues("Pow", {x, y}, {1, 32, 729});
  Tensor xi = Make(DType::kI32, Shape({3}), {1, 2, 3});
  Tensor yf = Make(DType::kF32, Shape({3}), {4, 5, 6});
  auto r = op_test::RunCpu("Pow", {xi, yf});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->outputs[0].dtype(), DType::kI32);
  ExpectValues("Pow", {xi, yf}, {1, 32, 729});
  ExpectValues("Pow", {Make(DType::kF64, Shape({2}), {4, 2}), Make(DType::kF64, Shape(), {0.5})}, {2, std::sqrt(2.0)});
}

// float32 Pow's span path (SLEEF's powf, and x * x for an exponent of 2)
// against double pow on C99's special values, for one exponent and for one
// per element, at lengths around the eight lanes.
TEST(EwBinary, PowFloat32SpansKeepPowsSpecialCases) {
  const float inf = INFINITY, nan = NAN;
  const std::vector<double> bases = {-inf, inf, nan, 0, -0.0, -2, -1, 0.5, 1, 2, 1e-40, 3.5, -1e30, 7};
  for (double e : {2.0, 0.5, -1.0, 3.0, -3.0, 0.0, 1.5, -0.5, static_cast<double>(nan), static_cast<double>(inf),
                   -static_cast<double>(inf)}) {
    for (bool per_element : {false, true}) {
      const Shape shape({static_cast<int64_t>(bases.size())});
      Tensor x = Make(DType::kF32, shape, bases);
      Tensor y = per_element ? Make(DType::kF32, shape, std::vector<double>(bases.size(), e))
                             : Make(DType::kF32, Shape(), {e});
      auto r = op_test::RunCpu("Pow", {x, y});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const float* z = r->outputs[0].data<float>();
      for (size_t i = 0; i < bases.size(); ++i) {
        double want = std::pow(static_cast<double>(static_cast<float>(bases[i])), e);
        if (std::fabs(want) > std::numeric_limits<float>::max()) want = std::copysign(INFINITY, want);  // overflows float
        SCOPED_TRACE("pow(" + std::to_string(bases[i]) + ", " + std::to_string(e) + ")" +
                     (per_element ? " per element" : " one exponent"));
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(z[i])) << z[i];
        } else {
          EXPECT_LE(ew::FloatUlps(z[i], want), 1) << z[i] << " vs " << want;
          EXPECT_EQ(std::signbit(z[i]), std::signbit(want)) << z[i] << " vs " << want;
        }
      }
    }
  }
}

// One whole exponent up to 8 in magnitude (products in double) and 1/2
// (sqrt): within kPowMaxUlps of double pow over bases from 1e-5 to 1e4 in
// magnitude, both signs, where x^8 and x^-8 still are normal floats.
TEST(EwBinary, PowOfOneSmallWholeOrHalfExponentWithinItsUlps) {
  std::vector<double> bases;
  for (int i = 0; i < 2000; ++i) {
    const double v = std::pow(10.0, -4.5 + 8.5 * i / 2000.0);
    bases.push_back(static_cast<float>(i % 3 == 0 ? -v : v));
  }
  const Shape shape({static_cast<int64_t>(bases.size())});
  for (double e : {-8.0, -5.0, -2.0, -1.0, 1.0, 3.0, 4.0, 7.0, 8.0, 0.5}) {
    auto r = op_test::RunCpu("Pow", {Make(DType::kF32, shape, bases), Make(DType::kF32, Shape(), {e})});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const float* z = r->outputs[0].data<float>();
    double worst = 0;
    for (size_t i = 0; i < bases.size(); ++i) {
      const double want = std::pow(bases[i], e);
      if (std::isnan(want) || std::fabs(want) > std::numeric_limits<float>::max() ||
          std::fabs(want) < std::numeric_limits<float>::min()) {
        continue;  // NaN (negative ^ 1/2) and results past float's normal range: the special-cases test
      }
      worst = std::max(worst, ew::FloatUlps(z[i], want));
    }
    EXPECT_LE(worst, ew::kPowMaxUlps) << "x^" << e;
  }
}

TEST(EwBinary, PReluComparisonsAndAnd) {
  Tensor x = Make(DType::kF32, Shape({2, 3}), {-1, -2, 3, -4, 5, -6});
  Tensor slope = Make(DType::kF32, Shape({3}), {0.5, 0.25, 2});
  ExpectValues("PRelu", {x, slope}, {-0.5, -0.5, 3, -2, 5, -12});
  Tensor a = Make(DType::kI64, Shape({4}), {1, 2, 3, 4});
  Tensor b = Make(DType::kI64, Shape({4}), {4, 2, 2, 4});
  ExpectValues("Equal", {a, b}, {0, 1, 0, 1});
  ExpectValues("Less", {a, b}, {1, 0, 0, 0});
  ExpectValues("Greater", {a, b}, {0, 0, 1, 0});
  auto r = op_test::RunCpu("Less", {a, b});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outputs[0].dtype(), DType::kBool);
  const double nan = std::nan("");
  Tensor f = Make(DType::kF16, Shape({2}), {nan, 1});
  ExpectValues("Equal", {f, f}, {0, 1});
  Tensor p = Make(DType::kBool, Shape({2, 2}), {0, 0, 1, 1});
  Tensor q = Make(DType::kBool, Shape({2}), {0, 1});
  ExpectValues("And", {p, q}, {0, 0, 0, 1});
  ExpectValues("Equal", {p, q}, {1, 0, 0, 1});
}

// Shape pairs that take each kernel path: equal, scalars, trailing vector,
// channel broadcast, both sides broadcasting, and empty.
const std::vector<std::pair<Shape, Shape>>& ShapePairs() {
  static const std::vector<std::pair<Shape, Shape>> kPairs = {
      {Shape({4, 33}), Shape({4, 33})}, {Shape({4, 33}), Shape()},        {Shape({1}), Shape({5, 7})},
      {Shape({3, 5, 7}), Shape({7})},   {Shape({2, 3, 4, 5}), Shape({3, 1, 1})},
      {Shape({4, 1, 5}), Shape({1, 3, 1})}, {Shape({2, 1, 6}), Shape({2, 5, 1})}, {Shape({0, 3}), Shape({3})},
  };
  return kPairs;
}

TEST(EwBinary, KernelMatchesReferenceOnEveryBroadcastPathAndFloatDtype) {
  uint64_t seed = 100;
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "Greater"}) {
    for (DType dt : op_test::kFloatTypes) {
      for (const auto& [sa, sb] : ShapePairs()) {
        SCOPED_TRACE(std::string(op) + " " + DTypeName(dt) + " " + sa.ToString() + " " + sb.ToString());
        double lo = std::string(op) == "Pow" ? 0.1 : -3;
        Tensor a = Random(dt, sa, seed++, lo, 3);
        Tensor b = Random(dt, sb, seed++, std::string(op) == "Div" ? 0.5 : lo, 3);
        ExpectMatchesReference(op, {a, b});
      }
    }
  }
  for (DType dt : op_test::kFloatTypes) {
    ExpectMatchesReference("PRelu", {Random(dt, Shape({2, 3, 4}), seed++), Random(dt, Shape({3, 1}), seed++)});
  }
}

TEST(EwBinary, KernelMatchesReferenceForIntegersAndStridedViews) {
  uint64_t seed = 300;
  for (DType dt : {DType::kI64, DType::kI32, DType::kI16, DType::kI8, DType::kU8}) {
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Less"}) {
      SCOPED_TRACE(std::string(op) + " " + DTypeName(dt));
      ExpectMatchesReference(op, {Random(dt, Shape({3, 17}), seed++, -100, 100), Random(dt, Shape({17}), seed++, -9, 9)});
    }
  }
  Tensor base = Random(DType::kF32, Shape({5, 6}), 7);
  auto t = base.Permute({1, 0});
  ASSERT_TRUE(t.ok());
  auto s = base.Slice(1, 1, 4);
  ASSERT_TRUE(s.ok());
  ExpectMatchesReference("Add", {*t, Random(DType::kF32, Shape({6, 5}), 8)});
  ExpectMatchesReference("Mul", {*s, Random(DType::kF32, Shape({3}), 9)});
  ExpectMatchesReference("Pow", {Random(DType::kF16, Shape({4, 4}), 10, 0.5, 2), Random(DType::kI32, Shape({4}), 11, -3, 3)});
}

TEST(EwBinary, BadInputsNameTheProblem) {
  Tensor a = Make(DType::kF32, Shape({2, 3}), {1, 2, 3, 4, 5, 6});
  Tensor b = Make(DType::kF32, Shape({4}), {1, 2, 3, 4});
  std::string e = ErrorOf(op_test::RunCpu("Add", {a, b}));
  EXPECT_NE(e.find("Add"), std::string::npos) << e;
  EXPECT_NE(e.find("[4]"), std::string::npos) << e;
  EXPECT_NE(e.find("[2,3]"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("Mul", {a, Make(DType::kF64, Shape({3}), {1, 2, 3})}));
  EXPECT_NE(e.find("float64"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("PRelu", {Make(DType::kF32, Shape({3}), {1, 2, 3}), a}));
  EXPECT_NE(e.find("slope of shape [2,3] does not broadcast to X of shape [3]"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("And", {a, a}));
  EXPECT_NE(e.find("dtype float32"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("Pow", {Make(DType::kU8, Shape({1}), {2}), a}));
  EXPECT_NE(e.find("dtype uint8"), std::string::npos) << e;
}

}  // namespace
}  // namespace opscope
