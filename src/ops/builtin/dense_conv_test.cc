#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "core/frozen_buffer.h"
#include "ops/builtin/dense_depthwise_rows.h"
#include "ops/builtin/dense_smallk.h"
#include "ops/builtin/dense_util.h"
#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;

const DType kConvFloats[] = {DType::kF32, DType::kF64, DType::kF16};

// One convolution of a table: input and weight shapes, with a bias or not, attrs.
struct ConvCase {
  Shape x, w;
  bool bias;
  const char* attrs;
};

TEST(DenseConv, HandCheckedSumOfWindowsWithBias) {
  // 3x3 input 1..9, 2x2 kernel of ones: each output is the sum of a 2x2 window, plus bias 1.
  Tensor x = Values(DType::kF32, Shape({1, 1, 3, 3}), {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = Values(DType::kF32, Shape({1, 1, 2, 2}), {1, 1, 1, 1});
  Tensor b = Values(DType::kF32, Shape({1}), {1});
  auto r = RunCpu("Conv", {x, w, b});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outputs[0].shape(), Shape({1, 1, 2, 2}));
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(0), 13);  // 1+2+4+5+1
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(1), 17);
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(2), 25);
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(3), 29);
}

TEST(DenseConv, SameUpperPadsTheEnd) {
  // 1-D, kernel [1,1] (2 taps), SAME_UPPER: the one pad pixel goes after the end.
  Tensor x = Values(DType::kF32, Shape({1, 1, 3}), {1, 2, 3});
  Tensor w = Values(DType::kF32, Shape({1, 1, 2}), {1, 1});
  auto r = RunCpu("Conv", {x, w}, "auto_pad=SAME_UPPER");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outputs[0].shape(), Shape({1, 1, 3}));
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(0), 3);
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(2), 3);  // 3 + padding
  auto l = RunCpu("Conv", {x, w}, "auto_pad=SAME_LOWER");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->outputs[0].FlatGetAsDouble(0), 1);  // padding + 1
}

TEST(DenseConv, MatchesReferenceAcrossGeometriesAndDtypes) {
  const ConvCase cases[] = {
      {Shape({2, 3, 7, 6}), Shape({4, 3, 3, 3}), true, "pads=[1,1,1,1]"},
      {Shape({1, 4, 9, 8}), Shape({6, 2, 3, 2}), true, "group=2,strides=[2,1],dilations=[1,2],pads=[0,1,2,1]"},
      {Shape({1, 4, 6, 6}), Shape({8, 1, 3, 3}), true, "group=4,pads=[1,1,1,1],strides=[2,2]"},  // depthwise x2
      // Depthwise, as mobilenet has it (3x3, stride 1 and 2, pads 1), and the edges of the row loop:
      // dilation, asymmetric pads, a kernel wider than the input, stride 3, 1-D and 3-D.
      {Shape({2, 6, 13, 11}), Shape({6, 1, 3, 3}), true, "group=6,pads=[1,1,1,1]"},
      {Shape({1, 6, 14, 15}), Shape({6, 1, 3, 3}), false, "group=6,pads=[1,1,1,1],strides=[2,2]"},
      // Rows streamed through a ring of padded rows: stride 1 from 32 outputs wide (pads on one
      // side only), stride 2 with no pads, an odd left pad, asymmetric pads, a wide row.
      {Shape({1, 3, 5, 40}), Shape({3, 1, 3, 3}), true, "group=3,pads=[1,1,1,1]"},
      {Shape({1, 2, 6, 37}), Shape({2, 1, 3, 3}), false, "group=2,pads=[0,2,1,0]"},
      {Shape({1, 2, 7, 16}), Shape({2, 1, 3, 3}), true, "group=2,strides=[2,2]"},
      {Shape({1, 2, 7, 17}), Shape({2, 1, 3, 3}), false, "group=2,pads=[2,3,0,1],strides=[2,2]"},
      {Shape({2, 2, 5, 70}), Shape({2, 1, 3, 3}), true, "group=2,pads=[1,1,1,1],strides=[2,2]"},
      // Other strides run from the whole padded plane: unequal, and 3.
      {Shape({1, 2, 9, 10}), Shape({2, 1, 3, 3}), true, "group=2,pads=[1,1,1,1],strides=[1,2]"},
      {Shape({1, 2, 11, 13}), Shape({2, 1, 3, 3}), true, "group=2,pads=[0,1,2,1],strides=[3,3]"},
      {Shape({1, 3, 9, 10}), Shape({3, 1, 3, 3}), true, "group=3,dilations=[2,3],pads=[0,2,3,1]"},
      {Shape({1, 2, 4, 3}), Shape({2, 1, 3, 5}), false, "group=2,pads=[1,2,1,3]"},
      {Shape({1, 4, 16}), Shape({4, 1, 5}), true, "group=4,strides=[3],pads=[2,4]"},
      {Shape({1, 2, 5, 6, 7}), Shape({2, 1, 3, 3, 3}), true, "group=2,pads=[1,1,1,1,1,1],strides=[1,2,2]"},
      {Shape({2, 5, 4, 4}), Shape({3, 5, 1, 1}), true, ""},                                      // 1x1 direct
      {Shape({1, 2, 11}), Shape({3, 2, 3}), false, "strides=[2],auto_pad=SAME_LOWER"},
      {Shape({1, 2, 4, 5, 3}), Shape({2, 2, 2, 3, 2}), true, "pads=[1,0,1,0,1,1]"},
      {Shape({1, 3, 8, 8}), Shape({2, 3, 3, 3}), false, "auto_pad=VALID,strides=[3,3]"},
      // Stems at stride 2 (K = 27): im2col's stride-2 columns eight at a time
      // where a row has 9 or more, odd and even widths, an odd left pad.
      {Shape({1, 3, 12, 33}), Shape({8, 3, 3, 3}), true, "pads=[1,1,1,1],strides=[2,2]"},
      {Shape({1, 3, 11, 40}), Shape({8, 3, 3, 3}), true, "pads=[0,3,1,0],strides=[2,2]"},
  };
  uint32_t seed = 1;
  for (DType t : kConvFloats) {
    for (const ConvCase& c : cases) {
      std::vector<Tensor> in = {Random(t, c.x, seed++), Random(t, c.w, seed++)};
      if (c.bias) in.push_back(Random(t, Shape({c.w[0]}), seed++));
      ExpectMatchesReference("Conv", in, c.attrs);
    }
  }
}

