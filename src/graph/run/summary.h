// File: graph/run/summary.h
// What a run spent its time on: per op type (count, total, mean, share of all
// task time), data movement (H2D/D2H copies) as its own row, the N longest
// tasks, per-stream busy and idle time over the run's span, and the critical
// path. With the run's roofs (AddRoofline): each task's bound, lower bound
// and efficiency, and the op types ranked by the time they lose against their
// lower bound. With the run's race check: "races", one entry per pair of
// unordered accesses across streams. With the run's iterations (AddTiming):
// medians and quartiles: a task's median is the one per-task figure, every
// total (op type, time lost, all tasks) a sum of them, every efficiency its
// bound over that median; streams, span and critical path are the median
// iteration's. summary.json carries "schema": "opscope.summary/1" and
// "figures", which says the same.
//
//   graph::Summary s = graph::Summarize(schedule, /*top_n=*/10);
//   graph::AddRoofline(s, schedule, graph::TaskRooflines(schedule, model.compiled, peaks), peaks);
//   OPSCOPE_RETURN_IF_ERROR(graph::WriteSummaryJson("summary.json", s));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/run/critical_path.h"
#include "graph/run/task_roofline.h"
#include "graph/runtime/iteration_stats.h"
#include "graph/runtime/scheduler.h"
#include "opscope/model.h"
#include "opscope/suspects.h"

namespace opscope::graph {

struct OpTypeRow {
  std::string op_type;  // kDataMovementRow for the copies
  int64_t count = 0;
  double total_us = 0, mean_us = 0, share_pct = 0;  // AddTiming: total is the sum of its tasks' medians
  double q1_us = 0, q3_us = 0;  // AddTiming: the quartiles of the per-iteration total (the noise)
};

struct StreamRow {
  int stream_id = 0;
  std::string name;
  int64_t tasks = 0;
  double busy_us = 0, idle_us = 0;  // idle: the run's span less busy
};

struct TopTask {
  int64_t task_id = -1, node_id = -1;
  std::string name, op_type, kernel;
  int stream_id = 0;
  double start_us = 0, duration_us = 0;  // with AddTiming: start in the median iteration, median duration
  double q1_us = 0, q3_us = 0;           // AddTiming: the duration's quartiles
  Bound bound = Bound::kNone;  // set by AddRoofline
  double lower_bound_us = 0, efficiency = -1;
};

// A timed task held against the roofs (has_cost; bound kNone when a roof it needs is unknown).
struct TaskBoundRow {
  int64_t task_id = -1;
  std::string op_type;
  Bound bound = Bound::kNone;
  double duration_us = 0, lower_bound_us = 0, efficiency = -1;
  std::string above_roof;  // AboveRoofNote: which roof it beat and why; empty under 100%
};

// An op type's tasks that have a bound: what they took, what they could
// have, and the difference (negative when faster than the DRAM roof).
struct OpTypeLoss {
  std::string op_type;
  int64_t count = 0;
  double measured_us = 0, lower_bound_us = 0, lost_us = 0;
  double efficiency = 0;  // lower_bound_us / measured_us
  // Over 100%: AboveRoofNote of the task that beat its bound by the most.
  std::string above_roof;
};

struct RooflineSummary {
  RoofPeaks peaks;
  int64_t tasks_with_bound = 0, tasks_without_bound = 0;  // timed tasks
  std::vector<TaskBoundRow> tasks;  // task order, the timed ones with a cost model
  std::vector<OpTypeLoss> lost;     // by lost_us, most first
};

// A node whose time differs by more than 10x between iterations: no one
// speed to hold against a roof, and a suspect's reason must hold for both
// (the same launch cannot be "too few blocks" at 24 us and at 3 ms).
struct VarianceFinding {
  int64_t node_id = -1;  // the compiled node
  std::string node, op_type;
  double min_us = 0, max_us = 0;  // the node's per-iteration total
  int fastest = 0, slowest = 0;   // 0-based timed iterations
  int iterations = 0;
  std::string text;
};

// A symptom the run shows, with its evidence and where to look (the
// symptom table of a model run: run_summary.h's SummarizeRun finds them).
struct SymptomFinding {
  std::string kind;  // "inserted_tasks", "not_executed", "data_movement", "time_bases", "over_fusion" (run_symptoms.h)
  std::string text;  // the finding, in one line
  std::vector<std::string> evidence;  // one line each, largest first
  std::string look;  // where to look
};

struct Summary {
  std::vector<OpTypeRow> op_types;  // by total time, longest first
  std::vector<TopTask> top_tasks;
  std::vector<StreamRow> streams;
  double span_us = 0;        // first start to last end, calibrated
  double total_task_us = 0;  // sum of every task's calibrated duration (AddTiming: of their medians)
  CriticalPath critical_path;
  std::optional<RooflineSummary> roofline;  // AddRoofline
  // The hot chain's suspects, ranked (run_summary.h's SummarizeRun; opscope/suspects.h).
  std::optional<std::vector<Suspect>> suspects;
  // The race check of the run (run_races.h): "races" and "race_check" in
  // summary.json; absent for a run that was not checked (a capture session).
  std::optional<RaceCheckOutcome> race_check;
  // Over the run's iterations (AddTiming): "timing" in summary.json.
  std::optional<RunTiming> timing;
  // Nodes whose time varies more than 10x across the iterations (run_summary.h), largest spread first.
  std::vector<VarianceFinding> variance;
  // --expected: each output against its file (output_checks.h), "outputs_checked" in summary.json.
  std::vector<OutputCheck> output_checks;
  // The symptom table: what the run shows and why (SummarizeRun), "findings" in summary.json.
  std::vector<SymptomFinding> findings;
  // Device memory of tensors during the run (CapturedRun's), "tensor_memory"
  // in summary.json; -1: not known.
  int64_t peak_tensor_bytes = -1;
  int64_t made_tensor_bytes = -1;
};

// What each figure of a timed run's summary aggregates, in one sentence (the
// text's header line, "figures" in summary.json).
extern const char kTimedFigures[];

Summary Summarize(const Schedule& schedule, int top_n);
// Task times become medians over the run's iterations, with their quartiles:
// op type totals, total task time and the top tasks (ranked again by their
// median). The streams, the span and the critical path stay those of the
// iteration the schedule holds, the median one, so that they add up. Before
// AddRoofline.
void AddTiming(Summary& s, const Schedule& schedule, const RunTiming& timing, int top_n);
// `roofs` indexed by task_id (TaskRooflines).
void AddRoofline(Summary& s, const Schedule& schedule, const std::vector<TaskRoof>& roofs, const RoofPeaks& peaks);
nlohmann::json SummaryJson(const Summary& s);
Status WriteSummaryJson(const std::string& path, const Summary& s);

}  // namespace opscope::graph
