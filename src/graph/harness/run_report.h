// File: graph/harness/run_report.h
// A run as the report RunModel returns (opscope/model.h's ModelRunReport):
// counts, medians, op types, roofline losses and suspects, from the same
// summary the run's summary.json holds. Used for opscope's own runs and for
// runs of other engines read from their files (ImportOnnxruntimeRun).
#pragma once

#include <string>

#include "graph/run/captured_run.h"
#include "graph/run/run_summary.h"
#include "opscope/model.h"

namespace opscope::graph {

// `repro`: the command line that makes the run again. `summarized`:
// SummarizeRun(run, kSummaryTopTasks), when the caller has it.
ModelRunReport ReportOfRun(const CapturedRun& run, const RunSummary& summarized, std::string repro);
ModelRunReport ReportOfRun(const CapturedRun& run, std::string repro);

}  // namespace opscope::graph
