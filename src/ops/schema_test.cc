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

// An output written only sometimes needs both the words of when and the
// function that decides it; the registry refuses either alone, naming both.
TEST(Registry, AnOutputWrittenOnlySometimesSaysWhen) {
  const WrittenFn never = [](const Attrs&, const std::vector<TensorDesc>&) { return false; };
  OpDef no_words("test_sometimes_no_words");
  no_words.Input("x").Output("y").OutputWrittenOnlyWhen("mask", " ", never).SameShape();
  Status st = OpRegistry::Global().Register(no_words.schema());
  EXPECT_EQ(st.message(), "op test_sometimes_no_words output mask is declared written only sometimes without saying "
                          "when: expected OutputWrittenOnlyWhen(name, when, written) with both the words of `when` "
                          "(\"training=1\") and a `written` function");
  OpDef no_fn("test_sometimes_no_fn");
  no_fn.Input("x").Output("y").OutputWrittenOnlyWhen("mask", "training=1", nullptr).SameShape();
  st = OpRegistry::Global().Register(no_fn.schema());
  EXPECT_NE(st.message().find("output mask is declared written only sometimes without the function that decides it"),
            std::string::npos) << st.message();
  EXPECT_EQ(OpRegistry::Global().Find("test_sometimes_no_words"), nullptr);
  EXPECT_EQ(OpRegistry::Global().Find("test_sometimes_no_fn"), nullptr);
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

// An attribute that later opsets turned into an input is accepted in either
// form, and both forms give the same result, through the kernel and the
// reference, and in shape inference alone.
TEST(Dispatcher, AttributeFormOfAnInputGivesTheSameResult) {
  Device* cpu = *GetDevice("cpu");
  Tensor x = *Tensor::Empty(DType::kF32, Shape({2, 3}));
  for (int64_t i = 0; i < 6; ++i) x.FlatSetFromDouble(i, static_cast<double>(i) - 2.5);
  Tensor axes = *Tensor::Empty(DType::kI64, Shape({2}));
  axes.data<int64_t>()[0] = 0, axes.data<int64_t>()[1] = 3;
  Attrs as_attr;
  as_attr.Set("axes", std::vector<int64_t>{0, 3});
  for (Device* device : {cpu, static_cast<Device*>(nullptr)}) {
    auto by_input = Dispatcher::Global().Run("Unsqueeze", {x, axes}, {}, RunOptions{.device = device});
    auto by_attr = Dispatcher::Global().Run("Unsqueeze", {x}, as_attr, RunOptions{.device = device});
    ASSERT_TRUE(by_input.ok()) << by_input.status().ToString();
    ASSERT_TRUE(by_attr.ok()) << by_attr.status().ToString();
    EXPECT_EQ(by_attr->outputs[0].shape(), Shape({1, 2, 3, 1}));
    EXPECT_EQ(by_attr->outputs[0].shape(), by_input->outputs[0].shape());
    EXPECT_EQ(by_attr->outputs[0].FlatGetAsDouble(5), 2.5);
  }
  const OpSchema& unsqueeze = **OpRegistry::Global().Lookup("Unsqueeze");
  Attrs a = as_attr;
  auto desc = Dispatcher::Global().InferOutputs(unsqueeze, {x}, a, -1);
  ASSERT_TRUE(desc.ok()) << desc.status().ToString();
  EXPECT_EQ((*desc)[0].shape, Shape({1, 2, 3, 1}));
  EXPECT_TRUE(a.has("axes")) << "the caller's attrs stay as given, to be passed on to Run";

  // Float attributes take the data's dtype: Clip-6's min and max on float16.
  Tensor h = *Tensor::Empty(DType::kF16, Shape({3}));
  for (int64_t i = 0; i < 3; ++i) h.FlatSetFromDouble(i, static_cast<double>(i) * 2 - 2);
  Attrs clip;
  clip.Set("min", -1.0);
  clip.Set("max", 0.5);
  auto c = Dispatcher::Global().Run("Clip", {h}, clip, RunOptions{.device = cpu});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->outputs[0].FlatGetAsDouble(0), -1.0);
  EXPECT_EQ(c->outputs[0].FlatGetAsDouble(1), 0.0);
  EXPECT_EQ(c->outputs[0].FlatGetAsDouble(2), 0.5);

  // Both forms at once is ambiguous: one line naming the attribute and the input.
  auto both = Dispatcher::Global().Run("Unsqueeze", {x, axes}, as_attr, RunOptions{.device = cpu});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("'axes' given both as attribute and as input 1 (axes)"), std::string::npos)
      << both.status().message();
}

// Split's opset-18 num_outputs says how many outputs a call gets when the
// caller does not say, and splits unevenly (the last part shorter).
TEST(Dispatcher, SplitNumOutputsSetsTheOutputCount) {
  Tensor x = *Tensor::Empty(DType::kI32, Shape({7}));
  for (int64_t i = 0; i < 7; ++i) x.FlatSetFromDouble(i, static_cast<double>(i));
  Attrs attrs;
  attrs.Set("num_outputs", int64_t{3});
  auto r = Dispatcher::Global().Run("Split", {x}, attrs, RunOptions{.device = *GetDevice("cpu")});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outputs.size(), 3u);
  EXPECT_EQ(r->outputs[0].shape(), Shape({3}));
  EXPECT_EQ(r->outputs[2].shape(), Shape({1}));
  EXPECT_EQ(r->outputs[2].FlatGetAsDouble(0), 6);
  auto mismatch = Dispatcher::Global().Run("Split", {x}, attrs, RunOptions{.device = *GetDevice("cpu"), .num_outputs = 2});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("num_outputs=3 but 2 output(s) were requested"), std::string::npos)
      << mismatch.status().message();
}

}  // namespace
}  // namespace opscope
