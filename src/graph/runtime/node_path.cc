#include "graph/runtime/node_path.h"

#include <algorithm>

#include "graph/runtime/captured_run.h"
#include "graph/runtime/critical_path.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

StatusOr<json> LayerCone(const Graph& g, const Node& n) {
  OPSCOPE_ASSIGN_OR_RETURN(NodeCone cone, ConeOf(g, n.id));
  json names_up = json::array(), names_down = json::array();
  for (int64_t id : cone.ancestors) names_up.push_back(g.FindNode(id)->name);
  for (int64_t id : cone.descendants) names_down.push_back(g.FindNode(id)->name);
  return json{{"node", n.name}, {"node_id", n.id}, {"op_type", n.op_type},
              {"ancestors", names_up}, {"descendants", names_down}};
}

// The compiled node standing for framework node `f`.
const Node* CompiledOf(const Model& m, const Node& f) {
  for (const Node& c : m.compiled.nodes()) {
    if (std::find(c.fused_from.begin(), c.fused_from.end(), f.id) != c.fused_from.end()) return &c;
  }
  return nullptr;
}

}  // namespace

std::string TaskTitle(const ScheduledTask& t) {
  if (!t.node_name.empty()) return t.node_name + " (" + t.op_type + ")";
  return t.desc.label.empty() ? t.op_type : t.desc.label;
}

StatusOr<json> NodePathJson(const Model& m, const Schedule& schedule, const std::string& node_name) {
  const Node* f = nullptr;
  const Node* c = nullptr;
  if (auto found = FindNodeByName(m.framework, node_name); found.ok()) {
    f = *found;
    c = CompiledOf(m, *f);
  } else if (auto compiled = FindNodeByName(m.compiled, node_name); compiled.ok()) {
    c = *compiled;
    if (!c->fused_from.empty()) f = m.framework.FindNode(c->fused_from.front());
  } else {
    // A session graph run without its Model has no framework layer to suggest names from.
    return m.framework.nodes().empty() ? std::move(compiled).status() : std::move(found).status();
  }
  json j = {{"schema", "opscope.path/1"}, {"node", node_name}, {"framework", nullptr}, {"compiled", nullptr}};
  if (f) {
    OPSCOPE_ASSIGN_OR_RETURN(j["framework"], LayerCone(m.framework, *f));
  }
  if (c) {
    OPSCOPE_ASSIGN_OR_RETURN(j["compiled"], LayerCone(m.compiled, *c));
  }
  const CriticalPath cp = ComputeCriticalPath(schedule);
  json tasks = json::array();
  bool on_path = false;
  for (int64_t id : cp.task_ids) {
    const ScheduledTask& t = schedule.tasks[id];
    on_path = on_path || (c && t.desc.op_node_id == c->id);
    tasks.push_back({{"task_id", id}, {"name", TaskTitle(t)}, {"duration_us", t.desc.duration_us_calibrated}});
  }
  j["critical_path"] = {{"total_us", cp.total_us}, {"tasks", tasks}, {"node_on_path", on_path}};
  return j;
}

}  // namespace opscope::graph
