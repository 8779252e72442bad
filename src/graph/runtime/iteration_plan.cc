#include "graph/runtime/iteration_plan.h"

#include <unordered_map>

namespace opscope::graph {

IterationPlan PlanIteration(const Graph& g, const Schedule& s, const StreamArenas* arenas) {
  IterationPlan plan;
  std::unordered_map<std::string, int> slots;
  auto slot_of = [&](const std::string& name) {
    auto [it, added] = slots.emplace(name, static_cast<int>(plan.names.size()));
    if (added) {
      plan.names.push_back(name);
      const Value* v = g.FindValue(name);
      plan.constants.push_back(v != nullptr && v->constant ? &*v->constant : nullptr);
    }
    return it->second;
  };
  for (const std::string& name : g.value_order()) slot_of(name);

  plan.tasks.resize(s.tasks.size());
  std::vector<size_t> last_reader;  // by slot; tasks.size(): none reads it
  auto read = [&](int slot, size_t task) {
    if (static_cast<size_t>(slot) >= last_reader.size()) last_reader.resize(slot + 1, s.tasks.size());
    last_reader[slot] = task;
  };
  for (size_t i = 0; i < s.tasks.size(); ++i) {
    const ScheduledTask& t = s.tasks[i];
    PlannedTask& p = plan.tasks[i];
    if (!IsKernelTask(t)) {
      p.value = slot_of(t.value);
      if (t.desc.kind == TaskKind::kMemcpyD2H) read(p.value, i);
      continue;
    }
    p.node = g.FindNode(t.desc.op_node_id);
    if (p.node == nullptr) {
      p.missing = InternalError("task names node " + std::to_string(t.desc.op_node_id) + ", not in the graph");
      continue;
    }
    StatusOr<const OpSchema*> schema = OpRegistry::Global().Lookup(p.node->op_type);
    if (schema.ok()) {
      p.schema = *schema;
    } else {
      p.missing = schema.status();
    }
    for (const std::string& in : p.node->inputs) {
      p.inputs.push_back(in.empty() ? -1 : slot_of(in));
      if (!in.empty()) read(p.inputs.back(), i);
    }
    for (const std::string& out : p.node->outputs) {
      p.outputs.push_back(out.empty() ? -1 : slot_of(out));
      const ValuePlace* place = nullptr;
      if (arenas != nullptr && !out.empty()) {
        auto it = arenas->places.find(out);
        if (it != arenas->places.end()) place = &it->second;
      }
      p.places.push_back(place);
    }
  }
  last_reader.resize(plan.names.size(), s.tasks.size());
  for (size_t slot = 0; slot < plan.names.size(); ++slot) {
    if (plan.constants[slot] == nullptr && last_reader[slot] < s.tasks.size()) {
      plan.tasks[last_reader[slot]].release.push_back(static_cast<int>(slot));
    }
  }
  // Outputs nothing reads (an optional output no node takes).
  for (PlannedTask& p : plan.tasks) {
    for (int out : p.outputs) {
      if (out >= 0 && last_reader[out] == s.tasks.size() && plan.constants[out] == nullptr) p.release.push_back(out);
    }
  }
  return plan;
}

}  // namespace opscope::graph
