// File: cli/inspector_export.h
// `inspector-cli export --input-dir DIR --format json|html|all`: json
// (re)writes DIR/graph.json, DIR/trace.json and DIR/summary.json from
// DIR/capture.json (graph/run/captured_run.h), which `run` wrote. A folder with session.json instead is a capture session
// (`inspector-cli start`): its records are merged by
// graph/export/session_export.h. html writes DIR/report.html from the three
// JSON files, or from a trace alone (trace.json, or ops-debug profile's
// timeline.json), with DIR/roofline.svg when there is one (report/report_page.h);
// all does both. --baseline BASE_DIR puts the diff of BASE_DIR's run and
// DIR's (`inspector-cli diff`'s, with its --threshold-time and
// --allow-different-models) on the html page.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "graph/run/captured_run.h"
#include "opscope/status.h"

namespace opscope::cli {


struct InspectorExportFlags {
  std::string input_dir;
  std::string format = "json";
  // html: the diff against this run folder on the page (report/report_page.h).
  std::string baseline;
  std::string threshold_time = "10%";
  bool allow_different_models = false;
};

CLI::App* AddInspectorExport(CLI::App& app, InspectorExportFlags& flags);
Status RunInspectorExport(const InspectorExportFlags& flags, std::ostream& out);

}  // namespace opscope::cli
