#include "cli/inspector_export.h"

#include <ostream>

#include "cli/inspector_diff.h"
#include "graph/export/capture_json.h"
#include "graph/export/run_folder.h"
#include "report/report_page.h"

#include "graph/export/graph_json.h"
#include "graph/export/session_export.h"
#include "graph/export/trace_json.h"
#include "graph/run/run_identity.h"
#include "graph/run/summary.h"

namespace opscope::cli {

namespace {

// A session folder (session.json, from `inspector-cli start`) holds records,
// not a run: the library merges them into the same three files.
Status ExportSessionDir(const InspectorExportFlags& flags, std::ostream& out) {
  OPSCOPE_ASSIGN_OR_RETURN(graph::SessionExport e, graph::ExportSession(flags.input_dir, graph::kSummaryTopTasks));
  out << "session  " << e.processes << " process(es): " << e.graphs << " graph(s) with " << e.graph_tasks
      << " tasks, " << e.launches << " launches (" << e.launches_merged << " of them graph tasks)";
  if (e.dropped > 0) out << ", " << e.dropped << " launches dropped (collector full)";
  out << "\n";
  if (e.graphs == 0) out << "no graph collected: graph.json not written\n";
  for (const std::string& f : e.files) out << "wrote " << f << "\n";
  return Status::Ok();
}

}  // namespace

CLI::App* AddInspectorExport(CLI::App& app, InspectorExportFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "export", "rewrite graph.json, trace.json and summary.json from DIR/capture.json or a session's records, "
      "or write DIR/report.html");
  cmd->add_option("--input-dir", flags.input_dir,
                  "a folder written by `inspector-cli run`, or a session folder of `inspector-cli start`")->required();
  cmd->add_option("--format", flags.format,
                  "json: graph/trace/summary.json from capture.json or the session's records; html: DIR/report.html, "
                  "the web UI as one self-contained file, from DIR's JSON files (or a trace alone: trace.json, "
                  "ops-debug profile's timeline.json or ops-debug diagnose's diagnosis.json) and DIR/roofline.svg "
                  "when there is one; all: both");
  cmd->add_option("--baseline", flags.baseline,
                  "html: show the diff against this earlier run's folder (as `inspector-cli diff BASE DIR`): nodes "
                  "added and removed, fusions changed, times slower or faster beyond the noise");
  cmd->add_option("--threshold-time", flags.threshold_time,
                  "with --baseline: a time change counts beyond this percentage and the runs' noise (default 10%)");
  cmd->add_flag("--allow-different-models", flags.allow_different_models,
                "with --baseline: compare runs of two different models");
  return cmd;
}

Status RunInspectorExport(const InspectorExportFlags& flags, std::ostream& out) {
  const bool json = flags.format == "json" || flags.format == "all";
  const bool html = flags.format == "html" || flags.format == "all";
  if (!json && !html) {
    return InvalidArgumentError("--format '" + flags.format + "': expected json, html or all");
  }
  if (!flags.baseline.empty() && !html) {
    return InvalidArgumentError("--baseline: only with --format html or all (the diff is shown on the page; "
                                "`inspector-cli diff` writes diff.json)");
  }
  OPSCOPE_ASSIGN_OR_RETURN(double threshold_time, ParsePercent(flags.threshold_time));
  std::vector<std::string> files;
  if (json && graph::IsSessionDir(flags.input_dir)) {
    OPSCOPE_RETURN_IF_ERROR(ExportSessionDir(flags, out));
  } else if (json) {
    // The files are written again under the run's own identity: capture.json's.
    OPSCOPE_ASSIGN_OR_RETURN(graph::CapturedRun run, graph::LoadCapture(flags.input_dir));
    graph::RemoveRunTempFiles(flags.input_dir);
    OPSCOPE_ASSIGN_OR_RETURN(files, graph::WriteRunExports(run));
  }
  if (html) {
    OPSCOPE_ASSIGN_OR_RETURN(std::string report,
                             WriteReportHtml(flags.input_dir, {.dir = flags.baseline,
                                                               .threshold_time_pct = threshold_time,
                                                               .allow_different_models = flags.allow_different_models}));
    files.push_back(std::move(report));
  }
  for (const std::string& f : files) out << "wrote " << f << "\n";
  return Status::Ok();
}

}  // namespace opscope::cli
