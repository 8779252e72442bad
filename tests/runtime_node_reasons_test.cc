// A node with no task of its own says why in graph.json: fused into another
// node (and which), not executable (and why), or on an If branch that did not
// run, never silently dropped.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "onnx/onnx_pb.h"

#include "graph/export/graph_json.h"
#include "graph/onnx/onnx_convert.h"
#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"
#include "graph/run/mapping.h"
#include "graph/runtime/executor.h"
#include "graph/runtime/scheduler.h"
#include "graph_json_test_util.h"
#include "tool_test_util.h"

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

// const_if.onnx: x -> Relu -> If(cond){then: Mul by 2, Add 1}{else: Neg} -> Sigmoid -> y.
// `cond` true or false replaces its initializer; nothing keeps it a graph input.
onnx::ModelProto ConstIfModel(std::optional<bool> cond) {
  auto proto = LoadModel(Example("const_if.onnx"));
  EXPECT_TRUE(proto.ok()) << proto.status().ToString();
  onnx::GraphProto* g = proto->mutable_graph();
  for (int i = 0; i < g->initializer_size(); ++i) {
    if (g->initializer(i).name() != "cond") continue;
    if (cond) {
      onnx::TensorProto* t = g->mutable_initializer(i);
      t->Clear();
      t->set_name("cond");
      t->set_data_type(onnx::TensorProto::BOOL);
      t->add_int32_data(*cond ? 1 : 0);
    } else {
      g->mutable_initializer()->DeleteSubrange(i, 1);
      auto* in = g->add_input();
      in->set_name("cond");
      in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
      in->mutable_type()->mutable_tensor_type()->mutable_shape();
    }
    break;
  }
  return std::move(proto).value();
}

const Node* FindNodeNamed(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes()) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

TEST(NodeReasons, AConstantIfRunsTheBranchTakenAndSaysWhyTheOtherDidNot) {
  const std::vector<float> x = {-1.5f, -0.25f, 0.0f, 0.5f, 1.0f, 3.0f};
  for (bool cond : {true, false}) {
    SCOPED_TRACE(cond ? "cond true" : "cond false");
    auto model = ImportOnnxModel(ConstIfModel(cond), "const_if.onnx");
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    const Node* if_node = FindNodeNamed(model->framework, "/branch/If");
    ASSERT_NE(if_node, nullptr);
    const int64_t if_id = if_node->id;
    // The branches are framework nodes, scoped under the If, reading the outer Relu's output by its name.
    const Node* mul = FindNodeNamed(model->framework, "/branch/If/then_branch/scale/Mul");
    const Node* neg = FindNodeNamed(model->framework, "/branch/If/else_branch/negate/Neg");
    ASSERT_NE(mul, nullptr);
    ASSERT_NE(neg, nullptr);
    EXPECT_EQ(mul->branch_of, if_id);
    EXPECT_EQ(mul->branch, "then_branch");
    EXPECT_EQ(mul->name_space, "/branch/If/then_branch/scale");
    EXPECT_EQ(neg->branch, "else_branch");
    EXPECT_EQ(neg->inputs, std::vector<std::string>{"/pre/relu/Relu_output_0"});
    ASSERT_EQ(if_node->branches.size(), 2u);
    const std::string taken = cond ? "then_branch" : "else_branch";
    const std::string other = cond ? "else_branch" : "then_branch";

    PassManager pm = PassManager::Default();
    auto passes = pm.Run(*model);
    ASSERT_TRUE(passes.ok()) << passes.status().ToString();
    bool resolved = false;
    for (const PassResult& p : *passes) resolved |= p.name == "if_resolution" && p.rewrites == 1;
    EXPECT_TRUE(resolved);
    std::set<int64_t> dropped, kept;
    for (const Node& f : model->framework.nodes()) {
      if (f.branch_of == if_id) (f.branch == taken ? kept : dropped).insert(f.id);
    }
    EXPECT_EQ(dropped.size() + kept.size(), 4u);
    for (const Node& c : model->compiled.nodes()) {
      EXPECT_NE(c.op_type, "If");
      for (int64_t f : c.fused_from) EXPECT_EQ(dropped.count(f), 0u) << c.name;
    }

    auto schedule = ScheduleGraph(model->compiled, {.compute_streams = 2});
    ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
    auto cpu = GetDevice("cpu");
    ASSERT_TRUE(cpu.ok());
    Tensor in = Tensor::Empty(DType::kF32, Shape({2, 3})).value();
    for (size_t i = 0; i < x.size(); ++i) in.data<float>()[i] = x[i];
    auto run = Execute(*model, *schedule, {.device = *cpu, .inputs = {{"x", in}}});
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    const Tensor& y = run->outputs.at("y");
    ASSERT_EQ(y.numel(), 6);
    for (size_t i = 0; i < x.size(); ++i) {
      const double r = std::max(0.0, static_cast<double>(x[i]));
      const double pre = cond ? 2.0 * r + 1.0 : -r;
      EXPECT_NEAR(y.FlatGetAsDouble(i), 1.0 / (1.0 + std::exp(-pre)), 1e-6) << "at " << i;
    }

    ASSERT_TRUE(MapTasks(*model, *schedule).ok());
    const json g = GraphJson(*model);
    const json& fw = g.at("framework").at("nodes");
    int not_run = 0;
    for (const json& f : fw) {
      if (!f.contains("branch")) continue;
      EXPECT_EQ(f.at("branch").at("if"), if_id);
      if (f.at("branch").at("name") != other) {
        // The Constant is folded; the others ran, inside a fused node or alone.
        if (f.at("op_type") != "Constant") {
          EXPECT_FALSE(f.at("mapped_task_ids").empty()) << f.dump();
        }
        continue;
      }
      ++not_run;
      EXPECT_FALSE(f.at("executed").get<bool>());
      EXPECT_TRUE(f.at("mapped_task_ids").empty());
      EXPECT_EQ(f.at("reason"), "on a branch that did not run (If /branch/If took " + taken + ")") << f.dump();
    }
    EXPECT_EQ(not_run, cond ? 1 : 3);
    const json* if_json = FindByName(fw, "/branch/If");
    ASSERT_NE(if_json, nullptr);
    EXPECT_FALSE(if_json->at("executed").get<bool>());
    EXPECT_EQ(if_json->at("reason"), "resolved at compile time: took " + taken);
    EXPECT_EQ(if_json->at("branches").at(taken).size(), 1u);
    // The mapping says the same of the Neg: not run when then_branch was taken, fused otherwise.
    int neg_entries = 0;
    for (const json& e : g.at("mapping")) {
      if (e.at("framework") != neg->id) continue;
      ++neg_entries;
      const std::string reason = e.at("reason").get<std::string>();
      EXPECT_EQ(reason.find("did not run") != std::string::npos, cond) << e.dump();
      EXPECT_EQ(e.at("compiled").is_null(), cond) << e.dump();
    }
    EXPECT_EQ(neg_entries, 1);
  }
}