// Float convolutions wider than one tap with K past 256 (128 where
// strided) run dense_smallk.h's shifted GEMM on the padded grid, split into
// phases where strided: K from 147 (one slab) to 1800 (eight), several column tiles and several row blocks,
// dilation with asymmetric pads, no pads at all, 1-D, 3-D and grouped. The
// GEMM's columns are the outputs, a run of the grid per output row: rows 1,
// 2, 3 and 9 wide put one to eight runs into a 16-column panel, and 49 or
// 16 outputs end on a panel of at most 8 live columns.
TEST(DenseConv, ShiftedGemmMatchesTheReferenceAcrossSlabsTilesAndPads) {
  const ConvCase cases[] = {
      {Shape({1, 40, 5, 3}), Shape({9, 40, 3, 3}), true, "pads=[1,1,1,1]"},
      {Shape({1, 96, 9, 2}), Shape({7, 96, 3, 1}), false, "pads=[1,0,1,0]"},
      {Shape({1, 100, 30, 1}), Shape({5, 100, 3, 1}), true, "pads=[1,0,1,0]"},
      {Shape({1, 36, 11, 9}), Shape({10, 36, 3, 3}), true, "pads=[1,1,1,1]"},
      {Shape({1, 64, 4, 4}), Shape({20, 64, 3, 3}), false, "pads=[1,1,1,1]"},
      {Shape({1, 40, 12, 10}), Shape({20, 40, 3, 3}), true, "pads=[1,1,1,1]"},
      {Shape({1, 300, 6, 12}), Shape({7, 300, 2, 3}), false, ""},
      {Shape({2, 32, 20, 20}), Shape({12, 32, 3, 3}), true, "dilations=[2,2],pads=[2,1,0,3]"},
      {Shape({1, 32, 40, 40}), Shape({20, 32, 3, 3}), true, "pads=[1,1,1,1]"},
      {Shape({1, 64, 7, 7}), Shape({128, 64, 3, 3}), true, "pads=[1,1,1,1]"},
      {Shape({1, 70, 50}), Shape({5, 70, 4}), true, "pads=[1,2]"},
      {Shape({1, 64, 10, 10}), Shape({6, 32, 3, 3}), true, "group=2,pads=[1,1,1,1]"},
      {Shape({1, 12, 8, 16, 16}), Shape({3, 12, 3, 3, 3}), false, "pads=[1,1,1,1,1,1]"},
      // A 1x1 window with K past 256 over 128 positions or more, into 64
      // channels or more (googlenet's 14x14 1x1s): X's rows as they are;
      // with 64 channels in blocks of whole panels, not of rows.
      {Shape({1, 300, 12, 12}), Shape({128, 300, 1, 1}), true, ""},
      {Shape({1, 300, 12, 12}), Shape({64, 300, 1, 1}), false, ""},
      // Strided: each dimension split into phases (resnet's 3x3 stride 2 and
      // its 7x7 stride-2 stem, one slab), stride 3 with dilation, strides
      // differing by dimension, 3-D.
      {Shape({1, 32, 28, 28}), Shape({16, 32, 3, 3}), true, "pads=[1,1,1,1],strides=[2,2]"},
      {Shape({1, 3, 64, 64}), Shape({8, 3, 7, 7}), true, "pads=[3,3,3,3],strides=[2,2]"},
      {Shape({1, 30, 31, 35}), Shape({5, 30, 3, 3}), false, "strides=[3,3],dilations=[2,1],pads=[2,0,1,2]"},
      {Shape({1, 40, 20, 21}), Shape({6, 40, 3, 2}), true, "strides=[2,1],pads=[1,0,0,1]"},
      {Shape({1, 12, 9, 18, 18}), Shape({4, 12, 3, 3, 3}), true, "strides=[2,2,2],pads=[1,1,1,1,1,1]"},
  };
  // float32's default tolerance (1e-5 + 1e-5 |e|) does not grow with the
  // length of the sum: a correct float sum of K products rounds to about
  // sqrt(K) 2^-24 times the sum of the terms' magnitudes, which near a
  // cancelling output is above it (OpenBLAS failed these too). 2e-4 is
  // several times the worst seen here (8.7e-5 at K = 576 over [-3, 3]); a
  // tap read from the wrong place or a slab lost is off by whole products.
  const ToleranceSpec tolerance{.atol = 2e-4, .rtol = 1e-5};
  uint32_t seed = 100;
  for (const ConvCase& c : cases) {
    std::vector<Tensor> in = {Random(DType::kF32, c.x, seed++, -1, 1), Random(DType::kF32, c.w, seed++, -1, 1)};
    if (c.bias) in.push_back(Random(DType::kF32, Shape({c.w[0]}), seed++, -1, 1));
    ExpectMatchesReference("Conv", in, c.attrs, -1, tolerance);
    // And it is the shifted GEMM that ran (where the CPU has AVX2 and FMA).
    // With W frozen (a model's weights), over at most 256 outputs a plane
    // with one group, the position GEMM runs instead: the same bits.
    if (dense::Avx2ShiftedGemm() == nullptr) continue;
    auto r = RunCpu("Conv", in, c.attrs);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(Launched(*r, "conv_shifted_gemm")) << c.x.ToString() << " " << c.w.ToString() << " " << c.attrs;
    FreezeBuffer(in[1].buffer());
    auto kept = RunCpu("Conv", in, c.attrs);
    ASSERT_TRUE(kept.ok()) << kept.status().ToString();
    const Tensor& y = r->outputs[0];
    const bool few = y.numel() / (y.dim(0) * y.dim(1)) <= 256 && ParseAttrs("Conv", c.attrs).i("group", 1) == 1 &&
                     c.w.numel() / (c.w[0] * c.w[1]) > 1;  // the position GEMM takes windows wider than 1x1
    EXPECT_TRUE(Launched(*kept, few ? "conv_position_gemm" : "conv_shifted_gemm"))
        << c.x.ToString() << " " << c.w.ToString() << " " << c.attrs;
    EXPECT_TRUE(SameBits(kept->outputs[0], y))
        << "the position GEMM's bits differ from the shifted GEMM's: " << c.x.ToString() << " " << c.attrs;
  }
}

