// File: graph/run/run_symptoms.h
// The symptom table of a model run: what a run shows that has a known cause,
// each finding with its evidence and where to look (summary.json's
// "findings", `inspector-cli summary`, the report page). Each is claimed
// only when the run shows it; a clean run has none.
//   inserted_tasks  many more tasks than graph nodes: the kernels and copies
//                   the compiler inserted, counted by kind, largest first;
//   not_executed    framework nodes that did not run as themselves: fused
//                   (into which node), on a branch not taken (which), folded;
//   data_movement   copies that dominate: time on the copy stream that no
//                   compute overlaps, per stream (with 1 MiB or more copied),
//                   or eight or more small copies one way, most of whose
//                   time is a copy's fixed cost, not their bytes;
//   time_bases      a task that starts before the task on another stream it
//                   waits for has ended, on the calibrated clock: the
//                   streams' time bases disagree; per stream the correction
//                   the calibration applied, and the overlap before and after;
//   over_fusion     a fused node that writes a tensor from inside its group
//                   back to memory for later nodes: which, its bytes, who reads it.
//
//   run.summary.findings = FindSymptoms(run);
#pragma once

#include <vector>

#include "graph/run/captured_run.h"
#include "graph/run/summary.h"

namespace opscope::graph {

// On the schedule's iteration (the median one): every finding the run shows.
std::vector<SymptomFinding> FindSymptoms(const CapturedRun& run);

}  // namespace opscope::graph
