#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "ops/builtin/dense_maxpool_same3x3.h"
#include "ops/builtin/dense_smallk.h"
#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;

Tensor Seq4x4() {
  std::vector<double> v;
  for (int i = 0; i < 16; ++i) v.push_back(i);
  return Values(DType::kF32, Shape({1, 1, 4, 4}), v);
}

TEST(DenseMaxPool, HandCheckedWithIndicesInBothStorageOrders) {
  auto r = RunCpu("MaxPool", {Seq4x4()}, "kernel_shape=[2,2],strides=[2,2]", 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outputs[0].shape(), Shape({1, 1, 2, 2}));
  const double want[4] = {5, 7, 13, 15};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r->outputs[0].FlatGetAsDouble(i), want[i]);
    EXPECT_EQ(r->outputs[1].FlatGetAsDouble(i), want[i]);  // value == its row-major index here
  }
  auto c = RunCpu("MaxPool", {Seq4x4()}, "kernel_shape=[2,2],strides=[2,2],storage_order=1", 2);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->outputs[1].FlatGetAsDouble(0), 1 + 1 * 4);  // (h=1, w=1): h + H * w
  EXPECT_EQ(c->outputs[1].FlatGetAsDouble(1), 1 + 3 * 4);  // (h=1, w=3)
}

TEST(DenseMaxPool, CeilModeKeepsThePartialWindow) {
  auto r = RunCpu("MaxPool", {Seq4x4()}, "kernel_shape=[3,3],strides=[2,2],ceil_mode=1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outputs[0].shape(), Shape({1, 1, 2, 2}));
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(3), 15);
}

TEST(DenseMaxPool, MatchesReferenceAcrossGeometriesAndDtypes) {
  const char* attrs[] = {"kernel_shape=[3,3],pads=[1,1,1,1],strides=[2,2]",
                         "kernel_shape=[2,3],dilations=[2,1],ceil_mode=1,strides=[2,2]",
                         "kernel_shape=[3,2],auto_pad=SAME_LOWER,strides=[2,3]",
                         "kernel_shape=[2,2],storage_order=1,pads=[0,1,1,0]"};
  uint32_t seed = 1;
  for (DType t : {DType::kF32, DType::kF64, DType::kF16, DType::kI8, DType::kU8}) {
    for (const char* a : attrs) ExpectMatchesReference("MaxPool", {Random(t, Shape({2, 3, 7, 6}), seed++, 0, 100)}, a, 2);
  }
  ExpectMatchesReference("MaxPool", {Random(DType::kF32, Shape({1, 2, 9}), 5)}, "kernel_shape=[4],strides=[3]", 2);
  ExpectMatchesReference("MaxPool", {Random(DType::kF32, Shape({1, 2, 4, 5, 3}), 6)},
                               "kernel_shape=[2,2,2],pads=[1,0,1,0,1,1]", 2);
}

// Without the Indices output, float32 and float64 run a loop along output
// rows (the other dtypes, and any window with no tap inside X, the general one).
TEST(DenseMaxPool, WithoutIndicesMatchesReferenceAcrossGeometries) {
  const char* attrs[] = {"kernel_shape=[3,3],pads=[1,1,1,1],strides=[2,2]",
                         "kernel_shape=[3,3],pads=[1,1,1,1],strides=[1,1]",
                         "kernel_shape=[3,3],strides=[2,2],ceil_mode=1",
                         "kernel_shape=[2,3],dilations=[2,1],ceil_mode=1,strides=[2,2]",
                         "kernel_shape=[3,2],auto_pad=SAME_LOWER,strides=[2,3]",
                         "kernel_shape=[2,2],pads=[0,1,1,0]"};
  uint32_t seed = 1;
  for (DType t : {DType::kF32, DType::kF64, DType::kF16}) {
    for (const char* a : attrs) ExpectMatchesReference("MaxPool", {Random(t, Shape({2, 3, 9, 8}), seed++)}, a);
  }
  ExpectMatchesReference("MaxPool", {Random(DType::kF32, Shape({1, 2, 9}), 5)}, "kernel_shape=[4],strides=[3]");
  ExpectMatchesReference("MaxPool", {Random(DType::kF32, Shape({1, 2, 4, 5, 3}), 6)},
                         "kernel_shape=[2,2,2],pads=[1,0,1,0,1,1]");
}