// 1x1 convolutions with K past 256 into few channels or over few positions
// run the shifted GEMM where its 512-bit blocks do (dense::WideBlocks), from
// 32 positions and 8 channels; OpenBLAS otherwise. Either way the reference's
// values.
TEST(DenseConv, PointwiseIntoFewChannelsRunsTheShiftedGemmWhereItsBlocksAre512Bit) {
  struct Case {
    Shape x, w;
    bool wide_shifted;  // the shifted GEMM runs where WideBlocks()
  };
  const Case cases[] = {
      {Shape({1, 300, 12, 12}), Shape({16, 300, 1, 1}), true},
      {Shape({1, 300, 7, 7}), Shape({48, 300, 1, 1}), true},
      {Shape({1, 260, 6, 6}), Shape({8, 260, 1, 1}), true},
      {Shape({1, 300, 5, 5}), Shape({32, 300, 1, 1}), false},  // 25 positions
      {Shape({1, 300, 12, 12}), Shape({7, 300, 1, 1}), false},  // 7 channels
  };
  const ToleranceSpec tolerance{.atol = 2e-4, .rtol = 1e-5};  // long sums: see the shifted GEMM's test
  uint32_t seed = 1700;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.x.ToString() + " " + c.w.ToString());
    std::vector<Tensor> in = {Random(DType::kF32, c.x, seed++, -1, 1), Random(DType::kF32, c.w, seed++, -1, 1)};
    ExpectMatchesReference("Conv", in, "", -1, tolerance);
    if (dense::Avx2ShiftedGemm() == nullptr) continue;
    auto r = RunCpu("Conv", in, "");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(Launched(*r, "conv_shifted_gemm"), c.wide_shifted && dense::WideBlocks());
  }
}

// Windows wider than one tap over few input channels (K up to 256) run the
// shifted GEMM where its blocks are 512-bit: from K = 49 at stride 1, any K
// when strided; the small-k kernel on im2col tiles otherwise (K = 27 and
// 36 at stride 1 everywhere). Either way the reference's values.
TEST(DenseConv, FewChannelWindowsRunTheShiftedGemmWhereItsBlocksAre512Bit) {
  struct Case {
    Shape x, w;
    const char* attrs;
    bool wide_shifted;  // the shifted GEMM runs where WideBlocks()
  };
  const Case cases[] = {
      {Shape({1, 16, 20, 20}), Shape({32, 16, 3, 3}), "pads=[1,1,1,1]", true},              // K = 144
      {Shape({1, 6, 18, 18}), Shape({16, 6, 3, 3}), "pads=[1,1,1,1]", true},                // K = 54
      {Shape({1, 3, 40, 40}), Shape({32, 3, 3, 3}), "pads=[1,1,1,1],strides=[2,2]", true},  // K = 27 strided
      {Shape({1, 4, 20, 20}), Shape({16, 4, 3, 3}), "pads=[1,1,1,1]", false},               // K = 36
      {Shape({1, 3, 30, 30}), Shape({16, 3, 3, 3}), "pads=[1,1,1,1]", false},               // K = 27
  };
  uint32_t seed = 1800;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.x.ToString() + " " + c.w.ToString() + " " + c.attrs);
    std::vector<Tensor> in = {Random(DType::kF32, c.x, seed++, -1, 1), Random(DType::kF32, c.w, seed++, -1, 1)};
    ExpectMatchesReference("Conv", in, c.attrs);
    if (dense::Avx2ShiftedGemm() == nullptr) continue;
    auto r = RunCpu("Conv", in, c.attrs);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(Launched(*r, "conv_shifted_gemm"), c.wide_shifted && dense::WideBlocks());
  }
}

// The cases of PlaneReadStraightGivesTheBitsOfAZeroPaddedInput, below.
void StraightCasesGiveTheBitsOfAZeroPaddedInput() {
  struct Case {
    Shape x, w;
    std::vector<int64_t> pads;  // ONNX order: begins, then ends
    int64_t group;
  };
  const Case cases[] = {
      {Shape({1, 40, 20, 20}), Shape({12, 40, 3, 3}), {1, 1, 1, 1}, 1},
      {Shape({1, 32, 5, 7}), Shape({9, 32, 3, 3}), {1, 1, 1, 1}, 1},
      {Shape({1, 16, 24, 24}), Shape({8, 16, 5, 5}), {2, 2, 2, 2}, 1},
      {Shape({1, 40, 9, 30}), Shape({6, 40, 3, 3}), {2, 0, 0, 2}, 1},
      {Shape({1, 64, 12, 12}), Shape({16, 64, 3, 3}), {1, 1, 1, 1}, 1},
      {Shape({2, 30, 16, 16}), Shape({8, 30, 3, 3}), {1, 1, 1, 1}, 1},
      {Shape({1, 64, 10, 10}), Shape({6, 32, 3, 3}), {1, 1, 1, 1}, 2},
      {Shape({1, 100, 50}), Shape({5, 100, 3}), {1, 1}, 1},
  };
  uint32_t seed = 900;
  for (const Case& c : cases) {
    const int rank = c.x.rank() - 2;
    std::string pads = "[", zeros = "[";
    for (size_t i = 0; i < c.pads.size(); ++i) {
      pads += (i ? "," : "") + std::to_string(c.pads[i]);
      zeros += i ? ",0" : "0";
    }
    const std::string attrs = "group=" + std::to_string(c.group) + ",pads=" + pads + "]";
    SCOPED_TRACE(c.x.ToString() + " " + c.w.ToString() + " " + attrs);
    Tensor x = Random(DType::kF32, c.x, seed++, -1, 1);
    const int64_t W = c.x[c.x.rank() - 1], H = rank == 2 ? c.x[2] : 1;
    x.FlatSetFromDouble(2 * W, std::nan(""));                      // row 2's first column
    x.FlatSetFromDouble(std::min<int64_t>(4, H - 1) * W + W - 1, 1e30);  // row 4's last
    // X zero-padded by hand: the same plane inside, zeros around it.
    std::vector<int64_t> dims = c.x.dims();
    for (int i = 0; i < rank; ++i) dims[2 + i] += c.pads[i] + c.pads[rank + i];
    Tensor xp = Values(DType::kF32, Shape(dims), std::vector<double>(static_cast<size_t>(Shape(dims).numel()), 0.0));
    const int64_t PW = dims.back(), PH = rank == 2 ? dims[2] : 1, top = rank == 2 ? c.pads[0] : 0;
    const int64_t left = c.pads[rank - 1];
    for (int64_t plane = 0; plane < c.x[0] * c.x[1]; ++plane) {
      for (int64_t r = 0; r < H; ++r) {
        for (int64_t l = 0; l < W; ++l) {
          xp.FlatSetFromDouble((plane * PH + r + top) * PW + l + left, x.FlatGetAsDouble((plane * H + r) * W + l));
        }
      }
    }
    const Tensor w = Random(DType::kF32, c.w, seed++, -1, 1);
    const Tensor b = Random(DType::kF32, Shape({c.w[0]}), seed++, -1, 1);
    auto straight = RunCpu("Conv", {x, w, b}, attrs);
    ASSERT_TRUE(straight.ok()) << straight.status().ToString();
    EXPECT_TRUE(Launched(*straight, "conv_shifted_gemm"));
    EXPECT_FALSE(Launched(*straight, "conv_phases")) << "the padded grid was written";
    auto padded = RunCpu("Conv", {xp, w, b}, "group=" + std::to_string(c.group) + ",pads=" + zeros + "]");
    ASSERT_TRUE(padded.ok()) << padded.status().ToString();
    ASSERT_EQ(straight->outputs[0].shape(), padded->outputs[0].shape());
    EXPECT_TRUE(SameBits(straight->outputs[0], padded->outputs[0]));
  }
}

