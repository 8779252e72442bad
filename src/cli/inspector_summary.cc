#include "cli/inspector_summary.h"

#include <cstdio>

#include "graph/runtime/captured_run.h"
#include "graph/runtime/session_export.h"
#include "graph/runtime/summary.h"

namespace opscope::cli {

std::string TaskTitle(const graph::ScheduledTask& t) {
  if (!t.node_name.empty()) return t.node_name + " (" + t.op_type + ")";
  return t.desc.label.empty() ? t.op_type : t.desc.label;
}

namespace {

void PrintTables(const graph::Schedule& schedule, int top, std::ostream& out) {
  const graph::Summary s = graph::Summarize(schedule, top);
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
    std::snprintf(line, sizeof(line), "  #%-5lld %-40s stream %d  start %10.1f us  %10.1f us\n",
                  static_cast<long long>(t.task_id), TaskTitle(schedule.tasks[t.task_id]).c_str(), t.stream_id,
                  t.start_us, t.duration_us);
    out << line;
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
  for (int64_t id : s.critical_path.task_ids) out << "  " << TaskTitle(schedule.tasks[id]) << "\n";
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
    PrintTables(e.schedule, flags.top, out);
    return Status::Ok();
  }
  OPSCOPE_ASSIGN_OR_RETURN(graph::CapturedRun run, graph::LoadCapture(flags.dir));
  out << "model " << run.model.path << "  tasks " << run.schedule.tasks.size() << "\n\n";
  PrintTables(run.schedule, flags.top, out);
  return Status::Ok();
}

}  // namespace opscope::cli