// The separable path on rows wide enough for its AVX2 loops and their
// tails (37 columns), bit-exact, with NaNs where the max down the rows and
// the max along them each meet one first, in the middle and last: every
// one-pass window (3 wide at strides 1 and 2), the general row loop (other
// widths, dilations) and, past 64 rows in a window, the per-output loop.
TEST(DenseMaxPool, WideRowsMatchReferenceBitExactWithNaNsAnywhere) {
  const char* attrs[] = {"kernel_shape=[3,3],pads=[1,1,1,1]",
                         "kernel_shape=[3,3],pads=[1,1,1,1],strides=[2,2]",
                         "kernel_shape=[3,3],strides=[2,2],ceil_mode=1",
                         "kernel_shape=[2,2],strides=[2,2]",
                         "kernel_shape=[3,5],dilations=[1,2],pads=[0,2,1,3]",
                         "kernel_shape=[5,3],strides=[1,3],ceil_mode=1",
                         "kernel_shape=[9,9],pads=[4,4,4,4]"};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  uint32_t seed = 40;
  for (DType t : {DType::kF32, DType::kF64}) {
    for (const char* a : attrs) {
      Tensor x = Random(t, Shape({1, 3, 11, 37}), seed++);
      // Plane 0 clean; plane 1 NaNs at the left edge, middle and right edge
      // of row 0; plane 2 a column of NaNs in the middle rows.
      for (int64_t w : {0, 18, 36}) x.FlatSetFromDouble(11 * 37 + w, nan);
      for (int64_t h = 4; h < 7; ++h) x.FlatSetFromDouble(2 * 11 * 37 + h * 37 + 23, nan);
      ExpectMatchesReference("MaxPool", {x}, a, -1, ToleranceSpec{.rule = "exact"});
    }
  }
  ExpectMatchesReference("MaxPool", {Random(DType::kF32, Shape({1, 2, 5, 6, 33}), 7)},
                         "kernel_shape=[3,3,3],pads=[1,1,1,1,1,1],strides=[1,2,2]", -1,
                         ToleranceSpec{.rule = "exact"});
}

// Narrow planes at stride 1 that keep their width run as one flat row: the
// row-edge columns redone, the top and bottom output rows apart from the
// run of rows that see the whole window. Bit-exact, NaNs at the corners and
// edges of planes; windows with and without a left pad, wider than tall,
// taller than the plane (every output row an edge), a plane as wide as the
// window, and one output row fewer than input rows.
TEST(DenseMaxPool, NarrowPlanesAsOneFlatRowMatchReferenceBitExact) {
  struct Case {
    Shape x;
    const char* attrs;
  };
  const Case cases[] = {{Shape({1, 4, 7, 7}), "kernel_shape=[3,3],pads=[1,1,1,1]"},
                        {Shape({1, 4, 14, 14}), "kernel_shape=[3,3],pads=[1,1,1,1],ceil_mode=1"},
                        {Shape({1, 3, 7, 9}), "kernel_shape=[5,5],pads=[2,2,2,2]"},
                        {Shape({1, 3, 6, 8}), "kernel_shape=[3,5],pads=[1,2,1,2]"},
                        {Shape({1, 3, 6, 8}), "kernel_shape=[2,2],pads=[0,0,1,1]"},
                        {Shape({1, 3, 5, 6}), "kernel_shape=[1,3],pads=[0,1,0,1]"},
                        {Shape({1, 3, 2, 5}), "kernel_shape=[3,3],pads=[1,1,1,1]"},
                        {Shape({1, 3, 4, 3}), "kernel_shape=[3,3],pads=[1,1,1,1]"},
                        {Shape({1, 3, 6, 5}), "kernel_shape=[3,3],pads=[1,1,0,1]"}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  uint32_t seed = 60;
  for (DType t : {DType::kF32, DType::kF64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(c.x.ToString() + " " + c.attrs);
      Tensor x = Random(t, c.x, seed++);
      const int64_t H = c.x[2], W = c.x[3], plane = H * W;
      // Plane 1: NaN in the first and last element; plane 2: at the end of row 0 and the start of the last row.
      x.FlatSetFromDouble(plane, nan);
      x.FlatSetFromDouble(2 * plane - 1, nan);
      x.FlatSetFromDouble(2 * plane + W - 1, nan);
      x.FlatSetFromDouble(2 * plane + (H - 1) * W, nan);
      ExpectMatchesReference("MaxPool", {x}, c.attrs, -1, ToleranceSpec{.rule = "exact"});
    }
  }
}

// Planes that keep their size run back to back as stretches of about 4096
// floats (MaxPoolStretchAvx2), each lane's column and row told by counters
// that wrap. Every width from 1 to 31 meets the counters' steps (8 mod W
// and 8 mod H * W); three stretches, the last one short; a NaN in the
// middle stretch alone (its rerun keeps NaNs, the others take vmaxps); and
// a plane of zeros of both signs, where the first of equal taps must win.
// The 3x3 pad-1 window (fixed at compile time) and others, bit for bit
// against the reference.
// MaxPool of float32 x under `attrs` gives the reference's bits: the
// reference computes in float64, its values as float32, the sign of zero
// and NaN kept.
void ExpectFloatMaxPoolBitsOfReference(const Tensor& x, const char* attrs) {
  auto cpu = RunCpu("MaxPool", {x}, attrs);
  auto ref = RunReference("MaxPool", {x}, ParseAttrs("MaxPool", attrs));
  ASSERT_TRUE(cpu.ok() && ref.ok()) << ErrorOf(cpu) << ErrorOf(ref);
  const Tensor& y = cpu->outputs[0];
  ASSERT_EQ(y.numel(), ref->outputs[0].numel());
  int64_t differ = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float got = y.data<float>()[i], want = static_cast<float>(ref->outputs[0].FlatGetAsDouble(i));
    differ += std::memcmp(&got, &want, sizeof(float)) != 0;
  }
  EXPECT_EQ(differ, 0);
}

