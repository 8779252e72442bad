#include "layout/layered.h"

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace opscope::layout {
namespace {

Request Flat(int n, std::vector<Edge> edges) {
  Request r;
  r.scopes = {Scope{}};
  for (int i = 0; i < n; ++i) r.items.push_back({0, 150, 40});
  r.edges = std::move(edges);
  return r;
}

bool Overlap(const Box& a, const Box& b) {
  return std::abs(a.x - b.x) < (a.width + b.width) / 2 - 1e-6 && std::abs(a.y - b.y) < (a.height + b.height) / 2 - 1e-6;
}

bool Inside(const Box& in, const Box& out) {
  return in.x - in.width / 2 >= out.x - out.width / 2 - 1e-6 && in.x + in.width / 2 <= out.x + out.width / 2 + 1e-6 &&
         in.y - in.height / 2 >= out.y - out.height / 2 - 1e-6 && in.y + in.height / 2 <= out.y + out.height / 2 + 1e-6;
}

// Random segments against the quadratic definition of a crossing.
TEST(Layered, CountCrossingsMatchesThePairwiseCount) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const int upper = 1 + rng() % 12, lower = 1 + rng() % 12;
    std::vector<std::pair<int, int>> segs;
    for (int k = rng() % 40; k > 0; --k) segs.push_back({static_cast<int>(rng() % upper), static_cast<int>(rng() % lower)});
    int64_t pairwise = 0;
    for (size_t i = 0; i < segs.size(); ++i) {
      for (size_t j = i + 1; j < segs.size(); ++j) {
        const auto [a1, b1] = segs[i];
        const auto [a2, b2] = segs[j];
        if ((a1 < a2 && b1 > b2) || (a1 > a2 && b1 < b2)) ++pairwise;
      }
    }
    EXPECT_EQ(CountCrossings(segs, lower), pairwise) << "trial " << trial;
  }
}

// A -> D and B -> C cross in the input's order; the sweeps uncross them,
// so the order of the two sources is the order of their consumers.
TEST(Layered, BarycenterSweepsRemoveACrossingTheInputOrderHas) {
  const Layout l = LayOut(Flat(4, {{0, 3}, {1, 2}}));
  EXPECT_EQ(l.crossings, 0);
  EXPECT_EQ(l.items[0].x < l.items[1].x, l.items[3].x < l.items[2].x);
}

// Ranks follow the edges, boxes never overlap, and a long edge bends
// around the boxes between (its route has a point per rank it passes).
TEST(Layered, RandomDagHasNoOverlapAndEdgesPointDown) {
  std::mt19937 rng(11);
  const int n = 400;
  std::vector<Edge> edges;
  for (int v = 1; v < n; ++v) {
    for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) edges.push_back({static_cast<int>(rng() % v), v});
  }
  const Request r = Flat(n, edges);
  const Layout l = LayOut(r);
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(l.items[i].visible);
    for (int j = i + 1; j < n; ++j) ASSERT_FALSE(Overlap(l.items[i], l.items[j])) << i << " and " << j;
  }
  const ScopeTopology& t = l.topology[0];
  for (const Edge& e : edges) {
    EXPECT_LT(t.slots[l.item_slot[e.from]].rank, t.slots[l.item_slot[e.to]].rank);
    EXPECT_LT(l.items[e.from].y, l.items[e.to].y);
  }
  for (const Route& route : l.routes) {
    const int span = t.slots[l.item_slot[route.to]].rank - t.slots[l.item_slot[route.from]].rank;
    EXPECT_EQ(route.points.size(), static_cast<size_t>(4 + 4 * (span - 1)));
  }
}

// One producer feeding three consumers side by side, and those feeding one
// sink: the three routes leave the producer from three ports spread along
// its bottom in their consumers' order, enter the sink in that order too,
// and a box's lone route keeps the centre of its side.
TEST(Layered, RoutesOnOneSideLeaveFromPortsInTheOrderOfWhereTheyGo) {
  const Layout l = LayOut(Flat(5, {{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}}));
  std::vector<std::pair<double, double>> out, in;  // (consumer x, port x), (producer x, port x)
  for (const Route& r : l.routes) {
    const Box& a = l.items[r.from];
    const Box& b = l.items[r.to];
    const double start = r.points[0], end = r.points[r.points.size() - 2];
    EXPECT_GT(start, a.x - a.width / 2);
    EXPECT_LT(start, a.x + a.width / 2);
    EXPECT_DOUBLE_EQ(r.points[1], a.y + a.height / 2);
    if (r.from == 0) out.push_back({b.x, start});
    if (r.to == 4) in.push_back({a.x, end});
    // Each middle consumer has one route in and one out: at its centre.
    if (r.to >= 1 && r.to <= 3) {
      EXPECT_DOUBLE_EQ(end, b.x);
    }
    if (r.from >= 1 && r.from <= 3) {
      EXPECT_DOUBLE_EQ(start, a.x);
    }
  }
  for (auto* ports : {&out, &in}) {
    ASSERT_EQ(ports->size(), 3u);
    std::sort(ports->begin(), ports->end());
    EXPECT_LT((*ports)[0].second, (*ports)[1].second);
    EXPECT_LT((*ports)[1].second, (*ports)[2].second);
    EXPECT_NEAR((*ports)[2].second - (*ports)[1].second, (*ports)[1].second - (*ports)[0].second, 1e-9) << "evenly spread";
  }
}

