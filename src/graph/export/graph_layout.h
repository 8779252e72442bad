// File: graph/export/graph_layout.h
// A graph layer as the UI draws it, laid out by layout/layered.h: nodes in
// the scopes their names give ("/encoder/layer.0/attn/MatMul" sits in
// /encoder/layer.0/attn), Constant nodes and nodes that read constants only
// (an Identity of a tied weight, a shape's Unsqueeze and Concat) attached to
// their consumers instead of drawn (as Netron lists weights with the node
// that reads them), large graphs opening with scopes
// folded so the first view is readable.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_writer.h"
#include "graph/ir/ir.h"
#include "layout/layered.h"

namespace opscope::graph {

inline constexpr double kNodeWidth = 156, kNodeHeight = 44;
// Past this many boxes the opening view folds scopes, outermost first
// expanded while the boxes on screen stay at most this many.
inline constexpr int kOpenBoxes = 250;

struct GraphLayout {
  layout::Request request;
  layout::Layout layout;
  std::vector<int64_t> item_node;                   // item index -> node id
  std::unordered_map<int64_t, int> node_item;       // drawn node id -> item index
  std::unordered_map<int64_t, std::vector<int64_t>> attached;  // undrawn node id -> the drawn nodes it feeds
  std::vector<std::string> scope_path;              // "/encoder/layer.0"; "" for the root
  std::vector<std::string> scope_label;             // what the frame says: the parts it adds to its parent's
  std::vector<int64_t> scope_nodes;                 // drawn nodes inside, at any depth
};

GraphLayout LayoutGraph(const Graph& g);

// The layer's "layout" member of graph.json: scopes (with their frames and
// the topology a fold needs to re-place them), routes of the opening view,
// written as it goes. Scopes are columns, entry s for scope s: box ([x, y,
// w, h] or null when the opening view hides it), crossings, folded (0/1),
// label, nodes, parent, path, ranks, slots (four numbers per slot: kind 0 a
// node / 1 a scope / 2 a dummy, the node's id or the scope's or the edge's
// index, rank, order), edges (four per edge: from and to slots, reversed
// 0/1, weight) and dummies (per edge, its dummy slots). Routes: from and to
// (a node's id, or -1 - s for scope s), points, weight.
void WriteLayoutJson(JsonWriter& w, const GraphLayout& gl);

}  // namespace opscope::graph