// A cond that constant folding computes (Not of a false initializer) is
// resolved like an initializer: the then_branch runs.
TEST(NodeReasons, AnIfWhoseCondConstantFoldingComputesIsResolved) {
  onnx::ModelProto proto = ConstIfModel(false);
  onnx::GraphProto* g = proto.mutable_graph();
  for (auto& init : *g->mutable_initializer()) {
    if (init.name() == "cond") init.set_name("not_cond");
  }
  onnx::NodeProto* negate = g->add_node();
  negate->set_op_type("Not");
  negate->set_name("/cond/Not");
  negate->add_input("not_cond");
  negate->add_output("cond");
  // Nodes in topological order, as ONNX wants: the Not first.
  for (int i = g->node_size() - 1; i > 0; --i) g->mutable_node()->SwapElements(i, i - 1);
  auto model = ImportOnnxModel(proto, "folded_cond.onnx");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE(Compile(*model).ok());
  for (const Node& c : model->compiled.nodes()) EXPECT_NE(c.op_type, "If");
  const Node* neg = FindNodeNamed(model->framework, "/branch/If/else_branch/negate/Neg");
  ASSERT_NE(neg, nullptr);
  EXPECT_EQ(neg->not_executed_reason, "on a branch that did not run (If /branch/If took then_branch)");
  auto schedule = ScheduleGraph(model->compiled, {.compute_streams = 1});
  ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
  Tensor in = Tensor::Empty(DType::kF32, Shape({2, 3})).value();
  for (int64_t i = 0; i < 6; ++i) in.data<float>()[i] = 0.5f * static_cast<float>(i) - 1.0f;
  auto run = Execute(*model, *schedule, {.device = GetDevice("cpu").value(), .inputs = {{"x", in}}});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  for (int64_t i = 0; i < 6; ++i) {
    const double r = std::max(0.0, 0.5 * static_cast<double>(i) - 1.0);
    EXPECT_NEAR(run->outputs.at("y").FlatGetAsDouble(i), 1.0 / (1.0 + std::exp(-(2.0 * r + 1.0))), 1e-6) << i;
  }
}