// A padded window at stride 1 that keeps the plane's size reads X's planes
// straight, the taps past the borders masked (dense_smallk.h's
// PlaneBorders), with no grid written: the same bits as the same
// convolution, unpadded, over X zero-padded by hand (which reads the padded
// X as it is). Rows narrower than a panel (7) and wider, 3x3 and 5x5,
// asymmetric pads, 1-D, two images, two groups, three slabs (a slab then
// starts in the middle of a channel's taps). A NaN on a row's first column
// and a huge value on another's last: a lane that read across the row's
// edge would carry them to the other side. With the 512-bit blocks off and
// on (where the CPU has them): the border masks as 256-bit vectors and as
// 16-bit masks.
TEST(DenseConv, PlaneReadStraightGivesTheBitsOfAZeroPaddedInput) {
  if (dense::Avx2ShiftedGemm() == nullptr) GTEST_SKIP() << "no AVX2 and FMA: no shifted GEMM";
  ForWideBlocksOffAndOn(StraightCasesGiveTheBitsOfAZeroPaddedInput);
}

// The 3x3 depthwise of small planes eight channels at a time gives the bits
// a channel at a time gives: eight channels (one run of eight) against the
// same channels in two runs of seven (too few for eight, so a channel at a
// time), at stride 2 on planes from 7 to 63 wide with even, odd and one-sided
// pads, and at stride 1 on the narrowest planes; NaNs in X included.
TEST(DenseConv, DepthwiseEightChannelsAtATimeGivesTheBitsOfOneAtATime) {
  if (!dense::HasAvx2()) GTEST_SKIP() << "no AVX2: every channel runs one at a time";
  // With 512-bit kernels, stride-2 rows of 9 outputs or more go a channel at a time
  // (Depthwise3x3RowsS2) in both runs; with them off, eight at a time runs them.
  ForWideBlocksOffAndOn([] {
    struct Case {
      int64_t h, w;
      const char* attrs;
    };
    const Case cases[] = {
        {14, 14, "strides=[2,2],pads=[1,1,1,1]"}, {13, 13, "strides=[2,2],pads=[1,1,1,1]"},
        {28, 28, "strides=[2,2],pads=[1,1,1,1]"}, {56, 56, "strides=[2,2],pads=[1,1,1,1]"},
        {15, 9, "strides=[2,2],pads=[0,0,1,1]"},  {63, 63, "strides=[2,2],pads=[1,1,1,1]"},
        {7, 7, "strides=[2,2]"},                  {7, 7, "pads=[1,1,1,1]"},
        {5, 8, "pads=[1,1,1,1]"},                 {6, 6, "pads=[0,1,0,1]"},
        // mobilenet_v2's widest at stride 2, and the widest that runs eight at a time (63 outputs).
        {112, 112, "strides=[2,2],pads=[1,1,1,1]"}, {125, 125, "strides=[2,2],pads=[1,1,1,1]"},
    };
    uint32_t seed = 500;
    bool fused = false;
    for (const Case& c : cases) {
      // Every other case a FusedConv with a bias (one of them zero) and a Clip,
      // which eight at a time applies in registers, one at a time after.
      fused = !fused;
      const std::string op = fused ? "FusedConv" : "Conv";
      const std::string tail = fused ? ",activation=Clip,activation_min=-0.5,activation_max=1.5" : "";
      const std::string attrs = std::string("group=8,") + c.attrs + tail;
      const std::string attrs7 = std::string("group=7,") + c.attrs + tail;
      SCOPED_TRACE(op + " " + std::to_string(c.h) + "x" + std::to_string(c.w) + " " + attrs);
      Tensor x = Random(DType::kF32, Shape({1, 8, c.h, c.w}), seed++, -2, 2);
      x.FlatSetFromDouble(3 * c.h * c.w + c.w + 2, std::nan(""));  // channel 3, row 1
      const Tensor w = Random(DType::kF32, Shape({8, 1, 3, 3}), seed++, -1, 1);
      Tensor b = Random(DType::kF32, Shape({8}), seed++, -1, 1);
      b.FlatSetFromDouble(2, 0.0);
      auto with_bias = [&](std::vector<Tensor> in, const Tensor& bias) {
        if (fused) in.push_back(bias);
        return in;
      };
      auto eight = RunCpu(op, with_bias({x, w}, b), attrs);
      ASSERT_TRUE(eight.ok()) << eight.status().ToString();
      const Tensor& y8 = eight->outputs[0];
      const int64_t plane = y8.numel() / 8;
      for (int64_t first : {0, 1}) {
        // Channels first .. first + 6, a channel at a time.
        Tensor x7 = Random(DType::kF32, Shape({1, 7, c.h, c.w}), 1), w7 = Random(DType::kF32, Shape({7, 1, 3, 3}), 2);
        for (int64_t i = 0; i < x7.numel(); ++i) x7.FlatSetFromDouble(i, x.FlatGetAsDouble(first * c.h * c.w + i));
        for (int64_t i = 0; i < w7.numel(); ++i) w7.FlatSetFromDouble(i, w.FlatGetAsDouble(first * 9 + i));
        Tensor b7 = Random(DType::kF32, Shape({7}), 3);
        for (int64_t i = 0; i < 7; ++i) b7.FlatSetFromDouble(i, b.FlatGetAsDouble(first + i));
        auto seven = RunCpu(op, with_bias({x7, w7}, b7), attrs7);
        ASSERT_TRUE(seven.ok()) << seven.status().ToString();
        const Tensor& y7 = seven->outputs[0];
        ASSERT_EQ(y7.numel(), 7 * plane);
        for (int64_t i = 0; i < y7.numel(); ++i) {
          // Bit for bit: the sign of a zero included.
          const float a = static_cast<float>(y8.FlatGetAsDouble(first * plane + i));
          const float one = static_cast<float>(y7.FlatGetAsDouble(i));
          ASSERT_TRUE(std::memcmp(&a, &one, sizeof(float)) == 0 || (std::isnan(a) && std::isnan(one)))
              << "channel " << first + i / plane << " output " << i % plane << ": " << a << " against " << one;
        }
      }
      if (!fused) ExpectMatchesReference("Conv", {x, w}, attrs);
    }
    // Two images of 20 channels: two runs of eight in each and four left over,
    // one run with an infinite weight (it goes a channel at a time).
    Tensor x = Random(DType::kF32, Shape({2, 20, 14, 14}), seed++, -2, 2);
    Tensor w = Random(DType::kF32, Shape({20, 1, 3, 3}), seed++, -1, 1);
    w.FlatSetFromDouble(9 * 10 + 4, std::numeric_limits<double>::infinity());
    ExpectMatchesReference("Conv", {x, w, Random(DType::kF32, Shape({20}), seed++)},
                           "group=20,strides=[2,2],pads=[1,1,1,1]");
  });
}

