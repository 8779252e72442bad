#include "graph/onnx/onnx_adapter.h"

#include <gtest/gtest.h>

#include "graph/onnx/onnx_convert.h"

namespace opscope {
namespace {

onnx::NodeProto Node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  onnx::NodeProto n;
  n.set_op_type(op);
  for (auto& i : inputs) n.add_input(i);
  for (auto& o : outputs) n.add_output(o);
  return n;
}

void AddInts(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void AddInt(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void AddFloat(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void AddString(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) if (a.name() == name) return &a;
  return nullptr;
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.FlatGetAsDouble(i));
  return v;
}

TEST(OnnxAdapter, CurrentFormPassesThroughUnchanged) {
  onnx::NodeProto n = Node("Unsqueeze", {"x", "axes"}, {"y"});
  auto a = AdaptOnnxNode(n, NodeEnv{.opset = 13});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_FALSE(a->changed);
  EXPECT_EQ(a->node.SerializeAsString(), n.SerializeAsString());
  EXPECT_TRUE(a->constants.empty());
}

TEST(OnnxAdapter, UnsqueezeAxesAttributeBecomesAnInt64Input) {
  onnx::NodeProto n = Node("Unsqueeze", {"x"}, {"y"});
  AddInts(n, "axes", {0, 3});
  auto a = AdaptOnnxNode(n, NodeEnv{.opset = 11});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->changed);
  ASSERT_EQ(a->node.input_size(), 2);
  EXPECT_EQ(Attr(a->node, "axes"), nullptr);
  const Tensor& axes = a->constants.at(a->node.input(1));
  EXPECT_EQ(axes.dtype(), DType::kI64);
  EXPECT_EQ(AsDoubles(axes), (std::vector<double>{0, 3}));
}

TEST(OnnxAdapter, SliceAttributesFillTheirInputPositions) {
  onnx::NodeProto n = Node("Slice", {"x"}, {"y"});
  AddInts(n, "starts", {1});
  AddInts(n, "ends", {-1});
  auto a = AdaptOnnxNode(n, NodeEnv{.opset = 9});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->node.input_size(), 3);  // axes absent: left omitted, not invented
  EXPECT_EQ(AsDoubles(a->constants.at(a->node.input(1))), std::vector<double>{1});
  EXPECT_EQ(AsDoubles(a->constants.at(a->node.input(2))), std::vector<double>{-1});
}

TEST(OnnxAdapter, UpsampleBecomesAsymmetricFloorResize) {
  onnx::NodeProto n = Node("Upsample", {"X", "scales"}, {"Y"});
  AddString(n, "mode", "nearest");
  EXPECT_EQ(AdaptedOpType(n, 9), "Resize");
  auto a = AdaptOnnxNode(n, NodeEnv{.opset = 9});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->node.op_type(), "Resize");
  ASSERT_EQ(a->node.input_size(), 3);
  EXPECT_EQ(a->node.input(0), "X");
  EXPECT_EQ(a->node.input(1), "");  // roi omitted
  EXPECT_EQ(a->node.input(2), "scales");
  EXPECT_EQ(Attr(a->node, "coordinate_transformation_mode")->s(), "asymmetric");
  EXPECT_EQ(Attr(a->node, "nearest_mode")->s(), "floor");
  EXPECT_EQ(Attr(a->node, "mode")->s(), "nearest");
}

TEST(OnnxAdapter, Upsample7ScalesAttributeBecomesAFloatInput) {
  onnx::NodeProto n = Node("Upsample", {"X"}, {"Y"});
  auto* s = n.add_attribute();
  s->set_name("scales");
  s->set_type(onnx::AttributeProto::FLOATS);
  for (float f : {1.f, 1.f, 2.f, 3.f}) s->add_floats(f);
  AddString(n, "mode", "linear");
  auto a = AdaptOnnxNode(n, NodeEnv{.opset = 7});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->node.input_size(), 3);
  const Tensor& scales = a->constants.at(a->node.input(2));
  EXPECT_EQ(scales.dtype(), DType::kF32);
  EXPECT_EQ(AsDoubles(scales), (std::vector<double>{1, 1, 2, 3}));
  EXPECT_EQ(Attr(a->node, "scales"), nullptr);
  EXPECT_EQ(Attr(a->node, "nearest_mode"), nullptr);
}

TEST(OnnxAdapter, OldSoftmaxConvertsOnlyWhenOneAxisMeansTheSame) {
  onnx::NodeProto n = Node("Softmax", {"x"}, {"y"});  // axis defaults to 1 before opset 13
  NodeEnv env{.opset = 11};
  env.descs["x"] = TensorDesc{DType::kF32, Shape({2, 3, 1})};
  auto a = AdaptOnnxNode(n, env);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(Attr(a->node, "axis")->i(), 1);

  env.descs["x"] = TensorDesc{DType::kF32, Shape({2, 3, 4})};
  a = AdaptOnnxNode(n, env);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(a.status().message().find("dims 1..2 of [2,3,4]"), std::string::npos) << a.status().message();

  a = AdaptOnnxNode(n, NodeEnv{.opset = 11});
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("needs the input's shape"), std::string::npos) << a.status().message();
}

