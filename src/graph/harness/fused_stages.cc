#include "graph/harness/fused_stages.h"

#include <set>

namespace opscope::graph {
namespace {

std::string NameOf(const Node& n) { return n.name.empty() ? n.op_type : n.name; }

// The one framework node of the group that reads `value`, or nullptr.
const Node* SoleConsumerIn(const Graph& g, const std::set<int64_t>& group, const std::string& value) {
  const Value* v = g.FindValue(value);
  if (!v) return nullptr;
  const Node* found = nullptr;
  for (int64_t id : v->consumers) {
    if (!group.count(id)) continue;
    if (found) return nullptr;
    found = g.FindNode(id);
  }
  return found;
}

bool ProducedIn(const Graph& g, const std::set<int64_t>& group, const std::string& value) {
  const Value* v = g.FindValue(value);
  return v && v->producer >= 0 && group.count(v->producer);
}

template <typename T>
std::vector<T> Head(const std::vector<T>& v, size_t n) {
  return std::vector<T>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(n, v.size())));
}

std::vector<FusedStage> ElementwiseStages(const Node& fused, const Graph& g, const std::set<int64_t>& group) {
  const std::vector<std::string> ops = fused.attrs.strings("ops");
  const std::vector<int64_t> args = fused.attrs.ints("args");
  const std::vector<double> alphas = fused.attrs.floats("alphas"), betas = fused.attrs.floats("betas");
  if (ops.size() < 2 || ops.size() != group.size() || args.size() != 2 * ops.size()) return {};
  // The first step: the group's node that reads nothing the group produces.
  const Node* step = nullptr;
  for (int64_t id : group) {
    const Node* n = g.FindNode(id);
    if (!n) return {};
    bool reads_group = false;
    for (const std::string& in : n->inputs) reads_group |= !in.empty() && ProducedIn(g, group, in);
    if (!reads_group) {
      if (step) return {};  // two starts: not one chain
      step = n;
    }
  }
  std::vector<FusedStage> stages;
  for (size_t k = 0; k + 1 < ops.size(); ++k) {
    if (!step || step->op_type != ops[k] || step->outputs.size() != 1) return {};
    FusedStage s{.value = step->outputs[0], .framework_node = NameOf(*step), .node = fused};
    s.node.attrs.Set("ops", Head(ops, k + 1));
    s.node.attrs.Set("args", Head(args, 2 * (k + 1)));
    s.node.attrs.Set("alphas", Head(alphas, k + 1));
    s.node.attrs.Set("betas", Head(betas, k + 1));
    s.node.outputs = {s.value};
    stages.push_back(std::move(s));
    step = SoleConsumerIn(g, group, step->outputs[0]);
  }
  if (!step || step->op_type != ops.back()) return {};  // the walk did not end on the last step
  return stages;
}

std::vector<FusedStage> DenseStages(const Node& fused, const Graph& g, const std::set<int64_t>& group) {
  if (fused.attrs.s("activation").empty()) return {};
  const Node* base = nullptr;
  for (int64_t id : group) {
    const Node* n = g.FindNode(id);
    if (n && (n->op_type == "Conv" || n->op_type == "MatMul" || n->op_type == "Gemm")) base = n;
  }
  if (!base || base->outputs.empty()) return {};
  // Through what the dense kernel folds in before its epilogue's activation.
  const Node* last = base;
  while (const Node* next = SoleConsumerIn(g, group, last->outputs[0])) {
    if (next->op_type != "Add" && next->op_type != "BatchNormalization") break;
    last = next;
  }
  if (last->outputs.empty() || last->outputs[0] == fused.outputs[0]) return {};
  FusedStage s{.value = last->outputs[0], .framework_node = NameOf(*last), .node = fused};
  s.node.attrs.Set("activation", std::string());
  s.node.outputs = {s.value};
  return {std::move(s)};
}

}  // namespace

std::vector<FusedStage> FusedStages(const Node& fused, const Graph& framework) {
  if (fused.kind != NodeKind::kFused || fused.fused_from.size() < 2 || fused.outputs.size() != 1) return {};
  const std::set<int64_t> group(fused.fused_from.begin(), fused.fused_from.end());
  if (fused.op_type == "FusedElementwise") return ElementwiseStages(fused, framework, group);
  if (fused.op_type == "FusedConv" || fused.op_type == "FusedGemm" || fused.op_type == "FusedMatMul") {
    return DenseStages(fused, framework, group);
  }
  return {};
}

}  // namespace opscope::graph
