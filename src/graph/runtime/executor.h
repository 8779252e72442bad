// File: graph/runtime/executor.h
// Runs a Schedule on a device: every kernel task goes through the Dispatcher
// on its own stream without blocking (so streams overlap), cross-stream
// dependencies are real Stream::Record/Wait pairs, graph inputs and outputs
// are real copies (Stream::Memcpy) bracketed by events. Outputs live in
// per-stream arenas planned once from the schedule (stream_arenas.h), and
// the run lets go of each value once its last reader is queued. Every
// iteration queues the same tasks, so what queuing one looks up is looked
// up once a run (iteration_plan.h) and each task's dispatcher call is
// settled once (Dispatcher::Settle): the host shares the cpu device's cores
// with the kernels it queues. After the run it synchronizes, reads every
// task's start/end from its events and puts them on one clock (calibrate.h).
//
//   graph::ExecuteOptions opts{.device = cpu, .iterations = 3, .seed = 7};
//   OPSCOPE_ASSIGN_OR_RETURN(graph::ExecutionResult r, graph::Execute(model, schedule, opts));
//   // schedule.tasks[i] now has op_id, raw and calibrated times of the median
//   // iteration (by span); r.iterations holds every timed one (iteration_stats.h).
//   // With .race_ring = "OUT/.flight.ring": r.race_check.races, the streams' unordered accesses.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/ir/ir.h"
#include "graph/runtime/iteration_stats.h"
#include "graph/runtime/scheduler.h"
#include "graph/runtime/stream_clock.h"
#include "opscope/model.h"

namespace opscope::graph {

struct ExecuteOptions {
  Device* device = nullptr;              // required
  int warmup = 0;                        // untimed iterations run first, their times dropped
  int iterations = 1;                    // each is timed and kept; the schedule holds the median one
  std::map<std::string, Tensor> inputs;  // by graph input name; missing ones are filled
  uint64_t seed = 0;                     // seeded uniform [-1, 1) fill for missing inputs
  std::string save_outputs_dir;          // when set, each output is written as <name>.npy
  // When set, the last iteration runs under the race check (run_races.h):
  // a flight recorder's scratch ring at this path, removed afterwards.
  std::string race_ring;
};

struct ExecutionResult {
  std::map<std::string, Tensor> outputs;  // host tensors, from the last iteration
  std::map<std::string, Tensor> inputs;   // what was fed (given or generated)
  std::vector<double> iteration_wall_us;  // host wall time of every iteration
  std::vector<StreamClock> clocks;        // of the median iteration, the one the schedule holds
  std::vector<IterationTimes> iterations; // every timed iteration's task times, in order
  int median_iteration = 0;               // the one restored into the schedule
  std::vector<int> device_stream_ids;     // schedule stream id -> the device's stream id
  std::vector<std::string> saved_files;
  RaceCheckOutcome race_check;            // ran == false unless options.race_ring was set
  // Device memory of tensors: the most held at once during a timed
  // iteration, above what was held as it began (Device::peak_tensor_bytes:
  // other work on the device at the same time counts too), and what the
  // iteration made in all (every value kept to its end would hold that).
  int64_t peak_tensor_bytes = 0;
  int64_t produced_tensor_bytes = 0;
};

// Runs the schedule; nothing else is written but --save-outputs. A capture
// session's graph file is written by the caller that runs a model
// (RunModel, graph/export/session_graph.h), not here: the runtime stays
// below the files a run is exported to.
StatusOr<ExecutionResult> Execute(const Model& model, Schedule& schedule, const ExecuteOptions& options);
StatusOr<ExecutionResult> Execute(const Graph& compiled, Schedule& schedule, const ExecuteOptions& options);

// "x.npy" for a value name; characters unsafe in a file name become '_'.
std::string OutputFileName(const std::string& value_name);

}  // namespace opscope::graph
