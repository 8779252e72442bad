// if_resolution: an If whose cond is a constant (an initializer, a Constant
// node, or a value constant folding computed) runs no control flow: the
// branch taken is inlined, its outputs become the If's outputs, and the other
// branch leaves the graph. The import already put both branches in the graph
// as nodes, so inlining is renaming values and dropping nodes; the inlined
// nodes keep the ids, and so the mapping, of their framework nodes. An If whose
// cond is only known at run time stays, not executable, saying so.
#include <algorithm>
#include <optional>
#include <set>

#include "graph/passes/passes.h"

namespace opscope::graph {
namespace {

bool IsImportedIf(const Node& n) { return n.op_type == "If" && n.branches.size() == 2 && !n.inputs.empty(); }

// Whether framework node `f` lies, at any depth, in branch `branch` of If `if_id`.
bool InBranch(const Graph& framework, const Node& f, int64_t if_id, const std::string& branch) {
  for (const Node* at = &f; at && at->branch_of >= 0; at = framework.FindNode(at->branch_of)) {
    if (at->branch_of == if_id) return at->branch == branch;
  }
  return false;
}

// The one value of a constant cond: true or false; nothing when it is not a
// single element.
std::optional<bool> CondValue(const Graph& g, const Node& n) {
  const Value* v = g.FindValue(n.inputs[0]);
  if (!v || !v->constant || v->constant->numel() != 1) return std::nullopt;
  return v->constant->FlatGetAsDouble(0) != 0;
}

void RenameInputs(Graph& g, const std::string& from, const std::string& to) {
  for (Node& n : g.mutable_nodes()) {
    for (std::string& in : n.inputs) {
      if (in == from) in = to;
    }
  }
}

Status Resolve(CompileContext& ctx, const Node& if_node, bool take_then) {
  Graph& g = ctx.graph();
  const Node::Branch& taken = if_node.branches[take_then ? 0 : 1];
  const Node::Branch& other = if_node.branches[take_then ? 1 : 0];

  std::set<int64_t> dropped_framework;
  for (const Node& f : ctx.framework().nodes()) {
    if (InBranch(ctx.framework(), f, if_node.id, other.name)) dropped_framework.insert(f.id);
  }
  ctx.MarkRemoved(std::vector<int64_t>(dropped_framework.begin(), dropped_framework.end()),
                  "on a branch that did not run (If " + if_node.name + " took " + taken.name + ")");
  ctx.MarkRemoved(if_node, "resolved at compile time: took " + taken.name);
  std::vector<int64_t> remove = {if_node.id};
  for (const Node& c : g.nodes()) {
    for (int64_t f : c.fused_from) {
      if (dropped_framework.count(f)) {
        remove.push_back(c.id);
        break;
      }
    }
  }

  // A branch output its own node makes is renamed to the If's output; one that
  // is an outer value, a constant or listed twice is copied by an Identity.
  const std::string local_prefix = if_node.name + "/" + taken.name + "/";
  std::vector<Node> copies;
  for (size_t i = 0; i < if_node.outputs.size(); ++i) {
    const std::string& y = if_node.outputs[i];
    const std::string& b = taken.outputs[i];
    if (y.empty()) continue;
    const Value* bv = g.FindValue(b);
    const bool renamable = bv && bv->producer >= 0 && !bv->is_graph_output && b.starts_with(local_prefix) &&
                           std::count(taken.outputs.begin(), taken.outputs.end(), b) == 1;
    if (!renamable) {
      Node copy = ctx.MakeNode({&if_node}, if_node, "Identity", "", NodeKind::kOp);
      copy.inputs = {b};
      copy.outputs = {y};
      copies.push_back(std::move(copy));
      continue;
    }
    Node* producer = g.FindNode(bv->producer);
    Value& yv = g.GetOrAddValue(y);
    if (!(yv.dtype_known && yv.shape_known()) && bv->dtype_known && bv->shape_known()) {
      yv.dtype = bv->dtype;
      yv.dtype_known = true;
      yv.dims = bv->dims;
      yv.dim_params = bv->dim_params;
      yv.rank_known = true;
    }
    for (std::string& out : producer->outputs) {
      if (out == b) out = y;
    }
    RenameInputs(g, b, y);
  }
  for (Node& copy : copies) g.mutable_nodes().push_back(std::move(copy));
  return g.RemoveNodes(remove);
}

}  // namespace

Pass IfResolutionPass() {
  return Pass{"if_resolution", "an If with a constant cond: the branch taken is inlined, the other dropped",
              [](CompileContext& ctx) -> StatusOr<int> {
                Graph& g = ctx.graph();
                int resolved = 0;
                // Inlining may expose a nested If, so look again after each.
                for (bool again = true; again;) {
                  again = false;
                  for (const Node& n : g.nodes()) {
                    if (!IsImportedIf(n)) continue;
                    std::optional<bool> cond = CondValue(g, n);
                    if (!cond) continue;
                    const Node if_node = n;
                    OPSCOPE_RETURN_IF_ERROR(Resolve(ctx, if_node, *cond).WithContext("If '" + if_node.name + "'"));
                    ++resolved;
                    again = true;
                    break;
                  }
                }
                for (Node& n : g.mutable_nodes()) {
                  if (!IsImportedIf(n)) continue;
                  const Value* cond = g.FindValue(n.inputs[0]);
                  n.executable = false;
                  n.not_executable_reason =
                      cond && cond->constant
                          ? "cond '" + n.inputs[0] + "' holds " + std::to_string(cond->constant->numel()) +
                                " elements; an If's cond is one boolean"
                          : "cond '" + n.inputs[0] + "' is not constant at compile time: opscope runs an If only "
                                                      "when its condition is known before the run";
                  // The framework node says the same, so graph.json and the CLI agree.
                  if (Node* f = ctx.model().framework.FindNode(n.id); f && f->op_type == "If") {
                    f->not_executable_reason = n.not_executable_reason;
                  }
                }
                return resolved;
              }};
}

}  // namespace opscope::graph
