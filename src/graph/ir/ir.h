// File: graph/ir/ir.h
// The model IR inspector-cli shows (DESIGN.md §3): a Model holds two Graph
// layers of the same shape, the framework graph (the ONNX graph as written,
// after opset adaptation) and the compiled graph (after the compiler passes).
// A Graph owns its Nodes in topological order and a table of Values (tensor
// names with dtype, shape and, for initializers and folded results, data).
//
//   OPSCOPE_ASSIGN_OR_RETURN(graph::Model m, graph::ImportOnnx("model.onnx"));
//   for (const graph::Node& n : m.framework.nodes()) {
//     const graph::Value* v = m.framework.FindValue(n.outputs[0]);
//   }
//
// Node ids are unique within a Model: compiled nodes copied unchanged from the
// framework keep its id, nodes a pass creates take fresh ones, and every
// compiled node lists in `fused_from` the framework ids it stands for.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "opscope/device.h"
#include "opscope/op.h"
#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope::graph {

enum class Layer { kFramework, kCompiled };
const char* LayerName(Layer l);  // "framework" | "compiled"

enum class NodeKind { kOp, kFused, kTransdata };
const char* NodeKindName(NodeKind k);  // "op" | "fused" | "transdata"

struct Value {
  std::string name;
  DType dtype = DType::kF32;
  bool dtype_known = false;
  // Unknown dims are -1; `dim_params` keeps their symbolic names ("" when none).
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;
  bool rank_known = false;
  std::optional<Tensor> constant;  // initializer, adapter-made or folded constant
  bool is_graph_input = false;
  bool is_graph_output = false;
  int64_t producer = -1;           // node id; -1 for inputs and constants
  std::vector<int64_t> consumers;  // node ids, in graph order
  int64_t mem_offset = -1;         // arena offset from memory planning; -1 unplanned

  bool shape_known() const;        // rank and every dim known
  Shape shape() const { return Shape(dims); }
  int64_t bytes() const;           // -1 unless dtype and shape are known
  TensorDesc desc() const { return TensorDesc{dtype, Shape(dims), true}; }
  void SetDesc(DType t, const Shape& s);
};

struct Node {
  int64_t id = -1;
  Layer layer = Layer::kFramework;
  NodeKind kind = NodeKind::kOp;
  std::string op_type;
  std::string domain;
  std::string name;
  std::string name_space;           // "/layer1/conv" for "/layer1/conv/Conv"
  std::vector<std::string> inputs;  // value names; "" for an omitted optional input
  std::vector<std::string> outputs;
  Attrs attrs;
  std::vector<int64_t> fused_from;       // framework node ids (compiled layer)
  std::vector<int64_t> mapped_task_ids;  // filled by the runtime
  bool executed = true;
  std::string not_executed_reason;       // "fused into FusedConv '/c/Conv' (node 12)"
  bool executable = true;
  std::string not_executable_reason;     // unknown op, unsupported attribute, ...
  std::vector<std::string> subgraphs;    // If/Loop bodies: "then_branch: then (3 nodes)"
  // An If whose branches were imported as nodes: each branch's outputs, in
  // the order they become the If's outputs (they are also the If's inputs
  // after the cond, so the graph shows the branches flowing into it).
  struct Branch {
    std::string name;  // "then_branch" | "else_branch"
    std::vector<std::string> outputs;
  };
  std::vector<Branch> branches;
  // A node of an If branch: the If's node id and the branch's name.
  int64_t branch_of = -1;
  std::string branch;
  int64_t absorbed_into = -1;            // framework: the compiled node that took its place
  std::string layout_from, layout_to;    // transdata: "NCHW" -> "NHWC"
  std::string note;                      // e.g. "rewritten from opset 9"
  // Compiled layer, a graph another engine compiled (graph/ort): how this
  // node was tied to the framework nodes in fused_from ("output tensor
  // '/fc/Gemm_output_0' is the framework's"), or why no framework node
  // stands for it. Empty for opscope's own compiler, whose passes record
  // fused_from as they rewrite.
  std::string mapped_by;
};

// Where memory planning put the intermediates of a compiled graph.
struct MemoryPlan {
  bool planned = false;
  int64_t arena_bytes = 0;     // peak with reuse: the arena size
  int64_t no_reuse_bytes = 0;  // every intermediate in its own buffer
  int64_t max_live_bytes = 0;  // the most bytes alive at one step (a lower bound)
  int64_t planned_values = 0;
  int64_t unknown_size_values = 0;  // intermediates without a known size: not planned
};

class Graph {
 public:
  explicit Graph(Layer layer = Layer::kFramework) : layer_(layer) {}

