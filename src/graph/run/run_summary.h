// File: graph/run/run_summary.h
// A captured run's summary, assembled in one place for every reader:
// summary.json (export/capture_json.h's WriteRunExports), `inspector-cli
// summary`, and RunModel's report.
//
//   RunSummary r = SummarizeRun(run, kSummaryTopTasks);
//   WriteSummaryJson(path, r.summary);
#pragma once

#include <optional>
#include <vector>

#include "graph/run/captured_run.h"
#include "graph/run/summary.h"
#include "graph/run/task_roofline.h"
#include "opscope/suspects.h"

namespace opscope::graph {

struct RunSummary {
  Summary summary;              // op types, top tasks, their times, race check, roofline, suspects
  RunTiming timing;             // over the run's timed iterations
  std::vector<TaskRoof> roofs;  // by task_id; empty when the run has no roofs
  std::optional<SuspectFacts> facts;  // what the suspects were found from (with the roofs)
};

// The op types and the `top_n` longest tasks (Summarize), their times over
// the iterations (AddTiming), the race check, and, when the run has its
// roofs, every task against them (AddRoofline) and the ranked suspects.
RunSummary SummarizeRun(const CapturedRun& run, int top_n);

}  // namespace opscope::graph
