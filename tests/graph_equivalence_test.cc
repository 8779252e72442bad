// The compiled graph of each example model computes what its framework graph
// does: every node of both layers runs through the dispatcher in order, on
// the same seeded inputs. Also checks the fusions each model is built to show.
#include <gtest/gtest.h>

#include <random>

#include "graph/export/graph_json.h"
#include "graph/export/graph_layout.h"
#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"
#include "graph/runtime/iteration_stats.h"
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
  // Every conv took its BN; those followed by Relu also took the Relu (the
  // stem and the first conv of each block), and the second conv of each
  // block the residual Add and the Relu after it: all five are FusedConv.
  EXPECT_EQ(ops["FusedConv"] + ops["Conv"], OpCounts(m.framework)["Conv"]);
  EXPECT_EQ(ops["FusedConv"], 5);
  EXPECT_EQ(ops.count("Add") + ops.count("FusedElementwise"), 0u);
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
  EXPECT_EQ(j["schema"], "opscope.graph/3");
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

// The example models whose graph.json is read back, each reaching a branch
// of the writer: fusions, an If, a custom op, an op that cannot run, a
// layout change.
constexpr const char* kGraphJsonModels[] = {"resnet_small.onnx", "transformer_block.onnx", "two_branch.onnx",
                                            "const_if.onnx",     "custom_op.onnx",         "unsupported_op.onnx",
                                            "nhwc_mean.onnx"};

void Compile(const char* name, Model& m) {
  auto imported = ImportOnnx(Example(name));
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  m = std::move(imported).value();
  ASSERT_TRUE(PassManager::Default().Run(m).ok());
}

// graph.json (versions 2 and 3) leaves out what a reader rebuilds; ExpandGraphJson
// must rebuild it exactly as the model in memory holds it, for every node
// and value of both layers. Task ids are set by hand to reach every case:
// a fused node's tasks are its compiled node's (left out), one framework
// node's differ and one has none while its compiled node has some (both
// written), and one namespace is not its name's.
TEST(GraphJson, WhatTheFileLeavesOutIsRebuiltExactly) {
  for (const char* name : kGraphJsonModels) {
    SCOPED_TRACE(name);
    Model m;
    ASSERT_NO_FATAL_FAILURE(Compile(name, m));
    for (Node& c : m.compiled.mutable_nodes()) c.mapped_task_ids = {c.id * 2, c.id * 2 + 1};
    int odd = 0;
    for (Node& f : m.framework.mutable_nodes()) {
      const Node* c = f.absorbed_into >= 0 ? m.compiled.FindNode(f.absorbed_into) : nullptr;
      if (c) f.mapped_task_ids = c->mapped_task_ids;
      if (c && odd == 0) f.mapped_task_ids = {7};
      if (c && odd == 1) f.mapped_task_ids.clear();
      if (c && odd == 2) f.name_space = "/elsewhere";
      if (c) ++odd;
    }
    const std::string text = GraphJsonText(m, {});
    EXPECT_EQ(text.find("\"consumers\""), std::string::npos);
    EXPECT_EQ(text.find("\"mapping\""), std::string::npos);
    nlohmann::json j = nlohmann::json::parse(text);
    ExpandGraphJson(j);
    size_t unexplained = 0;
    for (const Graph* g : {&m.framework, &m.compiled}) {
      const char* layer = LayerName(g->layer());
      const nlohmann::json& l = j[layer];
      ASSERT_EQ(l["nodes"].size(), g->nodes().size());
      for (size_t i = 0; i < g->nodes().size(); ++i) {
        const Node& n = g->nodes()[i];
        const nlohmann::json& e = l["nodes"][i];
        SCOPED_TRACE(n.name);
        EXPECT_EQ(e["node_id"], n.id);
        EXPECT_EQ(e["layer"], layer);
        EXPECT_EQ(e["namespace"], n.name_space);
        EXPECT_EQ(e["kind"], NodeKindName(n.kind));
        EXPECT_EQ(e["domain"], n.domain);
        EXPECT_EQ(e["attrs"].size(), n.attrs.all().size());
        EXPECT_EQ(e["executable"], n.executable);
        EXPECT_EQ(e["fused_from"], nlohmann::json(n.fused_from));
        EXPECT_EQ(e["mapped_task_ids"], nlohmann::json(n.mapped_task_ids));
        const bool ran = n.executed && n.executable;
        if (!ran) EXPECT_EQ(e["reason"], n.not_executed_reason.empty() ? "not executable: " + n.not_executable_reason
                                                                         : n.not_executed_reason);
        for (const auto& [side, names] : {std::pair{"inputs", &n.inputs}, std::pair{"outputs", &n.outputs}}) {
          ASSERT_EQ(e[side].size(), names->size());
          for (size_t k = 0; k < names->size(); ++k) {
            const nlohmann::json& t = e[side][k];
            EXPECT_EQ(t["name"], (*names)[k]);
            const Value* v = (*names)[k].empty() ? nullptr : g->FindValue((*names)[k]);
            if (v == nullptr) continue;
            EXPECT_EQ(t["dtype"], v->dtype_known ? nlohmann::json(DTypeName(v->dtype)) : nlohmann::json(nullptr));
            EXPECT_EQ(t["shape"].is_null(), !v->rank_known);
          }
        }
        if (g == &m.compiled && n.fused_from.empty()) ++unexplained;
      }
      ASSERT_EQ(l["values"].size(), g->value_order().size());
      for (const nlohmann::json& e : l["values"]) {
        const Value* v = g->FindValue(e["name"].get<std::string>());
        ASSERT_NE(v, nullptr);
        SCOPED_TRACE(v->name);
        EXPECT_EQ(e["producer"], v->producer >= 0 ? nlohmann::json(v->producer) : nlohmann::json(nullptr));
        EXPECT_EQ(e["consumers"], nlohmann::json(v->consumers));
        EXPECT_EQ(e["constant"], v->constant.has_value());
      }
    }
    ASSERT_EQ(j["mapping"].size(), m.framework.nodes().size() + unexplained);
    for (size_t i = 0; i < m.framework.nodes().size(); ++i) {
      const Node& f = m.framework.nodes()[i];
      EXPECT_EQ(j["mapping"][i]["framework"], f.id);
      EXPECT_EQ(j["mapping"][i]["compiled"], f.absorbed_into >= 0 ? nlohmann::json(f.absorbed_into) : nlohmann::json(nullptr));
    }
  }
}

