// Variadic ops (Max Min Sum Mean), Not, Where, Clip and Cast.
#include <cmath>
#include <limits>

#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;

TEST(EwVariadic, HandCheckedWithBroadcastingAndNaN) {
  const double nan = std::nan("");
  Tensor a = Make(DType::kF32, Shape({2, 2}), {1, 5, nan, -1});
  Tensor b = Make(DType::kF32, Shape({2}), {3, 2});
  Tensor c = Make(DType::kF32, Shape(), {4});
  ExpectValues("Max", {a, b, c}, {4, 5, nan, 4});
  ExpectValues("Min", {a, b, c}, {1, 2, nan, -1});
  ExpectValues("Sum", {a, b, c}, {8, 11, nan, 5});
  ExpectValues("Mean", {a, b, c}, {8.0 / 3, 11.0 / 3, nan, 5.0 / 3});
  ExpectValues("Sum", {b}, {3, 2});  // one input: a copy
  ExpectValues("Max", {Make(DType::kI8, Shape({3}), {-128, 0, 127}), Make(DType::kI8, Shape({1}), {-3})}, {-3, 0, 127});
  ExpectValues("Min", {Make(DType::kU8, Shape({2}), {200, 3}), Make(DType::kU8, Shape({2}), {100, 250})}, {100, 3});
}

TEST(EwVariadic, KernelMatchesReference) {
  uint64_t seed = 500;
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) {
    for (DType dt : op_test::kFloatTypes) {
      SCOPED_TRACE(std::string(op) + " " + DTypeName(dt));
      ExpectMatchesReference(op, {Random(dt, Shape({3, 1, 5}), seed++), Random(dt, Shape({4, 1}), seed++),
                                  Random(dt, Shape({5}), seed++), Random(dt, Shape({3, 4, 5}), seed++)});
      ExpectMatchesReference(op, {Random(dt, Shape({6, 7}), seed++), Random(dt, Shape({6, 7}), seed++)});
    }
  }
  ExpectMatchesReference("Max", {Random(DType::kI64, Shape({4, 6}), 1, -50, 50), Random(DType::kI64, Shape({6}), 2, -50, 50)});
}

// The unsigned types ONNX's Max, Min, Add, Sub, Mul, Div and the comparisons
// allow: kernels agree with the reference, wrap like numpy, and uint64 keeps
// every bit past 2^53 (where a double in between would round).
TEST(EwUnsigned, KernelsMatchReferenceAndKeepEveryBit) {
  uint64_t seed = 700;
  for (DType dt : {DType::kU16, DType::kU32, DType::kU64}) {
    for (const char* op : {"Max", "Min", "Add", "Sub", "Mul", "Div", "Less", "Greater", "Equal", "Abs", "Clip"}) {
      SCOPED_TRACE(std::string(op) + " " + DTypeName(dt));
      Tensor a = Random(dt, Shape({3, 4}), seed++, 0, 200), b = Random(dt, Shape({4}), seed++, 1, 200);
      std::vector<Tensor> in = {a, b};
      if (std::string(op) == "Abs") in = {a};
      if (std::string(op) == "Clip") in = {a, Make(dt, Shape(), {20}), Make(dt, Shape(), {150})};
      ExpectMatchesReference(op, in);
    }
  }
  ExpectValues("Sub", {Make(DType::kU16, Shape({1}), {1}), Make(DType::kU16, Shape({1}), {2})}, {65535});
  Tensor big = *Tensor::Empty(DType::kU64, Shape({2})), small = *Tensor::Empty(DType::kU64, Shape({2}));
  big.data<uint64_t>()[0] = UINT64_MAX, big.data<uint64_t>()[1] = (uint64_t{1} << 63) + 1;
  small.data<uint64_t>()[0] = UINT64_MAX - 1, small.data<uint64_t>()[1] = uint64_t{1} << 63;
  for (const char* op : {"Max", "Min"}) {
    auto r = RunCpu(op, {big, small});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const uint64_t* y = r->outputs[0].data<uint64_t>();
    const bool max = std::string(op) == "Max";
    EXPECT_EQ(y[0], max ? UINT64_MAX : UINT64_MAX - 1) << op;
    EXPECT_EQ(y[1], max ? (uint64_t{1} << 63) + 1 : uint64_t{1} << 63) << op;
  }
  auto sum = RunCpu("Add", {big, small});
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->outputs[0].data<uint64_t>()[1], 1u);  // 2^64 + 1 wraps to 1, as numpy
}