TEST(DenseMaxPool, StretchesOfPlanesMatchReferenceBitExact) {
  const char* attrs[] = {"kernel_shape=[3,3],pads=[1,1,1,1]", "kernel_shape=[5,3],pads=[2,1,2,1]",
                         "kernel_shape=[2,1],pads=[1,0,0,0]", "kernel_shape=[1,1]"};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  uint32_t seed = 120;
  for (int64_t w = 1; w <= 31; ++w) {
    for (const char* a : attrs) {
      if (w < 3 && std::strstr(a, "[1,1]") == nullptr && std::strstr(a, "[2,1]") == nullptr) continue;
      SCOPED_TRACE("width " + std::to_string(w) + " " + a);
      const int64_t h = 3 + w % 4, plane = h * w, per = std::max<int64_t>(1, 4096 / plane), planes = 2 * per + 3;
      Tensor x = Random(DType::kF32, Shape({1, planes, h, w}), seed++);
      x.FlatSetFromDouble((per + 1) * plane + plane / 2, nan);
      for (int64_t i = 0; i < plane; ++i) x.FlatSetFromDouble(2 * plane + i, (i * 7 + w) % 3 == 0 ? 0.0 : -0.0);
      ExpectFloatMaxPoolBitsOfReference(x, a);
    }
  }
}

// The 3x3 pad-1 pool that keeps a plane's size, on planes 8 wide or more,
// runs a plane at a time along the plane as one row, then puts right each
// row's first and last column and the plane's first and last row
// (dense_maxpool_same3x3.h). Every width from 8 to 40 and heights from 2
// (no inner row) to 5, where each overlapping last vector lands somewhere
// else; planes of zeros of both signs (the first of equal taps wins), of
// infinities, and a plane with a NaN on an edge column between planes
// without (it alone runs the NaN-keeping body). Bit-exact.
TEST(DenseMaxPool, SameThreeByThreeAlongThePlaneMatchesReferenceBitExact) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  uint32_t seed = 500;
  for (int64_t w = 8; w <= 40; ++w) {
    for (int64_t h = 2; h <= 5; ++h) {
      SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w));
      const int64_t plane = h * w;
      Tensor x = Random(DType::kF32, Shape({1, 5, h, w}), seed++);
      for (int64_t i = 0; i < plane; ++i) {
        x.FlatSetFromDouble(plane + i, (i * 7 + w) % 3 == 0 ? 0.0 : -0.0);
        x.FlatSetFromDouble(2 * plane + i, i % 5 == 0 ? -inf : i % 7 == 0 ? inf : x.FlatGetAsDouble(2 * plane + i));
      }
      x.FlatSetFromDouble(3 * plane + (h - 1) * w + w - 1, nan);  // the last column of the last row
      ExpectFloatMaxPoolBitsOfReference(x, "kernel_shape=[3,3],pads=[1,1,1,1]");
    }
  }
  // inception's sizes, the second plane with a NaN in its first column.
  for (int64_t s : {14, 28, 56}) {
    SCOPED_TRACE(std::to_string(s));
    Tensor x = Random(DType::kF32, Shape({1, 3, s, s}), seed++);
    x.FlatSetFromDouble(s * s + 5 * s, nan);
    ExpectFloatMaxPoolBitsOfReference(x, "kernel_shape=[3,3],pads=[1,1,1,1],ceil_mode=1");
  }
}

