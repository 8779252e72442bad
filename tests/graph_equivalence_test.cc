// The compiled graph of each example model computes what its framework graph
// does: every node of both layers runs through the dispatcher in order, on
// the same seeded inputs. Also checks the fusions each model is built to show.
#include <gtest/gtest.h>

#include <random>

#include "graph/export/graph_json.h"
#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"
#include "graph/runtime/inorder_eval.h"

namespace opscope::graph {
namespace {

std::string Example(const std::string& name) { return std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/" + name; }

std::map<std::string, int> OpCounts(const Graph& g) {
  std::map<std::string, int> c;
  for (const Node& n : g.nodes()) ++c[n.op_type];
  return c;
}

void CompileAndCompare(const std::string& name, Model& m) {
  auto imported = ImportOnnx(Example(name));
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  m = std::move(imported).value();
  auto passes = PassManager::Default().Run(m);
  ASSERT_TRUE(passes.ok()) << passes.status().ToString();
  auto cpu = GetDevice("cpu");
  ASSERT_TRUE(cpu.ok());
  std::mt19937 rng(5);
  std::normal_distribution<double> dist(0.0, 1.0);
  std::map<std::string, Tensor> inputs;
  for (const std::string& in : m.framework.inputs()) {
    const Value* v = m.framework.FindValue(in);
    Tensor t = Tensor::Empty(v->dtype, v->shape()).value();
    for (int64_t i = 0; i < t.numel(); ++i) t.FlatSetFromDouble(i, dist(rng));
    inputs[in] = t;
  }
  auto want = EvaluateInOrder(m.framework, inputs, *cpu);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  auto got = EvaluateInOrder(m.compiled, inputs, *cpu);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  for (const auto& [out, w] : *want) {
    const Tensor& g = got->at(out);
    ASSERT_EQ(g.shape(), w.shape()) << out;
    for (int64_t i = 0; i < w.numel(); ++i) {
      const double e = w.FlatGetAsDouble(i);
      ASSERT_NEAR(g.FlatGetAsDouble(i), e, 1e-4 + 1e-4 * std::fabs(e)) << name << " " << out << "[" << i << "]";
    }
  }
  // Every framework node is accounted for: mapped 1:1, fused, or folded.
  for (const Node& f : m.framework.nodes()) {
    if (f.executed) {
      ASSERT_GE(f.absorbed_into, 0) << f.name;
      EXPECT_EQ(f.absorbed_into, f.id) << f.name;
    } else {
      EXPECT_FALSE(f.not_executed_reason.empty()) << f.name;
    }
  }
}

TEST(GraphEquivalence, ResnetSmall) {
  Model m;
  CompileAndCompare("resnet_small.onnx", m);
  auto ops = OpCounts(m.compiled);
  EXPECT_EQ(ops.count("BatchNormalization"), 0u);
  // Every conv took its BN; those followed by Relu also took the Relu (3 of
  // them: the stem and the first conv of each block).
  EXPECT_EQ(ops["FusedConv"] + ops["Conv"], OpCounts(m.framework)["Conv"]);
  EXPECT_EQ(ops["FusedConv"], 3);
  EXPECT_GT(m.compiled.memory().arena_bytes, 0);
  EXPECT_LT(m.compiled.memory().arena_bytes, m.compiled.memory().no_reuse_bytes);
}

TEST(GraphEquivalence, TransformerBlock) {
  Model m;
  CompileAndCompare("transformer_block.onnx", m);
  auto ops = OpCounts(m.compiled);
  EXPECT_EQ(ops["LayerNormalization"], 2);
  // The up-projection's bias Add is followed by the GELU, now one Gelu node
  // that bias_activation_fusion takes in as the activation.
  EXPECT_EQ(ops.count("Gelu"), 0u);
  EXPECT_EQ(ops.count("Erf"), 0u);
  EXPECT_EQ(ops.count("ReduceMean"), 0u);
  EXPECT_GE(ops["FusedMatMul"], 5);  // q, k, v, out, up, down projections with their biases
}

TEST(GraphEquivalence, TwoBranch) {
  Model m;
  CompileAndCompare("two_branch.onnx", m);
  auto ops = OpCounts(m.compiled);
  EXPECT_EQ(ops["FusedConv"], 1);     // conv1 + Relu; conv2 feeds the pool
  EXPECT_EQ(ops["FusedMatMul"], 2);   // fc1 + bias + Tanh, fc2 + Sigmoid
}

TEST(GraphJson, SchemaLayersMappingAndPositions) {
  Model m;
  CompileAndCompare("resnet_small.onnx", m);
  nlohmann::json j = GraphJson(m);
  EXPECT_EQ(j["schema"], "opscope.graph/1");
  ASSERT_EQ(j["framework"]["nodes"].size(), m.framework.nodes().size());
  ASSERT_EQ(j["compiled"]["nodes"].size(), m.compiled.nodes().size());
  for (const auto& n : j["compiled"]["nodes"]) {
    EXPECT_EQ(n["layer"], "compiled");
    EXPECT_TRUE(n.contains("pos"));
    EXPECT_FALSE(n["fused_from"].empty());
  }
  // The drawing follows the edges: a drawn node sits below every drawn
  // producer it reads (ranks are per scope, so heights are compared). Small
  // enough to open unfolded, every drawn node has a box.
  std::map<int64_t, double> y;
  for (const auto& n : j["framework"]["nodes"]) {
    if (!n.contains("scope")) continue;  // attached to its consumer
    ASSERT_TRUE(n["pos"].contains("y")) << n["name"];
    y[n["node_id"]] = n["pos"]["y"];
  }
  ASSERT_GT(y.size(), 10u);
  int edges = 0;
  for (const Node& n : m.framework.nodes()) {
    for (const std::string& in : n.inputs) {
      const Value* v = m.framework.FindValue(in);
      if (v && v->producer >= 0 && y.count(n.id) && y.count(v->producer)) {
        EXPECT_GT(y[n.id], y[v->producer]) << n.name;
        ++edges;
      }
    }
  }
  EXPECT_GT(edges, 10);
  int fused_away = 0;
  for (const auto& e : j["mapping"]) {
    if (e.contains("reason")) {
      ++fused_away;
      EXPECT_FALSE(e["executed"].get<bool>());
    }
  }
  EXPECT_GT(fused_away, 0);
  EXPECT_TRUE(j["compiled"].contains("memory"));
}

}  // namespace
}  // namespace opscope::graph
