// File: graph/run/task_suspects.h
// A run's facts for the hot chain (opscope/suspects.h): one node per kernel
// task of a compiled node (its op, tensors, attrs, first launch, calibrated
// time against the roofs, whether the task is on the critical path) and one
// edge per (producer node, consumer node, value) of the compiled graph.
//
//   SuspectFacts f = graph::RunSuspectFacts(run.schedule, run.model.compiled, roofs, summary.critical_path,
//                                           compute_units, peaks.bandwidth_gbs);
//   std::vector<Suspect> ranked = FindSuspects(f);
#pragma once

#include <vector>

#include "graph/ir/ir.h"
#include "graph/run/critical_path.h"
#include "graph/run/task_roofline.h"
#include "graph/runtime/scheduler.h"
#include "opscope/suspects.h"

namespace opscope::graph {

// `roofs` indexed by task_id (TaskRooflines).
SuspectFacts RunSuspectFacts(const Schedule& schedule, const Graph& compiled, const std::vector<TaskRoof>& roofs,
                             const CriticalPath& critical_path, int compute_units, double bandwidth_gbs);

// The compute units of the device a run was made on ("cpu"); 1 when it is not here.
int ComputeUnitsOf(const std::string& device);

}  // namespace opscope::graph