// Version 3 writes nodes, values, scopes and routes as columns, with
// tables, steps and flags for what repeats; read back (ExpandGraphJson) every
// member must be what the graph, its timing and its layout in memory hold.
TEST(GraphJson, ColumnsReadBackAsTheGraphTimingAndLayoutInMemory) {
  for (const char* name : kGraphJsonModels) {
    SCOPED_TRACE(name);
    Model m;
    ASSERT_NO_FATAL_FAILURE(Compile(name, m));
    RunTiming timing;  // every other compiled node timed, with distinct quartiles
    for (size_t i = 0; i < m.compiled.nodes().size(); i += 2) {
      const int64_t id = m.compiled.nodes()[i].id;
      timing.nodes[id] = Spread{2.5 + id, 1.25 + id, 4.75 + id, static_cast<int>(i) + 1};
    }
    nlohmann::json j = nlohmann::json::parse(GraphJsonText(m, {}, nullptr, &timing));
    EXPECT_TRUE(j["compiled"]["nodes"].is_object());  // columns, not a list of objects
    ExpandGraphJson(j);
    for (const Graph* g : {&m.framework, &m.compiled}) {
      const nlohmann::json& l = j[LayerName(g->layer())];
      const GraphLayout gl = LayoutGraph(*g);
      ASSERT_EQ(l["values"].size(), g->value_order().size());
      for (size_t k = 0; k < g->value_order().size(); ++k) {
        const Value& v = *g->FindValue(g->value_order()[k]);
        const nlohmann::json& e = l["values"][k];
        SCOPED_TRACE(v.name);
        EXPECT_EQ(e["name"], v.name);
        EXPECT_EQ(e["dtype"], v.dtype_known ? nlohmann::json(DTypeName(v.dtype)) : nlohmann::json(nullptr));
        ASSERT_EQ(e["shape"].is_null(), !v.rank_known);
        if (v.rank_known) {
          ASSERT_EQ(e["shape"].size(), v.dims.size());
          for (size_t d = 0; d < v.dims.size(); ++d) {
            if (v.dims[d] >= 0) EXPECT_EQ(e["shape"][d], v.dims[d]);
            else EXPECT_FALSE(e["shape"][d].is_number());
          }
        }
        EXPECT_EQ(e.value("bytes", int64_t{-1}), v.bytes() >= 0 ? v.bytes() : -1);
        EXPECT_EQ(e.value("graph_input", false), v.is_graph_input);
        EXPECT_EQ(e.value("graph_output", false), v.is_graph_output);
        EXPECT_EQ(e.value("mem_offset", int64_t{-1}), std::max<int64_t>(v.mem_offset, -1));
      }
      ASSERT_EQ(l["nodes"].size(), g->nodes().size());
      for (size_t i = 0; i < g->nodes().size(); ++i) {
        const Node& n = g->nodes()[i];
        const nlohmann::json& e = l["nodes"][i];
        SCOPED_TRACE(n.name);
        EXPECT_EQ(e["node_id"], n.id);
        EXPECT_EQ(e["name"], n.name);
        EXPECT_EQ(e["op_type"], n.op_type);
        EXPECT_EQ(e["executed"], n.executed && n.executable);
        EXPECT_EQ(e.value("compiled_node_id", int64_t{-1}), n.absorbed_into);
        for (const auto& [attr, value] : n.attrs.all()) EXPECT_TRUE(e["attrs"].contains(attr)) << attr;
        const auto drawn = gl.node_item.find(n.id);
        EXPECT_EQ(e.value("scope", -1), drawn == gl.node_item.end() ? -1 : gl.request.items[drawn->second].scope);
        EXPECT_EQ(e.contains("pos"), drawn != gl.node_item.end() && gl.layout.items[drawn->second].visible);
        const auto t = g == &m.compiled ? timing.nodes.find(n.id) : timing.nodes.end();
        ASSERT_EQ(e.contains("time_us"), t != timing.nodes.end());
        if (t != timing.nodes.end()) {
          EXPECT_EQ(e["time_us"]["median_us"], t->second.median_us);
          EXPECT_EQ(e["time_us"]["q1_us"], t->second.q1_us);
          EXPECT_EQ(e["time_us"]["q3_us"], t->second.q3_us);
          EXPECT_EQ(e["time_us"]["iqr_us"], t->second.iqr_us());
          EXPECT_EQ(e["time_us"]["samples"], t->second.samples);
        }
      }
      const nlohmann::json& L = l["layout"];
      ASSERT_EQ(L["scopes"].size(), gl.request.scopes.size());
      for (size_t s = 0; s < gl.request.scopes.size(); ++s) {
        const nlohmann::json& e = L["scopes"][s];
        const layout::ScopeTopology& topo = gl.layout.topology[s];
        EXPECT_EQ(e["id"], s);
        EXPECT_EQ(e["path"], gl.scope_path[s]);
        EXPECT_EQ(e["label"], gl.scope_label[s]);
        EXPECT_EQ(e["parent"], gl.request.scopes[s].parent);
        EXPECT_EQ(e["folded"], gl.request.scopes[s].folded);
        EXPECT_EQ(e["nodes"], gl.scope_nodes[s]);
        EXPECT_EQ(e["ranks"], topo.ranks.size());
        EXPECT_EQ(e["box"].is_null(), !gl.layout.scopes[s].visible);
        ASSERT_EQ(e["slots"].size(), topo.slots.size());
        for (size_t k = 0; k < topo.slots.size(); ++k) {
          const layout::Slot& slot = topo.slots[k];
          const int64_t id = slot.kind == layout::Slot::kItem ? gl.item_node[slot.index] : slot.index;
          EXPECT_EQ(e["slots"][k], nlohmann::json({static_cast<int>(slot.kind), id, slot.rank, slot.order}));
        }
        ASSERT_EQ(e["edges"].size(), topo.edges.size());
        for (size_t k = 0; k < topo.edges.size(); ++k) {
          const layout::LocalEdge& le = topo.edges[k];
          EXPECT_EQ(e["edges"][k], nlohmann::json({le.from, le.to, le.reversed, le.weight, le.dummies}));
        }
      }
      ASSERT_EQ(L["routes"].size(), gl.layout.routes.size());
      for (size_t r = 0; r < gl.layout.routes.size(); ++r) {
        const layout::Route& route = gl.layout.routes[r];
        const nlohmann::json& e = L["routes"][r];
        auto end = [&](bool scope, int index) {
          return scope ? nlohmann::json{{"scope", index}} : nlohmann::json{{"node", gl.item_node[index]}};
        };
        EXPECT_EQ(e["from"], end(route.from_scope, route.from));
        EXPECT_EQ(e["to"], end(route.to_scope, route.to));
        EXPECT_EQ(e["weight"], route.weight);
        EXPECT_EQ(e["points"].size(), route.points.size());
      }
    }
  }
}

}  // namespace
}  // namespace opscope::graph
