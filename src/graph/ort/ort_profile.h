// File: graph/ort/ort_profile.h
// onnxruntime's own profile of a session (SessionOptions enable_profiling,
// written by end_profiling as PREFIX_<date>.json): a JSON array of Chrome
// trace events. What a run of the model did is in two kinds of them:
//  - cat "Session", name "model_run": one per InferenceSession.run, its
//    span [ts, ts + dur] in microseconds from the start of profiling;
//  - cat "Node", name "<node>_kernel_time": one per kernel a run executed,
//    named by the node of the optimized graph, with args.op_name,
//    args.provider ("CPUExecutionProvider"), args.node_index and the
//    input/output type shapes. Older versions also write "_fence_before" and
//    "_fence_after" events of no duration: they are not kernels.
// The profile is a file someone sent: every field read is checked, and an
// error is one line naming the file and the event.
//
//   OPSCOPE_ASSIGN_OR_RETURN(OrtProfile p, ReadOrtProfile("ort_2026-12-05.json"));
//   for (const OrtProfileRun& r : p.runs) ... r.kernels[i].node ...
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opscope/status.h"

namespace opscope::graph {

struct OrtKernelEvent {
  std::string node;      // the optimized graph's node name
  std::string op_type;   // args.op_name
  std::string provider;  // args.provider; "" when the event has none
  int64_t tid = 0;       // the thread that ran it (the run's own, or a parallel executor's)
  int64_t ts_us = 0, dur_us = 0;
  // args.output_type_shape: each output's element type as onnxruntime
  // names it ("float", "int64") and its dims, for tensors the optimized
  // model leaves without a shape (an nchwc node's "reorder_token_N").
  struct Output {
    std::string type;
    std::vector<int64_t> dims;
  };
  std::vector<Output> outputs;
};

// One InferenceSession.run, its kernels in the order they started.
struct OrtProfileRun {
  int64_t start_us = 0, end_us = 0;
  std::vector<OrtKernelEvent> kernels;
};

struct OrtProfile {
  std::vector<OrtProfileRun> runs;  // in the order they ran
  int64_t events = 0;               // all events of the file
  int64_t kernels_outside_runs = 0; // kernel events in no model_run's span (left out)
};

// Errors: not JSON, not an array of events (or an object with traceEvents),
// an event's field missing or of the wrong kind, or no kernel event at all
// (profiling was not enabled while the model ran).
StatusOr<OrtProfile> ReadOrtProfile(const std::string& path);

}  // namespace opscope::graph
