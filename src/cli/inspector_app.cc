#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "cli/app_driver.h"
#include "cli/apps.h"
#include "cli/flag_parsing.h"
#include "cli/inspector_diff.h"
#include "cli/inspector_export.h"
#include "cli/inspector_path.h"
#include "cli/inspector_run.h"
#include "cli/inspector_start.h"
#include "cli/inspector_summary.h"
#include "cli/serve_command.h"

namespace opscope::cli {

constexpr char kTool[] = "inspector-cli";

int InspectorMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app("inspector-cli: an ONNX model's graph, its compiled graph and the tasks that ran", "inspector-cli");
  app.set_version_flag("--version", std::string("inspector-cli ") + OPSCOPE_VERSION);
  app.require_subcommand(1);
  app.footer("Exit codes: 0 passed, 1 check failed (diff over a threshold), 2 bad usage or input.");
  InspectorRunFlags run_flags;
  InspectorStartFlags start_flags;
  InspectorExportFlags export_flags;
  InspectorSummaryFlags summary_flags;
  InspectorPathFlags path_flags;
  InspectorDiffFlags diff_flags;
  InspectorServeFlags serve_flags;
  CLI::App* run = AddInspectorRun(app, run_flags);
  CLI::App* start = AddInspectorStart(app, start_flags);
  CLI::App* exp = AddInspectorExport(app, export_flags);
  CLI::App* summary = AddInspectorSummary(app, summary_flags);
  CLI::App* path = AddInspectorPath(app, path_flags);
  CLI::App* diff = AddInspectorDiff(app, diff_flags);
  CLI::App* serve = AddInspectorServe(app, serve_flags);

  if (std::optional<int> done = ParseCommandLine(app, kTool, argc, argv, out, err)) return *done;
  if (run->parsed()) return FinishCommand(RunInspectorRun(run_flags, out), kTool, err);
  if (start->parsed()) return FinishCommand(RunInspectorStart(start_flags, out), kTool, err);
  if (exp->parsed()) return FinishCommand(RunInspectorExport(export_flags, out), kTool, err);
  if (summary->parsed()) return FinishCommand(RunInspectorSummary(summary_flags, out), kTool, err);
  if (path->parsed()) return FinishCommand(RunInspectorPath(path_flags, out), kTool, err);
  if (serve->parsed()) return FinishCommand(RunInspectorServe(serve_flags, out), kTool, err);
  if (diff->parsed()) {
    StatusOr<int> code = RunInspectorDiff(diff_flags, out);
    return code.ok() ? *code : UsageError(err, kTool, code.status().ToString());
  }
  return UsageError(err, kTool, "no command given (see inspector-cli --help)");
}

}  // namespace opscope::cli
