// File: cli/inspector_diff.h
// `inspector-cli diff BASE_DIR NEW_DIR [--output diff.json] [--threshold-time 10%]
// [--threshold-nodes 0] [--allow-different-models]`: what changed between two
// runs. Settings that changed (streams, iterations, warm-up, device, plugins
// and their versions) come first, then node counts per layer, the compiled
// op-type mix, fusions, and the times (span, total task time, per op type,
// per compiled node) as medians over each run's iterations, each judged
// against the threshold and the two runs' noise (graph/run/run_diff.h).
// The check fails (exit 1) when the span or the total task time grew beyond
// both, or a layer's node count moved by more than --threshold-nodes. Runs of
// two different models are refused (exit 2) unless --allow-different-models.
// diff.json (schema "opscope.diff/1") is written only where --output says.
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>
#include "opscope/status.h"

namespace opscope::cli {

struct InspectorDiffFlags {
  std::string base_dir, new_dir;
  std::string output;
  std::string threshold_time = "10%";
  int64_t threshold_nodes = 0;
  bool allow_different_models = false;
  int top = 10;  // rows per time table
};

CLI::App* AddInspectorDiff(CLI::App& app, InspectorDiffFlags& flags);

// --threshold-time's text, "10%" or "10", as a percentage >= 0.
StatusOr<double> ParsePercent(const std::string& text);

// Returns the exit code: 0 within thresholds, 1 a threshold crossed.
StatusOr<int> RunInspectorDiff(const InspectorDiffFlags& flags, std::ostream& out);

}  // namespace opscope::cli
