// File: cli/inspector_export.h
// `inspector-cli export --input-dir DIR --format json|html|all`: json
// (re)writes DIR/graph.json, DIR/trace.json and DIR/summary.json from
// DIR/capture.json (inspector_capture.h), which `run` wrote; `run` calls
// WriteExports too. A folder with session.json instead is a capture session
// (`inspector-cli start`): its records are merged by
// graph/runtime/session_export.h. html writes DIR/report.html from the three
// JSON files (inspector_web.h); all does both.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/inspector_capture.h"
#include "opscope/status.h"

namespace opscope::cli {

inline constexpr int kSummaryTopTasks = 10;

// Writes the three files (atomically) and returns their paths.
StatusOr<std::vector<std::string>> WriteExports(const CapturedRun& run);

struct InspectorExportFlags {
  std::string input_dir;
  std::string format = "json";
};

CLI::App* AddInspectorExport(CLI::App& app, InspectorExportFlags& flags);
Status RunInspectorExport(const InspectorExportFlags& flags, std::ostream& out);

}  // namespace opscope::cli