TEST(EwVariadic, BadInputsNameTheProblem) {
  std::string e = ErrorOf(op_test::RunCpu("Sum", {Make(DType::kF32, Shape({2}), {1, 2}), Make(DType::kF32, Shape({3}), {1, 2, 3})}));
  EXPECT_NE(e.find("input 1 of shape [3] does not broadcast with shape [2]"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("Sum", {}));
  EXPECT_NE(e.find("at least 1"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("Mean", {Make(DType::kI32, Shape({1}), {1})}));
  EXPECT_NE(e.find("dtype int32"), std::string::npos) << e;
}

TEST(EwLogical, NotAndWhere) {
  ExpectValues("Not", {Make(DType::kBool, Shape({3}), {1, 0, 1})}, {0, 1, 0});
  Tensor cond = Make(DType::kBool, Shape({2, 2}), {1, 0, 0, 1});
  Tensor x = Make(DType::kF32, Shape({2, 2}), {1, 2, 3, 4});
  Tensor y = Make(DType::kF32, Shape({2, 2}), {9, 8, 7, 6});
  ExpectValues("Where", {cond, x, y}, {1, 8, 7, 4});  // ONNX's where example
  Tensor row = Make(DType::kBool, Shape({3}), {1, 0, 1});
  Tensor col = Make(DType::kI64, Shape({2, 1}), {10, 20});
  Tensor s = Make(DType::kI64, Shape(), {-1});
  ExpectValues("Where", {row, col, s}, {10, -1, 10, 20, -1, 20});
  for (DType dt : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI32, DType::kBool}) {
    SCOPED_TRACE(DTypeName(dt));
    ExpectMatchesReference("Where", {Random(DType::kBool, Shape({4, 1, 6}), 3, 0, 1), Random(dt, Shape({5, 1}), 4, -9, 9),
                                     Random(dt, Shape({4, 5, 6}), 5, -9, 9)});
    ExpectMatchesReference("Where", {Random(DType::kBool, Shape({7, 3}), 6, 0, 1), Random(dt, Shape({7, 3}), 7, -9, 9),
                                     Random(dt, Shape({7, 3}), 8, -9, 9)});
  }
  std::string e = ErrorOf(op_test::RunCpu("Where", {x, x, y}));
  EXPECT_NE(e.find("input 0 (condition) has dtype float32"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("Where", {cond, x, Make(DType::kF32, Shape({3}), {1, 2, 3})}));
  EXPECT_NE(e.find("[3]"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("Not", {x}));
  EXPECT_NE(e.find("dtype float32"), std::string::npos) << e;
}

TEST(EwClip, OptionalBoundsAndTypes) {
  const double nan = std::nan("");
  Tensor x = Make(DType::kF32, Shape({5}), {-3, -1, 0, 2, nan});
  Tensor lo = Make(DType::kF32, Shape(), {-1.5});
  Tensor hi = Make(DType::kF32, Shape(), {1});
  ExpectValues("Clip", {x, lo, hi}, {-1.5, -1, 0, 1, nan});
  ExpectValues("Clip", {x, lo}, {-1.5, -1, 0, 2, nan});
  ExpectValues("Clip", {x, Tensor(), hi}, {-3, -1, 0, 1, nan});
  ExpectValues("Clip", {x}, {-3, -1, 0, 2, nan});
  ExpectValues("Clip", {x, hi, lo}, {-1.5, -1.5, -1.5, -1.5, nan});  // min > max: max everywhere, as numpy
  Tensor i8 = Make(DType::kI8, Shape({3}), {-128, 0, 127});
  ExpectValues("Clip", {i8, Tensor(), Make(DType::kI8, Shape(), {5})}, {-128, 0, 5});
  for (DType dt : op_test::kFloatTypes) {
    ExpectMatchesReference("Clip", {Random(dt, Shape({3, 9}), 9), Make(dt, Shape(), {-0.5}), Make(dt, Shape(), {0.75})});
  }
  std::string e = ErrorOf(op_test::RunCpu("Clip", {x, Make(DType::kF32, Shape({2}), {0, 1})}));
  EXPECT_NE(e.find("Clip: input min must be a scalar, got shape [2]"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("Clip", {x, Make(DType::kF64, Shape(), {0})}));
  EXPECT_NE(e.find("float64"), std::string::npos) << e;
}

Attrs To(int64_t onnx_type) {
  Attrs a;
  a.Set("to", onnx_type);
  return a;
}

TEST(EwCast, FloatToIntFollowsNumpyAstype) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  Tensor x = Make(DType::kF32, Shape({8}), {nan, 1e10, -1e10, 300.7, -1.5, -300.2, 2.9, inf});
  // numpy 1.24 on x86: np.array(x, np.float32).astype(...)
  ExpectValues("Cast", {x}, {-9223372036854775808.0, 1e10, -1e10, 300, -1, -300, 2, -9223372036854775808.0}, To(7), Within(0));
  ExpectValues("Cast", {x}, {-2147483648.0, -2147483648.0, -2147483648.0, 300, -1, -300, 2, -2147483648.0}, To(6), Within(0));
  ExpectValues("Cast", {x}, {0, 0, 0, 300, -1, -300, 2, 0}, To(5), Within(0));
  ExpectValues("Cast", {x}, {0, 0, 0, 44, -1, -44, 2, 0}, To(3), Within(0));
  ExpectValues("Cast", {x}, {0, 0, 0, 44, 255, 212, 2, 0}, To(2), Within(0));
  ExpectValues("Cast", {x}, {1, 1, 1, 1, 1, 1, 1, 1}, To(9), Within(0));
}

TEST(EwCast, RoundsOnceToNearestEven) {
  // 1 + 2^-11 + 2^-40 is just above the f16 midpoint: once-rounded it is
  // 1 + 2^-10; via float32 (which drops the 2^-40) it would tie to 1.
  const double above_tie = 1 + std::ldexp(1, -11) + std::ldexp(1, -40);
  Tensor d = Make(DType::kF64, Shape({4}), {above_tie, 65519.99, 65520, 1e-8});
  ExpectValues("Cast", {d}, {1 + std::ldexp(1, -10), 65504, INFINITY, 0}, To(10), Within(0));
  // bf16: 1 + 2^-8 + 2^-30 rounds up to 1 + 2^-7 (via float32 it would tie to 1).
  Tensor e = Make(DType::kF64, Shape({1}), {1 + std::ldexp(1, -8) + std::ldexp(1, -30)});
  ExpectValues("Cast", {e}, {1 + std::ldexp(1, -7)}, To(16), Within(0));
  ExpectValues("Cast", {Make(DType::kF32, Shape({1}), {1 + std::ldexp(1, -8)})}, {1}, To(16), Within(0));  // a tie: to even
}

TEST(EwCast, KernelEqualsReferenceForEveryDtypePair) {
  const int64_t onnx_numbers[] = {11, 1, 10, 16, 7, 6, 5, 3, 2, 9, 4, 12, 13};
  const double nan = std::nan("");
  std::vector<double> values = {0, -0.0, 1, -1, 0.5, -2.5, 3.75, 100.4, -129.9, 255.5, 70000.3, -1e12, 1e-9, 3.3e38, nan};
  uint64_t seed = 900;
  for (DType from : kAllDTypes) {
    std::vector<double> in_range;  // integer sources get only values their type holds
    for (double v : values) {
      bool fits = IsFloat(from) || (from == DType::kBool ? (v == 0 || v == 1)
                                                         : (v == std::trunc(v) && v >= (IsSigned(from) ? -100 : 0) &&
                                                            v <= (from == DType::kI8 ? 127 : 255)));
      if (fits) in_range.push_back(v);
    }
    Tensor x = Make(from, Shape({static_cast<int64_t>(in_range.size())}), in_range);
    Tensor r = Random(from, Shape({3, 7}), seed++, IsSigned(from) || IsFloat(from) ? -100 : 0, from == DType::kBool ? 1 : 120);
    for (int64_t to : onnx_numbers) {
      SCOPED_TRACE(std::string(DTypeName(from)) + " -> " + std::to_string(to));
      ExpectMatchesReference("Cast", {x}, To(to), -1, Within(0));
      ExpectMatchesReference("Cast", {r}, To(to), -1, Within(0));
    }
  }
}

// numpy's astype on x86-64: uint32 and uint64 convert through 64 bits
// (uint32 keeps the low bits), uint16 through int32, as the narrow types do.
TEST(EwCast, ToUnsignedAsNumpy) {
  Tensor x = Make(DType::kF64, Shape({3}), {3e9, -1, 5e9});
  ExpectValues("Cast", {x}, {3e9, 4294967295.0, 705032704}, To(12), Within(0));
  ExpectValues("Cast", {Make(DType::kF64, Shape({3}), {70000.5, -1, 7.9})}, {4464, 65535, 7}, To(4), Within(0));
  auto r = RunCpu("Cast", {Make(DType::kF64, Shape({4}), {3e9, -1, 1e19, 2e19})}, To(13));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const uint64_t* y = r->outputs[0].data<uint64_t>();
  EXPECT_EQ(y[0], 3000000000u);
  EXPECT_EQ(y[1], UINT64_MAX);
  EXPECT_EQ(y[2], 10000000000000000000u);
  EXPECT_EQ(y[3], 0u);
}

TEST(EwCast, BadTargetsNameTheProblem) {
  Tensor x = Make(DType::kF32, Shape({1}), {1});
  std::string e = ErrorOf(op_test::RunCpu("Cast", {x}, To(8)));
  EXPECT_NE(e.find("'to' = 8 (string) is a type opscope does not have"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("Cast", {x}, To(99)));
  EXPECT_NE(e.find("'to' = 99 is not an ONNX TensorProto data type"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("Cast", {x}));
  EXPECT_NE(e.find("needs attribute 'to'"), std::string::npos) << e;
  auto r = op_test::RunCpu("Cast", {x}, To(16));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->outputs[0].dtype(), DType::kBF16);
}

}  // namespace
}  // namespace opscope