// Stride 1 runs two output rows at a time, stride 2 a row at a time, with
// the bias and a Relu or Clip in registers (dense_depthwise_rows.h). Each
// output must keep the bits of its nine taps added in order from zero over
// the zero-bordered plane, then the bias (unless zero), then the clamp:
// computed here one output at a time, for widths 8 to 40 (the padded plane
// below 32, stretches of 16 rows above, a last vector that overlaps the one
// before), odd and even heights, other pads, NaNs in X, the tail in
// registers and in the epilogue's pass after; at stride 1 in 256-bit and,
// where the CPU has them, 512-bit vectors (rows under 16 one masked vector).
void DepthwiseRowCasesGiveTheBitsOfTheTapsInOrder() {
  struct Case {
    int64_t h, w;
    int64_t pt, pl, pb, pr;  // pads: top, left, bottom, right
    const char* act;         // the FusedConv's activation, "" for none
    int64_t s = 1;           // stride
  };
  const Case cases[] = {
      {9, 8, 1, 1, 1, 1, ""},
      {8, 13, 1, 1, 1, 1, "activation=Relu"},
      {14, 14, 1, 1, 1, 1, "activation=Clip,activation_min=0,activation_max=6"},
      {7, 31, 0, 2, 2, 0, "activation=Clip,activation_min=-0.5,activation_max=0.25"},
      {11, 32, 1, 1, 1, 1, "activation=Relu"},
      {6, 37, 2, 0, 0, 1, ""},
      {5, 40, 1, 1, 1, 1, "activation=LeakyRelu"},  // not in registers: the epilogue's pass
      // Stretches of 16 output rows: three, the last of three rows; exactly one.
      {35, 33, 1, 1, 1, 1, "activation=Clip,activation_min=0,activation_max=6"},
      {18, 34, 0, 0, 0, 0, ""},
      {40, 36, 2, 1, 0, 1, "activation=LeakyRelu"},
      // Stride 2 a row at a time straight from X (Depthwise3x3RowsS2, rows
      // of 24 outputs or more): three whole vectors, an odd height (the
      // last row's bottom tap past X), rows ending on an overlapping vector
      // (25 and 30 outputs), mobilenet_v2's 56 and 112 in, the epilogue's pass.
      {48, 48, 1, 1, 1, 1, "activation=Relu", 2},
      {49, 50, 1, 1, 1, 1, "activation=Clip,activation_min=-0.5,activation_max=0.25", 2},
      {27, 60, 1, 1, 1, 1, "activation=LeakyRelu", 2},
      {56, 56, 1, 1, 1, 1, "activation=Clip,activation_min=0,activation_max=6", 2},
      {112, 112, 1, 1, 1, 1, "", 2},
      // In 512-bit vectors rows of 9 outputs and more take that path too:
      // one masked vector a row (14, 10 and 9 outputs, the last tap column
      // past an odd row), two output rows at a time and one left over.
      {28, 28, 1, 1, 1, 1, "activation=Clip,activation_min=0,activation_max=6", 2},
      {21, 19, 1, 1, 1, 1, "activation=Relu", 2},
      {17, 18, 1, 1, 0, 0, "", 2},
      // And rows of 8 or fewer two a vector (Depthwise3x3NarrowPlanesWide):
      // 7x7 and 14x14 to 7x7, a 16-wide row to 8, an odd and an even
      // number of output rows, the epilogue's pass after (LeakyRelu).
      {7, 7, 1, 1, 1, 1, "activation=Clip,activation_min=0,activation_max=6"},
      {14, 14, 1, 1, 1, 1, "activation=Relu", 2},
      {15, 16, 1, 1, 0, 0, "", 2},
      {6, 5, 1, 1, 1, 1, "activation=LeakyRelu"},
      {3, 1, 1, 1, 1, 1, "activation=LeakyRelu", 2},
  };
  uint32_t seed = 900;
  for (const Case& c : cases) {
    const int64_t ch = 3, oh_n = (c.h + c.pt + c.pb - 3) / c.s + 1, ow_n = (c.w + c.pl + c.pr - 3) / c.s + 1;
    const std::string attrs = "group=3,strides=[" + std::to_string(c.s) + "," + std::to_string(c.s) + "],pads=[" +
                              std::to_string(c.pt) + "," + std::to_string(c.pl) + "," + std::to_string(c.pb) + "," +
                              std::to_string(c.pr) + "]" + (*c.act ? "," : "") + c.act;
    SCOPED_TRACE(std::to_string(c.h) + "x" + std::to_string(c.w) + " " + attrs);
    Tensor x = Random(DType::kF32, Shape({1, ch, c.h, c.w}), seed++, -2, 2);
    x.FlatSetFromDouble(c.h * c.w + 2 * c.w + 3, std::nan(""));  // channel 1, row 2
    const Tensor w = Random(DType::kF32, Shape({ch, 1, 3, 3}), seed++, -1, 1);
    Tensor b = Random(DType::kF32, Shape({ch}), seed++, -1, 1);
    b.FlatSetFromDouble(2, 0.0);  // a zero bias is not added: -0 sums stay -0
    auto r = RunCpu("FusedConv", {x, w, b}, attrs);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const Tensor& y = r->outputs[0];
    ASSERT_EQ(y.numel(), ch * oh_n * ow_n);
    const std::string act = c.act;
    const float lo = act.find("min=0,") != std::string::npos ? 0.0f : -0.5f;
    const float hi = act.find("max=6") != std::string::npos ? 6.0f : 0.25f;
    for (int64_t m = 0; m < ch; ++m) {
      for (int64_t oh = 0; oh < oh_n; ++oh) {
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          float acc = 0.0f;
          for (int64_t t = 0; t < 9; ++t) {
            const int64_t ih = oh * c.s + t / 3 - c.pt, iw = ow * c.s + t % 3 - c.pl;
            const bool inside = ih >= 0 && ih < c.h && iw >= 0 && iw < c.w;
            const float xv = inside ? static_cast<float>(x.FlatGetAsDouble((m * c.h + ih) * c.w + iw)) : 0.0f;
            acc += static_cast<float>(w.FlatGetAsDouble(m * 9 + t)) * xv;
          }
          const float bias = static_cast<float>(b.FlatGetAsDouble(m));
          if (bias != 0.0f) acc += bias;
          if (act == "activation=Relu") acc = std::max(acc, 0.0f);
          if (act.rfind("activation=Clip", 0) == 0) acc = std::min(std::max(acc, lo), hi);
          if (act == "activation=LeakyRelu") acc = acc < 0.0f ? 0.01f * acc : acc;
          const float got = static_cast<float>(y.FlatGetAsDouble((m * oh_n + oh) * ow_n + ow));
          ASSERT_TRUE(std::memcmp(&got, &acc, sizeof(float)) == 0 || (std::isnan(got) && std::isnan(acc)))
              << "channel " << m << " output (" << oh << ", " << ow << "): " << got << " against " << acc;
        }
      }
    }
  }
}