TEST(OnnxAdapter, PadValueBecomesAScalarOfTheDataDType) {
  onnx::NodeProto n = Node("Pad", {"x"}, {"y"});
  AddInts(n, "pads", {0, 1, 0, 2});
  AddFloat(n, "value", 1.5f);
  AddString(n, "mode", "constant");
  NodeEnv env{.opset = 2};
  env.descs["x"] = TensorDesc{DType::kF64, Shape({2, 2})};
  auto a = AdaptOnnxNode(n, env);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->node.input_size(), 3);
  EXPECT_EQ(AsDoubles(a->constants.at(a->node.input(1))), (std::vector<double>{0, 1, 0, 2}));
  const Tensor& value = a->constants.at(a->node.input(2));
  EXPECT_EQ(value.dtype(), DType::kF64);
  EXPECT_EQ(value.rank(), 0);
  EXPECT_EQ(value.FlatGetAsDouble(0), 1.5);
  EXPECT_EQ(Attr(a->node, "mode")->s(), "constant");
}

TEST(OnnxAdapter, ClipBoundsBecomeInputsAndAbsentOnesStayOmitted) {
  onnx::NodeProto n = Node("Clip", {"x"}, {"y"});
  AddFloat(n, "max", 6.0f);
  NodeEnv env{.opset = 6};
  env.descs["x"] = TensorDesc{DType::kF16, Shape({4})};
  auto a = AdaptOnnxNode(n, env);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->node.input_size(), 3);
  EXPECT_EQ(a->node.input(1), "");
  EXPECT_EQ(a->constants.at(a->node.input(2)).dtype(), DType::kF16);
  EXPECT_EQ(a->constants.at(a->node.input(2)).FlatGetAsDouble(0), 6.0);
}

TEST(OnnxAdapter, LegacyBroadcastDropsOnlyWhenNumpyMeansTheSame) {
  onnx::NodeProto n = Node("Add", {"a", "b"}, {"c"});
  AddInt(n, "broadcast", 1);
  AddInt(n, "axis", 1);
  AddInts(n, "consumed_inputs", {0, 0});
  NodeEnv env{.opset = 5};
  env.descs["a"] = TensorDesc{DType::kF32, Shape({2, 3, 4})};
  env.descs["b"] = TensorDesc{DType::kF32, Shape({3, 4})};
  auto a = AdaptOnnxNode(n, env);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->node.attribute_size(), 0);

  env.descs["b"] = TensorDesc{DType::kF32, Shape({3})};  // aligned at axis 1: not numpy's trailing alignment
  a = AdaptOnnxNode(n, env);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(a.status().message().find("not numpy broadcasting"), std::string::npos) << a.status().message();
}

TEST(OnnxAdapter, Cast5StringTypeBecomesTheTypeNumber) {
  onnx::NodeProto n = Node("Cast", {"x"}, {"y"});
  AddString(n, "to", "FLOAT16");
  auto a = AdaptOnnxNode(n, NodeEnv{.opset = 5});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(Attr(a->node, "to")->type(), onnx::AttributeProto::INT);
  EXPECT_EQ(Attr(a->node, "to")->i(), onnx::TensorProto::FLOAT16);

  onnx::NodeProto bad = Node("Cast", {"x"}, {"y"});
  AddString(bad, "to", "FLOAT99");
  a = AdaptOnnxNode(bad, NodeEnv{.opset = 5});
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("'FLOAT99'"), std::string::npos) << a.status().message();
}

TEST(OnnxAdapter, Opset18ReduceAxesInputGoesBackToTheAttribute) {
  onnx::NodeProto n = Node("ReduceMean", {"x", "axes"}, {"y"});
  NodeEnv env{.opset = 18};
  auto axes = Tensor::Empty(DType::kI64, Shape({2}));
  ASSERT_TRUE(axes.ok());
  axes->data<int64_t>()[0] = 0;
  axes->data<int64_t>()[1] = -1;
  env.values["axes"] = *axes;
  auto a = AdaptOnnxNode(n, env);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->node.input_size(), 1);
  ASSERT_NE(Attr(a->node, "axes"), nullptr);
  EXPECT_EQ(Attr(a->node, "axes")->ints_size(), 2);
  EXPECT_EQ(Attr(a->node, "axes")->ints(1), -1);

  a = AdaptOnnxNode(n, NodeEnv{.opset = 18});  // axes computed at run time
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kUnimplemented);
}

TEST(OnnxAdapter, OtherDomainsAreLeftAlone) {
  onnx::NodeProto n = Node("Unsqueeze", {"x"}, {"y"});
  n.set_domain("com.example");
  AddInts(n, "axes", {0});
  auto a = AdaptOnnxNode(n, NodeEnv{.opset = 1});
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->changed);
  EXPECT_EQ(a->node.input_size(), 1);
}

}  // namespace
}  // namespace opscope
