// Shape and data-movement ops: hand-checked cases, kernel vs reference on
// every dtype (data movement is exact, so the tolerance is 0), bad inputs.
#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;  // NOLINT: test helpers

using I = int64_t;

// Every dtype we have: data-movement kernels copy bytes, so all must work.
class ShapeOpsAllDTypes : public ::testing::TestWithParam<DType> {};

TEST(ShapeReshape, ZeroCopiesDimAndMinusOneIsInferred) {
  Tensor x = Iota(DType::kF32, Shape({2, 3, 4}));
  auto r = RunCpu("Reshape", {x, I64s({0, -1})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->outputs[0].shape(), Shape({2, 12}));
  EXPECT_EQ(Values(r->outputs[0]), Values(x));
  // allowzero=1 keeps a literal 0: only valid for an empty input.
  Tensor empty = Iota(DType::kF32, Shape({0, 3}));
  ExpectOutput("Reshape", {empty, I64s({3, 0})}, A({{"allowzero", I{1}}}), Shape({3, 0}), {});
}

TEST(ShapeReshape, BadShapesAreNamed) {
  Tensor x = Iota(DType::kF32, Shape({2, 3}));
  ExpectError("Reshape", {x, I64s({-1, -1})}, {}, {"Reshape", "more than one -1"});
  ExpectError("Reshape", {x, I64s({4, 2})}, {}, {"[2,3]", "[4,2]", "6 elements"});
  ExpectError("Reshape", {x, I64s({0, 0, 0})}, {}, {"has 0 at position 2", "rank 2"});
  ExpectError("Reshape", {x, Make(DType::kI32, Shape({2}), {3, 2})}, {}, {"shape", "int32"});
}

TEST(ShapeFlattenSqueezeUnsqueeze, Shapes) {
  Tensor x = Iota(DType::kF32, Shape({2, 1, 3, 1}));
  std::vector<double> v = Values(x);
  ExpectOutput("Flatten", {x}, {}, Shape({2, 3}), v);
  ExpectOutput("Flatten", {x}, A({{"axis", I{0}}}), Shape({1, 6}), v);
  ExpectOutput("Flatten", {x}, A({{"axis", I{-1}}}), Shape({6, 1}), v);
  ExpectOutput("Squeeze", {x}, {}, Shape({2, 3}), v);
  ExpectOutput("Squeeze", {x, I64s({-1})}, {}, Shape({2, 1, 3}), v);
  ExpectOutput("Unsqueeze", {x, I64s({0, -1})}, {}, Shape({1, 2, 1, 3, 1, 1}), v);
  ExpectOutput("Unsqueeze", {Iota(DType::kF32, Shape({3})), I64s({2, 0})}, {}, Shape({1, 3, 1}), {0, 1, 2});
}

TEST(ShapeFlattenSqueezeUnsqueeze, BadAxesAreNamed) {
  Tensor x = Iota(DType::kF32, Shape({2, 1, 3}));
  ExpectError("Squeeze", {x, I64s({0})}, {}, {"Squeeze", "dim 0", "is 2, not 1"});
  ExpectError("Squeeze", {x, I64s({5})}, {}, {"axis 5", "out of range for rank 3"});
  ExpectError("Unsqueeze", {x, I64s({1, 1})}, {}, {"names axis 1 twice"});
  ExpectError("Flatten", {x}, A({{"axis", I{4}}}), {"Flatten", "axis 4"});
}

TEST(ShapeTranspose, DefaultReversesAndPermHandChecked) {
  Tensor x = F32(Shape({2, 3}), {1, 2, 3, 4, 5, 6});
  ExpectOutput("Transpose", {x}, {}, Shape({3, 2}), {1, 4, 2, 5, 3, 6});
  Tensor y = Iota(DType::kF32, Shape({2, 3, 2}));
  // y[i,j,k] = 6i + 2j + k; perm [1,2,0] gives out[j,k,i].
  ExpectOutput("Transpose", {y}, A({{"perm", std::vector<I>{1, 2, 0}}}), Shape({3, 2, 2}),
               {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11});
  ExpectError("Transpose", {y}, A({{"perm", std::vector<I>{0, 0, 1}}}), {"perm [0,0,1]", "not a permutation"});
}

TEST(ShapeTranspose, StridedViewInput) {
  Tensor x = Iota(DType::kF32, Shape({3, 4}));
  auto view = x.Permute({1, 0});  // [4,3], not contiguous
  ASSERT_TRUE(view.ok());
  ExpectMatchesReference("Transpose", {*view}, A({{"perm", std::vector<I>{1, 0}}}));
  auto r = RunCpu("Transpose", {*view}, A({{"perm", std::vector<I>{1, 0}}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Values(r->outputs[0]), Values(x));
}

TEST_P(ShapeOpsAllDTypes, KernelsMatchReference) {
  const DType dt = GetParam();
  Tensor x = dt == DType::kBool ? Iota(dt, Shape({3, 4, 5})) : Random(dt, Shape({3, 4, 5}), 11);
  ExpectMatchesReference("Reshape", {x, I64s({5, -1})});
  ExpectMatchesReference("Identity", {x});
  ExpectMatchesReference("Transpose", {x}, A({{"perm", std::vector<I>{2, 0, 1}}}));
  ExpectMatchesReference("Transpose", {x});
  ExpectMatchesReference("Concat", {x, x, x}, A({{"axis", I{1}}}));
  ExpectMatchesReference("Concat", {x, x}, A({{"axis", I{-1}}}));
  ExpectMatchesReference("Split", {x, I64s({1, 3})}, A({{"axis", I{1}}}), 2);
  ExpectMatchesReference("Split", {x}, A({{"axis", I{2}}}), 5);
  ExpectMatchesReference("Slice", {x, I64s({-1, 1}), I64s({-100, 5}), I64s({0, 2}), I64s({-1, 2})});
  ExpectMatchesReference("Gather", {x, Make(DType::kI64, Shape({2, 2}), {3, -1, 0, 0})}, A({{"axis", I{1}}}));
  ExpectMatchesReference("Expand", {x, I64s({2, 1, 1, 1})});
  ExpectMatchesReference("Tile", {x, I64s({1, 2, 3})});
  ExpectMatchesReference("Pad", {x, I64s({1, 0, 2, 0, 3, -1})});
  ExpectMatchesReference("Pad", {x, I64s({2, 1, 0, 1, 4, 3})}, A({{"mode", std::string("reflect")}}));
  ExpectMatchesReference("Pad", {x, I64s({0, 3, 1, 2, 0, 2})}, A({{"mode", std::string("edge")}}));
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, ShapeOpsAllDTypes, ::testing::ValuesIn(AllDTypes()),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

// Contiguous parts run as one launch whose blocks of 64 KiB cut across the
// parts' runs (three rows of two inputs, 1.4 MB in all), an empty part among
// them; past 4096 runs (rows times inputs), and with a strided input, the
// per-input copies. Each against the reference, bit for bit.
TEST(ShapeConcat, OneLaunchAcrossPartsAndTheStridedCopiesMatchReference) {
  const Tensor wide = Random(DType::kF32, Shape({3, 70001}), 21), narrow = Random(DType::kF32, Shape({3, 49999}), 22);
  const Tensor none = Random(DType::kF32, Shape({3, 0}), 23);
  ExpectMatchesReference("Concat", {wide, none, narrow, wide}, A({{"axis", I{1}}}));
  ExpectMatchesReference("Concat", {Random(DType::kF32, Shape({1, 96, 28, 28}), 24),
                                    Random(DType::kF32, Shape({1, 32, 28, 28}), 25)},
                         A({{"axis", I{1}}}));
  ExpectMatchesReference("Concat", {Random(DType::kI8, Shape({5000, 2}), 26), Random(DType::kI8, Shape({5000, 3}), 27)},
                         A({{"axis", I{1}}}));
  auto strided = Random(DType::kF32, Shape({40, 30}), 28).Permute({1, 0});
  ASSERT_TRUE(strided.ok());
  ASSERT_FALSE(strided->is_contiguous());
  ExpectMatchesReference("Concat", {*strided, Random(DType::kF32, Shape({30, 7}), 29)}, A({{"axis", I{1}}}));
}

TEST(ShapeConcat, HandCheckedWithEmptyInputAndMismatch) {
  Tensor a = F32(Shape({2, 1}), {1, 2});
  Tensor b = F32(Shape({2, 2}), {3, 4, 5, 6});
  Tensor e = F32(Shape({2, 0}), {});
  ExpectOutput("Concat", {a, e, b}, A({{"axis", I{1}}}), Shape({2, 3}), {1, 3, 4, 2, 5, 6});
  ExpectOutput("Concat", {a, a}, A({{"axis", I{-2}}}), Shape({4, 1}), {1, 2, 1, 2});
  ExpectError("Concat", {a, b}, A({{"axis", I{0}}}), {"input 1 has shape [2,2]", "input 0 has [2,1]"});
  ExpectError("Concat", {a, b}, {}, {"needs attribute 'axis'"});
}

TEST(ShapeSplit, EqualPartsAndSizes) {
  Tensor x = F32(Shape({6}), {1, 2, 3, 4, 5, 6});
  ExpectOutput("Split", {x}, {}, Shape({2}), {3, 4}, 1, 3);
  ExpectOutput("Split", {x, I64s({1, 0, 5})}, {}, Shape({0}), {}, 1, 3);
  ExpectOutput("Split", {x, I64s({1, 0, 5})}, {}, Shape({5}), {2, 3, 4, 5, 6}, 2, 3);
  ExpectError("Split", {x, I64s({1, 2})}, {}, {"split [1,2] sums to 3", "is 6"}, 2);
  ExpectError("Split", {x}, {}, {"does not split into 4 equal parts"}, 4);
  ExpectError("Split", {x, I64s({6})}, {}, {"1 sizes but 2 output(s)"}, 2);
}

TEST(ShapeSlice, NegativeStepsAndClamping) {
  Tensor x = F32(Shape({2, 5}), {0, 1, 2, 3, 4, 10, 11, 12, 13, 14});
  // Python: x[:, ::-2] -> starts=-1 (last), ends=-INF, step -2.
  ExpectOutput("Slice", {x, I64s({-1}), I64s({INT64_MIN}), I64s({1}), I64s({-2})}, {}, Shape({2, 3}),
               {4, 2, 0, 14, 12, 10});
  // Out-of-range starts/ends clamp: x[1:1000, 3:100].
  ExpectOutput("Slice", {x, I64s({1, 3}), I64s({1000, 100})}, {}, Shape({1, 2}), {13, 14});
  // start beyond the end with a negative step: clamps to the last element.
  ExpectOutput("Slice", {x, I64s({100}), I64s({0}), I64s({-1}), I64s({-3})}, {}, Shape({2, 2}), {4, 1, 14, 11});
  // Empty result.
  ExpectOutput("Slice", {x, I64s({3}), I64s({1}), I64s({1})}, {}, Shape({2, 0}), {});
  // int32 indices.
  Tensor s32 = Make(DType::kI32, Shape({1}), {2});
  Tensor e32 = Make(DType::kI32, Shape({1}), {4});
  Tensor a32 = Make(DType::kI32, Shape({1}), {1});
  ExpectOutput("Slice", {x, s32, e32, a32}, {}, Shape({2, 2}), {2, 3, 12, 13});
}

TEST(ShapeSlice, BadInputsAreNamed) {
  Tensor x = F32(Shape({2, 5}), std::vector<double>(10, 0));
  ExpectError("Slice", {x, I64s({0}), I64s({1}), I64s({1}), I64s({0})}, {}, {"Slice", "0 step"});
  ExpectError("Slice", {x, I64s({0, 0}), I64s({1})}, {}, {"starts [0,0]", "ends [1]", "differ in length"});
  ExpectError("Slice", {x, I64s({0}), I64s({1}), I64s({2})}, {}, {"axis 2", "out of range for rank 2"});
}

TEST(ShapeGather, NegativeAndMultiDimIndices) {
  Tensor x = F32(Shape({3, 2}), {1, 2, 3, 4, 5, 6});
  ExpectOutput("Gather", {x, I64s({-1, 0})}, {}, Shape({2, 2}), {5, 6, 1, 2});
  ExpectOutput("Gather", {x, Make(DType::kI32, Shape({2, 2}), {1, 0, 1, 1})}, A({{"axis", I{1}}}),
               Shape({3, 2, 2}), {2, 1, 2, 2, 4, 3, 4, 4, 6, 5, 6, 6});
  // A scalar index drops the axis.
  ExpectOutput("Gather", {x, Make(DType::kI64, Shape(), {1})}, {}, Shape({2}), {3, 4});
  ExpectError("Gather", {x, I64s({0, 3})}, {}, {"indices[1] = 3", "dim 0 of size 3"});
  ExpectError("Gather", {x, I64s({0})}, A({{"axis", I{2}}}), {"Gather", "axis 2"});
}

TEST(ShapeExpandTile, HandChecked) {
  Tensor x = F32(Shape({3, 1}), {1, 2, 3});
  ExpectOutput("Expand", {x, I64s({2, 1, 2})}, {}, Shape({2, 3, 2}), {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  ExpectOutput("Expand", {x, I64s({1})}, {}, Shape({3, 1}), {1, 2, 3});
  ExpectError("Expand", {x, I64s({2, 2})}, {}, {"Expand", "[3,1]", "[2,2]"});
  Tensor y = F32(Shape({2, 2}), {1, 2, 3, 4});
  ExpectOutput("Tile", {y, I64s({2, 2})}, {}, Shape({4, 4}), {1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4});
  ExpectOutput("Tile", {y, I64s({1, 0})}, {}, Shape({2, 0}), {});
  ExpectError("Tile", {y, I64s({2})}, {}, {"repeats [2]", "rank 2"});
}

TEST(ShapePad, ModesHandChecked) {
  // numpy.pad([1,2,3], (2,2), mode) for each mode.
  Tensor x = F32(Shape({3}), {1, 2, 3});
  ExpectOutput("Pad", {x, I64s({2, 2})}, {}, Shape({7}), {0, 0, 1, 2, 3, 0, 0});
  ExpectOutput("Pad", {x, I64s({2, 2}), F32(Shape(), {9})}, {}, Shape({7}), {9, 9, 1, 2, 3, 9, 9});
  ExpectOutput("Pad", {x, I64s({2, 2})}, A({{"mode", std::string("reflect")}}), Shape({7}), {3, 2, 1, 2, 3, 2, 1});
  ExpectOutput("Pad", {x, I64s({2, 2})}, A({{"mode", std::string("edge")}}), Shape({7}), {1, 1, 1, 2, 3, 3, 3});
  // Reflection wider than the dim repeats (numpy: [2,3,2,1,2,3,2,1,2]).
  ExpectOutput("Pad", {x, I64s({4, 2})}, A({{"mode", std::string("reflect")}}), Shape({9}), {1, 2, 3, 2, 1, 2, 3, 2, 1});
  // Negative pads crop.
  ExpectOutput("Pad", {x, I64s({-1, 1})}, {}, Shape({3}), {2, 3, 0});
  // 2-D: rows of constant border around the data.
  Tensor y = F32(Shape({1, 2}), {5, 6});
  ExpectOutput("Pad", {y, I64s({1, 0, 0, 1})}, {}, Shape({2, 3}), {0, 0, 0, 5, 6, 0});
}

TEST(ShapePad, BadInputsAreNamed) {
  Tensor x = F32(Shape({2, 3}), std::vector<double>(6, 1));
  ExpectError("Pad", {x, I64s({1, 1})}, {}, {"pads [1,1]", "needs 4"});
  ExpectError("Pad", {x, I64s({0, -2, 0, -2})}, {}, {"crop dim 1", "below zero"});
  ExpectError("Pad", {x, I64s({0, 0, 0, 0})}, A({{"mode", std::string("wrap")}}), {"'wrap' is not one of"});
  ExpectError("Pad", {x, I64s({0, 0, 0, 0}), F32(Shape({2}), {1, 2})}, {}, {"constant_value must be a scalar"});
}

TEST(ShapeShape, StartEndClamp) {
  Tensor x = F32(Shape({2, 3, 4, 5}), std::vector<double>(120, 0));
  ExpectOutput("Shape", {x}, {}, Shape({4}), {2, 3, 4, 5});
  ExpectOutput("Shape", {x}, A({{"start", I{1}}, {"end", I{-1}}}), Shape({2}), {3, 4});
  ExpectOutput("Shape", {x}, A({{"start", I{-10}}, {"end", I{10}}}), Shape({4}), {2, 3, 4, 5});
  ExpectOutput("Shape", {x}, A({{"start", I{3}}, {"end", I{1}}}), Shape({0}), {});
  auto r = RunCpu("Shape", {x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outputs[0].dtype(), DType::kI64);
}

TEST(ShapeConstantOfShape, DefaultAndTypedValue) {
  ExpectOutput("ConstantOfShape", {I64s({2, 3})}, {}, Shape({2, 3}), std::vector<double>(6, 0));
  Tensor seven = Make(DType::kI32, Shape({1}), {7});
  auto r = RunCpu("ConstantOfShape", {I64s({2, 2})}, A({{"value", seven}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->outputs[0].dtype(), DType::kI32);
  EXPECT_EQ(Values(r->outputs[0]), std::vector<double>(4, 7));
  ExpectMatchesReference("ConstantOfShape", {I64s({3, 5})}, A({{"value", F32(Shape({1}), {0.5})}}));
  ExpectError("ConstantOfShape", {I64s({2, -1})}, {}, {"shape [2,-1]", "negative"});
  ExpectError("ConstantOfShape", {I64s({2})}, A({{"value", F32(Shape({2}), {1, 2})}}), {"exactly one element"});
}

TEST(ShapeConstant, EachValueAttr) {
  ExpectOutput("Constant", {}, A({{"value_ints", std::vector<I>{4, 5}}}), Shape({2}), {4, 5});
  ExpectOutput("Constant", {}, A({{"value_float", 2.5}}), Shape(), {2.5});
  ExpectOutput("Constant", {}, A({{"value_floats", std::vector<double>{1.5, -1}}}), Shape({2}), {1.5, -1});
  ExpectOutput("Constant", {}, A({{"value_int", I{-3}}}), Shape(), {-3});
  ExpectOutput("Constant", {}, A({{"value", F32(Shape({2, 1}), {1, 2})}}), Shape({2, 1}), {1, 2});
  ExpectMatchesReference("Constant", {}, A({{"value", Random(DType::kF16, Shape({3, 3}), 5)}}));
  ExpectError("Constant", {}, {}, {"exactly one of", "got none"});
  ExpectError("Constant", {}, A({{"value_int", I{1}}, {"value_float", 1.0}}), {"value_float, value_int"});
}

TEST(ShapeRange, FloatIntAndNegativeDelta) {
  ExpectOutput("Range", {F32(Shape(), {1}), F32(Shape(), {2}), F32(Shape(), {0.25})}, {}, Shape({4}),
               {1, 1.25, 1.5, 1.75});
  Tensor s = Make(DType::kI32, Shape(), {10}), l = Make(DType::kI32, Shape(), {4}), d = Make(DType::kI32, Shape(), {-3});
  ExpectOutput("Range", {s, l, d}, {}, Shape({2}), {10, 7});
  ExpectOutput("Range", {l, s, d}, {}, Shape({0}), {});
  ExpectMatchesReference("Range", {Make(DType::kF64, Shape(), {-2}), Make(DType::kF64, Shape(), {7}),
                                   Make(DType::kF64, Shape(), {0.3})});
  ExpectError("Range", {s, l, Make(DType::kI32, Shape(), {0})}, {}, {"Range", "delta is 0"});
  ExpectError("Range", {s, l, Make(DType::kI32, Shape({2}), {1, 1})}, {}, {"'delta' must be a scalar"});
}

TEST(ShapeIdentity, KeepsBitsOfEveryDtype) {
  Tensor x = Make(DType::kI64, Shape({2}), {0, 0});
  x.data<int64_t>()[0] = (int64_t{1} << 62) + 1;  // not representable as a double
  auto r = RunCpu("Identity", {x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outputs[0].data<int64_t>()[0], (int64_t{1} << 62) + 1);
  auto ref = RunReference("Identity", {x});
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->outputs[0].data<int64_t>()[0], (int64_t{1} << 62) + 1);
}

TEST(ShapeStridedCopy, BlockTunableSplitsRowsCorrectly) {
  // Blocks of 7 elements cut rows of 5 at every offset: each piece must land right.
  Tensor x = Random(DType::kF32, Shape({6, 5, 4}), 3);
  for (int64_t block : {7, 16384}) {
    auto k = RunCpu("Transpose", {x}, A({{"perm", std::vector<I>{1, 0, 2}}}), -1, {{"block", block}});
    ASSERT_TRUE(k.ok()) << k.status().ToString();
    auto r = RunReference("Transpose", {x}, A({{"perm", std::vector<I>{1, 0, 2}}}));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(Values(k->outputs[0]), Values(r->outputs[0])) << "block " << block;
    auto p = RunCpu("Pad", {x, I64s({1, 2, 0, 0, 1, 3})}, A({{"mode", std::string("reflect")}}), -1,
                    {{"block", block}});
    auto pr = RunReference("Pad", {x, I64s({1, 2, 0, 0, 1, 3})}, A({{"mode", std::string("reflect")}}));
    ASSERT_TRUE(p.ok() && pr.ok());
    EXPECT_EQ(Values(p->outputs[0]), Values(pr->outputs[0])) << "block " << block;
  }
}

}  // namespace
}  // namespace opscope
