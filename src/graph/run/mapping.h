// File: graph/run/mapping.h
// Ties the three layers together once a schedule exists: framework node <->
// compiled node <-> task. Fills mapped_task_ids on both graph layers (a
// framework node gets the tasks of the compiled node that stands for it),
// labels every task that has no node, and gives every node without a task
// executed=false and the reason. Nothing is dropped.
//
//   OPSCOPE_RETURN_IF_ERROR(graph::MapTasks(model, schedule));
#pragma once

#include "graph/ir/ir.h"
#include "graph/runtime/scheduler.h"

namespace opscope::graph {

Status MapTasks(Model& model, Schedule& schedule);

}  // namespace opscope::graph
