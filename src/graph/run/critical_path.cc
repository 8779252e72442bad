#include "graph/run/critical_path.h"

#include <string>
#include <unordered_map>

namespace opscope::graph {

CriticalPath ComputeCriticalPath(const Schedule& schedule) {
  const size_t n = schedule.tasks.size();
  std::vector<double> best(n, 0);   // longest path ending at task i, i included
  std::vector<int64_t> prev(n, -1);
  std::vector<int64_t> last_on_stream(schedule.num_streams(), -1);
  for (size_t i = 0; i < n; ++i) {
    const ScheduledTask& t = schedule.tasks[i];
    auto consider = [&](int64_t p) {
      if (p >= 0 && best[p] > best[i]) {
        best[i] = best[p];
        prev[i] = p;
      }
    };
    for (int64_t d : t.deps) consider(d);
    if (t.desc.stream_id >= 0 && t.desc.stream_id < static_cast<int>(last_on_stream.size())) {
      consider(last_on_stream[t.desc.stream_id]);
      last_on_stream[t.desc.stream_id] = static_cast<int64_t>(i);
    }
    best[i] += t.desc.duration_us_calibrated;
  }
  CriticalPath cp;
  int64_t end = -1;
  for (size_t i = 0; i < n; ++i) {
    if (end < 0 || best[i] > best[end]) end = static_cast<int64_t>(i);
  }
  if (end < 0) return cp;
  cp.total_us = best[end];
  for (int64_t i = end; i >= 0; i = prev[i]) cp.task_ids.push_back(i);
  std::vector<int64_t> fwd(cp.task_ids.rbegin(), cp.task_ids.rend());
  cp.task_ids = std::move(fwd);
  return cp;
}

StatusOr<NodeCone> ConeOf(const Graph& g, int64_t node_id) {
  if (!g.FindNode(node_id)) {
    return NotFoundError(std::string(LayerName(g.layer())) + " graph has no node " + std::to_string(node_id));
  }
  std::unordered_map<int64_t, char> seen_up, seen_down;
  std::vector<int64_t> stack{node_id};
  while (!stack.empty()) {
    const Node* n = g.FindNode(stack.back());
    stack.pop_back();
    for (const std::string& in : n->inputs) {
      const Value* v = in.empty() ? nullptr : g.FindValue(in);
      if (v && v->producer >= 0 && !seen_up.count(v->producer)) {
        seen_up[v->producer] = 1;
        stack.push_back(v->producer);
      }
    }
  }
  stack.push_back(node_id);
  while (!stack.empty()) {
    const Node* n = g.FindNode(stack.back());
    stack.pop_back();
    for (const std::string& out : n->outputs) {
      const Value* v = out.empty() ? nullptr : g.FindValue(out);
      if (!v) continue;
      for (int64_t c : v->consumers) {
        if (!seen_down.count(c)) {
          seen_down[c] = 1;
          stack.push_back(c);
        }
      }
    }
  }
  NodeCone cone;
  for (const Node& n : g.nodes()) {
    if (seen_up.count(n.id)) cone.ancestors.push_back(n.id);
    if (seen_down.count(n.id)) cone.descendants.push_back(n.id);
  }
  return cone;
}

}  // namespace opscope::graph
