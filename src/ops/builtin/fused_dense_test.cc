// FusedConv, FusedGemm and FusedMatMul against their references for every
// activation, with the GEMMs cut into blocks the way the kernels cut them:
// several column tiles with a partial last one (Conv's "tile" tunable), output
// channels split when the columns are few, GEMMs split by rows and by
// columns, each block's bias and activation applied as it is written.
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <vector>

#include "core/frozen_buffer.h"
#include "device/cpu/cpu_device.h"
#include "ops/builtin/dense_smallk.h"
#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;

const char* const kFusedActivations[] = {
    "",
    "activation=Relu",
    "activation=Sigmoid",
    "activation=Tanh",
    "activation=LeakyRelu,activation_alpha=0.2",
    "activation=Clip,activation_min=-1,activation_max=0.5",
    "activation=Gelu",
    "activation=Gelu,activation_approximate=tanh",
};

const DType kFusedDtypes[] = {DType::kF32, DType::kF64, DType::kF16};

// ExpectMatchesReference with tunables.
void ExpectFusedMatches(const std::string& op, const std::vector<Tensor>& in, const std::string& attrs,
                        std::map<std::string, int64_t> tunables = {}) {
  OpRunRequest request{.op = op, .input_tensors = in, .attr_values = ParseAttrs(op, attrs),
                       .tunables = std::move(tunables)};
  auto report = RunOpInstance(request);
  ASSERT_TRUE(report.ok()) << op << " " << attrs << ": " << report.status().ToString();
  if (report->passed()) return;
  std::ostringstream text;
  PrintOpReport(*report, text);
  ADD_FAILURE() << op << " " << attrs << " does not match its reference:\n" << text.str();
}

std::string JoinAttrs(const std::string& a, const std::string& b) { return a.empty() ? b : b.empty() ? a : a + "," + b; }

TEST(FusedConv, EveryActivationMatchesItsReferenceAcrossTheBlockCuts) {
  uint64_t seed = 1;
  for (DType t : kFusedDtypes) {
    for (const char* act : kFusedActivations) {
      SCOPED_TRACE(std::string(DTypeName(t)) + " " + act);
      // 3x3 over 20x18 outputs in tiles of 64 positions: 6 tiles, the last of 40, crossing output rows.
      ExpectFusedMatches("FusedConv", {Random(t, Shape({1, 8, 20, 18}), seed++), Random(t, Shape({20, 8, 3, 3}), seed++),
                                       Random(t, Shape({20}), seed++)},
                         JoinAttrs(act, "pads=[1,1,1,1]"), {{"tile", 64}});
      // 25 positions and 64 output channels: too few columns, so the channels split too.
      ExpectFusedMatches("FusedConv", {Random(t, Shape({1, 4, 5, 5}), seed++), Random(t, Shape({64, 4, 3, 3}), seed++),
                                       Random(t, Shape({64}), seed++)},
                         JoinAttrs(act, "pads=[1,1,1,1]"));
      // 1x1 straight from the input (no im2col), two images, no bias.
      ExpectFusedMatches("FusedConv", {Random(t, Shape({2, 5, 12, 12}), seed++), Random(t, Shape({7, 5, 1, 1}), seed++)},
                         act, {{"tile", 64}});
      // Depthwise, stride 2, two groups' worth of channels per image.
      ExpectFusedMatches("FusedConv", {Random(t, Shape({2, 6, 9, 9}), seed++), Random(t, Shape({6, 1, 3, 3}), seed++),
                                       Random(t, Shape({6}), seed++)},
                         JoinAttrs(act, "group=6,pads=[1,1,1,1],strides=[2,2]"));
      // Depthwise at stride 1 on rows 32 wide and more: the activation runs on each row as it is written.
      ExpectFusedMatches("FusedConv", {Random(t, Shape({1, 3, 6, 40}), seed++), Random(t, Shape({3, 1, 3, 3}), seed++),
                                       Random(t, Shape({3}), seed++)},
                         JoinAttrs(act, "group=3,pads=[1,1,1,1]"));
    }
  }
}

