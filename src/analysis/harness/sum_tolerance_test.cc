// The default tolerance of long sums of products: how far it is raised, for
// which ops and dtypes, that a given tolerance is left alone, and that a
// lost term still fails.
#include "analysis/harness/sum_tolerance.h"

#include <gtest/gtest.h>

#include <cmath>

#include "opscope/fill.h"
#include "opscope/harness.h"

namespace opscope {
namespace {

Tensor Filled(DType dtype, const Shape& shape, uint64_t seed, double value = 0) {
  Tensor t = *Tensor::Empty(dtype, shape);
  if (value != 0) {
    for (int64_t i = 0; i < t.numel(); ++i) t.FlatSetFromDouble(i, i % 2 ? value : -value);
  } else {
    EXPECT_TRUE(Fill(t, {.kind = FillKind::kNormal, .seed = seed}).ok());
  }
  return t;
}

const OpSchema& Op(const char* name) { return **OpRegistry::Global().Lookup(name); }

Attrs Parsed(const char* op, const std::string& text) { return *Op(op).ParseAttrs(text); }

// With every |element| of A 0.5 and of B 0.25, the floor is exactly
// 2 sqrt(K) 2^-24 K / 8 for a K-term sum.
double Floor(double k) { return 2 * std::sqrt(k) * std::ldexp(1.0, -24) * k * 0.125; }

TEST(SumTolerance, TheFloorGrowsWithEachOpsSumLength) {
  const Tolerance f32 = DefaultTolerance(DType::kF32);
  struct Case {
    const char* op;
    Shape a, b;
    const char* attrs;
    double k;
  };
  const Case cases[] = {
      {"Conv", Shape({1, 64, 8, 8}), Shape({8, 64, 3, 3}), "pads=[1,1,1,1]", 576},
      {"Conv", Shape({1, 64, 8, 8}), Shape({8, 32, 3, 3}), "group=2", 288},
      {"FusedConv", Shape({1, 512, 7, 7}), Shape({4, 512, 3, 3}), "", 4608},
      {"ConvTranspose", Shape({1, 64, 4, 4}), Shape({64, 4, 2, 2}), "group=2", 128},
      {"Gemm", Shape({3, 700}), Shape({700, 5}), "", 700},
      {"Gemm", Shape({700, 3}), Shape({5, 700}), "transA=1,transB=1", 700},
      {"MatMul", Shape({2, 4, 300}), Shape({300, 6}), "", 300},
      {"FusedMatMul", Shape({4, 1024}), Shape({1024, 6}), "", 1024},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + (" " + c.a.ToString()));
    std::vector<Tensor> in = {Filled(DType::kF32, c.a, 1, 0.5), Filled(DType::kF32, c.b, 2, 0.25)};
    auto sum = SumRoundingTolerance(Op(c.op), in, Parsed(c.op, c.attrs), DType::kF32, f32);
    ASSERT_TRUE(sum.has_value());
    EXPECT_NEAR(sum->atol, Floor(c.k), 1e-12 * Floor(c.k));
    EXPECT_NE(sum->note.find(std::to_string(static_cast<int>(c.k)) + "-term"), std::string::npos) << sum->note;
  }
}

TEST(SumTolerance, NotForOtherOpsIntegersExactRulesOrAHigherFloor) {
  std::vector<Tensor> in = {Filled(DType::kF32, Shape({4, 600}), 1, 0.5), Filled(DType::kF32, Shape({600, 4}), 2, 0.25)};
  const Tolerance f32 = DefaultTolerance(DType::kF32);
  EXPECT_FALSE(SumRoundingTolerance(Op("Add"), {in[0], in[0]}, {}, DType::kF32, f32));
  EXPECT_FALSE(SumRoundingTolerance(Op("MatMul"), in, {}, DType::kI32, DefaultTolerance(DType::kI32)));
  Tolerance ulp = f32;
  ulp.rule = CompareRule::kUlp;
  EXPECT_FALSE(SumRoundingTolerance(Op("MatMul"), in, {}, DType::kF32, ulp));
  Tolerance loose = f32;
  loose.atol = 1;
  EXPECT_FALSE(SumRoundingTolerance(Op("MatMul"), in, {}, DType::kF32, loose));
  // A one-term "sum" rounds once, as the defaults allow.
  EXPECT_FALSE(SumRoundingTolerance(Op("MatMul"), {Filled(DType::kF32, Shape({4, 1}), 1, 0.5),
                                                  Filled(DType::kF32, Shape({1, 4}), 2, 0.5)},
                                    {}, DType::kF32, f32));
  // float64 sums in double, u = 2^-53: past float64's default floor (1e-12)
  // only from a few thousand terms on.
  auto f64 = [](int64_t k) {
    return std::vector<Tensor>{Filled(DType::kF64, Shape({4, k}), 1, 0.5), Filled(DType::kF64, Shape({k, 4}), 2, 0.25)};
  };
  EXPECT_FALSE(SumRoundingTolerance(Op("MatMul"), f64(600), {}, DType::kF64, DefaultTolerance(DType::kF64)));
  auto d = SumRoundingTolerance(Op("MatMul"), f64(4000), {}, DType::kF64, DefaultTolerance(DType::kF64));
  ASSERT_TRUE(d.has_value());
  EXPECT_NEAR(d->atol, Floor(4000) * std::ldexp(1.0, -29), 1e-24);
}

// The harness raises the floor only where no tolerance was given, and says so.
TEST(SumTolerance, TheHarnessRaisesTheDefaultOnlyAndSaysSo) {
  std::vector<Tensor> in = {Filled(DType::kF32, Shape({1, 64, 8, 8}), 3), Filled(DType::kF32, Shape({8, 64, 3, 3}), 4)};
  auto raised = RunOpInstance({.op = "Conv", .input_tensors = in, .attr_values = Parsed("Conv", "pads=[1,1,1,1]")});
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  ASSERT_EQ(raised->outputs.size(), 1u);
  EXPECT_TRUE(raised->passed());
  EXPECT_GT(raised->outputs[0].compare.tolerance.atol, 1e-4);
  EXPECT_NE(raised->outputs[0].tolerance_note.find("576-term"), std::string::npos);

  ToleranceSpec given;
  given.atol = 1e-5;
  auto kept = RunOpInstance(
      {.op = "Conv", .input_tensors = in, .attr_values = Parsed("Conv", "pads=[1,1,1,1]"), .tolerance = given});
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->outputs[0].compare.tolerance.atol, 1e-5);
  EXPECT_TRUE(kept->outputs[0].tolerance_note.empty());
}