TEST(DenseConv, DepthwiseTwoRowsAtATimeGiveTheBitsOfTheTapsInOrder) {
  ForWideBlocksOffAndOn(DepthwiseRowCasesGiveTheBitsOfTheTapsInOrder);
}

// Depthwise3x3RowsS2 itself takes rows of 8 outputs or more, narrower
// than the op gives it (24): rows of 8, 9 and 14 outputs, an odd height,
// NaNs on the first and last columns, a zero and a nonzero bias with and
// without the clamp, against the taps added in order one output at a time.
// In 512-bit vectors it takes rows of any width, the columns past X read
// as zeros: 1 to 7 outputs (one output, a plane of one), rows of 17 and 33
// (a masked vector after whole ones, one column past an odd row), and the
// rows two at a time with one left over; 20 outputs of a 3-wide row (wide
// end pads: a second vector wholly past the row). Nothing past each row's
// outputs is written.
void DepthwiseStride2RowCasesGiveTheBitsOfTheTapsInOrder() {
  struct Case {
    int64_t h, w, oh, ow;
  };
  std::vector<Case> cases = {{16, 16, 8, 8}, {17, 18, 9, 9}, {12, 28, 6, 14}};
  if (dense::WideBlocks()) {
    cases.insert(cases.end(), {{1, 1, 1, 1}, {7, 7, 4, 4}, {14, 14, 7, 7}, {5, 3, 3, 2}, {33, 35, 17, 18},
                               {40, 66, 20, 33}, {9, 112, 5, 56}, {4, 3, 2, 20}});
  }
  uint32_t seed = 950;
  for (const Case& c : cases) {
    for (const auto& [bias, clamp] : {std::pair{0.0f, true}, std::pair{0.75f, true}, std::pair{-0.25f, false}}) {
      SCOPED_TRACE(std::to_string(c.h) + "x" + std::to_string(c.w) + " bias " + std::to_string(bias) +
                   (clamp ? " clamped" : ""));
      Tensor x = Random(DType::kF32, Shape({c.h, c.w}), seed++, -2, 2);
      if (c.h > 5) {
        x.FlatSetFromDouble(3 * c.w, std::nan(""));      // row 3's first column
        x.FlatSetFromDouble(6 * c.w - 1, std::nan(""));  // row 5's last
      }
      const Tensor w = Random(DType::kF32, Shape({9}), seed++, -1, 1);
      const dense::DepthwiseRowTail tail{bias, clamp, -0.5f, 1.5f};
      // One more row's worth past the outputs: left as it was.
      std::vector<float> y(static_cast<size_t>((c.oh + 1) * c.ow), -7.0f);
      dense::Depthwise3x3RowsS2(x.data<float>(), c.h, c.w, c.oh, w.data<float>(), y.data(), c.ow, tail);
      for (int64_t oh = 0; oh <= c.oh; ++oh) {
        for (int64_t ow = 0; ow < c.ow; ++ow) {
          float acc = -7.0f;
          if (oh < c.oh) {
            acc = 0.0f;
            for (int64_t t = 0; t < 9; ++t) {
              const int64_t ih = 2 * oh + t / 3 - 1, iw = 2 * ow + t % 3 - 1;
              const bool inside = ih >= 0 && ih < c.h && iw >= 0 && iw < c.w;
              acc += w.data<float>()[t] * (inside ? x.data<float>()[ih * c.w + iw] : 0.0f);
            }
            if (bias != 0.0f) acc += bias;
            if (clamp) acc = std::min(std::max(acc, -0.5f), 1.5f);
          }
          const float got = y[static_cast<size_t>(oh * c.ow + ow)];
          ASSERT_TRUE(std::memcmp(&got, &acc, sizeof(float)) == 0 || (std::isnan(got) && std::isnan(acc)))
              << "output (" << oh << ", " << ow << "): " << got << " against " << acc;
        }
      }
    }
  }
}

TEST(DenseConv, DepthwiseStride2RowsGiveTheBitsOfTheTapsInOrder) {
  if (!dense::DepthwiseRowsFit()) GTEST_SKIP() << "no AVX2";
  ForWideBlocksOffAndOn(DepthwiseStride2RowCasesGiveTheBitsOfTheTapsInOrder);
}