// The same pool as 512-bit stretches of planes (dense_maxpool_same3x3.h's
// MaxPoolSame3x3StretchAvx512, where the CPU has AVX-512F): every plane
// from 1x1 to 9x9 (vectors that span several planes), inception's 7x7 to
// 28x28, and 16x16 (the largest taken) and 16x17 (past it); 19 planes, a
// block of 16 and a tail; planes of zeros of both signs and of infinities.
// Bit-exact with the 512-bit blocks off and on, through the op; and the
// kernel itself, called directly, gives the reference's bits or says false
// on a NaN.
TEST(DenseMaxPool, SameThreeByThreeIn512BitStretchesMatchesReferenceBitExact) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (int64_t h = 1; h <= 9; ++h) {
    for (int64_t w = 1; w <= 9; ++w) sizes.push_back({h, w});
  }
  for (int64_t s : {7, 14, 28}) sizes.push_back({s, s});
  sizes.push_back({16, 16});
  sizes.push_back({16, 17});
  const char* attrs = "kernel_shape=[3,3],pads=[1,1,1,1]";
  uint32_t seed = 900;
  for (const auto& [h, w] : sizes) {
    SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w));
    const int64_t plane = h * w, planes = 19;
    Tensor x = Random(DType::kF32, Shape({1, planes, h, w}), seed++);
    for (int64_t i = 0; i < plane; ++i) {
      x.FlatSetFromDouble(plane + i, (i * 7 + w) % 3 == 0 ? 0.0 : -0.0);
      x.FlatSetFromDouble(2 * plane + i, i % 5 == 0 ? -inf : i % 7 == 0 ? inf : x.FlatGetAsDouble(2 * plane + i));
    }
    ForWideBlocksOffAndOn([&] { ExpectFloatMaxPoolBitsOfReference(x, attrs); });
    if (!dense::WideBlocks() || plane > dense::kSame3x3StretchMaxPlane) continue;
    auto ref = RunReference("MaxPool", {x}, ParseAttrs("MaxPool", attrs));
    ASSERT_TRUE(ref.ok()) << ErrorOf(ref);
    std::vector<float> y(static_cast<size_t>(planes * plane)), scratch(y.size());
    ASSERT_TRUE(dense::MaxPoolSame3x3StretchAvx512(x.data<float>(), planes, h, w, y.data(), scratch.data()));
    int64_t differ = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      const float want = static_cast<float>(ref->outputs[0].FlatGetAsDouble(static_cast<int64_t>(i)));
      differ += std::memcmp(&y[i], &want, sizeof(float)) != 0;
    }
    EXPECT_EQ(differ, 0);
    x.FlatSetFromDouble(planes * plane - 1, std::numeric_limits<double>::quiet_NaN());
    EXPECT_FALSE(dense::MaxPoolSame3x3StretchAvx512(x.data<float>(), planes, h, w, y.data(), scratch.data()));
  }
}

