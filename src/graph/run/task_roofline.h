// File: graph/run/task_roofline.h
// Each task of a run held against the device's roofs (opscope/roofline.h):
// a kernel task's compiled node gives the op schema, the tensor descs of its
// inputs and outputs and its attrs, CostOf asks the op's cost model, and
// Roofline compares it with the calibrated duration. A task without a node
// (copies), an op without a cost model, or a node whose shapes are not all
// known gets has_cost = false: timed, said to have no bound, nothing guessed.
//
//   std::vector<graph::TaskRoof> roofs = graph::TaskRooflines(run.schedule, run.model.compiled, run.peaks);
//   if (roofs[id].point.bound != Bound::kNone) std::printf("%.0f%%\n", 100 * roofs[id].point.efficiency());
#pragma once

#include <string>
#include <vector>

#include "graph/ir/ir.h"
#include "graph/runtime/scheduler.h"
#include "opscope/roofline.h"

namespace opscope::graph {

struct TaskRoof {
  DType dtype = DType::kF32;  // of the node's first output: the roof it is held to
  RooflinePoint point;
};

// One per task, indexed by task_id. `measured_us` (by task_id, -1: not
// timed; TaskMediansUs) is the time each task is held to; empty: the
// schedule's own, one iteration's.
std::vector<TaskRoof> TaskRooflines(const Schedule& schedule, const Graph& compiled, const RoofPeaks& peaks,
                                    const std::vector<double>& measured_us = {});

// The chart of a run: one point per task while they are few enough to read,
// else one per op type and dtype (their bytes, FLOPs and times summed).
inline constexpr size_t kRooflinePointsPerTaskUpTo = 40;
std::string RunRooflineSvg(const Schedule& schedule, const std::vector<TaskRoof>& roofs, const RoofPeaks& peaks);

}  // namespace opscope::graph
