// File: graph/runtime/scheduler.h
// Turns a compiled graph into tasks on streams (DESIGN.md §3, TaskDesc):
// one H2D copy per graph input, one kernel task per compiled node (transdata
// nodes are tasks of kind "transdata"), one D2H copy per graph output. Copies
// run on their own copy stream, after the compute streams.
//
//   OPSCOPE_ASSIGN_OR_RETURN(graph::Schedule s, graph::ScheduleGraph(model.compiled, {.compute_streams = 2}));
//
// Stream rule (deterministic): a node continues the stream of the latest
// (last scheduled) producer of its inputs that no other node continues yet:
// a chain stays on one stream, a branch point's first consumer keeps the
// stream and its other consumers start branches, and a join runs after its
// last branch without a wait. Otherwise it starts a branch: one worth a
// stream (a dense op, or writing at least 1 MiB) takes the compute stream
// with the fewest tasks so far, the lowest id on a tie, and a lighter one
// stays on its latest producer's stream (a cross-stream event and a stream
// thread's wake-up cost more than it does). A node fed only by copies and
// constants takes the least-loaded stream too. A second stream thus appears
// only where the graph really branches: mobilenet_v2's residual blocks, whose
// skip branch has no node, now stay on one stream instead of changing
// streams, with an event wait, at every block. Each dependency crossing
// streams becomes an event: recorded after the producer (event_after), waited
// on before the consumer (wait_events; TaskDesc::event_before is the first).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir/ir.h"

namespace opscope::graph {

struct ScheduledTask {
  TaskDesc desc;
  std::vector<int64_t> deps;          // task ids this task reads from (data dependencies)
  std::vector<int64_t> wait_events;   // events waited on before it runs (cross-stream deps)
  std::string value;                  // memcpy tasks: the graph input/output moved
  std::string op_type;                // compiled node's op type; "memcpy" for copies
  std::string node_name;
  // Filled by the executor.
  uint64_t op_id = 0;
  int64_t raw_start_ns = -1, raw_end_ns = -1;  // on the stream's device clock
  int64_t cal_start_ns = -1, cal_end_ns = -1;  // on the common clock (calibrate.h)
  double start_us_raw = 0;                     // raw start relative to the run's first raw start
  LaunchConfig launch;                         // the kernel's first launch, when known
  bool launch_known = false;
};

struct ScheduleOptions {
  int compute_streams = 1;
  // A schedule rebuilt to line up a captured run's tasks (LoadCapture), never
  // executed: a node that cannot run here (its plugin is not loaded) is a task
  // all the same, where a schedule to execute refuses it.
  bool replay = false;
};

struct Schedule {
  std::vector<ScheduledTask> tasks;  // task_id == index; a valid enqueue order
  int compute_streams = 1;
  int copy_stream = 1;               // stream id of the copy stream (== compute_streams)
  int64_t num_events = 0;            // event ids are 0..num_events-1
  // Set only on a schedule put together from records (a capture session):
  // one name per stream, used instead of "compute N"/"copy" (StreamName).
  std::vector<std::string> stream_names;
  int num_streams() const { return compute_streams + 1; }
};

StatusOr<Schedule> ScheduleGraph(const Graph& compiled, const ScheduleOptions& options);

// A compiled node that becomes no task: a Constant whose output is a folded value.
bool IsFoldedConstantNode(const Graph& g, const Node& n);

// The stream's name as traces and summaries show it: its own name when the
// schedule has one, else "compute 0", "compute 1", ..., "copy".
std::string StreamName(const Schedule& s, int stream_id);

}  // namespace opscope::graph
