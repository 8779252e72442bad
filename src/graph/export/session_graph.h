// File: graph/export/session_graph.h
// The graph collector of a capture session (capture/session.h). RunModel
// calls RecordSessionExecution after every successful Execute; under a
// session with the graph collector on it writes DIR/graph-<pid>-<n>.json
// (schema "opscope.session-graph/1"): the graph as graph.json has it (both
// layers when given the Model, the compiled layer alone otherwise),
// mapped to the tasks, and the executed schedule (every task with stream,
// kernel, launch config, op_id, dependencies and raw/calibrated times).
//
// n counts the distinct graphs this process executed; executing the same
// graph object again rewrites its file with the latest run's times. Outside
// a session, or with the collector off, it returns at once. A failed write is
// reported once on stderr and never changes what Execute returns.
#pragma once

#include <nlohmann/json.hpp>

#include "graph/ir/ir.h"
#include "graph/runtime/executor.h"
#include "graph/runtime/scheduler.h"

namespace opscope::graph {

void RecordSessionExecution(const Model* model, const Graph& compiled, const Schedule& schedule,
                            const ExecutionResult& result, const Device& device);

// One executed task as the session files keep it, and back (throws a
// std::exception on a missing or malformed field).
nlohmann::json SessionTaskJson(const ScheduledTask& t);
ScheduledTask SessionTaskFromJson(const nlohmann::json& j);

}  // namespace opscope::graph
