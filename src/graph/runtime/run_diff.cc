#include "graph/runtime/run_diff.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "graph/runtime/summary.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

constexpr int kTopTasks = 10;

double ChangePct(double base, double now) { return base > 0 ? 100.0 * (now - base) / base : (now > 0 ? 100.0 : 0.0); }

std::map<std::string, int64_t> OpMix(const Graph& g) {
  std::map<std::string, int64_t> mix;
  for (const Node& n : g.nodes()) ++mix[n.op_type];
  return mix;
}

// Compiled nodes standing for several framework nodes: name -> "op_type <- a + b + c".
std::map<std::string, std::string> Fusions(const Model& m) {
  std::map<std::string, std::string> out;
  for (const Node& c : m.compiled.nodes()) {
    if (c.fused_from.size() < 2) continue;
    std::string parts = c.op_type + " <-";
    for (int64_t id : c.fused_from) {
      const Node* f = m.framework.FindNode(id);
      parts += " " + (f ? f->op_type : std::to_string(id));
    }
    out[c.name] = parts;
  }
  return out;
}

}  // namespace

RunDiff DiffRuns(const CapturedRun& base, const CapturedRun& now, double threshold_time_pct,
                    int64_t threshold_nodes) {
  RunDiff r;
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

  const Summary sb = Summarize(base.schedule, kTopTasks), sn = Summarize(now.schedule, kTopTasks);
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
  for (const TopTask& t : sn.top_tasks) {
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

}  // namespace opscope::graph
