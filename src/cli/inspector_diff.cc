#include "cli/inspector_diff.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "graph/runtime/summary.h"
#include "opscope/npy.h"

namespace opscope::cli {
namespace {

using nlohmann::json;

constexpr int kTopTasks = 10;

double ChangePct(double base, double now) { return base > 0 ? 100.0 * (now - base) / base : (now > 0 ? 100.0 : 0.0); }

std::map<std::string, int64_t> OpMix(const graph::Graph& g) {
  std::map<std::string, int64_t> mix;
  for (const graph::Node& n : g.nodes()) ++mix[n.op_type];
  return mix;
}

// Compiled nodes standing for several framework nodes: name -> "op_type <- a + b + c".
std::map<std::string, std::string> Fusions(const graph::Model& m) {
  std::map<std::string, std::string> out;
  for (const graph::Node& c : m.compiled.nodes()) {
    if (c.fused_from.size() < 2) continue;
    std::string parts = c.op_type + " <-";
    for (int64_t id : c.fused_from) {
      const graph::Node* f = m.framework.FindNode(id);
      parts += " " + (f ? f->op_type : std::to_string(id));
    }
    out[c.name] = parts;
  }
  return out;
}

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

DiffResult DiffRuns(const CapturedRun& base, const CapturedRun& now, double threshold_time_pct,
                    int64_t threshold_nodes) {
  DiffResult r;
  json& j = r.json;
  j = {{"schema", "opscope.diff/1"}, {"base", base.dir}, {"new", now.dir}};
  json reasons = json::array();
  json nodes = json::object();
  for (auto [layer, b, n] : {std::tuple{"framework", &base.model.framework, &now.model.framework},
                             std::tuple{"compiled", &base.model.compiled, &now.model.compiled}}) {
    const int64_t nb = b->nodes().size(), nn = n->nodes().size();
    nodes[layer] = {{"base", nb}, {"new", nn}, {"change", nn - nb}};
    if (std::llabs(nn - nb) > threshold_nodes) {
      reasons.push_back(std::string(layer) + " nodes " + std::to_string(nb) + " -> " + std::to_string(nn));
    }
  }
  j["nodes"] = nodes;
  json mix = json::array();
  std::map<std::string, int64_t> mb = OpMix(base.model.compiled), mn = OpMix(now.model.compiled);
  std::set<std::string> types;
  for (const auto& [t, c] : mb) types.insert(t);
  for (const auto& [t, c] : mn) types.insert(t);
  for (const std::string& t : types) {
    const int64_t b = mb.count(t) ? mb[t] : 0, n = mn.count(t) ? mn[t] : 0;
    if (b != n) mix.push_back({{"op_type", t}, {"base", b}, {"new", n}});
  }
  j["op_type_mix"] = mix;

  const graph::Summary sb = graph::Summarize(base.schedule, kTopTasks), sn = graph::Summarize(now.schedule, kTopTasks);
  std::map<std::string, double> tb, tn;
  for (const auto& row : sb.op_types) tb[row.op_type] = row.total_us;
  for (const auto& row : sn.op_types) tn[row.op_type] = row.total_us;
  json times = json::array();
  std::set<std::string> timed;
  for (const auto& [t, v] : tb) timed.insert(t);
  for (const auto& [t, v] : tn) timed.insert(t);
  for (const std::string& t : timed) {
    const double b = tb.count(t) ? tb[t] : 0, n = tn.count(t) ? tn[t] : 0;
    times.push_back({{"op_type", t}, {"base_us", b}, {"new_us", n}, {"change_pct", ChangePct(b, n)}});
  }
  j["op_type_time"] = times;
  j["total_task_us"] = {{"base", sb.total_task_us}, {"new", sn.total_task_us},
                        {"change_pct", ChangePct(sb.total_task_us, sn.total_task_us)}};
  if (ChangePct(sb.total_task_us, sn.total_task_us) > threshold_time_pct) {
    char s[96];
    std::snprintf(s, sizeof(s), "total task time %+.1f%%", ChangePct(sb.total_task_us, sn.total_task_us));
    reasons.push_back(s);
  }
  // Top tasks of the new run, matched by name to the base run's tasks.
  std::map<std::string, double> base_by_name;
  for (const auto& t : base.schedule.tasks) {
    base_by_name[t.node_name.empty() ? t.desc.label : t.node_name] = t.desc.duration_us_calibrated;
  }
  json top = json::array();
  for (const graph::TopTask& t : sn.top_tasks) {
    const std::string& key = t.name;
    json e = {{"name", key}, {"op_type", t.op_type}, {"new_us", t.duration_us}};
    auto it = base_by_name.find(key);
    e["base_us"] = it == base_by_name.end() ? json(nullptr) : json(it->second);
    if (it != base_by_name.end()) e["change_pct"] = ChangePct(it->second, t.duration_us);
    top.push_back(std::move(e));
  }
  j["top_tasks"] = top;
  json added = json::array(), removed = json::array(), changed = json::array();
  const auto fb = Fusions(base.model), fn = Fusions(now.model);
  for (const auto& [name, what] : fn) {
    auto it = fb.find(name);
    if (it == fb.end()) added.push_back({{"node", name}, {"fusion", what}});
    else if (it->second != what) changed.push_back({{"node", name}, {"base", it->second}, {"new", what}});
  }
  for (const auto& [name, what] : fb) {
    if (!fn.count(name)) removed.push_back({{"node", name}, {"fusion", what}});
  }
  j["fusions"] = {{"added", added}, {"removed", removed}, {"changed", changed}};
  j["thresholds"] = {{"time_pct", threshold_time_pct}, {"nodes", threshold_nodes}};
  j["regressions"] = reasons;
  r.regressed = !reasons.empty();
  j["passed"] = !r.regressed;
  return r;
}

StatusOr<int> RunInspectorDiff(const InspectorDiffFlags& flags, std::ostream& out) {
  OPSCOPE_ASSIGN_OR_RETURN(double threshold_time, ParsePercent(flags.threshold_time));
  if (flags.threshold_nodes < 0) return InvalidArgumentError("--threshold-nodes: expected >= 0");
  OPSCOPE_ASSIGN_OR_RETURN(CapturedRun base, LoadCapture(flags.base_dir));
  OPSCOPE_ASSIGN_OR_RETURN(CapturedRun now, LoadCapture(flags.new_dir));
  DiffResult d = DiffRuns(base, now, threshold_time, flags.threshold_nodes);
  const std::string path = flags.new_dir + "/diff.json";
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(path, d.json.dump(2) + "\n"));
  const json& j = d.json;
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
