// Determinism checks, input regions by perturbation, cropping to a minimal
// reproducer, and tracepoint summaries.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/harness/determinism.h"
#include "analysis/harness/input_region.h"
#include "analysis/harness/minimal_repro.h"
#include "opscope/trace.h"

namespace opscope {
namespace {

Tensor Iota(DType dtype, Shape shape) {
  Tensor t = *Tensor::Empty(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.FlatSetFromDouble(i, static_cast<double>(i % 97) - 40);
  return t;
}

TEST(Determinism, IdenticalRepeatsHaveNoDifferences) {
  Tensor y = Iota(DType::kF32, Shape({4, 8}));
  DeterminismCheck check({*y.Clone()}, {"y"});
  check.AddRepeat({*y.Clone()});
  check.AddRepeat({*y.Clone()});
  EXPECT_EQ(check.repeats(), 2);
  EXPECT_TRUE(check.Differences().empty());
}

TEST(Determinism, OneFlippedBitIsFoundWithItsPlace) {
  Tensor y = Iota(DType::kF32, Shape({4, 8}));
  DeterminismCheck check({*y.Clone()}, {"y"});
  check.AddRepeat({*y.Clone()});
  Tensor other = *y.Clone();
  float* p = other.data<float>();
  p[2 * 8 + 5] = std::nextafter(p[2 * 8 + 5], 1e9f);  // one ulp
  check.AddRepeat({other});
  auto d = check.Differences();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].name, "y");
  EXPECT_EQ(d[0].runs, 2);
  EXPECT_EQ(d[0].runs_differing, 1);
  EXPECT_EQ(d[0].first_differing_run, 2);
  EXPECT_EQ(d[0].elements_differing, 1);
  EXPECT_EQ(d[0].first_coords, (std::vector<int64_t>{2, 5}));
  EXPECT_GT(d[0].max_abs_diff, 0);
}

// y[i,j] = x[i,j-1] + x[i,j] + x[i,j+1] (zero outside) + b[j]: a 3-wide window
// along the last dim of x, and one element of b.
StatusOr<Tensor> WindowSum(const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const Tensor& b = in[1];
  OPSCOPE_ASSIGN_OR_RETURN(Tensor y, Tensor::Empty(DType::kF64, x.shape()));
  const int64_t rows = x.dim(0), cols = x.dim(1);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double s = b.FlatGetAsDouble(j);
      for (int64_t k = j - 1; k <= j + 1; ++k) s += k >= 0 && k < cols ? x.FlatGetAsDouble(i * cols + k) : 0;
      y.FlatSetFromDouble(i * cols + j, s);
    }
  }
  return y;
}

TEST(InputRegion, PerturbationFindsTheWindowAndTheBiasElement) {
  std::vector<Tensor> in = {Iota(DType::kF32, Shape({6, 20})), Iota(DType::kF32, Shape({20}))};
  auto r = FindRegionByPerturbation(in, {4, 9}, WindowSum, {false, false});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "perturbation");
  EXPECT_EQ(r->boxes[0].ToString(), "[4,8:11]");
  EXPECT_EQ(r->boxes[1].ToString(), "[9]");
  EXPECT_EQ(DescribeRegion({"x", "b"}, *r), "x[4,8:11]  b[9]");
  // At the border the window is clamped; the probes stay logarithmic.
  auto edge = FindRegionByPerturbation(in, {0, 0}, WindowSum, {false, false});
  ASSERT_TRUE(edge.ok());
  EXPECT_EQ(edge->boxes[0].ToString(), "[0,0:2]");
  EXPECT_LT(edge->probes, 40);
}

TEST(InputRegion, AnInputTheElementDoesNotReadIsEmpty) {
  std::vector<Tensor> in = {Iota(DType::kF32, Shape({4})), Iota(DType::kF32, Shape({4}))};
  auto first_only = [](const std::vector<Tensor>& v) -> StatusOr<Tensor> { return v[0].Clone(); };
  auto r = FindRegionByPerturbation(in, {2}, first_only, {false, false});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->boxes[0].ToString(), "[2]");
  EXPECT_TRUE(r->boxes[1].empty());
  EXPECT_EQ(DescribeRegion({"a", "b"}, *r), "a[2]");
}

