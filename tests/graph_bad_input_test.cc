// Bad ONNX input: each case fails the import with one message naming the
// file and what is wrong (or, for an unknown op, imports and marks the node).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "graph/onnx/onnx_convert.h"
#include "graph/onnx/onnx_import.h"

namespace opscope::graph {
namespace {

void AddInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
             std::vector<int64_t> dims) {
  auto* v = list->Add();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                         std::vector<std::string> out, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

onnx::ModelProto Skeleton() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  m.mutable_graph()->set_name("bad");
  AddInfo(m.mutable_graph()->mutable_input(), "x", {2, 3});
  AddInfo(m.mutable_graph()->mutable_output(), "y", {2, 3});
  return m;
}

// The pid keeps runs of this test in several build folders or worktrees apart.
std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("opscope_graph_bad_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(GraphBadInput, TruncatedFileNamesTheFile) {
  auto proto = LoadModel(std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/resnet_small.onnx");
  ASSERT_TRUE(proto.ok());
  std::string bytes = proto->SerializeAsString();
  const std::string path = TempPath("truncated.onnx");
  {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  auto m = ImportOnnx(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(m.status().ToString().find(path), std::string::npos) << m.status().ToString();
}

TEST(GraphBadInput, MissingFile) {
  auto m = ImportOnnx(TempPath("does_not_exist.onnx"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
}

TEST(GraphBadInput, CycleNamesANodeOnIt) {
  onnx::ModelProto m = Skeleton();
  auto* g = m.mutable_graph();
  AddNode(g, "Relu", {"x"}, {"a"}, "/entry/Relu");
  AddNode(g, "Add", {"a", "c"}, {"b"}, "/loop/Add");
  AddNode(g, "Relu", {"b"}, {"c"}, "/loop/Relu");
  AddNode(g, "Identity", {"b"}, {"y"}, "/exit/Identity");
  auto r = ImportOnnxModel(m, "cycle.onnx");
  ASSERT_FALSE(r.ok());
  const std::string msg = r.status().ToString();
  EXPECT_NE(msg.find("cycle.onnx"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_TRUE(msg.find("/loop/Add") != std::string::npos || msg.find("/loop/Relu") != std::string::npos) << msg;
}

TEST(GraphBadInput, MissingInitializerNamesValueAndConsumer) {
  onnx::ModelProto m = Skeleton();
  AddNode(m.mutable_graph(), "Add", {"x", "bias"}, {"y"}, "/head/Add");
  auto r = ImportOnnxModel(m, "missing.onnx");
  ASSERT_FALSE(r.ok());
  const std::string msg = r.status().ToString();
  EXPECT_NE(msg.find("missing.onnx"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'bias'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/head/Add"), std::string::npos) << msg;
}

TEST(GraphBadInput, OverflowingDims) {
  onnx::ModelProto m = Skeleton();
  auto* dims = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  dims->mutable_dim(0)->set_dim_value(int64_t{1} << 40);
  dims->mutable_dim(1)->set_dim_value(int64_t{1} << 40);
  AddNode(m.mutable_graph(), "Relu", {"x"}, {"y"}, "/Relu");
  auto r = ImportOnnxModel(m, "huge.onnx");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("overflows int64"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().ToString().find("'x'"), std::string::npos) << r.status().ToString();
}

TEST(GraphBadInput, UnsupportedOpIsImportedAndMarked) {
  onnx::ModelProto m = Skeleton();
  AddNode(m.mutable_graph(), "Relu", {"x"}, {"a"}, "/pre/Relu");
  AddNode(m.mutable_graph(), "FrobnicateTensor", {"a"}, {"y"}, "/custom/Frob");
  auto r = ImportOnnxModel(m, "custom.onnx");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->framework.nodes().size(), 2u);
  const Node* frob = nullptr;
  for (const Node& n : r->framework.nodes()) {
    if (n.op_type == "FrobnicateTensor") frob = &n;
    else EXPECT_TRUE(n.executable);
  }
  ASSERT_NE(frob, nullptr);
  EXPECT_FALSE(frob->executable);
  EXPECT_NE(frob->not_executable_reason.find("FrobnicateTensor"), std::string::npos) << frob->not_executable_reason;
}

TEST(GraphBadInput, TwoProducersOfOneValue) {
  onnx::ModelProto m = Skeleton();
  AddNode(m.mutable_graph(), "Relu", {"x"}, {"y"}, "/a/Relu");
  AddNode(m.mutable_graph(), "Sigmoid", {"x"}, {"y"}, "/b/Sigmoid");
  auto r = ImportOnnxModel(m, "dup.onnx");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("two nodes"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace opscope::graph