// Values in [-1, 1] and sums of at most 64 terms: float32's rounding of the
// sum stays within its default bound wherever the sum cancels to near zero.
Tensor SmallValues(DType t, const Shape& s, uint64_t seed) { return Random(t, s, seed, -1, 1); }

// FusedConv's Z (a residual of Y's shape) on every path a convolution can
// take: the shifted GEMM on a grid wider than the output and on one that is
// the output's (float32), strided; im2col with the small-k kernel and with
// OpenBLAS; 1x1 convolutions read in place; channels split; depthwise 3x3
// a channel and eight channels at a time, and the general depthwise loop. Every path with a ReLU (applied as the
// kernel stores), with a bias and without one (B left out); every activation
// kind on one path of each family; float64 and float16 on those too. (All
// of it on every path took a minute under ASan: the references are naive loops.)
TEST(FusedConv, ResidualZMatchesItsReferenceOnEveryPath) {
  struct Case {
    Shape x, w;
    const char* attrs;
    std::map<std::string, int64_t> tunables;
    bool every_kind;  // every activation kind and dtype too
  };
  const Case cases[] = {
      {Shape({1, 32, 12, 14}), Shape({20, 32, 3, 3}), "pads=[1,1,1,1]", {{"tile", 64}}, true},
      {Shape({1, 32, 12, 14}), Shape({20, 32, 3, 3}), "pads=[1,1,1,1]", {}, false},
      {Shape({1, 96, 10, 12}), Shape({8, 96, 3, 1}), "pads=[1,0,1,0]", {}, false},
      {Shape({1, 16, 13, 13}), Shape({10, 16, 3, 3}), "pads=[1,1,1,1],strides=[2,2]", {}, false},
      {Shape({1, 8, 20, 18}), Shape({20, 8, 3, 3}), "pads=[1,1,1,1]", {{"tile", 64}}, false},
      {Shape({1, 40, 6, 7}), Shape({12, 40, 3, 3}), "pads=[1,1,1,1],strides=[2,1]", {}, false},
      {Shape({2, 5, 12, 12}), Shape({7, 5, 1, 1}), "", {{"tile", 64}}, true},
      {Shape({1, 300, 4, 5}), Shape({6, 300, 1, 1}), "", {}, false},
      {Shape({1, 4, 5, 5}), Shape({64, 4, 3, 3}), "pads=[1,1,1,1]", {}, false},
      {Shape({1, 3, 6, 40}), Shape({3, 1, 3, 3}), "group=3,pads=[1,1,1,1]", {}, true},
      {Shape({2, 6, 9, 9}), Shape({6, 1, 3, 3}), "group=6,pads=[1,1,1,1],strides=[2,2]", {}, false},
      {Shape({1, 4, 7, 7}), Shape({4, 1, 5, 5}), "group=4,pads=[2,2,2,2]", {}, false},
      // Depthwise eight channels at a time (dense_depthwise8.h), the rest one at a time.
      {Shape({2, 16, 13, 13}), Shape({16, 1, 3, 3}), "group=16,pads=[1,1,1,1],strides=[2,2]", {}, true},
      {Shape({1, 12, 7, 7}), Shape({12, 1, 3, 3}), "group=12,pads=[1,1,1,1]", {}, false},
  };
  uint64_t seed = 300;
  for (const Case& c : cases) {
    for (DType t : kFusedDtypes) {
      if (t != DType::kF32 && !c.every_kind) continue;
      for (const char* act : {"activation=Relu", "", "activation=Sigmoid", "activation=Clip,activation_min=-1"}) {
        const bool relu = std::string_view(act) == "activation=Relu";
        if (!relu && !(c.every_kind && t == DType::kF32)) continue;
        const std::string attrs = JoinAttrs(act, c.attrs);
        SCOPED_TRACE(std::string(DTypeName(t)) + " " + c.x.ToString() + " " + attrs);
        const Tensor x = SmallValues(t, c.x, seed++), w = SmallValues(t, c.w, seed++);
        const Tensor b = SmallValues(t, Shape({c.w[0]}), seed++);
        auto y = RunReference("FusedConv", {x, w}, ParseAttrs("FusedConv", c.attrs));
        ASSERT_TRUE(y.ok()) << y.status().ToString();
        const Tensor z = Random(t, y->outputs[0].shape(), seed++);
        ExpectFusedMatches("FusedConv", {x, w, b, z}, attrs, c.tunables);
        if (relu) ExpectFusedMatches("FusedConv", {x, w, Tensor(), z}, attrs, c.tunables);
      }
    }
  }
}

