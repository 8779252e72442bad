#include "graph/ir/ir.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <set>
#include <string_view>
#include <unordered_set>

#include "core/text_distance.h"
#include "core/text_format.h"

namespace opscope::graph {

const char* LayerName(Layer l) { return l == Layer::kFramework ? "framework" : "compiled"; }

const char* NodeKindName(NodeKind k) {
  switch (k) {
    case NodeKind::kOp: return "op";
    case NodeKind::kFused: return "fused";
    case NodeKind::kTransdata: return "transdata";
  }
  return "op";
}

const char* TaskKindName(TaskKind k) {
  switch (k) {
    case TaskKind::kKernel: return "kernel";
    case TaskKind::kMemcpyH2D: return "memcpy_h2d";
    case TaskKind::kMemcpyD2H: return "memcpy_d2h";
    case TaskKind::kTransdata: return "transdata";
    case TaskKind::kEvent: return "event";
  }
  return "kernel";
}

std::optional<TaskKind> TaskKindFromName(std::string_view name) {
  for (TaskKind k : {TaskKind::kKernel, TaskKind::kMemcpyH2D, TaskKind::kMemcpyD2H, TaskKind::kTransdata,
                     TaskKind::kEvent}) {
    if (name == TaskKindName(k)) return k;
  }
  return std::nullopt;
}

bool Value::shape_known() const {
  if (!rank_known) return false;
  for (int64_t d : dims) {
    if (d < 0) return false;
  }
  return true;
}

int64_t Value::bytes() const {
  if (!dtype_known || !shape_known()) return -1;
  int64_t n = static_cast<int64_t>(DTypeSize(dtype));
  for (int64_t d : dims) {
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

void Value::SetDesc(DType t, const Shape& s) {
  dtype = t;
  dtype_known = true;
  dims = s.dims();
  dim_params.assign(dims.size(), "");
  rank_known = true;
}

void Graph::set_layer(Layer l) {
  layer_ = l;
  for (Node& n : nodes_) n.layer = l;
}

const Node* Graph::FindNode(int64_t id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &nodes_[it->second];
}

Node* Graph::FindNode(int64_t id) {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &nodes_[it->second];
}

const Value* Graph::FindValue(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

Value* Graph::FindValue(const std::string& name) {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

Value& Graph::GetOrAddValue(const std::string& name) {
  auto [it, added] = values_.try_emplace(name);
  if (added) {
    it->second.name = name;
    value_order_.push_back(name);
  }
  return it->second;
}

std::string Graph::UniqueValueName(const std::string& base) {
  std::string name = base;
  while (values_.count(name)) name = base + "_" + std::to_string(++unique_counter_);
  return name;
}

bool Graph::IsConstant(const std::string& value) const {
  const Value* v = FindValue(value);
  return v && v->constant.has_value();
}

const Node* Graph::SoleConsumer(const std::string& value) const {
  const Value* v = FindValue(value);
  if (!v || v->is_graph_output || v->consumers.size() != 1) return nullptr;
  return FindNode(v->consumers[0]);
}

Status Graph::RemoveNodes(const std::vector<int64_t>& ids) {
  std::unordered_set<int64_t> drop(ids.begin(), ids.end());
  std::erase_if(nodes_, [&](const Node& n) { return drop.count(n.id) != 0; });
  return Rebuild();
}

namespace {

std::string NodeWhat(const Node& n) { return "node '" + n.name + "' (" + n.op_type + ")"; }

// Follows producers from a node left over by the topological sort until one
// repeats: that node lies on a cycle.
const Node& NodeOnCycle(const std::vector<Node>& nodes, const std::vector<int>& indegree,
                        const std::unordered_map<std::string, size_t>& producer_index) {
  size_t at = 0;
  while (indegree[at] == 0) ++at;
  std::vector<bool> seen(nodes.size(), false);
  while (!seen[at]) {
    seen[at] = true;
    for (const std::string& in : nodes[at].inputs) {
      auto it = producer_index.find(in);
      if (it != producer_index.end() && indegree[it->second] > 0) {
        at = it->second;
        break;
      }
    }
  }
  return nodes[at];
}

}  // namespace

Status Graph::Rebuild() {
  // Keys are views of the nodes' own output names: nodes_ is not touched
  // until the order is known (a 100,000-node graph is rebuilt after every
  // pass that rewrote it, and copying each name was most of the cost).
  std::unordered_map<std::string_view, size_t> producer_index;
  producer_index.reserve(nodes_.size() * 2);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (const std::string& out : nodes_[i].outputs) {
      if (out.empty()) continue;
      auto [it, added] = producer_index.emplace(out, i);
      if (!added) {
        return InvalidArgumentError("value '" + out + "' is produced by two nodes: " + NodeWhat(nodes_[it->second]) +
                                    " and " + NodeWhat(nodes_[i]));
      }
    }
  }
  // Each node's producers, then its users as one flat list per node (CSR).
  std::vector<int> indegree(nodes_.size(), 0);
  std::vector<size_t> producer_of;  // per (node, input) with a producer, in node order
  std::vector<size_t> user_count(nodes_.size() + 1, 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (const std::string& in : nodes_[i].inputs) {
      if (in.empty()) continue;
      auto it = producer_index.find(in);
      if (it == producer_index.end()) {
        const Value* v = FindValue(in);
        if (!v || (!v->is_graph_input && !v->constant.has_value())) {
          return InvalidArgumentError(NodeWhat(nodes_[i]) + " reads '" + in +
                                      "', which no node, initializer or graph input produces "
                                      "(a missing initializer?)");
        }
        continue;
      }
      ++indegree[i];
      producer_of.push_back(it->second);
      ++user_count[it->second + 1];
    }
  }
  for (size_t i = 0; i < nodes_.size(); ++i) user_count[i + 1] += user_count[i];
  std::vector<size_t> users(producer_of.size()), fill(user_count.begin(), user_count.end() - 1);
  for (size_t i = 0, k = 0; i < nodes_.size(); ++i) {
    for (int e = 0; e < indegree[i]; ++e) users[fill[producer_of[k++]]++] = i;
  }
  // Stable Kahn: among ready nodes the one earliest in the current order goes first.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (indegree[i] == 0) ready.push(i);
  }
  std::vector<size_t> order;
  order.reserve(nodes_.size());
  std::vector<int> remaining = indegree;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t k = user_count[i]; k < user_count[i + 1]; ++k) {
      if (--remaining[users[k]] == 0) ready.push(users[k]);
    }
  }
  if (order.size() != nodes_.size()) {
    std::unordered_map<std::string, size_t> by_name(producer_index.begin(), producer_index.end());
    const Node& n = NodeOnCycle(nodes_, remaining, by_name);
    return InvalidArgumentError("the graph has a cycle through " + NodeWhat(n));
  }
  producer_index.clear();  // its views die with the moves below
  bool in_order = true;
  for (size_t i = 0; i < order.size() && in_order; ++i) in_order = order[i] == i;
  if (!in_order) {  // after the first rebuild, mostly already sorted
    std::vector<Node> sorted;
    sorted.reserve(nodes_.size());
    for (size_t i : order) sorted.push_back(std::move(nodes_[i]));
    nodes_ = std::move(sorted);
  }

  index_.clear();
  index_.reserve(nodes_.size() * 2);
  for (auto& [name, v] : values_) {
    v.producer = -1;
    v.consumers.clear();
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Node& n = nodes_[i];
    n.layer = layer_;
    index_[n.id] = i;
    for (const std::string& out : n.outputs) {
      if (!out.empty()) GetOrAddValue(out).producer = n.id;
    }
    for (const std::string& in : n.inputs) {
      if (in.empty()) continue;
      std::vector<int64_t>& c = GetOrAddValue(in).consumers;
      if (c.empty() || c.back() != n.id) c.push_back(n.id);
    }
  }
  for (const std::string& name : inputs_) GetOrAddValue(name).is_graph_input = true;
  for (const std::string& name : outputs_) GetOrAddValue(name).is_graph_output = true;
  // Values nothing touches any more: found by walking the map, so a rebuild
  // that left none (the usual case) looks no name up again.
  std::unordered_set<std::string_view> dead;
  for (const auto& [name, v] : values_) {
    if (v.producer < 0 && v.consumers.empty() && !v.is_graph_input && !v.is_graph_output) dead.insert(name);
  }
  if (!dead.empty()) {
    std::erase_if(value_order_, [&](const std::string& name) { return dead.count(name) != 0; });
    for (std::string_view name : std::vector<std::string_view>(dead.begin(), dead.end())) {
      values_.erase(std::string(name));
    }
  }
  return Status::Ok();
}

StatusOr<const Node*> FindNodeByName(const Graph& g, const std::string& name) {
  std::vector<std::string> names;
  for (const Node& n : g.nodes()) {
    if (n.name == name) return &n;
    names.push_back(n.name);
  }
  std::vector<std::string> close = ClosestStrings(name, names, 3);
  std::string msg = "node '" + name + "': no " + LayerName(g.layer()) + " node has that name";
  if (!close.empty()) msg += " (closest: " + JoinStrings(close, ", ") + ")";
  return NotFoundError(msg);
}

bool IsShapeOrLayoutOp(const std::string& op_type) {
  static const std::set<std::string> kOps = {"Reshape", "Transpose", "Squeeze",      "Unsqueeze",
                                             "Flatten", "Identity",  "ReorderInput", "ReorderOutput"};
  return kOps.count(op_type) > 0;
}

std::string NamespaceOf(std::string_view node_name) {
  if (node_name.empty() || node_name[0] != '/') return "";
  size_t last = node_name.rfind('/');
  if (last == 0) return "";
  return std::string(node_name.substr(0, last));
}

std::string FusedIntoReason(const std::string& op_type, const std::string& name, int64_t id) {
  return "fused into " + op_type + " '" + name + "' (node " + std::to_string(id) + ")";
}

std::string FusedIntoReason(const Node& c) { return FusedIntoReason(c.op_type, c.name, c.id); }

}  // namespace opscope::graph
