// A node with no task of its own says why in graph.json: fused into another
// node (and which), or not executable (and why), never silently dropped.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "graph/graph_json.h"
#include "graph/onnx_import.h"
#include "graph/passes/pass_manager.h"
#include "graph/runtime/executor.h"
#include "graph/runtime/mapping.h"
#include "graph/runtime/scheduler.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

std::string Example(const std::string& name) { return std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/" + name; }

const json* FindByName(const json& nodes, const std::string& name) {
  for (const json& n : nodes) {
    if (n.at("name") == name) return &n;
  }
  return nullptr;
}

TEST(NodeReasons, FusedFrameworkNodesNameTheNodeThatRanThem) {
  auto model = ImportOnnx(Example("resnet_small.onnx"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE(Compile(*model).ok());
  auto schedule = ScheduleGraph(model->compiled, {.compute_streams = 2});
  ASSERT_TRUE(schedule.ok());
  auto cpu = GetDevice("cpu");
  ASSERT_TRUE(cpu.ok());
  ASSERT_TRUE(Execute(*model, *schedule, {.device = *cpu, .seed = 5}).ok());
  ASSERT_TRUE(MapTasks(*model, *schedule).ok());
  const json g = GraphJson(*model);

  int batch_norms = 0;
  for (const json& f : g.at("framework").at("nodes")) {
    if (f.at("executed").get<bool>()) continue;
    const std::string reason = f.at("reason").get<std::string>();
    ASSERT_FALSE(reason.empty()) << f.dump();
    if (f.at("op_type") != "BatchNormalization") continue;
    ++batch_norms;
    // "fused into FusedConv '/stem/conv/Conv' (node 25)": the node named exists and ran.
    ASSERT_EQ(reason.rfind("fused into ", 0), 0u) << reason;
    const int64_t into = f.at("compiled_node_id").get<int64_t>();
    EXPECT_NE(reason.find("(node " + std::to_string(into) + ")"), std::string::npos) << reason;
    const Node* c = model->compiled.FindNode(into);
    ASSERT_NE(c, nullptr);
    EXPECT_NE(reason.find(c->op_type + " '" + c->name + "'"), std::string::npos) << reason;
    EXPECT_FALSE(c->mapped_task_ids.empty());
    EXPECT_EQ(f.at("mapped_task_ids"), json(c->mapped_task_ids));
  }
  int want = 0;
  for (const Node& n : model->framework.nodes()) want += n.op_type == "BatchNormalization";
  EXPECT_GT(want, 0);
  EXPECT_EQ(batch_norms, want);
  for (const json& c : g.at("compiled").at("nodes")) {
    if (c.at("executed").get<bool>()) EXPECT_FALSE(c.at("mapped_task_ids").empty()) << c.dump();
    else EXPECT_FALSE(c.at("reason").get<std::string>().empty()) << c.dump();
  }
}

TEST(NodeReasons, AnUnsupportedOpImportsAndSaysItIsNotExecutable) {
  auto model = ImportOnnx(Example("unsupported_op.onnx"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE(Compile(*model).ok());
  EXPECT_EQ(model->framework.nodes().size(), 3u);

  // graph.json of the imported model, before anything ran.
  const json before = GraphJson(*model);
  for (const char* layer : {"framework", "compiled"}) {
    const json* det = FindByName(before.at(layer).at("nodes"), "/det/Det");
    ASSERT_NE(det, nullptr) << layer;
    EXPECT_FALSE(det->at("executable").get<bool>());
    EXPECT_FALSE(det->at("executed").get<bool>());
    const std::string reason = det->at("reason").get<std::string>();
    EXPECT_EQ(reason.rfind("not executable: ", 0), 0u) << reason;
    EXPECT_NE(reason.find("'Det'"), std::string::npos) << reason;
    EXPECT_NE(det->at("not_executable_reason").get<std::string>().find("'Det'"), std::string::npos);
  }

  // The scheduler refuses the graph, naming the node.
  auto schedule = ScheduleGraph(model->compiled, {.compute_streams = 1});
  ASSERT_FALSE(schedule.ok());
  EXPECT_NE(schedule.status().ToString().find("/det/Det"), std::string::npos) << schedule.status().ToString();

  // Mapped against no tasks at all: every node says why it has none.
  Schedule none;
  ASSERT_TRUE(MapTasks(*model, none).ok());
  const json after = GraphJson(*model);
  const json* det = FindByName(after.at("compiled").at("nodes"), "/det/Det");
  ASSERT_NE(det, nullptr);
  EXPECT_EQ(det->at("reason").get<std::string>().rfind("not executable: ", 0), 0u);
  const json* relu = FindByName(after.at("compiled").at("nodes"), "/pre/relu/Relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_TRUE(relu->at("executable").get<bool>());
  EXPECT_FALSE(relu->at("executed").get<bool>());
  EXPECT_EQ(relu->at("reason"), "scheduled no task");
}

}  // namespace
}  // namespace opscope::graph