// With W frozen (a model's weights), a convolution over at most 256 outputs
// a plane runs the position GEMM, which must give the shifted GEMM's bits
// (W not frozen): with a bias and without, with Z, with each kind of
// activation (clamped as stored, or run after), on two images, strided,
// with K over several slabs, and in blocks of uneven panels and positions.
TEST(FusedConv, PositionGemmGivesTheShiftedGemmsBitsWithBiasResidualAndActivation) {
  if (dense::Avx2PositionGemm() == nullptr) GTEST_SKIP() << "no AVX2+FMA";
  CpuDevice two(2), three(3);
  struct Case {
    Shape x, w;
    const char* attrs;
  };
  const Case cases[] = {
      {Shape({2, 40, 7, 7}), Shape({24, 40, 3, 3}), "pads=[1,1,1,1]"},
      {Shape({1, 300, 6, 5}), Shape({33, 300, 2, 3}), ""},
      {Shape({1, 64, 9, 9}), Shape({20, 64, 3, 3}), "pads=[1,1,1,1],strides=[2,2]"},
      // PositionTiles' uneven cuts (on two workers): 13 panels as 4, 3, 3
      // and 3 by three runs of positions; 49 positions as 25 and 24.
      {Shape({1, 32, 14, 14}), Shape({208, 32, 3, 3}), "pads=[1,1,1,1]"},
      {Shape({1, 40, 7, 7}), Shape({48, 40, 3, 3}), "pads=[1,1,1,1]"},
      // Five pairs of panels over one run of positions: on two workers the
      // fifth in two blocks of positions (PositionTiles::SplitLeftOver).
      {Shape({1, 40, 7, 7}), Shape({160, 40, 3, 3}), "pads=[1,1,1,1]"},
  };
  uint64_t seed = 900;
  for (const Case& c : cases) {
    for (const char* act : {"activation=Relu", "", "activation=Sigmoid", "activation=Clip,activation_min=-1"}) {
      for (bool with_bias : {true, false}) {
        const std::string attrs = JoinAttrs(act, c.attrs);
        SCOPED_TRACE(c.x.ToString() + " " + attrs + (with_bias ? " bias" : " no bias"));
        const Tensor x = Random(DType::kF32, c.x, seed++, -1, 1), w = Random(DType::kF32, c.w, seed++, -1, 1);
        const Tensor b = with_bias ? Random(DType::kF32, Shape({c.w[0]}), seed++, -1, 1) : Tensor();
        auto y = RunReference("Conv", {x, w}, ParseAttrs("Conv", c.attrs));
        ASSERT_TRUE(y.ok()) << y.status().ToString();
        const Tensor z = Random(DType::kF32, y->outputs[0].shape(), seed++, -1, 1);
        auto shifted = RunCpu("FusedConv", {x, w, b, z}, ParseAttrs("FusedConv", attrs));
        ASSERT_TRUE(shifted.ok()) << shifted.status().ToString();
        EXPECT_TRUE(Launched(*shifted, "conv_shifted_gemm"));
        auto frozen_w = w.Clone();
        ASSERT_TRUE(frozen_w.ok());
        FreezeBuffer(frozen_w->buffer());
        auto position = RunCpu("FusedConv", {x, *frozen_w, b, z}, ParseAttrs("FusedConv", attrs));
        ASSERT_TRUE(position.ok()) << position.status().ToString();
        EXPECT_TRUE(Launched(*position, "conv_position_gemm"));
        EXPECT_TRUE(SameBits(position->outputs[0], shifted->outputs[0]));
        // The cuts depend on the workers: on devices of two and three,
        // whatever this machine has (blocks left over split by positions).
        for (Device* dev : {static_cast<Device*>(&two), static_cast<Device*>(&three)}) {
          auto cut = Dispatcher::Global().Run("FusedConv", {x, *frozen_w, b, z}, ParseAttrs("FusedConv", attrs),
                                              RunOptions{.device = dev});
          ASSERT_TRUE(cut.ok()) << cut.status().ToString();
          EXPECT_TRUE(SameBits(cut->outputs[0], shifted->outputs[0])) << dev->info().compute_units << " workers";
        }
        ExpectFusedMatches("FusedConv", {x, *frozen_w, b, z}, attrs, {});
      }
    }
  }
}