// 2- and 3-wide windows at strides 1 and 2 run a float32 AVX2 body whose row
// tails are single vectors (masked loads, the plane's last output row stored
// lane by lane, the right border rewritten as -inf). Every width from the
// window's to past five vectors, so each tail length meets each stride and
// padding; NaNs in the last column of the first plane and at the start of
// the last row of the last, both of which a tail lane takes; and planes
// taller than one group of rows. Bit-exact.
TEST(DenseMaxPool, NarrowWindowsAtEveryWidthMatchReferenceBitExact) {
  const char* attrs[] = {"kernel_shape=[3,3],pads=[1,1,1,1],strides=[2,2]",
                         "kernel_shape=[3,3],pads=[0,0,1,1],strides=[2,2]",
                         "kernel_shape=[3,3],strides=[2,2],ceil_mode=1",
                         "kernel_shape=[3,3],strides=[2,2]",
                         "kernel_shape=[3,3]",
                         "kernel_shape=[3,3],pads=[1,1,1,1]",
                         "kernel_shape=[3,3],pads=[1,0,1,1],strides=[1,2]",
                         "kernel_shape=[2,2],strides=[2,2],ceil_mode=1",
                         "kernel_shape=[2,2],pads=[0,1,0,0]"};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  uint32_t seed = 80;
  for (int64_t w = 3; w <= 70; ++w) {
    if (w > 42 && w % 3 != 0 && w != 63 && w != 64 && w != 65) continue;  // past 42 a sample, and either side of 64
    for (const char* a : attrs) {
      SCOPED_TRACE("width " + std::to_string(w) + " " + a);
      const int64_t h = 5 + w % 3, plane = h * w;
      Tensor x = Random(DType::kF32, Shape({1, 3, h, w}), seed++);
      x.FlatSetFromDouble(w - 1, nan);
      x.FlatSetFromDouble(2 * plane + (h - 1) * w, nan);
      ExpectMatchesReference("MaxPool", {x}, a, -1, ToleranceSpec{.rule = "exact"});
    }
  }
  // Narrow planes taller than one group of rows (rows of up to 64 columns go
  // down the window a group at a time, 4096 floats of buffer at most).
  for (int64_t w : {5, 13, 30, 56}) {
    for (const char* a : attrs) {
      SCOPED_TRACE("tall, width " + std::to_string(w) + " " + a);
      Tensor x = Random(DType::kF32, Shape({1, 2, 301, w}), seed++);
      x.FlatSetFromDouble(250 * w + w - 1, nan);
      ExpectMatchesReference("MaxPool", {x}, a, -1, ToleranceSpec{.rule = "exact"});
    }
  }
}

// Strided 2x2 and 3x3 pools with output rows of at most 8 run eight planes
// at a time with the channels in the lanes (dense_pool.cc's
// MaxPoolEightAvx2). 19 planes: two runs of eight in the first block of
// 16, the rest a plane at a time; every input width from 2 to 17, with
// ceil_mode and pads; NaNs in the first run, a plane of signed zeros (equal
// values: the first in the reference's order wins). Bit-exact.
TEST(DenseMaxPool, EightPlanesAtATimeMatchReferenceBitExact) {
  // With 512-bit kernels planes 9 wide or more run two output rows a vector
  // (dense_maxpool_s2.h); with them off, eight planes at a time.
  ForWideBlocksOffAndOn([] {
    const char* attrs[] = {"kernel_shape=[2,2],strides=[2,2]", "kernel_shape=[2,2],strides=[2,2],ceil_mode=1",
                           "kernel_shape=[3,3],strides=[2,2]", "kernel_shape=[3,3],strides=[2,2],ceil_mode=1",
                           "kernel_shape=[3,3],strides=[2,2],pads=[1,1,1,1]",
                           "kernel_shape=[3,3],strides=[2,2],pads=[0,0,1,1]"};
    const double nan = std::numeric_limits<double>::quiet_NaN();
    uint32_t seed = 300;
    for (int64_t w = 2; w <= 17; ++w) {
      for (const char* a : attrs) {
        if (w < 3 && std::strstr(a, "[3,3]") != nullptr && std::strstr(a, "pads") == nullptr) continue;
        SCOPED_TRACE("width " + std::to_string(w) + " " + a);
        const int64_t h = 3 + w % 5, plane = h * w;
        Tensor x = Random(DType::kF32, Shape({1, 19, h, w}), seed++);
        x.FlatSetFromDouble(plane + w - 1, nan);             // plane 1: its first row's last column
        x.FlatSetFromDouble(6 * plane + (h - 1) * w, nan);   // plane 6: its last row's first column
        for (int64_t i = 0; i < plane; ++i) x.FlatSetFromDouble(3 * plane + i, (i * 5 + w) % 3 == 0 ? 0.0 : -0.0);
        ExpectFloatMaxPoolBitsOfReference(x, a);
      }
    }
  });
}

