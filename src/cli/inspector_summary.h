// File: cli/inspector_summary.h
// `inspector-cli summary DIR [--top N]`: what a run spent its time on, as
// text: the per-op-type table (data movement its own row), the longest
// tasks, per-stream busy/idle, the critical path, the time lost against the
// roofs and the suspects, each at most N rows (the rest counted), names cut
// in the middle to keep the columns. Times are medians over the run's
// iterations with their IQR. Reads DIR/capture.json of a `run` folder, or
// merges the records of a session folder (`start`).
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "graph/runtime/scheduler.h"
#include "opscope/status.h"

namespace opscope::cli {

struct InspectorSummaryFlags {
  std::string dir;
  int top = 10;
};

CLI::App* AddInspectorSummary(CLI::App& app, InspectorSummaryFlags& flags);
Status RunInspectorSummary(const InspectorSummaryFlags& flags, std::ostream& out);


}  // namespace opscope::cli
