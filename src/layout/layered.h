// File: layout/layered.h
// A layered (Sugiyama-style) drawing of a DAG whose items sit in nested
// scopes, computed here so a UI only draws. Each scope is laid out on its own
// as a small layered graph of its direct children (items and child scopes, a
// child scope being one box of its own size), so a scope's items stay
// together in one rectangle and a folded scope is one box whose edges merge.
//
// Per scope: cycles of the scope-level graph are broken by the items'
// topological order; ranks are longest paths; an edge spanning several ranks
// gets a dummy per rank it passes (its bends, kept clear of boxes); the order
// within each rank comes from barycenter sweeps, keeping the order with the
// fewest crossings (counted exactly, per adjacent rank pair); x comes from
// isotonic least squares (each rank as close to its neighbours' mean as the
// order and the gaps allow). The topology (ranks and orders) does not depend
// on which scopes are folded; only sizes and coordinates do, so a UI can fold
// and unfold by re-placing (Place) without ranking again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace opscope::layout {

struct Scope {
  int parent = -1;  // -1 only for scope 0, the root
  bool folded = false;
};

struct Item {
  int scope = 0;  // the innermost scope holding it
  double width = 0, height = 0;
};

// Items must be given in a topological order of the edges (as ONNX nodes
// are): that order breaks the cycles folding can make between scopes.
struct Edge {
  int from = 0, to = 0;  // item indices, producer to consumer
};

struct Spacing {
  double node_gap = 28;     // between boxes of a rank
  double rank_gap = 48;     // between ranks
  double pad = 16;          // inside a scope's frame
  double header = 26;       // a scope's title bar
  double dummy_gap = 10;    // between an edge's bend and its neighbours
  double folded_width = 180, folded_height = 52;
};

struct Request {
  std::vector<Scope> scopes;  // [0] is the root, never folded
  std::vector<Item> items;
  std::vector<Edge> edges;
  Spacing spacing;
};

// A child of a scope in that scope's own layered layout: an item, a child
// scope, or a dummy (a bend of a long local edge).
struct Slot {
  enum Kind : uint8_t { kItem, kScope, kDummy } kind = kItem;
  int index = 0;  // item, scope or local-edge index
  int rank = 0, order = 0;
};

struct LocalEdge {
  int from = 0, to = 0;        // slot indices in the scope's slots (children only)
  bool reversed = false;       // drawn against the topological order
  std::vector<int> dummies;    // slot indices, from `from`'s rank towards `to`'s
  int64_t weight = 0;          // how many item edges it stands for
};

// One scope's topology: its slots by rank and order, and its edges.
struct ScopeTopology {
  std::vector<Slot> slots;
  std::vector<std::vector<int>> ranks;  // slot indices in order
  std::vector<LocalEdge> edges;
  int64_t crossings = 0;                // of the chosen order
};

struct Box {
  double x = 0, y = 0;  // centre, absolute
  double width = 0, height = 0;
  bool visible = false;  // false inside a folded scope
};

// A drawn edge: between the visible boxes that hold its items (an item, or
// the outermost folded scope around it), merged across item edges.
struct Route {
  bool from_scope = false, to_scope = false;
  int from = 0, to = 0;  // item or scope index
  int64_t weight = 0;    // item edges merged into it
  // x0, y0, x1, y1, ...: a port on the producer's bottom to one on the
  // consumer's top (several routes on one side are spread along it, in the
  // order of where they head).
  std::vector<double> points;
};

struct Layout {
  std::vector<ScopeTopology> topology;  // per scope
  std::vector<int> item_slot, scope_slot;  // where each sits in its scope's slots
  std::vector<Box> items, scopes;
  std::vector<Route> routes;
  double width = 0, height = 0;
  int64_t crossings = 0;  // sum over scopes
};

// Ranks, orders and coordinates for the request's fold state.
Layout LayOut(const Request& request);

// Coordinates and routes again for another fold state (request.scopes'
// folded flags), reusing `layout.topology`.
void Place(const Request& request, Layout& layout);

// Crossings between two adjacent ranks, given the segments between them as
// (order in the upper rank, order in the lower rank) pairs. O(E log V).
int64_t CountCrossings(const std::vector<std::pair<int, int>>& segments, int lower_size);

}  // namespace opscope::layout
