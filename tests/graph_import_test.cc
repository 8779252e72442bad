// ONNX import: the example models and the models of Debian's libonnx-testdata.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "graph/onnx/onnx_convert.h"
#include "graph/onnx/onnx_import.h"

namespace opscope::graph {
namespace {

std::string Example(const std::string& name) { return std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/" + name; }

// Every node output of `g` has a known dtype and shape.
void ExpectAllShapesKnown(const Graph& g, const std::string& what) {
  for (const Node& n : g.nodes()) {
    for (const std::string& out : n.outputs) {
      const Value* v = g.FindValue(out);
      ASSERT_NE(v, nullptr) << what << ": " << out;
      EXPECT_TRUE(v->dtype_known && v->shape_known()) << what << ": value " << out << " of node " << n.name;
    }
  }
}

TEST(GraphImport, ExampleModelsImportWithShapesAndNamespaces) {
  for (const char* name : {"resnet_small.onnx", "transformer_block.onnx", "two_branch.onnx"}) {
    SCOPED_TRACE(name);
    auto proto = LoadModel(Example(name));
    ASSERT_TRUE(proto.ok()) << proto.status().ToString();
    auto m = ImportOnnx(Example(name));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(m->framework.nodes().size(), static_cast<size_t>(proto->graph().node_size()));
    EXPECT_EQ(m->ir_version, proto->ir_version());
    EXPECT_TRUE(m->warnings.empty()) << m->warnings[0];
    ExpectAllShapesKnown(m->framework, name);
    for (const Node& n : m->framework.nodes()) {
      EXPECT_TRUE(n.executable) << n.name << ": " << n.not_executable_reason;
      EXPECT_EQ(n.name_space, n.name.substr(0, n.name.rfind('/'))) << n.name;
    }
    for (const auto& init : proto->graph().initializer()) EXPECT_TRUE(m->framework.IsConstant(init.name()));
  }
}

TEST(GraphImport, NodesAreInTopologicalOrder) {
  auto m = ImportOnnx(Example("transformer_block.onnx"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::set<std::string> ready(m->framework.inputs().begin(), m->framework.inputs().end());
  for (const Node& n : m->framework.nodes()) {
    for (const std::string& in : n.inputs) {
      EXPECT_TRUE(in.empty() || ready.count(in) || m->framework.IsConstant(in)) << n.name << " reads " << in;
    }
    ready.insert(n.outputs.begin(), n.outputs.end());
  }
}

TEST(GraphImport, NamespaceOfNodeNames) {
  EXPECT_EQ(NamespaceOf("/layer1/conv/Conv"), "/layer1/conv");
  EXPECT_EQ(NamespaceOf("/Conv"), "");
  EXPECT_EQ(NamespaceOf("Conv_3"), "");
  EXPECT_EQ(NamespaceOf(""), "");
}

// The libonnx-testdata models: PyTorch exports of opsets 6-12 and the
// expand-shape models. Each imports with every node kept and its outputs typed.
TEST(GraphImport, LibonnxTestdataModels) {
  const std::string root = "/usr/share/libonnx-testdata/data/";
  int models = 0, nodes = 0, runnable = 0;
  for (const char* dir : {"pytorch-converted", "pytorch-operator", "simple"}) {
    if (!std::filesystem::exists(root + dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(root + dir)) {
      const std::string path = entry.path().string() + "/model.onnx";
      if (!std::filesystem::exists(path)) continue;
      SCOPED_TRACE(path);
      auto proto = LoadModel(path);
      ASSERT_TRUE(proto.ok()) << proto.status().ToString();
      auto m = ImportOnnx(path);
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      ASSERT_EQ(m->framework.nodes().size(), static_cast<size_t>(proto->graph().node_size()));
      for (const Node& n : m->framework.nodes()) {
        for (const std::string& out : n.outputs) {
          const Value* v = m->framework.FindValue(out);
          ASSERT_NE(v, nullptr);
          // Sequences and strings have no opscope dtype; their ops are not executable.
          if (n.executable) {
            EXPECT_TRUE(v->dtype_known) << n.name << " output " << out;
          }
        }
        if (!n.executable) {
          EXPECT_NE(n.not_executable_reason.find("'" + n.op_type + "'"), std::string::npos) << n.name;
        }
        // data/simple holds sequence and string models: no opscope dtype.
        if (std::string(dir) != "simple") {
          runnable += n.executable ? 1 : 0;
          ++nodes;
        }
      }
      ++models;
    }
  }
  if (models == 0) GTEST_SKIP() << "libonnx-testdata is not installed";
  EXPECT_GT(models, 100);
  // Nearly all nodes of the PyTorch exports map onto built-in ops.
  EXPECT_GE(runnable * 100, nodes * 95) << runnable << " of " << nodes;
}

// An If whose cond is a graph input: the branches become framework nodes, the
// If (their subgraphs still listed) waits, not executable, for the compiler.
TEST(GraphImport, IfBranchesBecomeNodesAndTheIfIsNotExecutable) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("with_if");
  auto* cond = g->add_input();
  cond->set_name("cond");
  cond->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  cond->mutable_type()->mutable_tensor_type()->mutable_shape();
  auto* out = g->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* n = g->add_node();
  n->set_op_type("If");
  n->set_name("/branch/If");
  n->add_input("cond");
  n->add_output("y");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* sub = a->mutable_g();
    sub->set_name(std::string(branch) + "_body");
    auto* c = sub->add_node();
    c->set_op_type("Constant");
    c->add_output(std::string(branch) + "_y");
    auto* v = c->add_attribute();
    v->set_name("value_float");
    v->set_type(onnx::AttributeProto::FLOAT);
    v->set_f(1.0f);
    auto* so = sub->add_output();
    so->set_name(std::string(branch) + "_y");
    so->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  auto model = ImportOnnxModel(m, "with_if.onnx");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->framework.nodes().size(), 3u);
  const Node& node = model->framework.nodes().back();
  EXPECT_EQ(node.op_type, "If");
  EXPECT_FALSE(node.executable);
  ASSERT_EQ(node.subgraphs.size(), 2u);
  EXPECT_EQ(node.subgraphs[0], "then_branch: then_branch_body (1 nodes)");
  EXPECT_NE(node.not_executable_reason.find("If"), std::string::npos) << node.not_executable_reason;
  EXPECT_EQ(node.inputs, (std::vector<std::string>{"cond", "/branch/If/then_branch/then_branch_y",
                                                   "/branch/If/else_branch/else_branch_y"}));
  for (size_t i = 0; i < 2; ++i) {
    const Node& c = model->framework.nodes()[i];
    EXPECT_EQ(c.op_type, "Constant");
    EXPECT_EQ(c.branch_of, node.id);
    EXPECT_EQ(c.name, "/branch/If/" + c.branch + "/Constant_0");
    EXPECT_TRUE(model->framework.IsConstant("/branch/If/" + c.branch + "/" + c.branch + "_y"));
  }

  // A branch the importer cannot take leaves the If as it was, listed only, and says why.
  m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_node(0)->clear_attribute();
  auto listed = ImportOnnxModel(m, "with_if.onnx");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->framework.nodes().size(), 1u);
  EXPECT_FALSE(listed->framework.nodes()[0].executable);
  ASSERT_EQ(listed->warnings.size(), 1u);
  EXPECT_NE(listed->warnings[0].find("If '/branch/If': branches not expanded"), std::string::npos)
      << listed->warnings[0];
}

}  // namespace
}  // namespace opscope::graph
