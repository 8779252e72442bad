// File: graph/runtime/summary.h
// What a run spent its time on: per op type (count, total, mean, share of all
// task time), data movement (H2D/D2H copies) as its own row, the N longest
// tasks, per-stream busy and idle time over the run's span, and the critical
// path. summary.json carries "schema": "opscope.summary/1".
//
//   graph::Summary s = graph::Summarize(schedule, /*top_n=*/10);
//   OPSCOPE_RETURN_IF_ERROR(graph::WriteSummaryJson("summary.json", s));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/runtime/critical_path.h"
#include "graph/runtime/scheduler.h"

namespace opscope::graph {

inline constexpr char kDataMovementRow[] = "data movement";

struct OpTypeRow {
  std::string op_type;  // kDataMovementRow for the copies
  int64_t count = 0;
  double total_us = 0, mean_us = 0, share_pct = 0;
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
  double start_us = 0, duration_us = 0;
};

struct Summary {
  std::vector<OpTypeRow> op_types;  // by total time, longest first
  std::vector<TopTask> top_tasks;
  std::vector<StreamRow> streams;
  double span_us = 0;        // first start to last end, calibrated
  double total_task_us = 0;  // sum of every task's calibrated duration
  CriticalPath critical_path;
};

Summary Summarize(const Schedule& schedule, int top_n);
nlohmann::json SummaryJson(const Summary& s);
Status WriteSummaryJson(const std::string& path, const Summary& s);

}  // namespace opscope::graph
