#include "cli/inspector_summary.h"

#include <cstdio>

#include "graph/runtime/captured_run.h"
#include "graph/runtime/node_path.h"
#include "graph/runtime/session_export.h"
#include "graph/runtime/summary.h"
#include "graph/runtime/task_roofline.h"
#include "graph/runtime/task_suspects.h"
#include "opscope/profile.h"

namespace opscope::cli {

namespace {

std::string Efficiency(double e) {
  char s[32];
  if (e < 0) return "    n/a";
  std::snprintf(s, sizeof(s), "%6.1f%%", 100 * e);
  return s;
}

void PrintRoofline(const graph::RooflineSummary& r, std::ostream& out) {
  char line[512];
  const RoofPeaks& p = r.peaks;
  std::snprintf(line, sizeof(line), "\nroofline  %.4g GB/s, %.4g GFLOP/s float32, %.4g float64 (%s; 0: unknown)\n",
                p.bandwidth_gbs, p.gflops_f32, p.gflops_f64, p.source.c_str());
  out << line << "  " << r.tasks_with_bound << " timed tasks with a bound, " << r.tasks_without_bound
      << " without (no cost model, copies, or a roof unknown)\n";
  if (r.lost.empty()) return;
  std::snprintf(line, sizeof(line), "  %-22s %6s %12s %12s %12s %8s\n", "time lost by op type", "count", "measured us",
                "bound us", "lost us", "eff.");
  out << line;
  for (const graph::OpTypeLoss& l : r.lost) {
    std::snprintf(line, sizeof(line), "  %-22s %6lld %12.1f %12.1f %12.1f %s\n", l.op_type.c_str(),
                  static_cast<long long>(l.count), l.measured_us, l.lower_bound_us, l.lost_us,
                  Efficiency(l.efficiency).c_str());
    out << line;
  }
}

void PrintTables(const graph::Schedule& schedule, int top, std::ostream& out, const graph::CapturedRun* run) {
  graph::Summary s = graph::Summarize(schedule, top);
  if (run && run->peaks) {
    const std::vector<graph::TaskRoof> roofs = graph::TaskRooflines(schedule, run->model.compiled, *run->peaks);
    graph::AddRoofline(s, schedule, roofs, *run->peaks);
    graph::AddSuspects(s, schedule, run->model.compiled, roofs, *run->peaks, graph::ComputeUnitsOf(run->device));
  }
  char line[512];
  std::snprintf(line, sizeof(line), "%-24s %6s %12s %12s %8s\n", "op type", "count", "total us", "mean us", "share");
  out << line;
  for (const graph::OpTypeRow& r : s.op_types) {
    std::snprintf(line, sizeof(line), "%-24s %6lld %12.1f %12.2f %7.1f%%\n", r.op_type.c_str(),
                  static_cast<long long>(r.count), r.total_us, r.mean_us, r.share_pct);
    out << line;
  }
  std::snprintf(line, sizeof(line), "%-24s %6zu %12.1f\n", "total", schedule.tasks.size(), s.total_task_us);
  out << line << "\ntop " << s.top_tasks.size() << " tasks\n";
  for (const graph::TopTask& t : s.top_tasks) {
    std::snprintf(line, sizeof(line), "  #%-5lld %-40s stream %d  start %10.1f us  %10.1f us",
                  static_cast<long long>(t.task_id), graph::TaskTitle(schedule.tasks[t.task_id]).c_str(), t.stream_id,
                  t.start_us, t.duration_us);
    out << line;
    if (s.roofline && t.bound != Bound::kNone) {
      std::snprintf(line, sizeof(line), "  %-7s bound %10.1f us  eff. %s", BoundName(t.bound), t.lower_bound_us,
                    Efficiency(t.efficiency).c_str());
      out << line;
    }
    out << "\n";
  }
  out << "\nstreams (span " << s.span_us << " us)\n";
  for (const graph::StreamRow& r : s.streams) {
    const double busy_pct = s.span_us > 0 ? 100.0 * r.busy_us / s.span_us : 0;
    std::snprintf(line, sizeof(line), "  %-12s %5lld tasks  busy %10.1f us (%5.1f%%)  idle %10.1f us\n",
                  r.name.c_str(), static_cast<long long>(r.tasks), r.busy_us, busy_pct, r.idle_us);
    out << line;
  }
  std::snprintf(line, sizeof(line), "\ncritical path  %zu tasks, %.1f us\n", s.critical_path.task_ids.size(),
                s.critical_path.total_us);
  out << line;
  for (int64_t id : s.critical_path.task_ids) out << "  " << graph::TaskTitle(schedule.tasks[id]) << "\n";
  if (s.roofline) PrintRoofline(*s.roofline, out);
  if (s.suspects) {
    out << "\n";
    PrintSuspects(*s.suspects, out);
  }
}

}  // namespace

CLI::App* AddInspectorSummary(CLI::App& app, InspectorSummaryFlags& flags) {
  CLI::App* cmd = app.add_subcommand("summary", "per-op-type time, top tasks and stream use of a run");
  cmd->add_option("dir", flags.dir, "a folder written by `inspector-cli run`, or a session folder")->required();
  cmd->add_option("--top", flags.top, "how many of the longest tasks to list (default 10)");
  return cmd;
}

Status RunInspectorSummary(const InspectorSummaryFlags& flags, std::ostream& out) {
  if (flags.top < 0) return InvalidArgumentError("--top " + std::to_string(flags.top) + ": expected >= 0");
  if (graph::IsSessionDir(flags.dir)) {
    // A session's records are merged again, as export merges them, so the
    // table does not depend on export having run since the last program.
    OPSCOPE_ASSIGN_OR_RETURN(graph::SessionExport e, graph::MergeSession(flags.dir));
    out << "session " << flags.dir << "  " << e.processes << " process(es), " << e.graphs << " graph(s), "
        << e.launches << " launches  tasks " << e.schedule.tasks.size();
    if (e.dropped > 0) out << "  (" << e.dropped << " launches dropped: collector full)";
    out << "\n\n";
    PrintTables(e.schedule, flags.top, out, nullptr);
    return Status::Ok();
  }
  OPSCOPE_ASSIGN_OR_RETURN(graph::CapturedRun run, graph::LoadCapture(flags.dir));
  out << "model " << run.model.path << "  tasks " << run.schedule.tasks.size() << "\n\n";
  PrintTables(run.schedule, flags.top, out, &run);
  return Status::Ok();
}

}  // namespace opscope::cli
