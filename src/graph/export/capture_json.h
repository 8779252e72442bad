// File: graph/export/capture_json.h
// What `inspector-cli run` leaves in its output folder beside the three
// exports, so that export, summary, path and diff can rebuild the run without
// running it again. DIR/capture.json (schema "opscope.capture/1") holds the
// model's path and fingerprint (size + FNV-1a of its bytes), the plugins, the
// number of compute streams, the warm-up and timed iteration counts, the
// compiler passes and, per task, what the executor measured (op_id, kernel,
// launch, raw and calibrated times of the median iteration, and
// "iterations_ns": [raw start, raw end, calibrated start, end] of every
// timed iteration, so that diff can weigh a change against the noise), and
// the roofs the run was held against (opscope/roofline.h), so that a later
// export or summary gives the same bounds without calibrating again, and the
// verdict of the run's race check (run_races.h), which only a run can give.
//
// A run of another engine (graph/ort: `inspector-cli import-ort`) has
// "engine": {"name": "onnxruntime", "optimized_model": {path, fingerprint},
// "profile": {path, fingerprint}}: loading reads those files again (each must
// still have its fingerprint) instead of compiling the model.
//
// It also keeps the compiled graph the run executed ("compiled_graph",
// compiled_json.h) and its schedule (each task's kind, dependencies and
// events, and "num_events"). Loading re-imports the model as the framework
// graph and takes the compiled graph and the schedule from the file, checked
// against each other, so that a folder made by another opscope, or compiled
// with passes left out (`run --disable-pass`), is read as it ran; then it
// puts the measured fields back and maps tasks to nodes. A folder written
// before the graph was kept is compiled and scheduled again (deterministic)
// and must line up task for task; where it does not, the error names the
// first pass whose result differs. A model changed since the run is refused,
// and so is a folder whose run files are not all of the run capture.json
// records (run_identity.h). A malformed capture.json, or a field missing or
// of the wrong kind, is one line naming the file and the field.
//
//   OPSCOPE_ASSIGN_OR_RETURN(CapturedRun run, LoadCapture("out"));
#pragma once

#include <string>
#include <vector>

#include "graph/run/captured_run.h"
#include "graph/run/run_summary.h"
#include "opscope/status.h"

namespace opscope::graph {

inline constexpr char kCaptureSchema[] = "opscope.capture/1";
inline constexpr char kCaptureFile[] = "capture.json";
inline constexpr char kRooflineFile[] = "roofline.svg";

Status WriteCapture(const CapturedRun& run);
StatusOr<CapturedRun> LoadCapture(const std::string& dir);

// The summary's "top tasks" count, the same in every export of a run.
inline constexpr int kSummaryTopTasks = 10;
// Writes DIR/graph.json, DIR/trace.json and DIR/summary.json (atomically),
// and DIR/roofline.svg when the run has its roofs, each with the run's
// identity, and returns their paths. `summarized` is SummarizeRun(run,
// kSummaryTopTasks), given by a caller that needs it too (a 100,000-node
// run's summary takes about a second).
StatusOr<std::vector<std::string>> WriteRunExports(const CapturedRun& run, const RunSummary& summarized);
StatusOr<std::vector<std::string>> WriteRunExports(const CapturedRun& run);

}  // namespace opscope::graph