// Data nobody here wrote: ONNX's own test_if, its cond (input_0) made an
// initializer, runs to its expected output.
TEST(NodeReasons, OnnxTestIfWithItsCondAsAConstantMatchesItsExpectedOutput) {
  const std::string dir = "/usr/share/libonnx-testdata/data/node/test_if/";
  if (!std::filesystem::exists(dir)) GTEST_FAIL() << dir << " is missing: apt-get install libonnx-testdata";
  auto proto = LoadModel(dir + "model.onnx");
  ASSERT_TRUE(proto.ok()) << proto.status().ToString();
  onnx::TensorProto cond;
  {
    std::ifstream f(dir + "test_data_set_0/input_0.pb", std::ios::binary);
    ASSERT_TRUE(cond.ParseFromIstream(&f));
  }
  ASSERT_EQ(proto->graph().input_size(), 1);
  ASSERT_EQ(proto->graph().input(0).name(), cond.name());
  proto->mutable_graph()->clear_input();
  *proto->mutable_graph()->add_initializer() = cond;
  auto model = ImportOnnxModel(*proto, "test_if");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE(Compile(*model).ok());
  auto schedule = ScheduleGraph(model->compiled, {.compute_streams = 1});
  ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
  auto run = Execute(*model, *schedule, {.device = GetDevice("cpu").value()});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  auto want = ReadTensorProtoFile(dir + "test_data_set_0/output_0.pb");
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_EQ(model->compiled.outputs().size(), 1u);
  const Tensor& got = run->outputs.at(model->compiled.outputs()[0]);
  ASSERT_EQ(got.shape(), want->shape());
  for (int64_t i = 0; i < want->numel(); ++i) EXPECT_EQ(got.FlatGetAsDouble(i), want->FlatGetAsDouble(i)) << i;
}

TEST(NodeReasons, AnIfWhoseCondIsOnlyKnownAtRunTimeImportsButDoesNotRun) {
  auto model = ImportOnnxModel(ConstIfModel(std::nullopt), "cond_input.onnx");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE(Compile(*model).ok());
  const Node* if_node = FindNodeNamed(model->compiled, "/branch/If");
  ASSERT_NE(if_node, nullptr);
  EXPECT_FALSE(if_node->executable);
  EXPECT_NE(if_node->not_executable_reason.find("cond 'cond' is not constant"), std::string::npos)
      << if_node->not_executable_reason;
  auto schedule = ScheduleGraph(model->compiled, {.compute_streams = 1});
  ASSERT_FALSE(schedule.ok());
  EXPECT_NE(schedule.status().ToString().find("/branch/If"), std::string::npos) << schedule.status().ToString();

  // The tool refuses it in one line, exit 2, and writes nothing.
  const std::string cli = std::string(OPSCOPE_BINARY_DIR) + "/bin/inspector-cli";
  ASSERT_TRUE(std::filesystem::exists(cli)) << cli << " is missing: build inspector-cli";
  opscope::testing::TempDir dir;
  const std::string path = (dir.path() / "cond_input.onnx").string();
  {
    std::ofstream f(path, std::ios::binary);
    ASSERT_TRUE(ConstIfModel(std::nullopt).SerializeToOstream(&f));
  }
  const auto out = dir.path() / "out";
  auto r = opscope::testing::Shell(cli + " run " + path + " --output-dir " + out.string());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("node '/branch/If' (If) is not executable: cond 'cond' is not constant"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(NodeReasons, InspectorCliGraphJsonShowsTheBranchThatDidNotRun) {
  const std::string cli = std::string(OPSCOPE_BINARY_DIR) + "/bin/inspector-cli";
  ASSERT_TRUE(std::filesystem::exists(cli)) << cli << " is missing: build inspector-cli";
  opscope::testing::TempDir dir;
  auto r = opscope::testing::Shell(cli + " run " + Example("const_if.onnx") + " --output-dir " + dir.path().string() +
                                   " --dump-passes");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json g = ReadGraphJson(dir.path() / "graph.json");
  const json* neg = FindByName(g.at("framework").at("nodes"), "/branch/If/else_branch/negate/Neg");
  ASSERT_NE(neg, nullptr);
  EXPECT_FALSE(neg->at("executed").get<bool>());
  EXPECT_EQ(neg->at("reason"), "on a branch that did not run (If /branch/If took then_branch)");
  EXPECT_EQ(FindByName(g.at("compiled").at("nodes"), "/branch/If"), nullptr);
  // The pass is dumped like the others: after it, no If and no Neg are left.
  const json dump = ReadGraphJson(dir.path() / "passes" / "03_if_resolution.json");
  for (const json& n : dump.at("compiled").at("nodes")) {
    EXPECT_NE(n.at("op_type"), "If");
    EXPECT_NE(n.at("op_type"), "Neg");
  }
}

}  // namespace
}  // namespace opscope::graph
