// File: graph/passes/pass_manager.h
// The compiler: named passes run in order over a copy of the framework graph,
// turning it into the compiled graph. After each pass the graph is rebuilt
// (producers, consumers, topological order) and an optional callback sees it
// (inspector-cli --dump-passes writes it as JSON).
//
//   graph::PassManager pm = graph::PassManager::Default();
//   OPSCOPE_RETURN_IF_ERROR(pm.Run(model, [&](const graph::PassResult& r, const graph::Model& m) {
//     return graph::WriteGraphDump(dir, r, m);
//   }));
//
// Every compiled node lists the framework nodes it stands for in fused_from;
// once all passes ran, framework nodes that no compiled node stands for alone
// are marked executed=false with the reason ("fused into ...", "folded ...").
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/ir/ir.h"

namespace opscope::graph {

// What a pass works on.
class CompileContext {
 public:
  explicit CompileContext(Model& model) : model_(model) {}
  Model& model() { return model_; }
  Graph& graph() { return model_.compiled; }
  const Graph& framework() const { return model_.framework; }
  int64_t NewNodeId() { return model_.next_node_id++; }
  // Records why framework nodes left the graph without a compiled successor.
  void MarkRemoved(const Node& compiled_node, const std::string& reason);
  // The same for framework nodes by id, e.g. those of an If branch not taken.
  void MarkRemoved(const std::vector<int64_t>& framework_ids, const std::string& reason);
  const std::map<int64_t, std::string>& removed() const { return removed_; }
  // A new node standing for `parts` (their fused_from joined), named and
  // scoped after `anchor`.
  Node MakeNode(const std::vector<const Node*>& parts, const Node& anchor, std::string op_type, std::string domain,
                NodeKind kind);
  // Puts `node` where `replaced` stands and removes the nodes in `remove`.
  // Call Rebuild (or let the pass manager) afterwards.
  void Replace(int64_t replaced, Node node, const std::vector<int64_t>& remove);
  Status Commit();  // applies queued removals and rebuilds
  bool has_pending_removals() const { return !pending_removals_.empty(); }

 private:
  Model& model_;
  std::map<int64_t, std::string> removed_;
  std::vector<int64_t> pending_removals_;
};

struct Pass {
  std::string name;
  std::string description;
  // Returns how many rewrites it made.
  std::function<StatusOr<int>(CompileContext&)> run;
};

struct PassResult {
  int index = 0;  // 1-based position in the pipeline
  std::string name;
  int rewrites = 0;
  double wall_ms = 0;
  int64_t nodes_after = 0;
};

using AfterPassFn = std::function<Status(const PassResult&, const Model&)>;

class PassManager {
 public:
  // shape_inference, constant_folding, if_resolution, conv_bn_folding, layernorm_fusion,
  // gelu_fusion, bias_activation_fusion, elementwise_chain_fusion, layout,
  // memory_planning.
  static PassManager Default();

  void Add(Pass pass) { passes_.push_back(std::move(pass)); }
  const std::vector<Pass>& passes() const { return passes_; }
  // Keeps only the passes named (in pipeline order); error names an unknown one.
  Status KeepOnly(const std::vector<std::string>& names);
  // Removes the passes named (--disable-pass); error names an unknown one.
  Status Disable(const std::vector<std::string>& names);

  // Compiles model.framework into model.compiled.
  StatusOr<std::vector<PassResult>> Run(Model& model, const AfterPassFn& after = nullptr) const;

 private:
  std::vector<Pass> passes_;
};

// Framework nodes learn which compiled node took their place (absorbed_into;
// executed=false with "fused into ..." where it stands for several), and
// those no compiled node stands for why they went (`removed`, by framework
// id; else "removed by the compiler"). Run calls it after the passes, and so
// does a run folder's compiled graph read back (compiled_json.h).
void MapFrameworkToCompiled(Model& model, const std::map<int64_t, std::string>& removed);

// Import's companion: the default pipeline, no callback.
Status Compile(Model& model);

}  // namespace opscope::graph
