// File: graph/harness/run_report.h
// A run as the report RunModel returns (opscope/model.h's ModelRunReport):
// counts, medians, op types, roofline losses and suspects, from the same
// summary the run's summary.json holds. Used for opscope's own runs and for
// runs of other engines read from their files (ImportOnnxruntimeRun).
#pragma once

#include <string>

#include "graph/run/captured_run.h"
#include "opscope/model.h"

namespace opscope::graph {

// `repro`: the command line that makes the run again.
ModelRunReport ReportOfRun(const CapturedRun& run, std::string repro);

}  // namespace opscope::graph
