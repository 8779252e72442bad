#include "graph/run/run_summary.h"

#include "graph/run/node_path.h"
#include "graph/run/task_suspects.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "core/text_format.h"

namespace opscope::graph {
namespace {

constexpr double kVarianceRatio = 10;     // max over min of a node's per-iteration time
constexpr double kVarianceMinUs = 50;     // and apart by this much: microsecond jitter is no finding

// Each compiled node's total task time in every timed iteration, and the
// nodes whose slowest iteration took more than 10x their fastest.
std::vector<VarianceFinding> FindVariance(const CapturedRun& run) {
  std::vector<VarianceFinding> out;
  const std::vector<IterationTimes>& its = run.iteration_times;
  if (its.size() < 2) return out;
  std::map<int64_t, std::vector<double>> per_node;  // node id -> us per iteration
  for (size_t k = 0; k < its.size(); ++k) {
    for (const ScheduledTask& t : run.schedule.tasks) {
      const size_t id = static_cast<size_t>(t.desc.task_id);
      if (t.desc.op_node_id < 0 || id >= its[k].size() || its[k][id].cal_end_ns < its[k][id].cal_start_ns) continue;
      std::vector<double>& v = per_node[t.desc.op_node_id];
      v.resize(its.size(), 0);
      v[k] += static_cast<double>(its[k][id].cal_end_ns - its[k][id].cal_start_ns) / 1e3;
    }
  }
  for (const auto& [id, us] : per_node) {
    const auto [lo, hi] = std::minmax_element(us.begin(), us.end());
    if (!(*lo > 0) || *hi < kVarianceRatio * *lo || *hi - *lo < kVarianceMinUs) continue;
    const Node* n = run.model.compiled.FindNode(id);
    VarianceFinding f{.node_id = id, .node = n ? n->name : std::to_string(id), .op_type = n ? n->op_type : "",
                      .min_us = *lo, .max_us = *hi, .fastest = static_cast<int>(lo - us.begin()),
                      .slowest = static_cast<int>(hi - us.begin()), .iterations = static_cast<int>(us.size())};
    // The slowest alone at the start is a first call; elsewhere, other work.
    int slow = 0;
    for (double v : us) slow += v >= kVarianceRatio * *lo;
    const std::string why = f.slowest == 0 && slow == 1
                                ? "only the first timed iteration is slow: a first call (caches, page faults, lazy set-up; "
                                  "raise --warmup)"
                                : "slow iterations come and go: contention or oversubscription (other work on the cores, "
                                  "more threads than cores)";
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.0fx", *hi / *lo);
    f.text = f.node + " (" + f.op_type + "): " + FormatMicros(*lo) + " in iteration " + std::to_string(f.fastest + 1) + " to " +
             FormatMicros(*hi) + " in iteration " + std::to_string(f.slowest + 1) + " of " + std::to_string(f.iterations) +
             " (" + ratio + "): not one speed; " + why;
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const VarianceFinding& a, const VarianceFinding& b) {
    return a.max_us / a.min_us > b.max_us / b.min_us;
  });
  return out;
}

// Tasks no framework node asked for: kernels of nodes the compiler inserted
// (layout conversions, casts) and copies beyond one per graph input and
// output. Counted by what they are, largest first.
std::optional<SymptomFinding> InsertedTasks(const CapturedRun& run) {
  const Graph& compiled = run.model.compiled;
  std::map<std::string, std::vector<std::string>> by_what;  // what -> task titles
  int64_t copies = 0, inserted = 0;
  for (const ScheduledTask& t : run.schedule.tasks) {
    if (t.desc.kind == TaskKind::kMemcpyH2D || t.desc.kind == TaskKind::kMemcpyD2H) {
      ++copies;
      by_what[t.desc.kind == TaskKind::kMemcpyH2D ? "host-to-device copy" : "device-to-host copy"].push_back(TaskTitle(t));
      continue;
    }
    const Node* n = t.desc.op_node_id >= 0 ? compiled.FindNode(t.desc.op_node_id) : nullptr;
    if (!n || !n->fused_from.empty()) continue;
    ++inserted;
    const std::string what = n->kind == NodeKind::kTransdata ? n->op_type + " (layout " + n->layout_from + " to " + n->layout_to + ")"
                                                             : n->op_type;
    by_what[what].push_back(TaskTitle(t));
  }
  const int64_t io = static_cast<int64_t>(compiled.inputs().size() + compiled.outputs().size());
  if (inserted == 0 && copies <= io) return std::nullopt;  // a copy in and out per graph tensor is no symptom
  int64_t framework_ops = 0;
  for (const Node& f : run.model.framework.nodes()) framework_ops += f.op_type != "Constant";
  SymptomFinding f{.kind = "inserted_tasks"};
  f.text = std::to_string(run.schedule.tasks.size()) + " tasks for " + std::to_string(framework_ops) +
           " framework nodes: the compiler inserted " + std::to_string(inserted) + " kernel task(s) no framework node asked for" +
           (copies > io ? " and " + std::to_string(copies) + " copies for " + std::to_string(io) + " graph inputs and outputs" : "");
  std::vector<std::pair<std::string, std::vector<std::string>>> rows(by_what.begin(), by_what.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  for (const auto& [what, titles] : rows) {  // a few kinds: copies, transdata, casts
    std::string line = std::to_string(titles.size()) + " x " + what + ": " + titles[0];
    if (titles.size() > 1) line += (titles.size() > 2 ? ", ... " : ", ") + titles.back();
    f.evidence.push_back(line);
  }
  f.look = "the compiler's passes that insert nodes (layout, casts): `inspector-cli run --dump-passes` shows each pass's graph";
  return f;
}

// Framework nodes that did not run as themselves: fused (into which node),
// on a branch that did not run (which branch), resolved or folded at
// compile time. Grouped by why, the largest group first.
std::optional<SymptomFinding> NotExecuted(const CapturedRun& run) {
  std::map<std::string, std::vector<std::string>> by_why;  // "fused into X" -> framework node names
  int64_t count = 0, total = 0;
  for (const Node& n : run.model.framework.nodes()) {
    if (n.op_type == "Constant") continue;
    ++total;
    if (n.executed) continue;
    ++count;
    by_why[n.not_executed_reason.empty() ? "no reason recorded" : n.not_executed_reason].push_back(n.name.empty() ? n.op_type : n.name);
  }
  if (count == 0) return std::nullopt;
  SymptomFinding f{.kind = "not_executed",
                   .text = std::to_string(count) + " of " + std::to_string(total) +
                           " framework nodes did not run as themselves: fused into a compiled node, on a branch that did "
                           "not run, or resolved at compile time"};
  std::vector<std::pair<std::string, std::vector<std::string>>> rows(by_why.begin(), by_why.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  // Bounded: a 100,000-node model has tens of thousands of fusions.
  constexpr size_t kGroups = 8, kNames = 4;
  size_t rest = 0;
  for (size_t k = 0; k < rows.size(); ++k) {
    const auto& [why, names] = rows[k];
    if (k >= kGroups) {
      rest += names.size();
      continue;
    }
    std::string line = why + ": " + names[0];
    for (size_t i = 1; i < names.size() && i < kNames; ++i) line += ", " + names[i];
    if (names.size() > kNames) line += " and " + std::to_string(names.size() - kNames) + " more";
    f.evidence.push_back(line);
  }
  if (rest > 0) {
    f.evidence.push_back("and " + std::to_string(rows.size() - kGroups) + " more groups of " + std::to_string(rest) +
                         " nodes (graph.json has every node's reason)");
  }
  f.look = "graph.json: each framework node's executed and reason, and the compiled node it maps to (`inspector-cli path --node NAME`)";
  return f;
}

}  // namespace

RunSummary SummarizeRun(const CapturedRun& run, int top_n) {
  RunSummary r{.summary = Summarize(run.schedule, top_n), .timing = TimingOf(run)};
  AddTiming(r.summary, run.schedule, r.timing, top_n);
  r.summary.race_check = run.race_check;
  r.summary.variance = FindVariance(run);
  r.summary.output_checks = run.output_checks;
  for (auto finding : {InsertedTasks(run), NotExecuted(run)}) {
    if (finding) r.summary.findings.push_back(std::move(*finding));
  }
  if (!run.peaks) return r;
  r.roofs = TaskRooflines(run.schedule, run.model.compiled, *run.peaks, TaskMediansUs(r.timing));
  AddRoofline(r.summary, run.schedule, r.roofs, *run.peaks);
  r.facts = RunSuspectFacts(run.schedule, run.model.compiled, r.roofs, r.summary.critical_path,
                            ComputeUnitsOf(run.device), run.peaks->bandwidth_gbs);
  r.summary.suspects = FindSuspects(*r.facts);
  // A launch shape or the kernel itself is no reason for a time the same
  // launch beat tenfold in another iteration: say so beside the suspect.
  for (Suspect& s : *r.summary.suspects) {
    if (s.kind != SuspectKind::kSmallGrid && s.kind != SuspectKind::kSlowKernel) continue;
    for (const VarianceFinding& v : r.summary.variance) {
      if (s.names.empty() || s.names[0] != v.node) continue;
      s.text += "; but the same node ran in " + FormatMicros(v.min_us) + " in iteration " + std::to_string(v.fastest + 1) +
                ": its time varies " + std::to_string(static_cast<int>(v.max_us / v.min_us)) +
                "x (see variance), so this reason does not hold for every iteration";
    }
  }
  return r;
}

}  // namespace opscope::graph