// Depthwise3x3SamePlaneWide (stride 1, pads of one, 512-bit vectors
// straight from X): planes from 1x1 up, rows of one vector, of a masked
// one after whole ones (17, 33, 40 wide), an odd height (the last row
// alone), NaNs on the first and last columns, bias with and without the
// clamp, against the taps added in order one output at a time; nothing
// past the plane written.
TEST(DenseConv, DepthwiseSamePlaneIn512BitVectorsGivesTheBitsOfTheTapsInOrder) {
  if (!dense::DepthwiseRowsFit() || !dense::WideBlocks()) GTEST_SKIP() << "no AVX-512F";
  struct Case {
    int64_t h, w;
  };
  const Case cases[] = {{1, 1}, {2, 3}, {5, 7}, {14, 14}, {9, 16}, {17, 17}, {7, 33}, {28, 28}, {3, 40}};
  uint32_t seed = 970;
  for (const Case& c : cases) {
    for (const auto& [bias, clamp] : {std::pair{0.0f, true}, std::pair{0.75f, true}, std::pair{-0.25f, false}}) {
      SCOPED_TRACE(std::to_string(c.h) + "x" + std::to_string(c.w) + " bias " + std::to_string(bias) +
                   (clamp ? " clamped" : ""));
      Tensor x = Random(DType::kF32, Shape({c.h, c.w}), seed++, -2, 2);
      if (c.h > 4) {
        x.FlatSetFromDouble(2 * c.w, std::nan(""));      // row 2's first column
        x.FlatSetFromDouble(4 * c.w - 1, std::nan(""));  // row 3's last
      }
      const Tensor w = Random(DType::kF32, Shape({9}), seed++, -1, 1);
      const dense::DepthwiseRowTail tail{bias, clamp, -0.5f, 1.5f};
      std::vector<float> y(static_cast<size_t>((c.h + 1) * c.w), -7.0f);
      dense::Depthwise3x3SamePlaneWide(x.data<float>(), c.h, c.w, w.data<float>(), y.data(), tail);
      for (int64_t oh = 0; oh <= c.h; ++oh) {
        for (int64_t ow = 0; ow < c.w; ++ow) {
          float acc = -7.0f;  // past the plane: untouched
          if (oh < c.h) {
            acc = 0.0f;
            for (int64_t t = 0; t < 9; ++t) {
              const int64_t ih = oh + t / 3 - 1, iw = ow + t % 3 - 1;
              const bool inside = ih >= 0 && ih < c.h && iw >= 0 && iw < c.w;
              acc += w.data<float>()[t] * (inside ? x.data<float>()[ih * c.w + iw] : 0.0f);
            }
            if (bias != 0.0f) acc += bias;
            if (clamp) acc = std::min(std::max(acc, -0.5f), 1.5f);
          }
          const float got = y[static_cast<size_t>(oh * c.w + ow)];
          ASSERT_TRUE(std::memcmp(&got, &acc, sizeof(float)) == 0 || (std::isnan(got) && std::isnan(acc)))
              << "output (" << oh << ", " << ow << "): " << got << " against " << acc;
        }
      }
    }
  }
}

// Depthwise3x3NarrowPlanesWide (rows of at most 8 outputs, two a 512-bit
// vector): three planes in one call, each with its own weights and bias
// (the middle one zero: added as -0, no bits changed), at stride 1 and 2,
// planes 1 to 16 wide with and without an end pad, odd and even output
// heights, NaNs; against the taps added in order; nothing past each
// plane's outputs written.
TEST(DenseConv, DepthwiseNarrowPlanesTwoRowsAVectorGiveTheBitsOfTheTapsInOrder) {
  if (!dense::DepthwiseRowsFit() || !dense::WideBlocks()) GTEST_SKIP() << "no AVX-512F";
  struct Case {
    int64_t h, w, s, oh, ow;
  };
  const Case cases[] = {{7, 7, 1, 7, 7}, {8, 8, 1, 8, 8}, {1, 1, 1, 1, 1}, {4, 3, 1, 4, 3},  {14, 14, 2, 7, 7},
                        {16, 16, 2, 8, 8}, {15, 15, 2, 8, 8}, {15, 15, 2, 7, 7}, {2, 5, 2, 1, 3}};
  uint32_t seed = 1010;
  for (const Case& c : cases) {
    for (const bool clamp : {true, false}) {
      SCOPED_TRACE(std::to_string(c.h) + "x" + std::to_string(c.w) + " stride " + std::to_string(c.s) +
                   (clamp ? " clamped" : ""));
      const int64_t planes = 3, in = c.h * c.w, out = c.oh * c.ow, y_plane = out + 5;
      Tensor x = Random(DType::kF32, Shape({planes, c.h, c.w}), seed++, -2, 2);
      if (in > 4) x.FlatSetFromDouble(in + in / 2, std::nan(""));  // plane 1's middle
      const Tensor w = Random(DType::kF32, Shape({planes, 9}), seed++, -1, 1);
      const float bias[planes] = {0.5f, 0.0f, -1.25f};
      const dense::DepthwiseRowTail tail{0.0f, clamp, -0.5f, 1.5f};
      std::vector<float> y(static_cast<size_t>(planes * y_plane), -7.0f);
      const dense::NarrowPlanesArgs args{.x = x.data<float>(), .x_plane = in, .h = c.h, .w = c.w, .stride = c.s,
                                         .w9 = w.data<float>(), .bias = bias, .y = y.data(), .y_plane = y_plane,
                                         .oh = c.oh, .ow = c.ow, .count = planes};
      dense::Depthwise3x3NarrowPlanesWide(args, tail);
      for (int64_t p = 0; p < planes; ++p) {
        const float* xp = x.data<float>() + p * in;
        const float* wp = w.data<float>() + p * 9;
        for (int64_t j = 0; j < y_plane; ++j) {
          float acc = -7.0f;  // past the plane's outputs: untouched
          if (j < out) {
            const int64_t oh = j / c.ow, ow = j % c.ow;
            acc = 0.0f;
            for (int64_t t = 0; t < 9; ++t) {
              const int64_t ih = c.s * oh + t / 3 - 1, iw = c.s * ow + t % 3 - 1;
              const bool inside = ih >= 0 && ih < c.h && iw >= 0 && iw < c.w;
              acc += wp[t] * (inside ? xp[ih * c.w + iw] : 0.0f);
            }
            if (bias[p] != 0.0f) acc += bias[p];
            if (clamp) acc = std::min(std::max(acc, -0.5f), 1.5f);
          }
          const float got = y[static_cast<size_t>(p * y_plane + j)];
          ASSERT_TRUE(std::memcmp(&got, &acc, sizeof(float)) == 0 || (std::isnan(got) && std::isnan(acc)))
              << "plane " << p << " output " << j << ": " << got << " against " << acc;
        }
      }
    }
  }
}

