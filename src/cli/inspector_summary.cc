#include "cli/inspector_summary.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "core/text_distance.h"
#include "core/text_format.h"
#include "graph/export/capture_json.h"
#include "graph/export/session_export.h"
#include "graph/passes/pass_manager.h"
#include "graph/harness/accuracy_json.h"
#include "graph/run/captured_run.h"
#include "graph/run/node_path.h"
#include "graph/run/summary.h"
#include "graph/run/run_summary.h"
#include "opscope/profile.h"
#include "opscope/roofline.h"

namespace opscope::cli {

namespace {

std::string Efficiency(double e) {
  char s[32];
  if (e < 0) return "    n/a";
  std::snprintf(s, sizeof(s), "%6.1f%%", 100 * e);
  return s;
}

constexpr int kTypeWidth = 24, kTaskWidth = 40, kStreamWidth = 12;

std::string Cut(const std::string& name, int width) { return CutMiddle(name, static_cast<size_t>(width)); }

// A table bounded by --top says what it left out.
void More(size_t shown, size_t all, std::ostream& out) {
  if (all > shown) out << "  ... " << all - shown << " more (--top)\n";
}

size_t Rows(int top, size_t all) { return std::min(all, static_cast<size_t>(std::max(top, 0))); }

void PrintRoofline(const graph::RooflineSummary& r, int top, std::ostream& out) {
  char line[512];
  const RoofPeaks& p = r.peaks;
  std::snprintf(line, sizeof(line), "\nroofline  %.4g GB/s, %.4g GFLOP/s float32, %.4g float64 (%s; 0: unknown)\n",
                p.bandwidth_gbs, p.gflops_f32, p.gflops_f64, p.source.c_str());
  out << line << "  " << r.tasks_with_bound << " timed tasks with a bound, " << r.tasks_without_bound
      << " without (no cost model, copies, or a roof unknown)\n";
  if (r.lost.empty()) return;
  std::snprintf(line, sizeof(line), "  %-*s %6s %12s %12s %12s %8s\n", kTypeWidth - 2, "time lost by op type", "count",
                "measured us", "bound us", "lost us", "eff.");
  out << line;
  const size_t n = Rows(top, r.lost.size());
  for (size_t i = 0; i < n; ++i) {
    const graph::OpTypeLoss& l = r.lost[i];
    std::snprintf(line, sizeof(line), "  %-*s %6lld %12.1f %12.1f %12.1f %s\n", kTypeWidth - 2,
                  Cut(l.op_type, kTypeWidth - 2).c_str(), static_cast<long long>(l.count), l.measured_us,
                  l.lower_bound_us, l.lost_us, Efficiency(l.efficiency).c_str());
    out << line;
  }
  More(n, r.lost.size(), out);
  // A negative time lost is a bound beaten: said once, with why, so it is not read as a bound.
  std::vector<std::pair<std::string, std::string>> notes;
  for (const graph::OpTypeLoss& l : r.lost) notes.emplace_back(l.op_type, l.above_roof);
  if (const std::string groups = AboveRoofGroups(notes, "    "); !groups.empty()) {
    const auto above = std::count_if(r.lost.begin(), r.lost.end(), [](const auto& l) { return !l.above_roof.empty(); });
    out << "  " << above << " op type(s) above their roof (eff. over 100%, time lost below 0):\n" << groups;
  }
}

void PrintTables(const graph::Schedule& schedule, int top, std::ostream& out, const graph::CapturedRun* run) {
  // A run's summary is the one summary.json holds; a session's schedule has no timing or roofs.
  graph::Summary s;
  std::optional<graph::RunTiming> timing;
  if (run) {
    graph::RunSummary summarized = graph::SummarizeRun(*run, top);
    s = std::move(summarized.summary);
    timing = summarized.timing;
  } else {
    s = graph::Summarize(schedule, top);
  }
  char line[512];
  if (timing) {
    std::snprintf(line, sizeof(line), "%d timed iteration(s) after %d warm-up%s\n", timing->iterations, timing->warmup,
                  timing->iterations < 2 ? " (one iteration: noise unknown)" : "");
    out << line;
    // One clause a line: what each figure below aggregates.
    const std::string figures = graph::kTimedFigures;
    for (size_t at = 0; at < figures.size();) {
      size_t end = figures.find("; ", at);
      if (end == std::string::npos) end = figures.size();
      out << "  " << figures.substr(at, end - at) << "\n";
      at = end + 2;
    }
    out << "\n";
  }
  if (s.peak_tensor_bytes >= 0) {
    out << "tensor memory: held at most " << FormatBytes(static_cast<double>(s.peak_tensor_bytes)) << " at once, "
        << FormatBytes(static_cast<double>(s.made_tensor_bytes)) << " made an iteration\n\n";
  }
  if (!s.output_checks.empty()) {
    out << "outputs against --expected\n";
    for (const OutputCheck& c : s.output_checks) out << c.text;
    out << "\n";
  }
  std::snprintf(line, sizeof(line), "%-*s %6s %12s %12s %8s %10s\n", kTypeWidth, "op type", "count", "total us",
                "mean us", "share", "IQR us");
  out << line;
  const size_t types = Rows(top, s.op_types.size());
  for (size_t i = 0; i < types; ++i) {
    const graph::OpTypeRow& r = s.op_types[i];
    std::snprintf(line, sizeof(line), "%-*s %6lld %12.1f %12.2f %7.1f%% %10.1f\n", kTypeWidth,
                  Cut(r.op_type, kTypeWidth).c_str(), static_cast<long long>(r.count), r.total_us, r.mean_us,
                  r.share_pct, r.q3_us - r.q1_us);
    out << line;
  }
  More(types, s.op_types.size(), out);
  std::snprintf(line, sizeof(line), "%-*s %6zu %12.1f\n", kTypeWidth, "total", schedule.tasks.size(),
                s.total_task_us);
  out << line << "\ntop " << s.top_tasks.size() << " tasks\n";
  for (const graph::TopTask& t : s.top_tasks) {
    std::snprintf(line, sizeof(line), "  #%-5lld %-*s stream %d  start %10.1f us  %10.1f us",
                  static_cast<long long>(t.task_id), kTaskWidth,
                  Cut(graph::TaskTitle(schedule.tasks[t.task_id]), kTaskWidth).c_str(), t.stream_id, t.start_us,
                  t.duration_us);
    out << line;
    if (timing && timing->iterations > 1) {
      std::snprintf(line, sizeof(line), " (IQR %.1f)", t.q3_us - t.q1_us);
      out << line;
    }
    if (s.roofline && t.bound != Bound::kNone) {
      std::snprintf(line, sizeof(line), "  %-7s bound %10.1f us  eff. %s", BoundName(t.bound), t.lower_bound_us,
                    Efficiency(t.efficiency).c_str());
      out << line;
    }
    out << "\n";
  }
  out << "\nstreams (span " << s.span_us << " us" << (timing ? ", the median iteration" : "") << ")\n";
  const size_t streams = Rows(top, s.streams.size());
  for (size_t i = 0; i < streams; ++i) {
    const graph::StreamRow& r = s.streams[i];
    const double busy_pct = s.span_us > 0 ? 100.0 * r.busy_us / s.span_us : 0;
    std::snprintf(line, sizeof(line), "  %-*s %5lld tasks  busy %10.1f us (%5.1f%%)  idle %10.1f us\n", kStreamWidth,
                  Cut(r.name, kStreamWidth).c_str(), static_cast<long long>(r.tasks), r.busy_us, busy_pct, r.idle_us);
    out << line;
  }
  More(streams, s.streams.size(), out);
  std::snprintf(line, sizeof(line), "\ncritical path  %zu tasks, %.1f us\n", s.critical_path.task_ids.size(),
                s.critical_path.total_us);
  out << line;
  const size_t path = Rows(top, s.critical_path.task_ids.size());
  for (size_t i = 0; i < path; ++i) {
    out << "  " << Cut(graph::TaskTitle(schedule.tasks[s.critical_path.task_ids[i]]), kTaskWidth + 20) << "\n";
  }
  More(path, s.critical_path.task_ids.size(), out);
  if (s.roofline) PrintRoofline(*s.roofline, top, out);
  if (s.suspects) {
    out << "\n";
    const size_t n = Rows(top, s.suspects->size());
    PrintSuspects(std::vector<Suspect>(s.suspects->begin(), s.suspects->begin() + n), out);
    More(n, s.suspects->size(), out);
  }
  if (!s.findings.empty()) {
    out << "\nfindings\n";
    for (const graph::SymptomFinding& f : s.findings) {
      out << "  [" << f.kind << "] " << f.text << "\n";
      for (const std::string& e : f.evidence) out << "    " << e << "\n";
      out << "    look at: " << f.look << "\n";
    }
  }
  if (!s.variance.empty()) {
    out << "\nvariance  nodes whose time differs more than 10x between iterations\n";
    const size_t n = Rows(top, s.variance.size());
    for (size_t i = 0; i < n; ++i) out << "  " << s.variance[i].text << "\n";
    More(n, s.variance.size(), out);
  }
}

}  // namespace

CLI::App* AddInspectorSummary(CLI::App& app, InspectorSummaryFlags& flags) {
  CLI::App* cmd = app.add_subcommand("summary", "per-op-type time, top tasks and stream use of a run");
  cmd->add_option("dir", flags.dir, "a folder written by `inspector-cli run`, or a session folder")->required();
  cmd->add_option("--top", flags.top,
                  "rows per table: op types, longest tasks, streams, critical path, time lost, suspects (default 10)");
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
  out << "model " << run.model.path << "  tasks " << run.schedule.tasks.size() << "\n";
  // Shown, never loaded: the folder may come from someone else (captured_run.h).
  if (!run.plugins.empty()) out << "plugins the run loaded (not loaded here): " << JoinStrings(run.plugins, ", ") << "\n";
  // Its times are of the graph it ran: one compiled without some of the passes
  // (run --disable-pass, or an older opscope) says so.
  std::vector<std::string> left_out;
  const graph::PassManager compiler = graph::PassManager::Default();
  for (const graph::Pass& p : compiler.passes()) {
    const auto ran = [&](const graph::PassResult& r) { return r.name == p.name; };
    if (std::none_of(run.passes.begin(), run.passes.end(), ran)) left_out.push_back(p.name);
  }
  if (!run.source && !left_out.empty()) {
    out << "compiled without " << JoinStrings(left_out, ", ") << ", which this opscope runs\n";
  }
  out << "\n";
  PrintTables(run.schedule, flags.top, out, &run);
  // `inspector-cli accuracy` written beside this run: its top nodes.
  const std::vector<std::string> accuracy = AccuracySummaryLines(flags.dir, run.identity.id, std::min(flags.top, 5));
  if (!accuracy.empty()) out << "\n";
  for (const std::string& line : accuracy) out << line << "\n";
  return Status::Ok();
}

}  // namespace opscope::cli
