// File: cli/inspector_diff.h
// `inspector-cli diff BASE_DIR NEW_DIR [--threshold-time 10%] [--threshold-nodes 0]`:
// what changed between two runs: node counts per layer, the compiled op-type
// mix, per-op-type and top-task time, and fusions added, removed or changed
// (a compiled node standing for several framework nodes, keyed by its name).
// Writes NEW_DIR/diff.json (schema "opscope.diff/1"). The check fails (exit 1)
// when total task time grew by more than --threshold-time, or a layer's node
// count moved by more than --threshold-nodes.
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>
#include "opscope/status.h"

namespace opscope::cli {

struct InspectorDiffFlags {
  std::string base_dir, new_dir;
  std::string threshold_time = "10%";
  int64_t threshold_nodes = 0;
};

CLI::App* AddInspectorDiff(CLI::App& app, InspectorDiffFlags& flags);

// Returns the exit code: 0 within thresholds, 1 a threshold crossed.
StatusOr<int> RunInspectorDiff(const InspectorDiffFlags& flags, std::ostream& out);

}  // namespace opscope::cli