// A term lost (or read from the wrong place) is off by about one term's
// magnitude: far above the raised floor, even at resnet's longest sum.
TEST(SumTolerance, ALostTermStillFails) {
  for (const double k : {576.0, 4608.0}) {
    SCOPED_TRACE(k);
    const int64_t c = static_cast<int64_t>(k) / 9;
    std::vector<Tensor> in = {Filled(DType::kF32, Shape({1, c, 3, 3}), 5), Filled(DType::kF32, Shape({2, c, 3, 3}), 6)};
    const Attrs attrs = Parsed("Conv", "");
    auto sum = SumRoundingTolerance(Op("Conv"), in, attrs, DType::kF32, DefaultTolerance(DType::kF32));
    ASSERT_TRUE(sum.has_value());
    // Normal data: mean|x| = mean|w| = sqrt(2 / pi), a term's mean magnitude 2 / pi.
    const double term = 2 / M_PI;
    Tolerance t = DefaultTolerance(DType::kF32);
    t.atol = sum->atol;
    EXPECT_FALSE(PairPasses(t, DType::kF32, 10 + term, 10));
    EXPECT_FALSE(PairPasses(t, DType::kF32, term / 4, 0));
    EXPECT_TRUE(PairPasses(t, DType::kF32, 1e-5 * std::sqrt(k), 0));
  }
}

}  // namespace
}  // namespace opscope