// Strided pools run in 512-bit vectors straight from X
// (dense_maxpool_s2.h), where the CPU has them, and dense_pool.cc's narrow
// body (or eight planes at a time) where it does not: both against the
// reference, bit for bit. Rows of 9 to 16 (output rows of 8 or fewer, two
// to a vector, and 17: one a vector); widths around one and two vectors' 32 columns
// (the column past them read into a lane of its own), left pads of 0 and
// 1, 2- and 3-wide windows, ceil_mode's partial windows; planes small
// enough to be read for NaNs whole and larger ones read a row at a time,
// with a NaN in the plane's first row, in its last (found after most of
// the plane was written), and in the column past a vector's 32; a plane
// of signed zeros (the first of equal taps wins) and one of -inf.
void StridedRowCasesMatchReferenceBitExact() {
  const char* attrs[] = {"kernel_shape=[3,3],strides=[2,2]", "kernel_shape=[3,3],strides=[2,2],ceil_mode=1",
                         "kernel_shape=[3,3],strides=[2,2],pads=[1,1,1,1]",
                         "kernel_shape=[2,2],strides=[2,2],ceil_mode=1",
                         "kernel_shape=[2,2],strides=[2,2],pads=[1,1,0,0]",
                         "kernel_shape=[3,2],strides=[1,2],pads=[1,0,1,0]"};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  uint32_t seed = 700;
  for (int64_t w : {9, 14, 16, 17, 18, 31, 32, 33, 34, 63, 64, 65, 66, 97, 112}) {
    for (int64_t h : {5, 70}) {
      for (const char* a : attrs) {
        SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w) + " " + a);
        const int64_t plane = h * w;
        Tensor x = Random(DType::kF32, Shape({1, 6, h, w}), seed++);
        x.FlatSetFromDouble(plane + 3, nan);                         // plane 1: its first row
        x.FlatSetFromDouble(2 * plane + (h - 1) * w + w / 2, nan);   // plane 2: its last row
        if (w > 32) x.FlatSetFromDouble(3 * plane + w + 32, nan);    // plane 3: column 32 of row 1
        for (int64_t i = 0; i < plane; ++i) {
          x.FlatSetFromDouble(4 * plane + i, (i * 7 + w) % 3 == 0 ? 0.0 : -0.0);
          x.FlatSetFromDouble(5 * plane + i, -std::numeric_limits<double>::infinity());
        }
        ExpectFloatMaxPoolBitsOfReference(x, a);
      }
    }
  }
}

TEST(DenseMaxPool, StridedRowsIn512BitVectorsMatchReferenceBitExact) {
  ForWideBlocksOffAndOn(StridedRowCasesMatchReferenceBitExact);
}

TEST(DenseMaxPool, WithoutIndicesNaNWinsAndMinusInfinityIsAValue) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (DType t : {DType::kF32, DType::kF64}) {
    Tensor x = Values(t, Shape({1, 1, 2, 3}), {1, nan, -inf, -inf, -inf, 2});
    auto r = RunCpu("MaxPool", {x}, "kernel_shape=[1,2]");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const Tensor& y = r->outputs[0];
    EXPECT_TRUE(std::isnan(y.FlatGetAsDouble(0)));  // max(1, NaN)
    EXPECT_TRUE(std::isnan(y.FlatGetAsDouble(1)));  // max(NaN, -inf)
    EXPECT_EQ(y.FlatGetAsDouble(2), -inf);          // max(-inf, -inf)
    EXPECT_EQ(y.FlatGetAsDouble(3), 2);
  }
}

TEST(DenseAveragePool, HandCheckedPaddingCounts) {
  // 1-D [1 2 3], kernel 2, pads 1 both sides: windows [pad,1] [2,3]... stride 2.
  Tensor x = Values(DType::kF32, Shape({1, 1, 3}), {1, 2, 3});
  auto ex = RunCpu("AveragePool", {x}, "kernel_shape=[2],pads=[1,1],strides=[2]");
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  ASSERT_EQ(ex->outputs[0].shape(), Shape({1, 1, 2}));
  EXPECT_EQ(ex->outputs[0].FlatGetAsDouble(0), 1);    // only x[0] counts
  EXPECT_EQ(ex->outputs[0].FlatGetAsDouble(1), 2.5);
  auto in = RunCpu("AveragePool", {x}, "kernel_shape=[2],pads=[1,1],strides=[2],count_include_pad=1");
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  EXPECT_EQ(in->outputs[0].FlatGetAsDouble(0), 0.5);  // (0 + 1) / 2
}

TEST(DenseAveragePool, MatchesReferenceAcrossGeometriesAndDtypes) {
  const char* attrs[] = {"kernel_shape=[3,3],pads=[1,1,1,1],strides=[2,2]",
                         "kernel_shape=[3,3],pads=[1,1,1,1],strides=[2,2],count_include_pad=1",
                         "kernel_shape=[3,2],ceil_mode=1,strides=[2,2],count_include_pad=1",
                         "kernel_shape=[2,2],auto_pad=SAME_UPPER"};
  uint32_t seed = 50;
  for (DType t : {DType::kF32, DType::kF64, DType::kF16}) {
    for (const char* a : attrs) ExpectMatchesReference("AveragePool", {Random(t, Shape({2, 3, 7, 6}), seed++)}, a);
    ExpectMatchesReference("AveragePool", {Random(t, Shape({1, 2, 4, 5, 3}), seed++)}, "kernel_shape=[2,3,2]");
  }
}

