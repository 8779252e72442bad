// File: graph/runtime/iteration_stats.h
// Every timed iteration of a run, and the figures reported from them. One
// iteration on a shared machine can take twice as long as the next (a
// thread woken late, a cold cache), so a run keeps them all: a task's time
// is its median over the iterations, with the quartiles beside it as the
// run's own noise, and the schedule (and trace.json) holds one real
// iteration, the one whose span is the median, because per-task medians
// taken from different iterations do not make a timeline that nests.
//
//   std::vector<IterationTimes> its = ...;           // the executor's, one per timed iteration
//   const int m = MedianIteration(its);
//   RestoreIteration(schedule, its[m]);               // the timeline the trace shows
//   RunTiming t = TimeRun(schedule, its, /*warmup=*/1, m);
//   t.span.median_us, t.span.iqr_us()
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/runtime/scheduler.h"

namespace opscope::graph {

// The row the copies (host to device, device to host) are counted under,
// beside the op types, in timings and summaries.
inline constexpr char kDataMovementRow[] = "data movement";

// One task in one iteration, as ScheduledTask holds it (-1: not timed).
struct TaskTimes {
  int64_t raw_start_ns = -1, raw_end_ns = -1;
  int64_t cal_start_ns = -1, cal_end_ns = -1;
};
using IterationTimes = std::vector<TaskTimes>;  // indexed by task_id

// A sample's median and quartiles (linear interpolation between order
// statistics); with one sample all three are that sample.
struct Spread {
  double median_us = 0, q1_us = 0, q3_us = 0;
  int samples = 0;  // 0: nothing was timed
  double iqr_us() const { return q3_us - q1_us; }
};

Spread SpreadOf(std::vector<double> values_us);
// {"median_us", "q1_us", "q3_us", "iqr_us", "samples"}
nlohmann::json SpreadJson(const Spread& s);

struct RunTiming {
  int warmup = 0;            // untimed iterations run first (caches, thread pools, allocator)
  int iterations = 0;        // timed iterations kept
  int median_iteration = 0;  // the one the schedule holds: 0-based among the timed ones
  Spread span, total_task;   // per iteration: first start to last end; sum of task durations
  std::vector<Spread> tasks;                // by task_id
  std::map<std::string, Spread> op_types;   // per iteration total of the op type (copies: kDataMovementRow)
  std::map<int64_t, Spread> nodes;          // compiled node id -> per iteration total of its tasks
};

// What `schedule`'s tasks hold now, as one iteration.
IterationTimes SnapshotIteration(const Schedule& schedule);
// Puts an iteration's times on the schedule's tasks and derives their
// relative starts and durations (as ApplyCalibration does).
void RestoreIteration(Schedule& schedule, const IterationTimes& times);
// The iteration whose span is the median (the lower middle one of an even
// count, so that it is always an iteration that ran).
int MedianIteration(const std::vector<IterationTimes>& iterations);

// `iterations` empty: the schedule's own times, as the one iteration.
RunTiming TimeRun(const Schedule& schedule, const std::vector<IterationTimes>& iterations, int warmup,
                  int median_iteration);

// Each task's median over the iterations, by task_id (-1: never timed): the
// one per-task figure every table of a run's summary is built from, so that
// an op type's total is the sum of its tasks' rows and a task's efficiency
// fits the time printed beside it.
std::vector<double> TaskMediansUs(const RunTiming& t);

// {"warmup", "iterations", "median_iteration", "statistic", "span", "total_task"}:
// what graph.json, summary.json and trace.json carry as "timing".
nlohmann::json RunTimingJson(const RunTiming& t);

}  // namespace opscope::graph
