#include "graph/harness/run_report.h"

#include <utility>

#include "graph/export/capture_json.h"
#include "graph/run/run_summary.h"
#include "graph/run/summary.h"

namespace opscope::graph {

ModelRunReport ReportOfRun(const CapturedRun& run, std::string repro) {
  return ReportOfRun(run, SummarizeRun(run, kSummaryTopTasks), std::move(repro));
}

ModelRunReport ReportOfRun(const CapturedRun& run, const RunSummary& summarized, std::string repro) {
  // Without roofs (an imported run) the roofline, its losses and the suspects stay empty.
  const Summary& s = summarized.summary;
  const RunTiming& timing = summarized.timing;
  const RoofPeaks peaks = run.peaks.value_or(RoofPeaks{});
  const SuspectFacts facts = summarized.facts.value_or(SuspectFacts{});
  const MemoryPlan& mem = run.model.compiled.memory();
  ModelRunReport out{.model = run.model.path,
                     .framework_nodes = static_cast<int64_t>(run.model.framework.nodes().size()),
                     .compiled_nodes = static_cast<int64_t>(run.model.compiled.nodes().size()),
                     .tasks = static_cast<int64_t>(run.schedule.tasks.size()),
                     .compute_streams = run.schedule.compute_streams,
                     .streams = run.schedule.num_streams(),
                     .iterations = run.iterations,
                     .warmup = run.warmup,
                     .device = run.device,
                     .total_task_us = s.total_task_us,
                     .span_us = timing.span.median_us,
                     .critical_path_us = s.critical_path.total_us,
                     .total_task_q1_us = timing.total_task.q1_us,
                     .total_task_q3_us = timing.total_task.q3_us,
                     .span_q1_us = timing.span.q1_us,
                     .span_q3_us = timing.span.q3_us,
                     .memory_planned = mem.planned,
                     .arena_bytes = mem.arena_bytes,
                     .no_reuse_bytes = mem.no_reuse_bytes,
                     .peak_tensor_bytes = run.peak_tensor_bytes};
  for (const OpTypeRow& row : s.op_types) {
    out.op_types.push_back({row.op_type, row.count, row.total_us, row.share_pct});
  }
  out.peaks = peaks;
  if (s.roofline) {
    out.tasks_with_bound = s.roofline->tasks_with_bound;
    for (const OpTypeLoss& l : s.roofline->lost) {
      out.lost.push_back({l.op_type, l.count, l.measured_us, l.lower_bound_us, l.lost_us, l.efficiency, l.above_roof});
    }
  }
  for (const SuspectNode& n : facts.nodes) {
    out.nodes.push_back({.name = n.name, .op_type = n.op ? n.op->name : "", .inputs = n.inputs, .attrs = n.attrs,
                         .roofline = n.roofline, .on_critical_path = n.on_critical_path});
  }
  out.suspects = s.suspects.value_or(std::vector<Suspect>{});
  out.repro = std::move(repro);
  return out;
}

}  // namespace opscope::graph
