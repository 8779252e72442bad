// File: graph/runtime/iteration_plan.h
// What every iteration of a run looks up, looked up once per run: each
// task's node and op, its values as slots of a vector instead of names in a
// map, its outputs' arena blocks, and the values the run is done with once
// the task is queued.
//
// Why: the host queues an iteration while the device's threads run it, and
// on the cpu device they share the cores. Looking names up in hash maps,
// the registry and the arena plan for every task of every iteration took a
// third of the host's ~10 us a task (perf, encoder), and each microsecond
// of it was taken from the kernels then running: mobilenet_v2's first conv
// ran 600 us in the model against 214 alone.
//
//   const IterationPlan plan = PlanIteration(compiled, schedule, &arenas.plan);
//   const PlannedTask& p = plan.tasks[task_id];  // p.inputs[i]: slot of node input i
#pragma once

#include <string>
#include <vector>

#include "graph/ir/ir.h"
#include "graph/runtime/scheduler.h"
#include "graph/runtime/stream_arenas.h"
#include "opscope/op.h"

namespace opscope::graph {

struct PlannedTask {
  // A kernel task: its node and op, or why it has none (said when it is queued).
  const Node* node = nullptr;
  const OpSchema* schema = nullptr;
  Status missing;
  std::vector<int> inputs;                // slot of each node input; -1 where none is given
  std::vector<int> outputs;               // slot of each node output; -1 where it is left out
  std::vector<const ValuePlace*> places;  // each output's block of its stream's arena; null: memory of its own
  int value = -1;                         // a copy task: the slot of the value it copies
  // Values (never constants) whose last reader this task is, and outputs of
  // it that nothing reads: the run lets go of them once it is queued.
  std::vector<int> release;
};

struct IterationPlan {
  std::vector<std::string> names;        // slot -> value name
  std::vector<const Tensor*> constants;  // slot -> the graph's constant, or null
  std::vector<PlannedTask> tasks;        // as schedule.tasks (task_id == index)
};

// `arenas` null: no value is placed (checked allocation).
IterationPlan PlanIteration(const Graph& compiled, const Schedule& schedule, const StreamArenas* arenas);

}  // namespace opscope::graph
