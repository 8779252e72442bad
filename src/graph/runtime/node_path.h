// File: graph/runtime/node_path.h
// What flows into and out of one node, on both graph layers, and whether it
// lies on the run's critical path (`inspector-cli path`), as JSON (schema
// "opscope.path/1"). The node is named as in either layer; a framework node
// is followed to the compiled node standing for it, and back.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "graph/ir.h"
#include "graph/runtime/scheduler.h"
#include "opscope/status.h"

namespace opscope::graph {

// `schedule`'s tasks name nodes of `model.compiled`.
StatusOr<nlohmann::json> NodePathJson(const Model& model, const Schedule& schedule, const std::string& node_name);

// A task as reports name it: "node (OpType)", or its label when no node ran it.
std::string TaskTitle(const ScheduledTask& t);

}  // namespace opscope::graph
