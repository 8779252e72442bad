// File: graph/export/session_export.h
// Turns what a capture session collected (capture/session.h) into the same
// three files `inspector-cli run` writes, with the same writers:
//  - trace.json and summary.json from every task and launch: the tasks of
//    each executed graph (graph-<pid>-<n>.json) on their own streams, plus
//    every dispatched launch (runtime-<pid>.json) that no task stands for,
//    on a stream per (process, device stream). A launch whose op_id a task
//    carries is that task, and is not counted twice. Tasks keep their
//    calibrated times; launches outside a graph keep their device event times
//    (on the cpu device the same steady clock), or their host enqueue/return
//    times when the device times were never reached.
//  - graph.json from the last graph collected (the one a program ran last);
//    when no graph was collected it is not written, and an old one is removed.
//
// `inspector-cli summary` and `path` read the records the same way, and write
// nothing: MergeSession gives the merged schedule, LastSessionGraph the graph
// that graph.json shows, with its own run's tasks.
//
// A folder is a session folder when it holds session.json; a `run` folder
// holds capture.json instead.
//
//   if (graph::IsSessionDir(dir)) OPSCOPE_ASSIGN_OR_RETURN(auto e, graph::ExportSession(dir, 10));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir/ir.h"
#include "graph/runtime/scheduler.h"

namespace opscope::graph {

bool IsSessionDir(const std::string& dir);

struct SessionExport {
  std::vector<std::string> files;  // written, in order
  int graphs = 0;                  // graph-*.json read
  int processes = 0;               // runtime-*.json read
  int64_t graph_tasks = 0;         // tasks of the executed graphs
  int64_t launches = 0;            // launches recorded by the runtime collector
  int64_t launches_merged = 0;     // of those, the ones a graph task stood for
  uint64_t dropped = 0;            // launches past the collector's capacity
  Schedule schedule;               // everything, as one schedule
};

// Errors name the file (a malformed record) or say that nothing was recorded.
StatusOr<SessionExport> ExportSession(const std::string& dir, int top_n);

// The same merge, nothing written (`files` stays empty).
StatusOr<SessionExport> MergeSession(const std::string& dir);

// The last graph collected (the one graph.json shows), read back from its
// record: both layers' structure (names, op types, edges, fused_from,
// executed; no tensor data, attributes or shapes) and the schedule of that
// graph's own run, its tasks still naming their compiled nodes. The framework
// layer is empty when the program ran a compiled graph alone.
struct SessionGraph {
  std::string source;  // the record's file name: graph-<pid>-<n>.json
  int graphs_collected = 0;
  bool framework_known = false;
  Model model;
  Schedule schedule;
};

// Errors: no graph collected (naming --enable-graph), or a malformed record.
StatusOr<SessionGraph> LastSessionGraph(const std::string& dir);

}  // namespace opscope::graph
