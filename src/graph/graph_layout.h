// File: graph/graph_layout.h
// Coordinates for drawing a graph as a layered DAG, computed here so the web
// UI only draws: a node's rank is its longest path from the graph inputs, and
// nodes within a rank are ordered by the barycenter of their neighbours in
// the ranks above and below (a few down and up sweeps) to cut crossings.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "graph/ir.h"

namespace opscope::graph {

struct NodePosition {
  int rank = 0;   // layer, from the inputs down
  int order = 0;  // position within the rank
  double x = 0, y = 0;
};

inline constexpr double kLayoutDx = 180, kLayoutDy = 90;

std::unordered_map<int64_t, NodePosition> LayoutGraph(const Graph& g);

// How many edges between adjacent ranks cross, for the given layout.
int64_t CountCrossings(const Graph& g, const std::unordered_map<int64_t, NodePosition>& pos);

}  // namespace opscope::graph