  Layer layer() const { return layer_; }
  void set_layer(Layer l);  // relabels every node

  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& mutable_nodes() { return nodes_; }
  const Node* FindNode(int64_t id) const;
  Node* FindNode(int64_t id);

  const Value* FindValue(const std::string& name) const;
  Value* FindValue(const std::string& name);
  // Finds or creates the value `name`.
  Value& GetOrAddValue(const std::string& name);
  const std::unordered_map<std::string, Value>& values() const { return values_; }
  // Value names in the order they were first added (stable output).
  const std::vector<std::string>& value_order() const { return value_order_; }
  // A value name not used yet, built from `base`.
  std::string UniqueValueName(const std::string& base);

  std::vector<std::string>& inputs() { return inputs_; }
  const std::vector<std::string>& inputs() const { return inputs_; }
  std::vector<std::string>& outputs() { return outputs_; }
  const std::vector<std::string>& outputs() const { return outputs_; }

  bool IsConstant(const std::string& value) const;
  // The single consumer of `value`, or nullptr when it has none, several, or
  // is a graph output (then its producer's result must stay visible).
  const Node* SoleConsumer(const std::string& value) const;

  // Drops the nodes with these ids, then Rebuild().
  Status RemoveNodes(const std::vector<int64_t>& ids);
  // Recomputes producers and consumers, puts the nodes in topological order
  // (stable: ties keep their current order), drops values nothing refers to
  // and that are not graph inputs/outputs. An error names a node on a cycle,
  // a value with two producers, or an input nothing produces.
  Status Rebuild();

  MemoryPlan& memory() { return memory_; }
  const MemoryPlan& memory() const { return memory_; }

 private:
  Layer layer_;
  std::vector<Node> nodes_;
  std::unordered_map<int64_t, size_t> index_;  // node id -> position in nodes_
  std::unordered_map<std::string, Value> values_;
  std::vector<std::string> value_order_;
  std::vector<std::string> inputs_, outputs_;
  MemoryPlan memory_;
  int64_t unique_counter_ = 0;
};

struct OpsetImport {
  std::string domain;
  int64_t version = 0;
};

struct Model {
  std::string path;
  int64_t ir_version = 0;
  std::vector<OpsetImport> opsets;
  std::string producer;  // "pytorch 1.13"
  std::vector<std::string> warnings;  // import went on, but the user should know
  Graph framework{Layer::kFramework};
  Graph compiled{Layer::kCompiled};
  int64_t next_node_id = 0;  // the id the next created node takes
  // Op type -> the layout the layout pass gave its nodes in the run a folder
  // holds (capture.json): read back without the plugin whose schema asked
  // for it, the compiler makes the same graph from it.
  std::map<std::string, std::string> layout_preferences;
};

// One unit of work the runtime ran (or will run) on a stream. The runtime
// engineer fills these; the graph side only carries them.
enum class TaskKind { kKernel, kMemcpyH2D, kMemcpyD2H, kTransdata, kEvent };
const char* TaskKindName(TaskKind k);  // "kernel" | "memcpy_h2d" | "memcpy_d2h" | "transdata" | "event"
std::optional<TaskKind> TaskKindFromName(std::string_view name);  // nullopt: none of those

struct TaskDesc {
  int64_t task_id = -1;
  int64_t op_node_id = -1;  // compiled node; -1 for a task with no node
  int stream_id = 0;
  int64_t event_before = -1, event_after = -1;  // event ids; -1 when none
  TaskKind kind = TaskKind::kKernel;
  std::string kernel_name;
  LaunchConfig launch;
  double start_us = 0;
  double duration_us_raw = 0;
  double duration_us_calibrated = 0;
  std::string label;  // for a task with no node: "inserted copy of 'x'"
};

// Ops that only move or reinterpret data (Reshape, Transpose, Squeeze,
// Unsqueeze, Flatten, Identity, onnxruntime's ReorderInput/ReorderOutput):
// among several nodes that together compute something, not the one it is
// named or counted by.
bool IsShapeOrLayoutOp(const std::string& op_type);

// "/layer1/conv" for "/layer1/conv/Conv"; "" for names without a scope.
// graph.json leaves out a namespace that this gives (web/model.js and
// python/opscope rebuild it by the same rule).
std::string NamespaceOf(std::string_view node_name);

// Why a framework node fused into compiled node `c` did not run:
// "fused into FusedConv '/c/Conv' (node 12)". The second form for readers of
// graph.json, which rebuild it from the compiled node's members.
std::string FusedIntoReason(const Node& c);
std::string FusedIntoReason(const std::string& op_type, const std::string& name, int64_t id);

// The node of `g` called `name`; the error (NotFound) names the layer and
// lists the closest names.
StatusOr<const Node*> FindNodeByName(const Graph& g, const std::string& name);

}  // namespace opscope::graph
