// File: graph/run/run_diff.h
// What changed between two runs of a model (capture.json folders): first the
// settings that make their times incomparable (streams, iterations, warm-up,
// device, plugins and their fingerprints), then how the two compilers
// differed ("compiler": the passes one run left out, as with `inspector-cli
// run --disable-pass`, or, with the same passes, the first whose node count
// after it differs: a folder from another opscope), then node counts per layer with
// the names added and removed, the compiled op-type mix, fusions added,
// removed or changed (a compiled node standing for several framework nodes,
// keyed by its name), and the times: span, total task time, per op type and
// per compiled node (by name), each as the median over the run's iterations
// with its quartiles.
//
// A time is judged by Judge(): "new" when it grew from nothing (no
// percentage of zero), "gone" when it fell to nothing, "slower"/"faster"
// when it moved by more than the threshold AND outside the noise, "within
// noise" when it moved by more than the threshold but the two runs' quartile
// intervals overlap, else "unchanged". The regression check fails when the
// span or the total task time is "slower", or a layer's node count moved by
// more than `threshold_nodes`; op types and nodes say where the time went.
// Runs of two engines (opscope's against onnxruntime's) are compared, not
// checked: neither their times nor their compiled node counts regress.
//
//   RunDiff d = DiffRuns(base, now, {.threshold_time_pct = 10});
//   d.json   // diff.json, schema "opscope.diff/1"
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "graph/run/captured_run.h"
#include "graph/runtime/iteration_stats.h"

namespace opscope::graph {

struct DiffOptions {
  double threshold_time_pct = 10;
  int64_t threshold_nodes = 0;
};

struct RunDiff {
  nlohmann::json json;  // diff.json
  bool regressed = false;
};

// The verdict on one time, base -> now (see above). `noise_known`: both
// runs timed at least two iterations, so their quartiles mean something.
std::string Judge(const Spread& base, const Spread& now, double threshold_pct, bool noise_known);

RunDiff DiffRuns(const CapturedRun& base, const CapturedRun& now, const DiffOptions& options);

}  // namespace opscope::graph