// AveragePool sums a row of outputs a tap column at a time where the
// windows lie inside X's columns, and one output at a time at the edges:
// both give each output the float sum of its inside taps in the window's
// row-major order, from zero, as computed here one output at a time, bit
// for bit. 29 columns: interiors of 8-lane vectors and tails, at every
// stride and pad.
TEST(DenseAveragePool, ARowAtATimeGivesTheBitsOfOneOutputAtATime) {
  struct Case {
    int64_t k, s, pt, pl, pb, pr;
    bool include_pad;
  };
  const Case cases[] = {{3, 1, 1, 1, 1, 1, false}, {3, 2, 1, 1, 1, 1, false}, {3, 2, 1, 1, 1, 1, true},
                        {2, 2, 0, 0, 0, 0, false}, {5, 1, 2, 2, 2, 2, true},  {3, 2, 0, 1, 2, 0, false},
                        {3, 3, 1, 2, 0, 1, true},  {1, 1, 0, 0, 0, 0, false}, {4, 1, 3, 3, 3, 3, false}};
  const int64_t H = 11, W = 29, planes = 6;
  const Tensor x = Random(DType::kF32, Shape({2, 3, H, W}), 77);
  const float* xp = x.data<float>();
  for (const Case& c : cases) {
    char attrs[160];
    std::snprintf(attrs, sizeof attrs,
                  "kernel_shape=[%lld,%lld],strides=[%lld,%lld],pads=[%lld,%lld,%lld,%lld],count_include_pad=%d",
                  static_cast<long long>(c.k), static_cast<long long>(c.k), static_cast<long long>(c.s),
                  static_cast<long long>(c.s), static_cast<long long>(c.pt), static_cast<long long>(c.pl),
                  static_cast<long long>(c.pb), static_cast<long long>(c.pr), c.include_pad ? 1 : 0);
    SCOPED_TRACE(attrs);
    auto r = RunCpu("AveragePool", {x}, attrs);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const int64_t OH = (H + c.pt + c.pb - c.k) / c.s + 1, OW = (W + c.pl + c.pr - c.k) / c.s + 1;
    ASSERT_EQ(r->outputs[0].shape(), Shape({2, 3, OH, OW}));
    const float* y = r->outputs[0].data<float>();
    int differ = 0;
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t oh = 0; oh < OH; ++oh) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          float sum = 0;
          int64_t inside = 0, padded = 0;
          for (int64_t kh = 0; kh < c.k; ++kh) {
            for (int64_t kw = 0; kw < c.k; ++kw) {
              const int64_t ih = oh * c.s - c.pt + kh, iw = ow * c.s - c.pl + kw;
              padded += ih < H + c.pb && iw < W + c.pr;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              sum += xp[(p * H + ih) * W + iw];
              ++inside;
            }
          }
          const float want = sum / static_cast<float>(c.include_pad ? padded : inside);
          const float got = y[(p * OH + oh) * OW + ow];
          differ += std::memcmp(&want, &got, sizeof want) != 0;
        }
      }
    }
    EXPECT_EQ(differ, 0) << "outputs whose bits differ from one output at a time";
  }
}

