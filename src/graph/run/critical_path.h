// File: graph/run/critical_path.h
// Two graph questions, both answered in time linear in nodes + edges:
//  - the critical path of a run: the chain of tasks, linked by data
//    dependencies and by stream order, whose calibrated durations add up to
//    the most (a longest path in the task DAG, by dynamic programming over
//    the enqueue order, which is topological);
//  - for one node, every node on some path input -> node -> output: its
//    ancestors and descendants (one traversal each way, no path enumeration).
//
//   graph::CriticalPath cp = graph::ComputeCriticalPath(schedule);
//   graph::NodeCone cone = graph::ConeOf(model.compiled, node_id);
#pragma once

#include <cstdint>
#include <vector>

#include "graph/ir/ir.h"
#include "graph/runtime/scheduler.h"

namespace opscope::graph {

struct CriticalPath {
  std::vector<int64_t> task_ids;  // first to last
  double total_us = 0;            // sum of their calibrated durations
};

CriticalPath ComputeCriticalPath(const Schedule& schedule);

struct NodeCone {
  std::vector<int64_t> ancestors;    // node ids, in graph order
  std::vector<int64_t> descendants;  // node ids, in graph order
};

// NotFound when the graph has no node `node_id`.
StatusOr<NodeCone> ConeOf(const Graph& g, int64_t node_id);

}  // namespace opscope::graph