// 1x1 convolutions over a few positions with a frozen W and 128 channels or
// more run the position GEMM on X packed in its register blocks: with K up
// to 256 the small-k kernel's bits (one pass from the bias, or bias + Z, k in
// order), past it OpenBLAS's sums within tolerance. Planes of 49, 64 and 25
// positions (blocks of six, five and four), two images, 130 channels (a
// part panel), strides 2 and 3 (X read in place, no grid), and strided
// onto 14x14 (up to 256 positions where strided). Fewer channels, a 14x14
// output plane at stride 1, 289 positions, or pads keep their paths.
TEST(FusedConv, PointwiseOverFewPositionsRunsThePackedPositionGemm) {
  if (dense::Avx2PositionGemm() == nullptr) GTEST_SKIP() << "no AVX2+FMA";
  struct Case {
    Shape x, w;
    const char* attrs;
    bool position;
  };
  const Case cases[] = {
      {Shape({1, 160, 7, 7}), Shape({128, 160, 1, 1}), "", true},
      {Shape({1, 96, 7, 7}), Shape({160, 96, 1, 1}), "", true},  // five pairs: the last split on two workers
      {Shape({2, 40, 7, 7}), Shape({144, 40, 1, 1}), "", true},
      {Shape({1, 64, 5, 5}), Shape({128, 64, 1, 1}), "", true},
      {Shape({1, 300, 8, 8}), Shape({130, 300, 1, 1}), "", true},
      {Shape({1, 64, 14, 14}), Shape({128, 64, 1, 1}), "strides=[2,2]", true},
      {Shape({2, 40, 13, 14}), Shape({128, 40, 1, 1}), "strides=[3,2]", true},
      {Shape({1, 64, 28, 28}), Shape({128, 64, 1, 1}), "strides=[2,2]", true},  // 196 positions, strided
      {Shape({1, 32, 34, 34}), Shape({128, 32, 1, 1}), "strides=[2,2]", false},  // 289: past 256
      {Shape({1, 160, 7, 7}), Shape({112, 160, 1, 1}), "", false},
      {Shape({1, 64, 14, 14}), Shape({128, 64, 1, 1}), "", false},
      {Shape({1, 64, 5, 5}), Shape({128, 64, 1, 1}), "pads=[1,1,1,1]", false},
  };
  uint64_t seed = 1300;
  for (const Case& c : cases) {
    for (const char* act : {"activation=Relu", "", "activation=Sigmoid"}) {
      for (bool with_z : {false, true}) {
        const std::string attrs = JoinAttrs(act, c.attrs);
        SCOPED_TRACE(c.x.ToString() + " " + c.w.ToString() + " " + attrs + (with_z ? " Z" : ""));
        const Tensor x = Random(DType::kF32, c.x, seed++, -1, 1), w = Random(DType::kF32, c.w, seed++, -1, 1);
        const Tensor b = Random(DType::kF32, Shape({c.w[0]}), seed++, -1, 1);
        auto y = RunReference("Conv", {x, w}, ParseAttrs("Conv", c.attrs));
        ASSERT_TRUE(y.ok()) << y.status().ToString();
        const Tensor z = with_z ? Random(DType::kF32, y->outputs[0].shape(), seed++, -1, 1) : Tensor();
        auto frozen_w = w.Clone();
        ASSERT_TRUE(frozen_w.ok());
        FreezeBuffer(frozen_w->buffer());
        auto kept = RunCpu("FusedConv", {x, *frozen_w, b, z}, ParseAttrs("FusedConv", attrs));
        ASSERT_TRUE(kept.ok()) << kept.status().ToString();
        EXPECT_EQ(Launched(*kept, "conv_position_pack"), c.position);
        EXPECT_EQ(Launched(*kept, "conv_position_gemm"), c.position);
        if (c.position && c.x[1] <= dense::kSmallK) {
          auto small_k = RunCpu("FusedConv", {x, w, b, z}, ParseAttrs("FusedConv", attrs));
          ASSERT_TRUE(small_k.ok()) << small_k.status().ToString();
          EXPECT_FALSE(Launched(*small_k, "conv_position_gemm"));
          EXPECT_TRUE(SameBits(kept->outputs[0], small_k->outputs[0]));
        }
        ExpectFusedMatches("FusedConv", {x, *frozen_w, b, z}, attrs, {});
      }
    }
  }
}

