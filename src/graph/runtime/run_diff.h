// File: graph/runtime/run_diff.h
// What changed between two runs of a model (capture.json folders): node
// counts per layer, the compiled op-type mix, per-op-type and top-task time,
// and fusions added, removed or changed (a compiled node standing for
// several framework nodes, keyed by its name). The regression check fails
// when total task time grew by more than `threshold_time_pct`, or a layer's
// node count moved by more than `threshold_nodes`.
//
//   RunDiff d = DiffRuns(base, now, /*threshold_time_pct=*/10, /*threshold_nodes=*/0);
//   d.json   // diff.json, schema "opscope.diff/1"
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "graph/runtime/captured_run.h"

namespace opscope::graph {

struct RunDiff {
  nlohmann::json json;  // diff.json
  bool regressed = false;
};

RunDiff DiffRuns(const CapturedRun& base, const CapturedRun& now, double threshold_time_pct, int64_t threshold_nodes);

}  // namespace opscope::graph