// GlobalAveragePool sums each plane as ReduceMean sums a row (eight partial
// sums in double, combined in order), so a float32 plane averages to
// ReduceMean's bits over the same axes; the planes go in blocks of about
// 32768 inputs (12 of [2,3,37,41]'s 1517-element planes a block), and every
// cut gives the same bits.
void GlobalAveragePoolCasesGiveReduceMeansBits() {
  const Tensor x = Random(DType::kF32, Shape({2, 3, 37, 41}), 21);
  auto mean = RunCpu("ReduceMean", {x}, "axes=[2,3]");
  ASSERT_TRUE(mean.ok()) << mean.status().ToString();
  for (int64_t inputs : {int64_t{32768}, int64_t{1517}, int64_t{1} << 30}) {
    auto r = RunCpu("GlobalAveragePool", {x}, Attrs(), -1, {{"block_inputs", inputs}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->outputs[0].numel(), 6);
    ASSERT_EQ(r->launches.size(), 1u);
    const int64_t block = std::max<int64_t>(1, inputs / 1517);
    EXPECT_EQ(r->launches[0].config.grid.x, (6 + block - 1) / block) << inputs;
    EXPECT_EQ(std::memcmp(r->outputs[0].data<float>(), mean->outputs[0].data<float>(), 6 * sizeof(float)), 0)
        << "block_inputs " << inputs;
  }
  // Where the order shows: 1e20 at 0 and -1e20 at 8 cancel in the same
  // partial sum, and none of the 98 ones is lost beside them (one chain of
  // adds loses the seven between them: 0.91).
  std::vector<double> v(100, 1.0);
  v[0] = 1e20, v[8] = -1e20;
  const Tensor order = Values(DType::kF32, Shape({1, 1, 10, 10}), v);
  auto gap = RunCpu("GlobalAveragePool", {order});
  auto rm = RunCpu("ReduceMean", {order}, "axes=[2,3]");
  ASSERT_TRUE(gap.ok() && rm.ok());
  EXPECT_EQ(gap->outputs[0].data<float>()[0], 0.98f);
  EXPECT_EQ(rm->outputs[0].data<float>()[0], 0.98f);
  // The floats past the last eight join the first partial sum: 1e20 there
  // cancels the -1e20 that starts the tail, so the three ones after it
  // count (0.87; joined elsewhere, 0.72).
  std::vector<double> t(100, 1.0);
  t[0] = 1e20, t[96] = -1e20;
  auto tail = RunCpu("GlobalAveragePool", {Values(DType::kF32, Shape({1, 1, 10, 10}), t)});
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->outputs[0].data<float>()[0], 0.87f);
  // mobilenet_v2's last planes (7x7: six vectors of eight and one float),
  // and planes under eight floats.
  for (const Shape& shape : {Shape({1, 1280, 7, 7}), Shape({2, 9, 2, 3})}) {
    const Tensor planes = Random(DType::kF32, shape, 22);
    auto g = RunCpu("GlobalAveragePool", {planes});
    auto m = RunCpu("ReduceMean", {planes}, "axes=[2,3]");
    ASSERT_TRUE(g.ok() && m.ok());
    EXPECT_EQ(std::memcmp(g->outputs[0].data<float>(), m->outputs[0].data<float>(),
                          static_cast<size_t>(g->outputs[0].numel()) * sizeof(float)), 0)
        << shape.ToString();
  }
}

// The float planes run eight partial sums in one vector of doubles where
// the CPU has AVX-512F: with the 512-bit blocks off and on.
TEST(DenseGlobalAveragePool, GivesReduceMeansBitsInBlocksCutByTheirInputs) {
  ForWideBlocksOffAndOn(GlobalAveragePoolCasesGiveReduceMeansBits);
}

TEST(DenseGlobalAveragePool, HandCheckedAndMatchesReference) {
  auto r = RunCpu("GlobalAveragePool", {Seq4x4()});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->outputs[0].shape(), Shape({1, 1, 1, 1}));
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(0), 7.5);
  for (DType t : {DType::kF32, DType::kF64, DType::kF16}) {
    ExpectMatchesReference("GlobalAveragePool", {Random(t, Shape({2, 3, 5, 4}), 3)});
  }
  ExpectError(RunCpu("GlobalAveragePool", {Random(DType::kF32, Shape({2, 3}), 1)}), {"[2,3]", "rank >= 3"});
}

TEST(DensePool, BadInputsNameTheProblem) {
  ExpectError(RunCpu("MaxPool", {Seq4x4()}, ""), {"kernel_shape"});
  ExpectError(RunCpu("MaxPool", {Seq4x4()}, "kernel_shape=[2,2],pads=[1,1,1]"), {"pads=[1,1,1]", "expected 4"});
  ExpectError(RunCpu("AveragePool", {Seq4x4()}, "kernel_shape=[2]"), {"kernel_shape=[2]", "2 spatial dims"});
  ExpectError(RunCpu("MaxPool", {Seq4x4()}, "kernel_shape=[2,2],storage_order=2"), {"storage_order=2"});
  ExpectError(RunCpu("AveragePool", {Random(DType::kI8, Shape({1, 1, 4}), 1)}, "kernel_shape=[2]"), {"dtype int8"});
}

}  // namespace
}  // namespace opscope