TEST(InputRegion, CropCopiesTheBox) {
  Tensor x = Iota(DType::kF32, Shape({3, 4, 5}));
  auto c = CropTensor(x, IndexBox{{1, 0, 2}, {3, 2, 5}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->shape(), Shape({2, 2, 3}));
  EXPECT_EQ(c->FlatGetAsDouble(0), x.FlatGetAsDouble((1 * 4 + 0) * 5 + 2));
  EXPECT_EQ(c->FlatGetAsDouble(11), x.FlatGetAsDouble((2 * 4 + 1) * 5 + 4));
}

TEST(MinimalRepro, CropsToTheRegionWhenTheFailureSurvives) {
  Tensor x = *Tensor::Empty(DType::kF32, Shape({64, 64}));
  for (int64_t i = 0; i < x.numel(); ++i) x.FlatSetFromDouble(i, 1);
  x.FlatSetFromDouble(10 * 64 + 20, 42);  // the "bad" value
  InputRegion region{.boxes = {IndexBox{{9, 19}, {12, 22}}}, .method = "perturbation"};
  int calls = 0;
  auto fails = [&](const std::vector<Tensor>& in) -> StatusOr<bool> {
    ++calls;
    for (int64_t i = 0; i < in[0].numel(); ++i) {
      if (in[0].FlatGetAsDouble(i) == 42) return true;
    }
    return false;
  };
  MinimalRepro r = MinimizeInputs({x}, region, fails);
  ASSERT_TRUE(r.found) << r.note;
  EXPECT_EQ(r.inputs[0].shape(), Shape({3, 3}));
  EXPECT_EQ(r.inputs[0].FlatGetAsDouble(4), 42);
  EXPECT_DOUBLE_EQ(r.Ratio(), 64.0 * 64 / 9);
  EXPECT_EQ(r.attempts, 1);
}

TEST(MinimalRepro, CoupledDimsAreCroppedTogetherAndAFailureThatVanishesIsSaid) {
  // x[R,C] and w[C] must agree on C: cropping x's C alone is refused.
  std::vector<Tensor> in = {Iota(DType::kF32, Shape({32, 16})), Iota(DType::kF32, Shape({16}))};
  InputRegion region{.boxes = {IndexBox{{5, 3}, {6, 4}}, IndexBox{{0}, {16}}}, .method = "perturbation"};
  auto fails = [](const std::vector<Tensor>& v) -> StatusOr<bool> {
    if (v[0].dim(1) != v[1].dim(0)) return InvalidArgumentError("C differs");
    return v[0].dim(0) <= 32;  // fails on any crop that keeps the op valid
  };
  MinimalRepro r = MinimizeInputs(in, region, fails);
  ASSERT_TRUE(r.found) << r.note;
  EXPECT_EQ(r.inputs[0].shape(), Shape({1, 1}));
  EXPECT_EQ(r.inputs[1].shape(), Shape({1}));

  auto never = [](const std::vector<Tensor>& v) -> StatusOr<bool> {
    return v[0].dim(0) == 32 && v[0].dim(1) == 16 && v[1].dim(0) == 16;
  };
  MinimalRepro none = MinimizeInputs(in, region, never);
  EXPECT_FALSE(none.found);
  EXPECT_NE(none.note.find("does not survive cropping"), std::string::npos) << none.note;
}

TEST(MinimalRepro, WithNoRegionToCropToEachDimIsHalvedWhileItStillFails) {
  // The failure needs row 27 of x[32,16] (and w sized by x's columns); the region is all of it.
  Tensor x = *Tensor::Empty(DType::kF32, Shape({32, 16}));
  for (int64_t i = 0; i < x.numel(); ++i) x.FlatSetFromDouble(i, static_cast<double>(i));
  std::vector<Tensor> in = {x, Iota(DType::kF32, Shape({16}))};
  InputRegion region{.boxes = {IndexBox{{0, 0}, {32, 16}}, IndexBox{{0}, {16}}}, .method = "perturbation"};
  auto fails = [](const std::vector<Tensor>& v) -> StatusOr<bool> {
    if (v[0].dim(1) != v[1].dim(0)) return InvalidArgumentError("C differs");
    for (int64_t r = 0; r < v[0].dim(0); ++r) {
      if (v[0].FlatGetAsDouble(r * v[0].dim(1)) == 27 * 16) return true;  // row 27's first element
    }
    return false;
  };
  MinimalRepro r = MinimizeInputs(in, region, fails);
  ASSERT_TRUE(r.found) << r.note;
  EXPECT_EQ(r.inputs[0].shape(), Shape({1, 1}));
  EXPECT_EQ(r.inputs[0].FlatGetAsDouble(0), 27 * 16);
  EXPECT_EQ(r.inputs[1].shape(), Shape({1}));
}

TEST(Tracepoints, SummaryCountsNonFiniteValuesApart) {
  Tensor t = *Tensor::Empty(DType::kF32, Shape({2, 3}));
  const double v[] = {1, -2, NAN, INFINITY, 4, 0.5};
  for (int i = 0; i < 6; ++i) t.FlatSetFromDouble(i, v[i]);
  TracepointHit h = SummarizeTensor("energy", t);
  EXPECT_EQ(h.name, "energy");
  EXPECT_EQ(h.count, 6);
  EXPECT_EQ(h.nan_count, 1);
  EXPECT_EQ(h.inf_count, 1);
  EXPECT_EQ(h.min, -2);
  EXPECT_EQ(h.max, 4);
  EXPECT_DOUBLE_EQ(h.mean, 3.5 / 4);
  EXPECT_EQ(h.first.size(), 6u);
}

}  // namespace
}  // namespace opscope
