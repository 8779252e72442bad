#include "graph/run/run_summary.h"

#include "graph/run/node_path.h"
#include "graph/run/run_symptoms.h"
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

}  // namespace

RunSummary SummarizeRun(const CapturedRun& run, int top_n) {
  RunSummary r{.summary = Summarize(run.schedule, top_n), .timing = TimingOf(run)};
  AddTiming(r.summary, run.schedule, r.timing, top_n);
  r.summary.race_check = run.race_check;
  r.summary.peak_tensor_bytes = run.peak_tensor_bytes;
  r.summary.made_tensor_bytes = run.made_tensor_bytes;
  r.summary.variance = FindVariance(run);
  r.summary.output_checks = run.output_checks;
  r.summary.findings = FindSymptoms(run);
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