// Z must be Y's shape and dtype: one line that names it, before any kernel runs.
TEST(FusedConv, AResidualOfAnotherShapeIsRefused) {
  const Tensor x = Random(DType::kF32, Shape({1, 2, 5, 5}), 1), w = Random(DType::kF32, Shape({3, 2, 3, 3}), 2);
  const Tensor z = Random(DType::kF32, Shape({1, 3, 3, 4}), 3);
  ExpectError(RunCpu("FusedConv", {x, w, Tensor(), z}, ParseAttrs("FusedConv", "")),
              {"input Z is float32[1,3,3,4]", "expected the output's float32[1,3,3,3]"});
}

TEST(FusedGemm, EveryActivationMatchesItsReferenceSplitByRowsAndByColumns) {
  // The activations on the row split; the other cuts (the same epilogue
  // code) with none and one activation: Gemm's reference loops are the cost
  // (a minute and a half under ASan with every activation and dtype on each).
  uint64_t seed = 100;
  for (DType t : kFusedDtypes) {
    // Every activation in float32; float64 (its own epilogue loops) and
    // float16 (float32 inside) with a clamp and a transcendental one.
    const std::vector<const char*> acts =
        t == DType::kF32 ? std::vector<const char*>(std::begin(kFusedActivations), std::end(kFusedActivations))
                         : std::vector<const char*>{"", kFusedActivations[5], kFusedActivations[6]};
    for (const char* act : acts) {
      SCOPED_TRACE(std::string(DTypeName(t)) + " " + act);
      // 192 x 240 x 24 (2.2 MFLOP): cut by rows; C broadcast per column.
      ExpectFusedMatches("FusedGemm", {SmallValues(t, Shape({192, 24}), seed++), SmallValues(t, Shape({240, 24}), seed++),
                                       SmallValues(t, Shape({240}), seed++)},
                         JoinAttrs(act, "transB=1,beta=0.5"));
    }
    for (const char* act : t == DType::kF32 ? std::vector<const char*>{"", "activation=Gelu"}
                                            : std::vector<const char*>{""}) {
      SCOPED_TRACE(std::string(DTypeName(t)) + " " + act);
      // One row of A, transposed (its elements lda apart), B transposed: a matrix-vector product.
      ExpectFusedMatches("FusedGemm", {SmallValues(t, Shape({64, 1}), seed++), SmallValues(t, Shape({20000, 64}), seed++),
                                       SmallValues(t, Shape({20000}), seed++)},
                         JoinAttrs(act, "transA=1,transB=1"));
      // 8 x 2048 x 64: rows much the shorter side, cut by columns; A transposed, C per row.
      ExpectFusedMatches("FusedGemm", {SmallValues(t, Shape({64, 8}), seed++), SmallValues(t, Shape({64, 2048}), seed++),
                                       SmallValues(t, Shape({8, 1}), seed++)},
                         JoinAttrs(act, "transA=1,alpha=0.25"));
    }
  }
}

