#include <gtest/gtest.h>

#include "core/frozen_buffer.h"
#include "ops/builtin/dense_blas.h"
#include "ops/builtin/dense_smallk.h"
#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;

const DType kFloats[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};

TEST(DenseMatMul, HandChecked2x3Times3x2) {
  Tensor a = Values(DType::kF32, Shape({2, 3}), {1, 2, 3, 4, 5, 6});
  Tensor b = Values(DType::kF32, Shape({3, 2}), {7, 8, 9, 10, 11, 12});
  auto r = RunCpu("MatMul", {a, b});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = [58 64; 139 154]
  EXPECT_EQ(r->outputs[0].shape(), Shape({2, 2}));
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(0), 58);
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(1), 64);
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(2), 139);
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(3), 154);
}

TEST(DenseMatMul, OneDimOperandsArePromotedAndDropped) {
  Tensor v = Values(DType::kF32, Shape({3}), {1, 2, 3});
  Tensor m = Values(DType::kF32, Shape({3, 2}), {1, 0, 0, 1, 1, 1});
  auto vm = RunCpu("MatMul", {v, m});
  ASSERT_TRUE(vm.ok()) << vm.status().ToString();
  EXPECT_EQ(vm->outputs[0].shape(), Shape({2}));
  EXPECT_EQ(vm->outputs[0].FlatGetAsDouble(0), 4);
  EXPECT_EQ(vm->outputs[0].FlatGetAsDouble(1), 5);
  auto vv = RunCpu("MatMul", {v, v});
  ASSERT_TRUE(vv.ok()) << vv.status().ToString();
  EXPECT_EQ(vv->outputs[0].shape(), Shape());
  EXPECT_EQ(vv->outputs[0].FlatGetAsDouble(0), 14);
}

TEST(DenseMatMul, BatchedBroadcastMatchesReferenceForEveryFloatDtype) {
  for (DType t : kFloats) {
    ExpectMatchesReference("MatMul", {Random(t, Shape({2, 1, 3, 5}), 1), Random(t, Shape({4, 5, 6}), 2)});
    ExpectMatchesReference("MatMul", {Random(t, Shape({3, 7, 9}), 3), Random(t, Shape({9, 4}), 4)});
    ExpectMatchesReference("MatMul", {Random(t, Shape({9}), 5), Random(t, Shape({2, 9, 3}), 6)});
  }
}

TEST(DenseMatMul, IntegerMatchesReferenceExactly) {
  for (DType t : {DType::kI32, DType::kI64}) {
    ExpectMatchesReference("MatMul", {Random(t, Shape({2, 3, 4}), 7, -50, 50), Random(t, Shape({4, 5}), 8, -50, 50)});
  }
}

TEST(DenseMatMul, BadInputsNameTheProblem) {
  ExpectError(RunCpu("MatMul", {Random(DType::kF32, Shape({2, 3}), 1), Random(DType::kF32, Shape({4, 2}), 2)}),
              {"inner dims differ", "[2,3]", "[4,2]"});
  ExpectError(RunCpu("MatMul", {Random(DType::kF32, Shape({2, 2, 3}), 1), Random(DType::kF32, Shape({3, 3, 2}), 2)}),
              {"batch dims", "do not broadcast"});
  ExpectError(RunCpu("MatMul", {Random(DType::kI8, Shape({2, 2}), 1), Random(DType::kI8, Shape({2, 2}), 2)}),
              {"dtype int8"});
}

std::string LaunchesOf(const OpRun& r) {
  std::string names;
  for (const KernelLaunchInfo& l : r.launches) names += l.name + " ";
  return names;
}

// Float32 MatMul and Gemm with 16 rows or more run the packed kernel
// (dense_smallk.h): on panels kept beside B where B is frozen (a model's
// weights), else packed by each block. Either way, and as Gemm on B
// transposed, every output sums the same products in the same order: the
// same bits. Shapes end on partial panels (n = 1, 15, 33, 40), run one slab
// (k up to 256) or several (257, 600, 1024), and 17 or 33 rows leave a
// block of fewer than six.
TEST(DenseMatMul, PackedPanelsGiveTheSameBitsKeptOrPackedAndAsGemmTransB) {
  if (dense::Avx2PackedGemm() == nullptr) GTEST_SKIP() << "no AVX2+FMA: OpenBLAS runs every float GEMM";
  struct Case {
    int64_t m, k, n;
  };
  const ToleranceSpec tolerance{.atol = 2e-4, .rtol = 1e-5};  // long sums: see DenseConv's shifted GEMM test
  uint64_t seed = 700;
  for (const Case c : {Case{16, 1, 1}, Case{17, 5, 15}, Case{100, 256, 33}, Case{128, 257, 1024},
                       Case{64, 1024, 256}, Case{33, 600, 40}}) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n));
    const Tensor a = Random(DType::kF32, Shape({c.m, c.k}), seed++, -1, 1);
    const Tensor b = Random(DType::kF32, Shape({c.k, c.n}), seed++, -1, 1);
    Tensor bt = Random(DType::kF32, Shape({c.n, c.k}), 1);
    for (int64_t p = 0; p < c.k; ++p)
      for (int64_t j = 0; j < c.n; ++j) bt.data<float>()[j * c.k + p] = b.data<float>()[p * c.n + j];
    ExpectMatchesReference("MatMul", {a, b}, Attrs{}, -1, tolerance);

    auto packed = RunCpu("MatMul", {a, b});
    ASSERT_TRUE(packed.ok()) << packed.status().ToString();
    EXPECT_TRUE(Launched(*packed, "matmul_gemm_panels")) << LaunchesOf(*packed);
    auto gemm_packed = RunCpu("Gemm", {a, bt}, "transB=1");
    ASSERT_TRUE(gemm_packed.ok()) << gemm_packed.status().ToString();
    EXPECT_TRUE(Launched(*gemm_packed, "gemm_panels")) << LaunchesOf(*gemm_packed);

    FreezeBuffer(b.buffer());
    FreezeBuffer(bt.buffer());
    for (int call = 0; call < 2; ++call) {  // packed on the first call, kept for the second
      auto kept = RunCpu("MatMul", {a, b});
      ASSERT_TRUE(kept.ok()) << kept.status().ToString();
      EXPECT_TRUE(Launched(*kept, "matmul_gemm_kept_panels")) << LaunchesOf(*kept);
      EXPECT_TRUE(SameBits(kept->outputs[0], packed->outputs[0]));
      auto gemm_kept = RunCpu("Gemm", {a, bt}, "transB=1");
      ASSERT_TRUE(gemm_kept.ok()) << gemm_kept.status().ToString();
      EXPECT_TRUE(Launched(*gemm_kept, "gemm_kept_panels")) << LaunchesOf(*gemm_kept);
      EXPECT_TRUE(SameBits(gemm_kept->outputs[0], packed->outputs[0]));
      EXPECT_TRUE(SameBits(gemm_packed->outputs[0], packed->outputs[0]));
    }
    ExpectMatchesReference("Gemm", {a, bt}, ParseAttrs("Gemm", "transB=1"), -1, tolerance);
  }
}

