// Reductions, ArgMax and TopK: hand-checked cases, kernel vs reference on
// random data of every float dtype (and exact integer cases), bad inputs.
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;  // NOLINT: test helpers

using I = int64_t;
const double kNaN = std::nan("");

TEST(ReduceSum, AxesInputKeepdimsAndNoop) {
  Tensor x = F32(Shape({2, 3}), {1, 2, 3, 4, 5, 6});
  ExpectOutput("ReduceSum", {x, I64s({1})}, {}, Shape({2, 1}), {6, 15});
  ExpectOutput("ReduceSum", {x, I64s({-2})}, A({{"keepdims", I{0}}}), Shape({3}), {5, 7, 9});
  ExpectOutput("ReduceSum", {x}, {}, Shape({1, 1}), {21});
  ExpectOutput("ReduceSum", {x, I64s({})}, {}, Shape({1, 1}), {21});
  ExpectOutput("ReduceSum", {x, I64s({})}, A({{"noop_with_empty_axes", I{1}}}), Shape({2, 3}), {1, 2, 3, 4, 5, 6});
  // Summing over an empty dim gives zeros.
  ExpectOutput("ReduceSum", {F32(Shape({2, 0}), {}), I64s({1})}, {}, Shape({2, 1}), {0, 0});
}

TEST(ReduceMeanMax, HandChecked) {
  Tensor x = F32(Shape({2, 3}), {1, 2, 3, 4, 5, 9});
  ExpectOutput("ReduceMean", {x}, A({{"axes", std::vector<I>{1}}}), Shape({2, 1}), {2, 6});
  ExpectOutput("ReduceMean", {x}, A({{"keepdims", I{0}}}), Shape(), {4});
  // Integer means truncate toward zero, as numpy's mean cast back to the dtype.
  ExpectOutput("ReduceMean", {Make(DType::kI32, Shape({2, 2}), {1, 2, -3, -4})}, A({{"axes", std::vector<I>{1}}}),
               Shape({2, 1}), {1, -3});
  ExpectOutput("ReduceMax", {x}, A({{"axes", std::vector<I>{0}}}), Shape({1, 3}), {4, 5, 9});
  ExpectOutput("ReduceMax", {F32(Shape({2, 2}), {1, kNaN, 3, 2})}, A({{"axes", std::vector<I>{1}}}), Shape({2, 1}),
               {kNaN, 3});
  ExpectOutput("ReduceMax", {Make(DType::kI8, Shape({3}), {-5, -128, -7})}, {}, Shape({1}), {-5});
}

class ReduceFloat : public ::testing::TestWithParam<DType> {};

