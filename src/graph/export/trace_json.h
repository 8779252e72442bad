// File: graph/export/trace_json.h
// trace.json in the Chrome Trace Event Format, which Perfetto and
// chrome://tracing open as it is: one pid per device (named by a
// "process_name" M event), one tid per stream (a "thread_name" M event each),
// one complete ("X") event per task with ts/dur in microseconds and args
// {task_id, node_id, op_id, op_type, kernel, grid, block} (and, for a task
// whose op has a cost model, bound, lower_bound_us, efficiency: AddRoofline;
// the last two null while a roof is unknown; for a run's tasks, median_us,
// q1_us, q3_us and iterations over its timed iterations: AddTiming), and a flow pair
// ("s" on the producer's slice, "f" with bp "e" on the consumer's) per event
// wait. The top-level object carries "schema": "opscope.trace/1" and, for a
// run, "otherData": {"run": {"id", "model_fingerprint"}} (run_identity.h)
// and "timing" (iteration_stats.h: which iteration the events are).
//
// The writer formats by hand into one growing string, with fast paths for
// small integers, hex ids and strings that need no escaping: a million
// tasks take well under a second (bench/runtime_benchmark.cc).
//
//   graph::TraceData data = graph::BuildTraceData(schedule, model.compiled, "cpu");
//   OPSCOPE_RETURN_IF_ERROR(graph::WriteTraceJson("trace.json", data));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir/ir.h"
#include "graph/run/run_identity.h"
#include "graph/run/task_roofline.h"
#include "graph/runtime/iteration_stats.h"
#include "graph/runtime/scheduler.h"

namespace opscope::graph {

struct TraceTask {
  int64_t task_id = -1;
  int64_t node_id = -1;
  uint64_t op_id = 0;
  int tid = 0;
  int64_t ts_ns = 0, dur_ns = 0;  // relative to the run's first event
  std::string name;               // the node's name, or the task's label
  std::string category;           // the task kind
  std::string op_type;
  std::string kernel;
  bool launch_known = false;
  Dim3 grid, block;
  bool has_cost = false;  // the roofline args are written only then
  Bound bound = Bound::kNone;
  double lower_bound_us = 0, efficiency = -1;
  AboveRoof above_roof = AboveRoof::kNo;  // written (args.above_roof) only when a roof was beaten
  int64_t bytes = 0;  // the cost model's bytes read + written, and FLOPs: the page's GB/s and GFLOP/s
  double flops = 0;
  Spread spread;  // over the run's iterations (AddTiming); samples 0: not written
};

struct TraceFlow {
  int64_t id = 0;
  int from_tid = 0, to_tid = 0;
  int64_t from_ts_ns = 0, to_ts_ns = 0;
  std::string name;  // "event 3"
};

struct TraceData {
  int pid = 1;
  std::string process_name;                       // the device: "cpu"
  std::vector<std::pair<int, std::string>> threads;  // tid -> stream name
  std::vector<TraceTask> tasks;
  std::vector<TraceFlow> flows;
  // A run's trace.json carries the run's identity in "otherData": {"run": ...}.
  std::optional<RunIdentity> run;
  // A run's iteration counts and spans: "otherData": {"timing": ...} (RunTimingJson).
  std::optional<nlohmann::json> timing;
};


// From an executed, calibrated schedule (calibrated times). A task is named
// by its node (ScheduledTask::node_name), else its label, else its op type.
TraceData BuildTraceData(const Schedule& schedule, const std::string& device_name);
// The same; kept for callers that hold the compiled graph.
TraceData BuildTraceData(const Schedule& schedule, const Graph& compiled, const std::string& device_name);

// Puts each task's bound, lower bound and efficiency (roofs indexed by task_id) into its args.
void AddRoofline(TraceData& data, const std::vector<TaskRoof>& roofs);
// Each task's median and quartiles over the run's iterations into its args
// (median_us, q1_us, q3_us, iterations), and the run's timing into otherData.
// The events themselves stay the iteration the schedule holds.
void AddTiming(TraceData& data, const RunTiming& timing);

std::string TraceJson(const TraceData& data);
Status WriteTraceJson(const std::string& path, const TraceData& data);

}  // namespace opscope::graph
