#include "graph/run/mapping.h"

#include <string>
#include <unordered_map>

namespace opscope::graph {

namespace {

std::string Describe(const Node& n) {
  return n.op_type + " '" + n.name + "' (node " + std::to_string(n.id) + ")";
}

}  // namespace

Status MapTasks(Model& model, Schedule& schedule) {
  for (Node& n : model.compiled.mutable_nodes()) n.mapped_task_ids.clear();
  for (Node& n : model.framework.mutable_nodes()) n.mapped_task_ids.clear();

  for (ScheduledTask& t : schedule.tasks) {
    if (t.desc.op_node_id < 0) {
      if (t.desc.label.empty()) t.desc.label = "inserted: " + std::string(TaskKindName(t.desc.kind));
      continue;
    }
    Node* c = model.compiled.FindNode(t.desc.op_node_id);
    if (!c) return InternalError("task " + std::to_string(t.desc.task_id) + " names compiled node " +
                                 std::to_string(t.desc.op_node_id) + ", which does not exist");
    c->mapped_task_ids.push_back(t.desc.task_id);
    if (c->kind == NodeKind::kTransdata && c->fused_from.empty()) {
      t.desc.label = "inserted: layout conversion " + c->layout_from + " -> " + c->layout_to;
    }
    for (int64_t f : c->fused_from) {
      Node* fn = model.framework.FindNode(f);
      if (fn) fn->mapped_task_ids.push_back(t.desc.task_id);
    }
  }

  // Which compiled node took each framework node, for the reasons below.
  std::unordered_map<int64_t, const Node*> taken_by;
  for (const Node& c : model.compiled.nodes()) {
    for (int64_t f : c.fused_from) taken_by[f] = &c;
  }
  for (Node& c : model.compiled.mutable_nodes()) {
    if (!c.executable) {
      c.executed = false;
      c.not_executed_reason = "not executable: " + c.not_executable_reason;
    } else if (!c.mapped_task_ids.empty()) {
      c.executed = true;
      c.not_executed_reason.clear();
    } else {
      c.executed = false;
      if (c.not_executed_reason.empty()) {
        c.not_executed_reason = IsFoldedConstantNode(model.compiled, c)
                                    ? "constant: its value is known before the run, no task"
                                    : "scheduled no task";
      }
    }
  }
  for (Node& f : model.framework.mutable_nodes()) {
    if (!f.mapped_task_ids.empty()) {
      continue;  // ran, alone or inside a fused node: the pass manager's flags stand
    }
    f.executed = false;
    if (!f.executable && f.not_executed_reason.empty()) {
      f.not_executed_reason = "not executable: " + f.not_executable_reason;
      continue;
    }
    if (!f.not_executed_reason.empty()) continue;  // the compiler said why (fused, folded, branch not taken)
    auto it = taken_by.find(f.id);
    f.not_executed_reason = it != taken_by.end() ? "stands in " + Describe(*it->second) + ", which ran no task: " +
                                                       it->second->not_executed_reason
                                                 : "no compiled node stands for it";
  }
  return Status::Ok();
}

}  // namespace opscope::graph