TEST_P(ReduceFloat, KernelsMatchReference) {
  const DType dt = GetParam();
  Tensor x = Random(dt, Shape({4, 5, 6}), 21);
  const std::vector<std::vector<I>> axes_sets = {{}, {0}, {1}, {2}, {0, 2}, {-1, 0}, {1, 2}, {0, 1, 2}};
  for (const auto& axes : axes_sets) {
    for (I keep : {0, 1}) {
      SCOPED_TRACE("axes " + std::to_string(axes.size()) + " keepdims " + std::to_string(keep));
      ExpectMatchesReference("ReduceSum", {x, I64s(axes)}, A({{"keepdims", keep}}));
      ExpectMatchesReference("ReduceMean", {x}, A({{"axes", axes}, {"keepdims", keep}}));
      ExpectMatchesReference("ReduceMax", {x}, A({{"axes", axes}, {"keepdims", keep}}), -1, Within(0));
    }
  }
  for (I axis : {0, 1, -1}) {
    ExpectMatchesReference("ArgMax", {x}, A({{"axis", axis}}));
    ExpectMatchesReference("ArgMax", {x}, A({{"axis", axis}, {"select_last_index", I{1}}, {"keepdims", I{0}}}));
    if (dt != DType::kBF16) {
      ExpectMatchesReference("TopK", {x, I64s({3})}, A({{"axis", axis}}), 2, Within(0));
      ExpectMatchesReference("TopK", {x, I64s({2})}, A({{"axis", axis}, {"largest", I{0}}}), 2, Within(0));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Floats, ReduceFloat, ::testing::ValuesIn(FloatDTypes()),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

TEST(ReduceInteger, ExactAgainstReference) {
  for (DType dt : {DType::kI64, DType::kI32}) {
    Tensor x = Random(dt, Shape({3, 4, 5}), 8, -1000, 1000);
    ExpectMatchesReference("ReduceSum", {x, I64s({0, 2})}, Attrs(), -1, Within(0));
    ExpectMatchesReference("ReduceMean", {x}, A({{"axes", std::vector<I>{1}}}), -1, Within(0));
    ExpectMatchesReference("ReduceMax", {x}, A({{"axes", std::vector<I>{2, 0}}}), -1, Within(0));
  }
  // A small-range integer input has many ties: ArgMax/TopK must pick by index.
  Tensor t = Random(DType::kU8, Shape({5, 7}), 4, 0, 3);
  ExpectMatchesReference("ArgMax", {t}, A({{"axis", I{1}}}), -1, Within(0));
  ExpectMatchesReference("ArgMax", {t}, A({{"axis", I{1}}, {"select_last_index", I{1}}}), -1, Within(0));
  ExpectMatchesReference("TopK", {t, I64s({4})}, Attrs(), 2, Within(0));
}

TEST(ReduceLargeSum, ManyTermsStayAccurate) {
  // 1e6 terms of 0.1 in f32: a float accumulator drifts by ~1e-3 relative; ours must not.
  Tensor x = Make(DType::kF32, Shape({1000000}), std::vector<double>(1000000, 0.1));
  auto r = RunCpu("ReduceSum", {x});
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->outputs[0].FlatGetAsDouble(0), 100000.0, 100000.0 * 1e-6);
}

// The blocks are cut by the inputs they read ("block_inputs"): a mean over
// each of 256 planes of 3136 runs in blocks of 10 planes at the default, not
// in one block on one thread as when cut at 4096 outputs; a mean down 512
// rows in runs of 768 columns. Every cut gives the same bits.
TEST(ReduceBlocks, AreCutByTheInputsTheyReadAndEveryCutGivesTheSameBits) {
  struct Case {
    Shape shape;
    std::vector<I> axes;
    int64_t outputs, each_reads;
  };
  const Case cases[] = {{Shape({1, 256, 56, 56}), {2, 3}, 256, 3136}, {Shape({8, 512, 768}), {1}, 8 * 768, 512}};
  for (const Case& c : cases) {
    const Tensor x = Random(DType::kF32, c.shape, 9);
    std::vector<Tensor> outs;
    for (int64_t inputs : {int64_t{32768}, int64_t{8192}, int64_t{131072}, int64_t{1} << 30}) {
      auto r = RunCpu("ReduceMean", {x}, A({{"axes", c.axes}}), -1, {{"block_inputs", inputs}});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_EQ(r->launches.size(), 1u);
      int64_t block = std::max<int64_t>(1, inputs / c.each_reads);
      if (c.outputs != 256) block = std::max<int64_t>(block, 768);  // a run of columns: at least a row's 768
      EXPECT_EQ(r->launches[0].config.grid.x, (c.outputs + block - 1) / block) << c.shape.ToString() << " " << inputs;
      outs.push_back(r->outputs[0]);
    }
    for (size_t i = 1; i < outs.size(); ++i) {
      ASSERT_EQ(outs[i].numel(), outs[0].numel());
      EXPECT_EQ(std::memcmp(outs[i].data<float>(), outs[0].data<float>(), outs[0].numel() * sizeof(float)), 0)
          << c.shape.ToString() << ": cut " << i << " changed the bits";
    }
  }
}

// ArgMax cuts its outputs the same way: 64 rows of 5000 in blocks of 6
// rows, not one block; 512 rows down [4,512,768] in runs of 768 columns;
// the same indices for every cut.
TEST(ArgMaxBlocks, AreCutByTheInputsTheyReadAndEveryCutGivesTheSameIndices) {
  struct Case {
    Shape shape;
    int64_t axis, outputs, each_reads;
  };
  const Case cases[] = {{Shape({64, 5000}), 1, 64, 5000}, {Shape({4, 512, 768}), 1, 4 * 768, 512}};
  for (const Case& c : cases) {
    const Tensor x = Random(DType::kF32, c.shape, 11);
    std::vector<Tensor> outs;
    for (int64_t inputs : {int64_t{32768}, int64_t{8192}, int64_t{1} << 30}) {
      auto r = RunCpu("ArgMax", {x}, A({{"axis", I{c.axis}}}), -1, {{"block_inputs", inputs}});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_EQ(r->launches.size(), 1u);
      int64_t block = std::max<int64_t>(1, inputs / c.each_reads);
      if (c.outputs != 64) block = std::max<int64_t>(block, 768);
      EXPECT_EQ(r->launches[0].config.grid.x, (c.outputs + block - 1) / block) << c.shape.ToString() << " " << inputs;
      outs.push_back(r->outputs[0]);
    }
    for (size_t i = 1; i < outs.size(); ++i) {
      EXPECT_EQ(std::memcmp(outs[i].data<int64_t>(), outs[0].data<int64_t>(), outs[0].numel() * sizeof(int64_t)), 0)
          << c.shape.ToString() << ": cut " << i << " changed the indices";
    }
  }
}

TEST(ReduceErrors, AreNamed) {
  Tensor x = F32(Shape({2, 3}), {1, 2, 3, 4, 5, 6});
  ExpectError("ReduceSum", {x, I64s({3})}, {}, {"ReduceSum", "axis 3 is out of range for rank 2"});
  ExpectError("ReduceMean", {x}, A({{"axes", std::vector<I>{0, -2}}}), {"names axis 0 twice"});
  ExpectError("ReduceMax", {Make(DType::kBool, Shape({2}), {1, 0})}, {}, {"ReduceMax", "dtype bool"});
  ExpectError("ReduceMean", {x, I64s({1}), I64s({1})}, {}, {"ReduceMean takes 1 to 2 input(s), got 3"});
  ExpectError("ReduceMean", {x, I64s({1})}, A({{"axes", std::vector<I>{1}}}),
              {"'axes' given both as attribute and as input 1 (axes)"});
}

// Opset 18 gives ReduceMean and ReduceMax their axes as an input, the opsets
// before as an attribute: both forms reduce the same axes.
TEST(ReduceAxes, InputAndAttributeFormsAgree) {
  Tensor x = F32(Shape({2, 3}), {1, 2, 3, 4, 5, 9});
  ExpectOutput("ReduceMean", {x, I64s({1})}, A({{"keepdims", I{0}}}), Shape({2}), {2, 6});
  ExpectOutput("ReduceMean", {x}, A({{"axes", std::vector<I>{1}}, {"keepdims", I{0}}}), Shape({2}), {2, 6});
  ExpectOutput("ReduceMax", {x, I64s({0})}, {}, Shape({1, 3}), {4, 5, 9});
  ExpectOutput("ReduceMax", {x}, A({{"axes", std::vector<I>{0}}}), Shape({1, 3}), {4, 5, 9});
  ExpectOutput("ReduceSum", {x}, A({{"axes", std::vector<I>{-1}}}), Shape({2, 1}), {6, 18});
  // noop_with_empty_axes=1 and no axes: the input as it is (opset 18 for ReduceMean and ReduceMax).
  ExpectOutput("ReduceMax", {x}, A({{"noop_with_empty_axes", I{1}}}), Shape({2, 3}), {1, 2, 3, 4, 5, 9});
}

TEST(ArgMax, TiesAndSelectLastIndex) {
  Tensor x = F32(Shape({2, 3}), {1, 3, 3, 5, 2, 5});
  ExpectOutput("ArgMax", {x}, A({{"axis", I{1}}}), Shape({2, 1}), {1, 0});
  ExpectOutput("ArgMax", {x}, A({{"axis", I{1}}, {"select_last_index", I{1}}, {"keepdims", I{0}}}), Shape({2}),
               {2, 2});
  ExpectOutput("ArgMax", {x}, {}, Shape({1, 3}), {1, 0, 1});
  // NaN counts as the largest (numpy).
  ExpectOutput("ArgMax", {F32(Shape({3}), {1, kNaN, 7})}, {}, Shape({1}), {1});
  auto r = RunCpu("ArgMax", {x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outputs[0].dtype(), DType::kI64);
  ExpectError("ArgMax", {x}, A({{"axis", I{2}}}), {"ArgMax", "axis 2", "[2,3]"});
  ExpectError("ArgMax", {F32(Shape({2, 0}), {})}, A({{"axis", I{1}}}), {"is empty"});
}

// Rows of float32 along the last axis run 8 lanes at a time, then the
// lanes' winners are combined: every row here, of many ties, NaNs, zeros of
// both signs and infinities, at lengths around the vector width, gives
// numpy's index (the first NaN, else the first maximum; the last of either
// with select_last_index), as computed here one element at a time.
TEST(ArgMax, RowsEightLanesAtATimeGiveTheFirstOrLastIndexOfTheScan) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float pool[] = {0.0f, -0.0f, 1.0f, 2.0f, 2.0f, -inf, inf, 3.0f};
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  for (int64_t n : {8, 9, 15, 16, 17, 31, 63, 64, 65, 100, 1000}) {
    const int64_t rows = 24;
    std::vector<double> v(static_cast<size_t>(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < n; ++k) v[r * n + k] = pool[next() % (r % 3 == 0 ? 8 : 5)];  // some rows without inf or 3
      const int nans = r % 4 == 1 ? 1 : r % 4 == 2 ? 3 : 0;  // none, one, or several NaNs
      for (int i = 0; i < nans; ++i) v[r * n + next() % n] = nan;
    }
    const Tensor x = Values(DType::kF32, Shape({rows, n}), v);
    for (const bool last : {false, true}) {
      auto got = RunCpu("ArgMax", {x}, A({{"axis", I{1}}, {"select_last_index", I{last ? 1 : 0}}}));
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      for (int64_t r = 0; r < rows; ++r) {
        int64_t want = -1;
        for (int64_t k = 0; k < n; ++k) {
          if (std::isnan(v[r * n + k]) && (want < 0 || last)) want = k;
        }
        if (want < 0) {
          float m = -inf;
          for (int64_t k = 0; k < n; ++k) m = std::max(m, static_cast<float>(v[r * n + k]));
          for (int64_t k = 0; k < n; ++k) {
            if (static_cast<float>(v[r * n + k]) == m && (want < 0 || last)) want = k;
          }
        }
        EXPECT_EQ(got->outputs[0].data<int64_t>()[r], want) << "n " << n << " row " << r << (last ? " last" : " first");
      }
    }
  }
}

TEST(TopK, LargestSmallestAndTies) {
  Tensor x = F32(Shape({2, 4}), {1, 4, 4, 2, 3, 3, 0, 9});
  ExpectOutput("TopK", {x, I64s({2})}, {}, Shape({2, 2}), {4, 4, 9, 3}, 0, 2);
  ExpectOutput("TopK", {x, I64s({2})}, {}, Shape({2, 2}), {1, 2, 3, 0}, 1, 2);
  ExpectOutput("TopK", {x, I64s({3})}, A({{"largest", I{0}}}), Shape({2, 3}), {1, 2, 4, 0, 3, 3}, 0, 2);
  ExpectOutput("TopK", {x, I64s({3})}, A({{"largest", I{0}}}), Shape({2, 3}), {0, 3, 1, 2, 0, 1}, 1, 2);
  ExpectOutput("TopK", {x, I64s({1})}, A({{"axis", I{0}}}), Shape({1, 4}), {1, 0, 0, 1}, 1, 2);
  ExpectError("TopK", {x, I64s({5})}, {}, {"K = 5 is out of range", "dim 1"}, 2);
  ExpectError("TopK", {Random(DType::kBF16, Shape({4}), 1), I64s({1})}, {}, {"TopK", "dtype bfloat16"}, 2);
}

}  // namespace
}  // namespace opscope
