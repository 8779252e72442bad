#include "graph/run/task_suspects.h"

#include <map>
#include <set>

namespace opscope::graph {

SuspectFacts RunSuspectFacts(const Schedule& schedule, const Graph& g, const std::vector<TaskRoof>& roofs,
                             const CriticalPath& critical_path, int compute_units, double bandwidth_gbs) {
  SuspectFacts f{.compute_units = compute_units, .bandwidth_gbs = bandwidth_gbs};
  const std::set<int64_t> on_path(critical_path.task_ids.begin(), critical_path.task_ids.end());
  std::map<int64_t, int> index_of_node;  // compiled node id -> f.nodes index
  for (const ScheduledTask& t : schedule.tasks) {
    if (t.desc.kind != TaskKind::kKernel || t.desc.op_node_id < 0 || index_of_node.count(t.desc.op_node_id)) continue;
    const Node* n = g.FindNode(t.desc.op_node_id);
    if (!n) continue;
    SuspectNode node{.name = n->name.empty() ? n->op_type : n->name, .op = OpRegistry::Global().Find(n->op_type)};
    bool shapes_known = true;
    auto add = [&](const std::string& name, std::vector<TensorDesc>& to) {
      const Value* v = name.empty() ? nullptr : g.FindValue(name);
      if (name.empty()) to.push_back(TensorDesc{.present = false});
      else if (v && v->dtype_known && v->shape_known()) to.push_back(v->desc());
      else shapes_known = false;
    };
    for (const std::string& in : n->inputs) add(in, node.inputs);
    for (const std::string& out : n->outputs) add(out, node.outputs);
    if (!shapes_known) node.op = nullptr;  // no index map can be asked without every shape
    node.attrs = n->attrs;
    if (node.op) (void)node.op->ValidateAttrs(node.attrs);  // the run validated them; this fills the defaults in
    if (t.launch_known) node.launches = {{.name = t.desc.kernel_name, .config = t.launch}};
    const size_t id = static_cast<size_t>(t.desc.task_id);
    if (id < roofs.size()) node.roofline = roofs[id].point;
    node.on_critical_path = on_path.count(t.desc.task_id) > 0;
    index_of_node[n->id] = static_cast<int>(f.nodes.size());
    f.nodes.push_back(std::move(node));
  }
  for (const auto& [node_id, producer] : index_of_node) {
    const Node* n = g.FindNode(node_id);
    for (const std::string& out : n->outputs) {
      const Value* v = out.empty() ? nullptr : g.FindValue(out);
      if (!v) continue;
      const int64_t bytes = v->dtype_known && v->shape_known() ? v->desc().bytes() : 0;
      for (int64_t c : v->consumers) {
        auto it = index_of_node.find(c);
        if (it == index_of_node.end()) continue;
        f.edges.push_back({.producer = producer, .consumer = it->second, .tensor = out, .bytes = bytes,
                           .consumers = static_cast<int>(v->consumers.size()), .graph_output = v->is_graph_output});
      }
    }
  }
  return f;
}

int ComputeUnitsOf(const std::string& device) {
  auto d = GetDevice(device);
  return d.ok() ? (*d)->info().compute_units : 1;
}

}  // namespace opscope::graph
