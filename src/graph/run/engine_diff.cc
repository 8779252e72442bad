#include "graph/run/engine_diff.h"

#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace opscope::graph {
namespace {

using nlohmann::json;


std::vector<std::string> MemberNames(const Model& m, const Node& c) {
  std::vector<std::string> names;
  for (int64_t id : c.fused_from) {
    if (const Node* f = m.framework.FindNode(id)) names.push_back(f->name);
  }
  return names;
}

// Framework node name -> the compiled node that stands for it.
std::unordered_map<std::string, const Node*> Owners(const Model& m) {
  std::unordered_map<std::string, const Node*> out;
  for (const Node& c : m.compiled.nodes()) {
    for (const std::string& name : MemberNames(m, c)) out.emplace(name, &c);
  }
  return out;
}

const Node* Owner(const std::unordered_map<std::string, const Node*>& owners, const std::string& name) {
  auto it = owners.find(name);
  return it == owners.end() ? nullptr : it->second;
}

json TimeOf(const RunTiming& t, int64_t node_id) {
  auto it = t.nodes.find(node_id);
  return it == t.nodes.end() || it->second.samples == 0 ? json(nullptr) : json(it->second.median_us);
}

json Side(const CapturedRun& run, const RunTiming& t, const Node* c) {
  if (c == nullptr) return nullptr;
  return {{"node", c->name}, {"op_type", c->op_type}, {"framework", MemberNames(run.model, *c)},
          {"time_us", TimeOf(t, c->id)}};
}

// The op type a compiled node's time is counted under (see the header).
std::string FrameworkOpType(const Model& m, const Node* c) {
  if (c == nullptr) return "unmapped";
  const Node* principal = PrincipalFrameworkNode(m, *c);
  return principal != nullptr ? principal->op_type : "inserted " + c->op_type;
}

}  // namespace

std::string EngineOf(const CapturedRun& run) { return run.source ? run.source->engine : "opscope"; }

const Node* PrincipalFrameworkNode(const Model& m, const Node& c) {
  const Node* first = nullptr;
  for (int64_t id : c.fused_from) {
    const Node* f = m.framework.FindNode(id);
    if (f == nullptr) continue;
    if (first == nullptr) first = f;
    if (!IsShapeOrLayoutOp(f->op_type) && f->op_type != "Constant") return f;
  }
  return first;
}

std::map<std::string, std::pair<std::string, Spread>> NodeTimesByFramework(const CapturedRun& run,
                                                                          const RunTiming& t) {
  std::map<std::string, std::pair<std::string, Spread>> out;
  for (const auto& [id, spread] : t.nodes) {
    const Node* n = run.model.compiled.FindNode(id);
    if (n == nullptr) continue;
    const Node* principal = PrincipalFrameworkNode(run.model, *n);
    out.emplace(principal != nullptr ? principal->name : "inserted " + n->name, std::pair{n->name, spread});
  }
  return out;
}

json EngineFusions(const CapturedRun& base, const RunTiming& tb, const CapturedRun& now, const RunTiming& tn) {
  const auto ob = Owners(base.model), on = Owners(now.model);
  std::set<std::pair<const Node*, const Node*>> seen;
  std::vector<std::pair<const Node*, const Node*>> pairs;  // each row's (base, new)
  json rows = json::array();
  for (const Node& f : base.model.framework.nodes()) {
    const Node* cb = Owner(ob, f.name);
    const Node* cn = Owner(on, f.name);
    const bool fused = (cb != nullptr && cb->fused_from.size() > 1) || (cn != nullptr && cn->fused_from.size() > 1);
    if (!fused || !seen.insert({cb, cn}).second) continue;
    // The framework nodes of either side, in framework order.
    std::set<std::string> members;
    for (const Node* c : {cb, cn}) {
      if (c == nullptr) continue;
      for (const std::string& name : MemberNames(c == cb ? base.model : now.model, *c)) members.insert(name);
    }
    json names = json::array();
    for (const Node& g : base.model.framework.nodes()) {
      if (members.count(g.name) > 0) names.push_back(g.name);
    }
    rows.push_back({{"at", f.name}, {"framework", names}, {"base", Side(base, tb, cb)}, {"new", Side(now, tn, cn)}});
    pairs.emplace_back(cb, cn);
  }
  // A member one engine folded away (a Clip's Constant bounds, an Identity)
  // has no owner on that side: its row would show the other side's node
  // alone, beside the row that pairs that node with its counterpart.
  std::set<const Node*> paired;
  for (const auto& [b, n] : pairs) {
    if (b != nullptr && n != nullptr) paired.insert(b), paired.insert(n);
  }
  json kept = json::array();
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto [b, n] = pairs[i];
    if ((b == nullptr && paired.count(n) > 0) || (n == nullptr && paired.count(b) > 0)) continue;
    kept.push_back(std::move(rows[i]));
  }
  return kept;
}

json LayoutChanges(const CapturedRun& run, const RunTiming& t) {
  json conversions = json::array();
  int64_t other = 0;
  std::string layout;
  for (const Node& c : run.model.compiled.nodes()) {
    if (c.kind == NodeKind::kTransdata) {
      conversions.push_back({{"node", c.name}, {"op_type", c.op_type}, {"from", c.layout_from},
                             {"to", c.layout_to}, {"time_us", TimeOf(t, c.id)}});
      continue;
    }
    const AttrValue* a = c.kind == NodeKind::kOp ? c.attrs.Find("layout") : nullptr;
    const std::string* l = a != nullptr ? std::get_if<std::string>(a) : nullptr;
    if (l != nullptr && *l == "NHWC") {
      ++other, layout = "NHWC";  // opscope's layout pass
    } else if (c.domain == "com.microsoft.nchwc") {
      ++other, layout = "NCHWc";  // onnxruntime's blocked layout
    }
  }
  return {{"conversions", conversions}, {"other_layout_nodes", other}, {"other_layout", layout}};
}

std::map<std::string, Spread> FrameworkOpTypeTimes(const CapturedRun& run) {
  const Schedule& s = run.schedule;
  std::vector<std::string> key(s.tasks.size());
  for (size_t i = 0; i < s.tasks.size(); ++i) {
    const ScheduledTask& t = s.tasks[i];
    const bool copy = t.desc.kind == TaskKind::kMemcpyH2D || t.desc.kind == TaskKind::kMemcpyD2H;
    key[i] = copy ? std::string(kDataMovementRow)
                  : FrameworkOpType(run.model, t.desc.op_node_id >= 0 ? run.model.compiled.FindNode(t.desc.op_node_id)
                                                                      : nullptr);
  }
  const std::vector<IterationTimes> iterations =
      run.iteration_times.empty() ? std::vector<IterationTimes>{SnapshotIteration(s)} : run.iteration_times;
  std::map<std::string, std::vector<double>> totals;
  for (const IterationTimes& it : iterations) {
    std::map<std::string, double> sum;
    for (size_t i = 0; i < key.size() && i < it.size(); ++i) {
      const TaskTimes& x = it[i];
      sum[key[i]] += x.cal_start_ns >= 0 && x.cal_end_ns >= x.cal_start_ns ? (x.cal_end_ns - x.cal_start_ns) / 1e3 : 0;
    }
    for (const auto& [k, us] : sum) totals[k].push_back(us);
  }
  std::map<std::string, Spread> out;
  for (auto& [k, v] : totals) out[k] = SpreadOf(std::move(v));
  return out;
}

}  // namespace opscope::graph
