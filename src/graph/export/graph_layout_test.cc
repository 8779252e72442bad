#include "graph/export/graph_layout.h"

#include <gtest/gtest.h>

namespace opscope::graph {
namespace {

// Nodes named as PyTorch names them; `ns` is what the importer derives.
void Add(Graph& g, const std::string& op, const std::string& name, std::vector<std::string> in,
         std::vector<std::string> out) {
  Node n;
  n.id = static_cast<int64_t>(g.nodes().size());
  n.op_type = op;
  n.name = name;
  n.name_space = name.substr(0, name.rfind('/'));
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  g.mutable_nodes().push_back(std::move(n));
}

int ScopeOf(const GraphLayout& gl, int64_t node) { return gl.request.items[gl.node_item.at(node)].scope; }

// A block of two convs whose weight comes through an Identity of an
// initializer, a Constant shape for a Reshape, and a head of one node.
Graph TorchLike() {
  Graph g;
  g.inputs() = {"x"};
  g.GetOrAddValue("x").is_graph_input = true;
  g.GetOrAddValue("w").constant = Tensor();
  Add(g, "Identity", "/Identity", {"w"}, {"w2"});                            // 0: tied weight
  Add(g, "Conv", "/block/conv1/Conv", {"x", "w"}, {"a"});                    // 1
  Add(g, "Relu", "/block/Relu", {"a"}, {"b"});                               // 2
  Add(g, "Conv", "/block/conv2/Conv", {"b", "w2"}, {"c"});                   // 3
  Add(g, "Constant", "/head/Constant", {}, {"shape"});                       // 4
  Add(g, "Reshape", "/head/Reshape", {"c", "shape"}, {"d"});                 // 5
  Add(g, "Relu", "/out/Relu", {"d"}, {"y"});                                 // 6
  g.outputs() = {"y"};
  EXPECT_TRUE(g.Rebuild().ok());
  return g;
}

TEST(GraphLayout, ConstantsAndIdentitiesOfConstantsAreAttachedToTheirConsumers) {
  const Graph g = TorchLike();
  const GraphLayout gl = LayoutGraph(g);
  EXPECT_EQ(gl.item_node.size(), 5u);  // Identity and Constant are not drawn
  EXPECT_FALSE(gl.node_item.count(0));
  EXPECT_FALSE(gl.node_item.count(4));
  EXPECT_EQ(gl.attached.at(0), std::vector<int64_t>{3});
  EXPECT_EQ(gl.attached.at(4), std::vector<int64_t>{5});
  // No edge starts at an undrawn node, and the drawn chain is whole.
  EXPECT_EQ(gl.request.edges.size(), 4u);
}

// /block holds three nodes and is a frame; /block/conv1 and /head hold one
// each (after the attached Constant) and add no frame.
TEST(GraphLayout, ScopesOfOneNodeAddNoFrame) {
  const GraphLayout gl = LayoutGraph(TorchLike());
  ASSERT_EQ(gl.scope_path.size(), 2u);
  EXPECT_EQ(gl.scope_path[1], "/block");
  EXPECT_EQ(ScopeOf(gl, 1), 1);
  EXPECT_EQ(ScopeOf(gl, 3), 1);
  EXPECT_EQ(ScopeOf(gl, 5), 0);
  EXPECT_EQ(gl.scope_nodes[1], 3);
  EXPECT_TRUE(gl.layout.scopes[1].visible);
}

// /enc/layer.0 and /enc/layer.1 under /enc: kept apart. A scope that only
// wraps one other ("/model" around everything) merges into its label.
TEST(GraphLayout, AScopeAroundOneScopeMergesIntoIt) {
  Graph g;
  g.inputs() = {"x"};
  g.GetOrAddValue("x").is_graph_input = true;
  std::string prev = "x";
  for (int layer = 0; layer < 2; ++layer) {
    for (int k = 0; k < 2; ++k) {
      const std::string out = "v" + std::to_string(layer) + std::to_string(k);
      Add(g, "Relu", "/model/enc/layer." + std::to_string(layer) + "/Relu_" + std::to_string(k), {prev}, {out});
      prev = out;
    }
  }
  g.outputs() = {prev};
  ASSERT_TRUE(g.Rebuild().ok());
  const GraphLayout gl = LayoutGraph(g);
  ASSERT_EQ(gl.scope_label.size(), 4u);
  EXPECT_EQ(gl.scope_label[1], "model/enc");
  EXPECT_EQ(gl.scope_label[2], "layer.0");
  EXPECT_EQ(gl.scope_label[3], "layer.1");
  EXPECT_EQ(gl.request.scopes[2].parent, 1);
}

// Past kOpenBoxes nodes the opening view folds: what is on screen stays
// within the bound, and every scope left open has an open parent.
TEST(GraphLayout, ALargeGraphOpensWithScopesFolded) {
  Graph g;
  g.inputs() = {"x"};
  g.GetOrAddValue("x").is_graph_input = true;
  std::string prev = "x";
  for (int block = 0; block < 40; ++block) {
    for (int k = 0; k < 12; ++k) {
      const std::string out = "v" + std::to_string(block) + "_" + std::to_string(k);
      Add(g, "Relu", "/blocks/b" + std::to_string(block) + "/Relu_" + std::to_string(k), {prev}, {out});
      prev = out;
    }
  }
  g.outputs() = {prev};
  ASSERT_TRUE(g.Rebuild().ok());
  const GraphLayout gl = LayoutGraph(g);
  int visible = 0, folded = 0;
  for (const layout::Box& b : gl.layout.items) visible += b.visible;
  for (size_t s = 1; s < gl.request.scopes.size(); ++s) {
    const layout::Scope& scope = gl.request.scopes[s];
    if (scope.folded) ++folded;
    if (scope.folded && !gl.request.scopes[scope.parent].folded) ++visible;
    if (!scope.folded) {
      EXPECT_FALSE(gl.request.scopes[scope.parent].folded) << gl.scope_path[s];
    }
  }
  EXPECT_GT(folded, 0);
  EXPECT_LE(visible, kOpenBoxes);
  EXPECT_GT(visible, 1);
}

}  // namespace
}  // namespace opscope::graph