TEST(FusedMatMul, EveryActivationMatchesItsReferenceWithItsColumnBias) {
  uint64_t seed = 200;
  for (DType t : kFusedDtypes) {
    for (const char* act : kFusedActivations) {
      SCOPED_TRACE(std::string(DTypeName(t)) + " " + act);
      // B shared by both batches: one GEMM of 192 rows (4.4 MFLOP), cut into blocks.
      ExpectFusedMatches("FusedMatMul", {SmallValues(t, Shape({2, 96, 24}), seed++), SmallValues(t, Shape({24, 480}), seed++),
                                         SmallValues(t, Shape({480}), seed++)},
                         act);
      // One small GEMM per batch.
      ExpectFusedMatches("FusedMatMul", {SmallValues(t, Shape({3, 20, 30}), seed++), SmallValues(t, Shape({3, 30, 10}), seed++),
                                         SmallValues(t, Shape({10}), seed++)},
                         act);
    }
    for (const char* act : {"", "activation=Gelu"}) {
      SCOPED_TRACE(std::string(DTypeName(t)) + " " + act);
      // 8 x 2048 x 64: cut by columns, each block taking its stretch of the bias.
      ExpectFusedMatches("FusedMatMul", {SmallValues(t, Shape({8, 64}), seed++), SmallValues(t, Shape({64, 2048}), seed++),
                                         SmallValues(t, Shape({2048}), seed++)},
                         act);
      // One row (a classifier at batch 1): a matrix-vector product, cut by columns.
      ExpectFusedMatches("FusedMatMul", {SmallValues(t, Shape({1, 64}), seed++), SmallValues(t, Shape({64, 20000}), seed++),
                                         SmallValues(t, Shape({20000}), seed++)},
                         act);
    }
  }
}

TEST(FusedConv, AClipWithOneBoundLeavesTheOtherSideUnbounded) {
  // A 1x1 conv with weight 1: the Clip alone decides. No activation_min:
  // -inf stays -inf (the default bound is -inf, not float's lowest).
  const double inf = std::numeric_limits<double>::infinity();
  for (DType t : {DType::kF32, DType::kF64}) {
    Tensor x = Values(t, Shape({1, 1, 1, 3}), {-inf, -2, 3});
    Tensor w = Values(t, Shape({1, 1, 1, 1}), {1});
    const Attrs attrs = ParseAttrs("FusedConv", "activation=Clip,activation_max=0.5");
    for (const StatusOr<OpRun>& r : {RunCpu("FusedConv", {x, w}, attrs), RunReference("FusedConv", {x, w}, attrs)}) {
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(Values(r->outputs[0]), (std::vector<double>{-inf, -2, 0.5})) << DTypeName(t);
    }
  }
}

