#include "cli/inspector_path.h"

#include <algorithm>
#include <cstdio>

#include "core/json_text.h"
#include "core/text_distance.h"
#include "core/text_format.h"
#include "graph/export/capture_json.h"
#include "graph/export/session_export.h"
#include "graph/run/captured_run.h"
#include "graph/run/node_path.h"

namespace opscope::cli {
namespace {

using nlohmann::json;

constexpr int kPathNameWidth = 32;

std::string Str(const json& v) { return v.is_string() ? v.get<std::string>() : "?"; }

void PrintTensors(const char* title, const json& list, bool input, std::ostream& out) {
  out << "  " << title << " (" << list.size() << ")\n";
  for (const auto& t : list) {
    char line[256];
    std::snprintf(line, sizeof(line), "    %-*s %-8s %-18s ", static_cast<int>(kPathNameWidth),
                  CutMiddle(Str(t["name"]), kPathNameWidth).c_str(), Str(t["dtype"]).c_str(),
                  CutMiddle(Str(t["shape"]), 18).c_str());
    out << line;
    if (input) {
      out << "from " << (t.contains("from") ? Str(t["from"]) : "?") << "\n";
      continue;
    }
    std::vector<std::string> to;
    for (const auto& n : t.value("to", json::array())) to.push_back(Str(n));
    out << (to.empty() ? "unused" : "to " + CutMiddle(JoinStrings(to, ", "), 60)) << "\n";
  }
}

// One tree level per indent step; "<-" up towards the inputs, "->" down.
void PrintTree(const json& children, const char* arrow, int indent, std::ostream& out) {
  for (const auto& c : children) {
    out << std::string(indent, ' ') << arrow << " " << Str(c["node"]) << " (" << Str(c["op_type"]) << ") via "
        << CutMiddle(Str(c["via"]), kPathNameWidth);
    if (c.value("repeat", false)) out << "  (shown above)";
    if (c.contains("beyond")) out << "  ... " << c["beyond"].get<int64_t>() << " more beyond (--depth)";
    out << "\n";
    if (c.contains("children")) PrintTree(c["children"], arrow, indent + 3, out);
  }
}

void PrintLayer(const char* layer, const json& j, std::ostream& out) {
  if (j.is_null()) {
    out << layer << ": no counterpart\n";
    return;
  }
  out << layer << ": " << j["node"].get<std::string>() << " (" << j["op_type"].get<std::string>() << ")\n";
  if (j.contains("mapped_by")) out << "  mapped " << Str(j["mapped_by"]) << "\n";
  PrintTensors("inputs", j["inputs"], true, out);
  PrintTensors("outputs", j["outputs"], false, out);
  out << "  ancestors (" << j["ancestors"].size() << ")\n";
  PrintTree(j["ancestor_tree"], "<-", 4, out);
  out << "  descendants (" << j["descendants"].size() << ")\n";
  PrintTree(j["descendant_tree"], "->", 4, out);
}

}  // namespace

CLI::App* AddInspectorPath(CLI::App& app, InspectorPathFlags& flags) {
  CLI::App* cmd = app.add_subcommand("path", "what flows into and out of a node, and the run's critical path");
  cmd->add_option("dir", flags.dir, "a folder written by `inspector-cli run`, or a session folder")->required();
  cmd->add_option("--node", flags.node, "a framework or compiled node name")->required();
  cmd->add_option("--depth", flags.depth, "levels of ancestors and descendants shown as trees (default 3)");
  cmd->add_flag("--json", flags.json, "print JSON (schema opscope.path/1)");
  return cmd;
}

Status RunInspectorPath(const InspectorPathFlags& flags, std::ostream& out) {
  // Before the run is loaded: a bad flag is refused at once.
  if (flags.depth < 1) return InvalidArgumentError("--depth " + std::to_string(flags.depth) + ": expected >= 1");
  json j;
  if (graph::IsSessionDir(flags.dir)) {
    OPSCOPE_ASSIGN_OR_RETURN(graph::SessionGraph g, graph::LastSessionGraph(flags.dir));
    OPSCOPE_ASSIGN_OR_RETURN(j, graph::NodePathJson(g.model, g.schedule, flags.node, flags.depth));
    j["session"] = {{"source", g.source}, {"graphs_collected", g.graphs_collected},
                    {"framework_known", g.framework_known}};
  } else {
    OPSCOPE_ASSIGN_OR_RETURN(graph::CapturedRun run, graph::LoadCapture(flags.dir));
    OPSCOPE_ASSIGN_OR_RETURN(j, graph::NodePathJson(run.model, run.schedule, flags.node, flags.depth));
  }
  if (flags.json) {
    out << JsonText(j, 2) << "\n";
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
