#include "cli/inspector_diff.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "opscope/model.h"
#include "opscope/npy.h"

namespace opscope::cli {
namespace {

using nlohmann::json;

StatusOr<double> ParsePercent(const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end != '\0' || !(v >= 0)) {
    return InvalidArgumentError("--threshold-time '" + text + "': expected a percentage such as 10%");
  }
  return v;
}

}  // namespace

CLI::App* AddInspectorDiff(CLI::App& app, InspectorDiffFlags& flags) {
  CLI::App* cmd = app.add_subcommand("diff", "compare two runs; exit 1 when a threshold is crossed");
  cmd->add_option("base_dir", flags.base_dir, "the baseline run folder")->required();
  cmd->add_option("new_dir", flags.new_dir, "the new run folder (diff.json is written here)")->required();
  cmd->add_option("--threshold-time", flags.threshold_time, "allowed growth of total task time (default 10%)");
  cmd->add_option("--threshold-nodes", flags.threshold_nodes, "allowed change of a layer's node count (default 0)");
  return cmd;
}

StatusOr<int> RunInspectorDiff(const InspectorDiffFlags& flags, std::ostream& out) {
  OPSCOPE_ASSIGN_OR_RETURN(double threshold_time, ParsePercent(flags.threshold_time));
  if (flags.threshold_nodes < 0) return InvalidArgumentError("--threshold-nodes: expected >= 0");
  OPSCOPE_ASSIGN_OR_RETURN(RunDiffReport d, DiffRunFolders({.base_dir = flags.base_dir, .new_dir = flags.new_dir,
                                                             .threshold_time_pct = threshold_time,
                                                             .threshold_nodes = flags.threshold_nodes}));
  const std::string& path = d.file;
  const json j = json::parse(d.json);
  char line[256];
  for (const char* layer : {"framework", "compiled"}) {
    const json& n = j["nodes"][layer];
    out << layer << " nodes  " << n["base"].get<int64_t>() << " -> " << n["new"].get<int64_t>() << "\n";
  }
  for (const auto& m : j["op_type_mix"]) {
    out << "  " << m["op_type"].get<std::string>() << "  " << m["base"].get<int64_t>() << " -> "
        << m["new"].get<int64_t>() << "\n";
  }
  const json& tt = j["total_task_us"];
  std::snprintf(line, sizeof(line), "total task time  %.1f us -> %.1f us (%+.1f%%)\n", tt["base"].get<double>(),
                tt["new"].get<double>(), tt["change_pct"].get<double>());
  out << line;
  for (const auto& t : j["op_type_time"]) {
    std::snprintf(line, sizeof(line), "  %-24s %10.1f -> %10.1f us (%+.1f%%)\n", t["op_type"].get<std::string>().c_str(),
                  t["base_us"].get<double>(), t["new_us"].get<double>(), t["change_pct"].get<double>());
    out << line;
  }
  for (const char* kind : {"added", "removed", "changed"}) {
    for (const auto& f : j["fusions"][kind]) out << "fusion " << kind << ": " << f["node"].get<std::string>() << "\n";
  }
  for (const auto& why : j["regressions"]) out << "REGRESSION " << why.get<std::string>() << "\n";
  out << (d.regressed ? "FAILED" : "passed") << "  diff " << path << "\n";
  return d.regressed ? 1 : 0;
}

}  // namespace opscope::cli
