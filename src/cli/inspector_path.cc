#include "cli/inspector_path.h"

#include <algorithm>
#include <cstdio>

#include "graph/runtime/captured_run.h"
#include "graph/runtime/node_path.h"
#include "graph/runtime/session_export.h"

namespace opscope::cli {
namespace {

using nlohmann::json;

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

Status RunInspectorPath(const InspectorPathFlags& flags, std::ostream& out) {
  json j;
  if (graph::IsSessionDir(flags.dir)) {
    OPSCOPE_ASSIGN_OR_RETURN(graph::SessionGraph g, graph::LastSessionGraph(flags.dir));
    OPSCOPE_ASSIGN_OR_RETURN(j, graph::NodePathJson(g.model, g.schedule, flags.node));
    j["session"] = {{"source", g.source}, {"graphs_collected", g.graphs_collected},
                    {"framework_known", g.framework_known}};
  } else {
    OPSCOPE_ASSIGN_OR_RETURN(graph::CapturedRun run, graph::LoadCapture(flags.dir));
    OPSCOPE_ASSIGN_OR_RETURN(j, graph::NodePathJson(run.model, run.schedule, flags.node));
  }
  if (flags.json) {
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
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
