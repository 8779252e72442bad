#include "graph/run/run_summary.h"

#include "graph/run/task_suspects.h"

namespace opscope::graph {

RunSummary SummarizeRun(const CapturedRun& run, int top_n) {
  RunSummary r{.summary = Summarize(run.schedule, top_n), .timing = TimingOf(run)};
  AddTiming(r.summary, run.schedule, r.timing, top_n);
  r.summary.race_check = run.race_check;
  if (!run.peaks) return r;
  r.roofs = TaskRooflines(run.schedule, run.model.compiled, *run.peaks);
  AddRoofline(r.summary, run.schedule, r.roofs, *run.peaks);
  r.facts = RunSuspectFacts(run.schedule, run.model.compiled, r.roofs, r.summary.critical_path,
                            ComputeUnitsOf(run.device), run.peaks->bandwidth_gbs);
  r.summary.suspects = FindSuspects(*r.facts);
  return r;
}

}  // namespace opscope::graph
