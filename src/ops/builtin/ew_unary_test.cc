#include <cmath>

#include "ops/builtin/op_test_util.h"

namespace opscope {
namespace {

using namespace op_test;

Attrs With(const std::string& name, AttrValue v) {
  Attrs a;
  a.Set(name, std::move(v));
  return a;
}

TEST(EwUnary, HandCheckedActivations) {
  const double nan = std::nan("");
  Tensor x = Make(DType::kF32, Shape({5}), {-2, -0.5, 0, 1, nan});
  ExpectValues("Relu", {x}, {0, 0, 0, 1, nan});
  ExpectValues("LeakyRelu", {x}, {-0.2, -0.05, 0, 1, nan}, With("alpha", 0.1));
  ExpectValues("LeakyRelu", {x}, {-0.02, -0.005, 0, 1, nan});  // alpha defaults to 0.01
  ExpectValues("Elu", {x}, {std::exp(-2) - 1, std::exp(-0.5) - 1, 0, 1, nan});
  const double a = 1.6732631921768188, g = 1.0507010221481323;  // ONNX defaults (float)
  ExpectValues("Selu", {x}, {g * a * (std::exp(-2) - 1), g * a * (std::exp(-0.5) - 1), 0, g, nan});
  ExpectValues("HardSigmoid", {x}, {0.1, 0.4, 0.5, 0.7, nan});
  ExpectValues("Softplus", {x}, {std::log1p(std::exp(-2)), std::log1p(std::exp(-0.5)), std::log(2.0),
                                 std::log1p(std::exp(1)), nan});
  ExpectValues("Sigmoid", {x}, {0.11920292202211755, 0.3775406687981454, 0.5, 0.7310585786300049, nan});
  ExpectValues("Tanh", {x}, {-0.9640275800758169, -0.46211715726000974, 0, 0.7615941559557649, nan});
  ExpectValues("Erf", {x}, {-0.9953222650189527, -0.5204998778130465, 0, 0.8427007929497149, nan});
  ExpectValues("Gelu", {x}, {-0.04550026389635842, -0.15426876936299344, 0, 0.8413447460685429, nan});
  ExpectValues("Gelu", {x}, {-0.04540230591222494, -0.15428599017485606, 0, 0.8411919906082768, nan},
               With("approximate", std::string("tanh")));
}

TEST(EwUnary, HandCheckedMath) {
  Tensor x = Make(DType::kF64, Shape({2, 2}), {1, 4, 0.25, 0});
  ExpectValues("Exp", {x}, {M_E, std::exp(4.0), std::exp(0.25), 1});
  ExpectValues("Log", {x}, {0, std::log(4.0), std::log(0.25), -INFINITY});
  ExpectValues("Sqrt", {x}, {1, 2, 0.5, 0});
  Tensor s = Make(DType::kF32, Shape({3}), {-3, 0, 2.5});
  ExpectValues("Abs", {s}, {3, 0, 2.5});
  ExpectValues("Neg", {s}, {3, 0, -2.5});
  EXPECT_TRUE(std::isnan(op_test::RunCpu("Log", {Make(DType::kF32, Shape({1}), {-1})})->outputs[0].FlatGetAsDouble(0)));
}

TEST(EwUnary, IntegersWrapLikeNumpy) {
  Tensor i8 = Make(DType::kI8, Shape({4}), {-128, -5, 0, 127});
  ExpectValues("Abs", {i8}, {-128, 5, 0, 127});  // numpy: abs(int8(-128)) == -128
  ExpectValues("Neg", {i8}, {-128, 5, 0, -127});
  ExpectValues("Relu", {i8}, {0, 0, 0, 127});
  Tensor u8 = Make(DType::kU8, Shape({2}), {0, 255});
  ExpectValues("Abs", {u8}, {0, 255});
  Tensor i32 = Make(DType::kI32, Shape({3}), {-3, 0, 7});
  ExpectValues("Erf", {i32}, {0, 0, 1});  // erf(-3) = -0.99998 truncates to 0; erf(7) is 1 in double
  for (const char* op : {"Abs", "Neg", "Relu"}) {
    ExpectMatchesReference(op, {Random(DType::kI32, Shape({3, 33}), 11, -1000, 1000)});
    ExpectMatchesReference(op, {Random(DType::kI64, Shape({40}), 12, -100000, 100000)});
  }
}

struct UnaryCase {
  const char* op;
  double lo, hi;
  Attrs attrs;
};

TEST(EwUnary, KernelMatchesReferenceForEveryFloatDtype) {
  const std::vector<UnaryCase> cases = {
      {"Relu", -3, 3, {}},         {"LeakyRelu", -3, 3, With("alpha", 0.2)},
      {"Elu", -4, 3, With("alpha", 0.7)}, {"Selu", -4, 3, {}},
      {"HardSigmoid", -5, 5, {}},  {"Softplus", -10, 10, {}},
      {"Sigmoid", -8, 8, {}},      {"Tanh", -4, 4, {}},
      {"Erf", -3, 3, {}},          {"Gelu", -4, 4, {}},
      {"Gelu", -4, 4, With("approximate", std::string("tanh"))},
      {"Exp", -5, 5, {}},          {"Log", 0.01, 50, {}},
      {"Sqrt", 0, 100, {}},        {"Abs", -3, 3, {}},
      {"Neg", -3, 3, {}},
  };
  uint64_t seed = 1;
  for (const UnaryCase& c : cases) {
    for (DType dt : op_test::kFloatTypes) {
      SCOPED_TRACE(std::string(c.op) + " " + DTypeName(dt));
      ExpectMatchesReference(c.op, {Random(dt, Shape({3, 41}), seed++, c.lo, c.hi)}, c.attrs);
    }
  }
}

TEST(EwUnary, StridedInputAndSmallBlocks) {
  Tensor x = Random(DType::kF32, Shape({6, 7}), 5);
  auto t = x.Permute({1, 0});
  ASSERT_TRUE(t.ok());
  ASSERT_FALSE(t->is_contiguous());
  ExpectMatchesReference("Sigmoid", {*t});
  auto cpu = GetDevice("cpu");
  ASSERT_TRUE(cpu.ok());
  RunOptions opts{.device = *cpu, .tunables = {{"block", 5}}};
  auto r = Dispatcher::Global().Run("Tanh", {x}, {}, opts);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->launches.size(), 1u);
  EXPECT_EQ(r->launches[0].config.grid.x, 9);  // 42 elements in blocks of 5
  for (int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_NEAR(r->outputs[0].FlatGetAsDouble(i), std::tanh(x.FlatGetAsDouble(i)), 1e-6);
  }
}

TEST(EwUnary, BadInputsNameTheProblem) {
  Tensor i32 = Make(DType::kI32, Shape({2}), {1, 2});
  std::string e = ErrorOf(op_test::RunCpu("Exp", {i32}));
  EXPECT_NE(e.find("dtype int32"), std::string::npos) << e;
  Tensor f = Make(DType::kF32, Shape({2}), {1, 2});
  e = ErrorOf(op_test::RunCpu("Gelu", {f}, With("approximate", std::string("fast"))));
  EXPECT_NE(e.find("'fast' is not one of none, tanh"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("LeakyRelu", {f}, With("alpah", 0.1)));
  EXPECT_NE(e.find("did you mean alpha"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("Relu", {f, f}));
  EXPECT_NE(e.find("takes 1 input(s), got 2"), std::string::npos) << e;
  e = ErrorOf(op_test::RunCpu("Neg", {Make(DType::kU8, Shape({1}), {1})}));
  EXPECT_NE(e.find("dtype uint8"), std::string::npos) << e;
}

TEST(EwUnary, CostCountsBytesAndFlops) {
  const OpSchema* op = OpRegistry::Global().Find("Sigmoid");
  ASSERT_NE(op, nullptr);
  std::vector<TensorDesc> in = {TensorDesc{DType::kF32, Shape({10, 10})}};
  Cost c = op->EstimateCost(in, in, Attrs{});
  EXPECT_EQ(c.bytes_read, 400);
  EXPECT_EQ(c.bytes_written, 400);
  EXPECT_GT(c.flops, 100);
}

}  // namespace
}  // namespace opscope
