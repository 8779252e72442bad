#include <gtest/gtest.h>

#include "capture/dispatcher.h"
#include "opscope/op.h"

namespace opscope {
namespace {

TEST(Schema, ParseAttrsUsesDeclaredTypes) {
  OpDef def("test_attrs");
  def.Input("x").Output("y").Attr("eps", 1e-6).Attr("axis", -1).Attr("kernel_shape", std::vector<int64_t>{})
      .Attr("mode", "nearest", {"nearest", "linear"}).SameShape();
  auto a = def.schema().ParseAttrs("eps=1e-5, axis=2,kernel_shape=[3,3],mode=linear");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_DOUBLE_EQ(a->f("eps"), 1e-5);
  EXPECT_EQ(a->i("axis"), 2);
  EXPECT_EQ(a->ints("kernel_shape"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(a->s("mode"), "linear");
}

TEST(Schema, BadAttrsNameTheProblem) {
  OpDef def("test_attrs2");
  def.Input("x").Output("y").Attr("epsilon", 1e-6).Attr("mode", "nearest", {"nearest", "linear"}).SameShape();
  auto a = def.schema().ParseAttrs("epsilom=1");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("did you mean epsilon"), std::string::npos) << a.status().message();
  auto b = def.schema().ParseAttrs("epsilon=abc");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("expected a number"), std::string::npos) << b.status().message();
  auto c = def.schema().ParseAttrs("mode=cubic");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("not one of nearest, linear"), std::string::npos) << c.status().message();
}

TEST(Registry, UnknownOpSuggestsClosest) {
  auto s = OpRegistry::Global().Lookup("Rleu");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("Relu"), std::string::npos) << s.status().message();
}

TEST(Dispatcher, RunsKernelAndReferenceAndRejectsBadDtype) {
  auto dev = GetDevice("cpu");
  ASSERT_TRUE(dev.ok());
  auto x = Tensor::Empty(DType::kF32, Shape({5}));
  ASSERT_TRUE(x.ok());
  float vals[5] = {-2, -0.5f, 0, 1.5f, 3};
  for (int i = 0; i < 5; ++i) x->data<float>()[i] = vals[i];
  RunOptions opts{.device = *dev};
  auto r = Dispatcher::Global().Run("Relu", {*x}, {}, opts);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(0), 0.0);
  EXPECT_EQ(r->outputs[0].FlatGetAsDouble(3), 1.5);
  EXPECT_NE(r->op_id, 0u);

  auto ref = Dispatcher::Global().Run("Relu", {*x}, {}, RunOptions{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  EXPECT_EQ(ref->outputs[0].dtype(), DType::kF64);
  EXPECT_EQ(ref->outputs[0].FlatGetAsDouble(4), 3.0);

  auto b = Tensor::Empty(DType::kBool, Shape({2}));
  auto bad = Dispatcher::Global().Run("Relu", {*b}, {}, opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("dtype bool"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace opscope