// The position GEMM's C^T (positions by channels) back into Y's rows: each
// value clamped and moved, nothing else written. Position counts under,
// at and past a tile of eight (the last tile overlapping), channel counts
// with a tail past the last eight; NaN, -0.0 and values past both bounds.
TEST(DenseConv, PositionsOutMovesEachClampedValueAndWritesNothingElse) {
  const dense::PositionsOutFn out = dense::Avx2PositionsOut();
  if (out == nullptr) GTEST_SKIP() << "no AVX2+FMA";
  struct Case {
    int64_t npos, nm;
  };
  const Case cases[] = {{1, 16}, {5, 8}, {7, 19}, {8, 8}, {9, 13}, {49, 80}, {25, 3}, {96, 16}};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  uint32_t seed = 990;
  for (const Case& c : cases) {
    for (const auto& [lo, hi] : {std::pair{-0.5f, 1.5f}, std::pair{0.0f, std::numeric_limits<float>::infinity()}}) {
      SCOPED_TRACE(std::to_string(c.npos) + " positions, " + std::to_string(c.nm) + " channels, lo " +
                   std::to_string(lo));
      const int64_t ldct = c.nm + 5, ldy = c.npos + 3;
      Tensor ct = Random(DType::kF32, Shape({c.npos, ldct}), seed++, -2, 2);
      float* v = ct.data<float>();
      v[0] = nan;
      if (c.npos * ldct > 9) v[9] = -0.0f;
      v[c.npos * ldct - 1 - 5] = 3.0f;  // the last position's last channel, past hi
      std::vector<float> y(static_cast<size_t>((c.nm + 1) * ldy), -7.0f);
      out(c.npos, c.nm, v, ldct, y.data(), ldy, lo, hi);
      for (int64_t m = 0; m <= c.nm; ++m) {
        for (int64_t j = 0; j < ldy; ++j) {
          const float got = y[static_cast<size_t>(m * ldy + j)];
          float want = -7.0f;  // outside the c.nm x c.npos block: untouched
          if (m < c.nm && j < c.npos) want = std::min(std::max(v[j * ldct + m], lo), hi);
          ASSERT_TRUE(std::memcmp(&got, &want, sizeof(float)) == 0 || (std::isnan(got) && std::isnan(want)))
              << "channel " << m << ", position " << j << ": " << got << " against " << want;
        }
      }
    }
  }
}

TEST(DenseConv, DepthwiseWithAnInfiniteWeightSkipsTheTapsOutsideX) {
  // Channel 0's top-left tap is +inf: the top-left output never reads it
  // (that tap falls in the padding), so it stays finite, as in the reference.
  Tensor x = Random(DType::kF32, Shape({1, 2, 5, 5}), 1);
  Tensor w = Random(DType::kF32, Shape({2, 1, 3, 3}), 2);
  w.FlatSetFromDouble(0, std::numeric_limits<double>::infinity());
  auto r = RunCpu("Conv", {x, w}, "group=2,pads=[1,1,1,1]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(std::isfinite(r->outputs[0].FlatGetAsDouble(0)));
  EXPECT_TRUE(std::isinf(r->outputs[0].FlatGetAsDouble(24)));  // the bottom-right one reads it
  ExpectMatchesReference("Conv", {x, w}, "group=2,pads=[1,1,1,1]");
}

TEST(DenseConv, BadInputsNameTheProblem) {
  Tensor x = Random(DType::kF32, Shape({1, 3, 5, 5}), 1);
  ExpectError(RunCpu("Conv", {x, Random(DType::kF32, Shape({2, 2, 3, 3}), 2)}), {"input channels", "[2,2,3,3]"});
  ExpectError(RunCpu("Conv", {x, Random(DType::kF32, Shape({2, 3, 3, 3}), 2)}, "pads=[1,1]"),
              {"pads=[1,1]", "expected 4"});
  ExpectError(RunCpu("Conv", {x, Random(DType::kF32, Shape({2, 3, 3, 3}), 2), Random(DType::kF32, Shape({3}), 3)}),
              {"bias B", "[3]", "expected [2]"});
  ExpectError(RunCpu("Conv", {x, Random(DType::kF32, Shape({2, 3, 7, 7}), 2)}), {"larger than the padded input"});
  ExpectError(RunCpu("Conv", {Random(DType::kBF16, Shape({1, 1, 3}), 1), Random(DType::kBF16, Shape({1, 1, 1}), 2)}),
              {"dtype bfloat16"});
}

TEST(DenseConvTranspose, HandCheckedStride2TilesTheKernel) {
  // Each input pixel spreads a 2x2 block of ones * x with stride 2: no overlap.
  Tensor x = Values(DType::kF32, Shape({1, 1, 2, 2}), {1, 2, 3, 4});
  Tensor w = Values(DType::kF32, Shape({1, 1, 2, 2}), {1, 1, 1, 1});
  auto r = RunCpu("ConvTranspose", {x, w}, "strides=[2,2]");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outputs[0].shape(), Shape({1, 1, 4, 4}));
  const double want[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(r->outputs[0].FlatGetAsDouble(i), want[i]) << i;
}

TEST(DenseConvTranspose, MatchesReferenceAcrossGeometriesAndDtypes) {
  struct Case {
    Shape x, w;
    int64_t bias_channels;  // 0: no bias
    const char* attrs;
  };
  const Case cases[] = {
      {Shape({2, 3, 4, 5}), Shape({3, 2, 3, 3}), 2, "strides=[2,2],pads=[1,0,1,1],output_padding=[1,0]"},
      {Shape({1, 4, 3, 3}), Shape({4, 3, 2, 2}), 6, "group=2,dilations=[2,1]"},
      {Shape({1, 2, 5}), Shape({2, 3, 3}), 0, "strides=[3],output_shape=[16]"},
      {Shape({1, 1, 3, 3}), Shape({1, 2, 3, 3}), 0, "strides=[2,2],auto_pad=SAME_UPPER"},
      {Shape({1, 2, 2, 3, 2}), Shape({2, 1, 2, 2, 2}), 1, "strides=[1,2,1]"},
  };
  uint32_t seed = 100;
  for (DType t : kConvFloats) {
    for (const Case& c : cases) {
      std::vector<Tensor> in = {Random(t, c.x, seed++), Random(t, c.w, seed++)};
      if (c.bias_channels) in.push_back(Random(t, Shape({c.bias_channels}), seed++));
      ExpectMatchesReference("ConvTranspose", in, c.attrs);
    }
  }
}

TEST(DenseConvTranspose, BadInputsNameTheProblem) {
  Tensor x = Random(DType::kF32, Shape({1, 3, 4, 4}), 1);
  ExpectError(RunCpu("ConvTranspose", {x, Random(DType::kF32, Shape({2, 2, 3, 3}), 2)}), {"W [2,2,3,3]", "3 rows"});
  ExpectError(RunCpu("ConvTranspose", {x, Random(DType::kF32, Shape({3, 2, 3, 3}), 2)}, "output_shape=[1,2,3]"),
              {"output_shape", "2 spatial output dims"});
  ExpectError(RunCpu("ConvTranspose", {x, Random(DType::kF32, Shape({3, 2, 3}), 2)}), {"same rank"});
}

}  // namespace
}  // namespace opscope