// Two scopes of three chained items each, fed by one item and feeding another:
// each scope is one rectangle holding its items, the two do not overlap, and
// the items outside are outside both.
Request TwoScopes() {
  Request r;
  r.scopes = {Scope{}, Scope{0}, Scope{0}};
  const int scope_of[] = {0, 1, 2, 1, 2, 1, 2, 0};  // interleaved, as a topological order may be
  for (int s : scope_of) r.items.push_back({s, 150, 40});
  r.edges = {{0, 1}, {0, 2}, {1, 3}, {3, 5}, {2, 4}, {4, 6}, {5, 7}, {6, 7}};
  return r;
}

TEST(Layered, ScopesAreRectanglesHoldingTheirItemsAndNothingElse) {
  const Request r = TwoScopes();
  const Layout l = LayOut(r);
  EXPECT_FALSE(Overlap(l.scopes[1], l.scopes[2]));
  for (int i = 0; i < static_cast<int>(r.items.size()); ++i) {
    const int s = r.items[i].scope;
    for (int other : {1, 2}) {
      if (other == s) EXPECT_TRUE(Inside(l.items[i], l.scopes[other])) << "item " << i;
      else EXPECT_FALSE(Overlap(l.items[i], l.scopes[other])) << "item " << i << " in scope " << other;
    }
  }
  EXPECT_EQ(l.crossings, 0);
}

// Folding scope 1 hides its items, draws it at the folded size, and merges
// its edges: one from item 0 into it, one out of it into item 7.
TEST(Layered, AFoldedScopeIsOneBoxWithMergedEdges) {
  Request r = TwoScopes();
  Layout l = LayOut(r);
  r.scopes[1].folded = true;
  Place(r, l);
  EXPECT_TRUE(l.scopes[1].visible);
  EXPECT_DOUBLE_EQ(l.scopes[1].width, r.spacing.folded_width);
  EXPECT_DOUBLE_EQ(l.scopes[1].height, r.spacing.folded_height);
  for (int i : {1, 3, 5}) EXPECT_FALSE(l.items[i].visible);
  int into = 0, out = 0;
  for (const Route& route : l.routes) {
    EXPECT_FALSE(route.from_scope && route.to_scope && route.from == route.to);
    if (route.to_scope && route.to == 1) {
      ++into;
      EXPECT_EQ(route.from, 0);
    }
    if (route.from_scope && route.from == 1) {
      ++out;
      EXPECT_EQ(route.to, 7);
    }
  }
  EXPECT_EQ(into, 1);
  EXPECT_EQ(out, 1);
  EXPECT_EQ(l.routes.size(), 2u + 4u);  // and 0->2, 2->4, 4->6, 6->7 of the open scope
}

// x -> y -> z with x and z in one scope and y outside: at scope level a
// cycle, which the topological order breaks; everything still gets a box.
TEST(Layered, ACycleBetweenScopesIsBrokenNotLooped) {
  Request r;
  r.scopes = {Scope{}, Scope{0}};
  r.items = {{1, 150, 40}, {0, 150, 40}, {1, 150, 40}};
  r.edges = {{0, 1}, {1, 2}};
  const Layout l = LayOut(r);
  for (const Box& b : l.items) EXPECT_TRUE(b.visible);
  EXPECT_EQ(l.topology[0].edges.size(), 1u);  // both directions, one edge
  EXPECT_EQ(l.topology[0].edges[0].weight, 2);
  EXPECT_EQ(l.routes.size(), 2u);
}

// Nested scopes: a frame holds its child frames, each holds its items.
TEST(Layered, NestedScopesNest) {
  Request r;
  r.scopes = {Scope{}, Scope{0}, Scope{1}, Scope{1}};
  for (int s : {0, 2, 2, 3, 3, 1, 0}) r.items.push_back({s, 120, 40});
  r.edges = {{0, 1}, {1, 2}, {0, 3}, {3, 4}, {2, 5}, {4, 5}, {5, 6}};
  const Layout l = LayOut(r);
  EXPECT_TRUE(Inside(l.scopes[2], l.scopes[1]));
  EXPECT_TRUE(Inside(l.scopes[3], l.scopes[1]));
  EXPECT_FALSE(Overlap(l.scopes[2], l.scopes[3]));
  EXPECT_TRUE(Inside(l.items[1], l.scopes[2]));
  EXPECT_TRUE(Inside(l.items[4], l.scopes[3]));
  EXPECT_TRUE(Inside(l.items[5], l.scopes[1]));
  EXPECT_FALSE(Inside(l.items[6], l.scopes[1]));
}

}  // namespace
}  // namespace opscope::layout