// The small-k kernel starts each row at its bias and clamps a ReLU or Clip as
// it stores: NaN must stay NaN there as in the reference (x < 0 is false for
// NaN), with and without a bias, across row blocks of six and a masked panel.
TEST(FusedConv, NaNPassesThroughTheClampsTheSmallKKernelApplies) {
  for (const char* act : {"activation=Relu", "activation=Clip,activation_min=-1,activation_max=0.5", ""}) {
    SCOPED_TRACE(act);
    Tensor x = Random(DType::kF32, Shape({1, 5, 7, 9}), 11);
    float* xs = x.data<float>();
    for (int64_t i = 0; i < x.numel(); i += 13) xs[i] = std::numeric_limits<float>::quiet_NaN();
    const Tensor w = Random(DType::kF32, Shape({13, 5, 1, 1}), 12), b = Random(DType::kF32, Shape({13}), 13);
    ExpectFusedMatches("FusedConv", {x, w, b}, act, {{"tile", 64}});
    ExpectFusedMatches("FusedConv", {x, w}, act);
    const StatusOr<OpRun> r = RunCpu("FusedConv", {x, w}, ParseAttrs("FusedConv", act));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    int64_t nans = 0;
    for (double v : Values(r->outputs[0])) nans += std::isnan(v) ? 1 : 0;
    EXPECT_GT(nans, 0) << "a NaN input reaches the output";
  }
}

TEST(DenseTiles, ConvAndConvTransposeMatchTheirReferencesAtEveryTile) {
  uint64_t seed = 300;
  for (int64_t tile : {0, 64, 256, 1024}) {
    SCOPED_TRACE("tile=" + std::to_string(tile));
    ExpectFusedMatches("Conv", {Random(DType::kF32, Shape({2, 4, 23, 17}), seed++),
                                Random(DType::kF32, Shape({6, 2, 3, 3}), seed++), Random(DType::kF32, Shape({6}), seed++)},
                       "group=2,pads=[1,0,1,2],strides=[1,2],dilations=[2,1]", {{"tile", tile}});
  }
  // The small-k kernel's blocks at the default tiles: whole 16-column panels
  // shared out over ChooseTiles' count of blocks, the partial panel last
  // (900 positions: 57 panels in blocks of 15, 14, 14, 14, the last 13.25).
  for (const char* w : {"[12,8,1,1]", "[12,8,3,3]"}) {
    SCOPED_TRACE(w);
    const Shape ws = *Shape::Parse(w);
    ExpectFusedMatches("FusedConv", {Random(DType::kF32, Shape({1, 8, 30, 30}), seed++), Random(DType::kF32, ws, seed++),
                                     Random(DType::kF32, Shape({12}), seed++)},
                       ws[2] == 3 ? "activation=Relu,pads=[1,1,1,1]" : "activation=Relu");
  }
  // Output channels cut in whole steps of 16 rows as evenly as they go
  // (RowBlocks): 160 channels over 5x5 as 48, 32, 48, 32, through OpenBLAS
  // (1x1) and the shifted GEMM (3x3); 100 as 32, 32, 32 and 4 (a partial step).
  for (const char* w : {"[160,24,1,1]", "[160,24,3,3]", "[100,24,1,1]", "[100,24,3,3]"}) {
    SCOPED_TRACE(w);
    const Shape ws = *Shape::Parse(w);
    ExpectFusedMatches("FusedConv", {Random(DType::kF32, Shape({1, 24, 5, 5}), seed++), Random(DType::kF32, ws, seed++),
                                     Random(DType::kF32, Shape({ws[0]}), seed++)},
                       ws[2] == 3 ? "activation=Relu,pads=[1,1,1,1]" : "activation=Relu");
  }
  // ConvTranspose's GEMM (64 x 625 x 32, A transposed) cut by columns, with its
  // channels-per-block tunable beside it.
  ExpectFusedMatches("ConvTranspose", {Random(DType::kF32, Shape({1, 32, 25, 25}), seed++),
                                       Random(DType::kF32, Shape({32, 16, 2, 2}), seed++)},
                     "strides=[2,2]", {{"block", 1}});
}

}  // namespace
}  // namespace opscope
