// File: graph/run/node_path.h
// What flows into and out of one node, on both graph layers, and whether it
// lies on the run's critical path (`inspector-cli path`), as JSON (schema
// "opscope.path/1"). The node is named as in either layer; a framework node
// is followed to the compiled node standing for it, and back. A name neither
// layer has is refused with the closest names of both.
//
// Per layer: the node's inputs and outputs (name, dtype, shape, where each
// comes from or goes to), every ancestor and descendant by name (flat, in
// graph order), and both as trees cut at `depth` levels: a branch cut there
// says how many nodes lie beyond ("beyond"), and a node already shown
// elsewhere in the same tree is not expanded again ("repeat"), so a
// diamond-shaped graph does not blow the tree up.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "graph/ir/ir.h"
#include "graph/runtime/scheduler.h"
#include "opscope/status.h"

namespace opscope::graph {

inline constexpr int kDefaultPathDepth = 3;

// `schedule`'s tasks name nodes of `model.compiled`; `depth` >= 1.
StatusOr<nlohmann::json> NodePathJson(const Model& model, const Schedule& schedule, const std::string& node_name,
                                      int depth = kDefaultPathDepth);

// A task as reports name it: "node (OpType)", or its label when no node ran it.
std::string TaskTitle(const ScheduledTask& t);

}  // namespace opscope::graph
