// File: graph/harness/fused_stages.h
// A fused kernel's tracepoints: the values of the framework graph that exist
// inside it, each with a node of the same op that stops there, so `accuracy`
// can judge a fused node at its inner stages as well as at its output.
//   FusedElementwise  after each step of its program but the last (the
//                     program cut to its first k steps), when each step is
//                     one framework node;
//   FusedConv, FusedGemm, FusedMatMul with an activation: before it (the
//                     node without its activation), at the output of the
//                     base op and the bias or batch norm folded into it.
//
//   for (const FusedStage& s : FusedStages(node, model.framework)) ... run s.node, compare s.value ...
#pragma once

#include <string>
#include <vector>

#include "graph/ir/ir.h"

namespace opscope::graph {

struct FusedStage {
  std::string value;           // the framework value it computes
  std::string framework_node;  // the framework node that produces it
  Node node;                   // the fused node cut to stop there; outputs = {value}
};

// In data-flow order; empty for a node that is not fused or exposes none.
std::vector<FusedStage> FusedStages(const Node& fused, const Graph& framework);

}  // namespace opscope::graph
