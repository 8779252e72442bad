// The real tools on inputs that once crashed them (issue 11, "Memory
// safety"): each must exit 2 with one line naming the flag or the model and
// what is wrong. The models are written here with the onnx protobuf.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "tool_test_util.h"

namespace opscope {
namespace {

using ::opscope::testing::Contains;
using ::opscope::testing::Shell;
using ::opscope::testing::TempDir;
using ::opscope::testing::ToolResult;

const std::string kBin = std::string(OPSCOPE_BINARY_DIR) + "/bin/";

void ExpectOneLineError(const ToolResult& r, const std::string& tool, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_EQ(r.err.rfind(tool + ": error: ", 0), 0u) << r.err;
  for (const std::string& p : parts) EXPECT_TRUE(Contains(r.err, p)) << "missing '" << p << "' in: " << r.err;
}

void AddInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
             const std::vector<int64_t>& dims) {
  auto* t = list->Add();
  t->set_name(name);
  auto* tt = t->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// x [dims] -> Relu -> y.
onnx::ModelProto ReluModel(const std::vector<int64_t>& dims) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("bad");
  AddInfo(g->mutable_input(), "x", dims);
  AddInfo(g->mutable_output(), "y", dims);
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->set_name("/Relu");
  n->add_input("x");
  n->add_output("y");
  return m;
}

std::string Write(const TempDir& dir, const std::string& name, const onnx::ModelProto& m) {
  const std::string path = (dir.path() / name).string();
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
  return path;
}

ToolResult InspectorRun(const TempDir& dir, const std::string& model) {
  return Shell(kBin + "inspector-cli run " + model + " --output-dir " + (dir.path() / "run").string());
}

TEST(BadInputCli, OpsDebugInputShapeWhoseBytesOverflow) {
  ToolResult r = Shell(kBin + "ops-debug run --op Relu --input-shapes '[4611686018427387904]'");
  ExpectOneLineError(r, "ops-debug", {"--input-shapes", "4611686018427387904"});
}

TEST(BadInputCli, InspectorGraphInputWhoseBytesOverflow) {
  TempDir dir;
  ToolResult r = InspectorRun(dir, Write(dir, "huge.onnx", ReluModel({int64_t{1} << 62})));
  ExpectOneLineError(r, "inspector-cli", {"'x'", "4611686018427387904"});
}

TEST(BadInputCli, InspectorGraphNamesListedTwice) {
  TempDir dir;
  onnx::ModelProto in = ReluModel({64, 64}), out = ReluModel({64, 64});
  *in.mutable_graph()->add_input() = in.graph().input(0);
  *out.mutable_graph()->add_output() = out.graph().output(0);
  ExpectOneLineError(InspectorRun(dir, Write(dir, "dup_in.onnx", in)), "inspector-cli",
                     {"dup_in.onnx", "graph input 'x'"});
  ExpectOneLineError(InspectorRun(dir, Write(dir, "dup_out.onnx", out)), "inspector-cli",
                     {"dup_out.onnx", "graph output 'y'"});
}

TEST(BadInputCli, InspectorMaxPoolWithZeroStride) {
  TempDir dir;
  onnx::ModelProto m = ReluModel({1, 1, 8, 8});
  onnx::NodeProto* n = m.mutable_graph()->mutable_node(0);
  n->set_op_type("MaxPool");
  n->set_name("/pool");
  for (const char* attr : {"kernel_shape", "strides"}) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(std::string(attr) == "strides" ? 0 : 2);
    a->add_ints(2);
  }
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  ExpectOneLineError(InspectorRun(dir, Write(dir, "pool.onnx", m)), "inspector-cli",
                     {"pool.onnx", "/pool", "strides"});
}

}  // namespace
}  // namespace opscope
