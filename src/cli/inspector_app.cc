#include <CLI/CLI.hpp>

#include <cstring>
#include <string>

#include "cli/apps.h"
#include "cli/flag_parsing.h"
#include "cli/inspector_diff.h"
#include "cli/inspector_export.h"
#include "cli/inspector_path.h"
#include "cli/inspector_run.h"
#include "cli/inspector_start.h"
#include "cli/inspector_summary.h"
#include "cli/inspector_web.h"

namespace opscope::cli {

namespace {

constexpr const char* kCommands[] = {"run", "start", "export", "summary", "path", "diff", "serve"};

int UsageError(std::ostream& err, const std::string& what) {
  err << "inspector-cli: error: " << OneLine(what) << "\n";
  return 2;
}

int Finish(const Status& st, std::ostream& err) { return st.ok() ? 0 : UsageError(err, st.ToString()); }

}  // namespace

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

  if (argc <= 1) return UsageError(err, "no command given (see inspector-cli --help)");
  // CLI11 would call an unknown command an "unexpected argument": say what it is.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const char* c : kCommands) known = known || std::strcmp(argv[1], c) == 0;
    if (!known) {
      return UsageError(err, std::string("unknown command '") + argv[1] + "' (commands: run, start, export, summary, path, diff, serve)");
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";  // CLI11 prints it without a newline
    return 0;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help
    return UsageError(err, e.what());
  }
  if (run->parsed()) return Finish(RunInspectorRun(run_flags, out), err);
  if (start->parsed()) return Finish(RunInspectorStart(start_flags, out), err);
  if (exp->parsed()) return Finish(RunInspectorExport(export_flags, out), err);
  if (summary->parsed()) return Finish(RunInspectorSummary(summary_flags, out), err);
  if (path->parsed()) return Finish(RunInspectorPath(path_flags, out), err);
  if (serve->parsed()) return Finish(RunInspectorServe(serve_flags, out), err);
  if (diff->parsed()) {
    StatusOr<int> code = RunInspectorDiff(diff_flags, out);
    return code.ok() ? *code : UsageError(err, code.status().ToString());
  }
  return UsageError(err, "no command given (see inspector-cli --help)");
}

}  // namespace opscope::cli
