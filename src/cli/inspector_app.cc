#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "cli/app_driver.h"
#include "cli/apps.h"
#include "cli/command_table.h"
#include "cli/flag_parsing.h"
#include "cli/inspector_accuracy.h"
#include "cli/inspector_diff.h"
#include "cli/inspector_export.h"
#include "cli/inspector_import_ort.h"
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
  app.footer("Exit codes: 0 passed, 1 check failed (an output against --expected, a diverging node, diff over a threshold), 2 bad usage or input.");
  InspectorRunFlags run;
  InspectorStartFlags start;
  InspectorExportFlags exp;
  InspectorSummaryFlags summary;
  InspectorPathFlags path;
  InspectorDiffFlags diff;
  InspectorServeFlags serve;
  InspectorAccuracyFlags accuracy;
  InspectorImportOrtFlags import_ort;
  const std::vector<Command> table = {
      {AddInspectorRun(app, run), [&] { return RunInspectorRun(run, out); }},
      {AddInspectorStart(app, start), [&] { return ExitZero(RunInspectorStart(start, out)); }},
      {AddInspectorExport(app, exp), [&] { return ExitZero(RunInspectorExport(exp, out)); }},
      {AddInspectorSummary(app, summary), [&] { return ExitZero(RunInspectorSummary(summary, out)); }},
      {AddInspectorPath(app, path), [&] { return ExitZero(RunInspectorPath(path, out)); }},
      {AddInspectorDiff(app, diff), [&] { return RunInspectorDiff(diff, out); }},
      {AddInspectorServe(app, serve), [&] { return ExitZero(RunInspectorServe(serve, out)); }},
      {AddInspectorAccuracy(app, accuracy), [&] { return RunInspectorAccuracy(accuracy, out); }},
      {AddInspectorImportOrt(app, import_ort), [&] { return ExitZero(RunInspectorImportOrt(import_ort, out)); }},
  };
  return RunCommandTable(app, table, kInspectorFieldFlags, kTool, argc, argv, out, err);
}

}  // namespace opscope::cli
