#include "cli/inspector_path.h"

#include <algorithm>
#include <cstdio>

#include "graph/runtime/captured_run.h"
#include "cli/inspector_summary.h"
#include "graph/runtime/critical_path.h"
#include "graph/runtime/session_export.h"

namespace opscope::cli {
namespace {

using nlohmann::json;

StatusOr<json> LayerCone(const graph::Graph& g, const graph::Node& n) {
  OPSCOPE_ASSIGN_OR_RETURN(graph::NodeCone cone, graph::ConeOf(g, n.id));
  json names_up = json::array(), names_down = json::array();
  for (int64_t id : cone.ancestors) names_up.push_back(g.FindNode(id)->name);
  for (int64_t id : cone.descendants) names_down.push_back(g.FindNode(id)->name);
  return json{{"node", n.name}, {"node_id", n.id}, {"op_type", n.op_type},
              {"ancestors", names_up}, {"descendants", names_down}};
}

// The compiled node standing for framework node `f`.
const graph::Node* CompiledOf(const graph::Model& m, const graph::Node& f) {
  for (const graph::Node& c : m.compiled.nodes()) {
    if (std::find(c.fused_from.begin(), c.fused_from.end(), f.id) != c.fused_from.end()) return &c;
  }
  return nullptr;
}

void PrintLayer(const char* layer, const json& j, std::ostream& out) {
  if (j.is_null()) {
    out << layer << ": no counterpart\n";
    return;
  }
  out << layer << ": " << j["node"].get<std::string>() << " (" << j["op_type"].get<std::string>() << ")\n";
  out << "  ancestors (" << j["ancestors"].size() << "):";
  for (const auto& n : j["ancestors"]) out << " " << n.get<std::string>();
  out << "\n  descendants (" << j["descendants"].size() << "):";
  for (const auto& n : j["descendants"]) out << " " << n.get<std::string>();
  out << "\n";
}

}  // namespace

CLI::App* AddInspectorPath(CLI::App& app, InspectorPathFlags& flags) {
  CLI::App* cmd = app.add_subcommand("path", "what flows into and out of a node, and the run's critical path");
  cmd->add_option("dir", flags.dir, "a folder written by `inspector-cli run`, or a session folder")->required();
  cmd->add_option("--node", flags.node, "a framework or compiled node name")->required();
  cmd->add_flag("--json", flags.json, "print JSON (schema opscope.path/1)");
  return cmd;
}

StatusOr<json> PathReport(const graph::Model& m, const graph::Schedule& schedule, const std::string& node_name) {
  const graph::Node* f = nullptr;
  const graph::Node* c = nullptr;
  if (auto found = graph::FindNodeByName(m.framework, node_name); found.ok()) {
    f = *found;
    c = CompiledOf(m, *f);
  } else if (auto compiled = graph::FindNodeByName(m.compiled, node_name); compiled.ok()) {
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
  const graph::CriticalPath cp = graph::ComputeCriticalPath(schedule);
  json tasks = json::array();
  bool on_path = false;
  for (int64_t id : cp.task_ids) {
    const graph::ScheduledTask& t = schedule.tasks[id];
    on_path = on_path || (c && t.desc.op_node_id == c->id);
    tasks.push_back({{"task_id", id}, {"name", TaskTitle(t)}, {"duration_us", t.desc.duration_us_calibrated}});
  }
  j["critical_path"] = {{"total_us", cp.total_us}, {"tasks", tasks}, {"node_on_path", on_path}};
  return j;
}

Status RunInspectorPath(const InspectorPathFlags& flags, std::ostream& out) {
  json j;
  if (graph::IsSessionDir(flags.dir)) {
    OPSCOPE_ASSIGN_OR_RETURN(graph::SessionGraph g, graph::LastSessionGraph(flags.dir));
    OPSCOPE_ASSIGN_OR_RETURN(j, PathReport(g.model, g.schedule, flags.node));
    j["session"] = {{"source", g.source}, {"graphs_collected", g.graphs_collected},
                    {"framework_known", g.framework_known}};
  } else {
    OPSCOPE_ASSIGN_OR_RETURN(graph::CapturedRun run, graph::LoadCapture(flags.dir));
    OPSCOPE_ASSIGN_OR_RETURN(j, PathReport(run.model, run.schedule, flags.node));
  }
  if (flags.json) {
    out << j.dump(2) << "\n";
    return Status::Ok();
  }
  if (j.contains("session")) {
    out << "session graph " << j["session"]["source"].get<std::string>() << " (the last of "
        << j["session"]["graphs_collected"].get<int>() << " collected)\n";
  }
  PrintLayer("framework", j["framework"], out);
  PrintLayer("compiled", j["compiled"], out);
  const json& cp = j["critical_path"];
  char line[64];
  std::snprintf(line, sizeof(line), "%.1f us", cp["total_us"].get<double>());
  out << "critical path (" << cp["tasks"].size() << " tasks, " << line << "; "
      << (cp["node_on_path"].get<bool>() ? "the node is on it" : "the node is not on it") << ")\n";
  for (const auto& t : cp["tasks"]) {
    std::snprintf(line, sizeof(line), "%10.1f us  ", t["duration_us"].get<double>());
    out << "  " << line << t["name"].get<std::string>() << "\n";
  }
  return Status::Ok();
}

}  // namespace opscope::cli