// How a GEMM's output is cut over two workers: along the rows, along the
// columns where the rows are few, in one block under 2 MFLOP unless B is
// 1 MiB or more (a matrix-vector product bound by reading B).
TEST(DenseGemm, SplitCutsByWorkAndByTheBytesOfB) {
  const dense::GemmSplit rows = dense::SplitGemm(128, 256, 1024, 2);
  EXPECT_TRUE(rows.by_rows);
  EXPECT_EQ(rows.parts, 2);
  const dense::GemmSplit small = dense::SplitGemm(1, 100, 100, 2);
  EXPECT_EQ(small.parts, 1);
  const dense::GemmSplit gemv = dense::SplitGemm(1, 1000, 512, 2);  // 1 MFLOP, 2 MB of B
  EXPECT_FALSE(gemv.by_rows);
  EXPECT_EQ(gemv.parts, 2);
  EXPECT_EQ(dense::SplitGemm(1, 500, 500, 2).parts, 1);  // under 1 MiB of B
}

TEST(DenseGemm, HandCheckedWithAllAttributes) {
  // A^T = [1 2; 3 4], B^T = [1 0; 0 1] => A'B' = [1 2; 3 4]; Y = 2 * that + 0.5 * [10, 20]
  Tensor a = Values(DType::kF32, Shape({2, 2}), {1, 3, 2, 4});
  Tensor b = Values(DType::kF32, Shape({2, 2}), {1, 0, 0, 1});
  Tensor c = Values(DType::kF32, Shape({2}), {10, 20});
  auto r = RunCpu("Gemm", {a, b, c}, "alpha=2,beta=0.5,transA=1,transB=1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(0), 7);
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(1), 14);
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(2), 11);
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(3), 18);
}

TEST(DenseGemm, MatchesReferenceForEveryFloatDtypeAndBiasShape) {
  for (DType t : kFloats) {
    Tensor a = Random(t, Shape({6, 5}), 11), b = Random(t, Shape({5, 7}), 12);
    ExpectMatchesReference("Gemm", {a, b});
    ExpectMatchesReference("Gemm", {a, b, Random(t, Shape({6, 7}), 13)}, "alpha=0.5,beta=2");
    ExpectMatchesReference("Gemm", {a, b, Random(t, Shape({6, 1}), 14)});
    ExpectMatchesReference("Gemm", {a, b, Random(t, Shape(), 15)});
    ExpectMatchesReference("Gemm", {Random(t, Shape({5, 6}), 16), Random(t, Shape({7, 5}), 17),
                                          Random(t, Shape({7}), 18)}, "transA=1,transB=1");
  }
  ExpectMatchesReference("Gemm", {Random(DType::kI32, Shape({3, 4}), 1, -9, 9),
                                        Random(DType::kI32, Shape({4, 2}), 2, -9, 9),
                                        Random(DType::kI32, Shape({2}), 3, -9, 9)});
}

TEST(DenseGemm, BadInputsNameTheProblem) {
  Tensor a = Random(DType::kF32, Shape({2, 3}), 1), b = Random(DType::kF32, Shape({3, 4}), 2);
  ExpectError(RunCpu("Gemm", {a, b, Random(DType::kF32, Shape({3, 4}), 3)}), {"C [3,4]", "[2,4]"});
  ExpectError(RunCpu("Gemm", {a, b}, "transB=1"), {"inner dims differ", "transB"});
  ExpectError(RunCpu("Gemm", {Random(DType::kF32, Shape({2, 3, 1}), 1), b}), {"2-D", "[2,3,1]"});
  ExpectError(RunCpu("Gemm", {a, Random(DType::kF64, Shape({3, 4}), 2)}), {"float64", "float32"});
}

}  // namespace
}  // namespace opscope
