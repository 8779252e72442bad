#include "layout/layered.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "layout/scope_tree.h"

namespace opscope::layout {
namespace {

// Longest-path ranks over slots in key order (every edge goes forward once
// reversed), then sources pulled down next to their first consumer so an item
// fed only by graph inputs does not sit on the top rank with a long edge.
std::vector<int> Ranks(int n, const std::vector<LocalEdge>& edges) {
  std::vector<int> rank(n, 0);
  std::vector<std::vector<int>> out(n);
  std::vector<int> in_degree(n, 0);
  for (const LocalEdge& e : edges) {
    out[e.from].push_back(e.to);
    ++in_degree[e.to];
  }
  for (int s = 0; s < n; ++s) {
    for (int t : out[s]) rank[t] = std::max(rank[t], rank[s] + 1);
  }
  for (int s = n - 1; s >= 0; --s) {
    if (in_degree[s] != 0 || out[s].empty()) continue;
    int lowest = rank[out[s][0]];
    for (int t : out[s]) lowest = std::min(lowest, rank[t]);
    rank[s] = std::max(rank[s], lowest - 1);
  }
  return rank;
}

// Adjacent-rank segments of a topology: per slot, its neighbours above and below.
struct Adjacency {
  std::vector<std::vector<int>> up, down;
};

Adjacency Segments(const ScopeTopology& t) {
  Adjacency a;
  a.up.assign(t.slots.size(), {});
  a.down.assign(t.slots.size(), {});
  for (const LocalEdge& e : t.edges) {
    int prev = e.from;
    auto link = [&](int next) {
      a.down[prev].push_back(next);
      a.up[next].push_back(prev);
      prev = next;
    };
    for (int d : e.dummies) link(d);
    link(e.to);
  }
  return a;
}

int64_t TotalCrossings(const ScopeTopology& t, const Adjacency& adj) {
  int64_t total = 0;
  std::vector<std::pair<int, int>> segs;
  for (size_t r = 0; r + 1 < t.ranks.size(); ++r) {
    segs.clear();
    for (int s : t.ranks[r]) {
      for (int d : adj.down[s]) segs.push_back({t.slots[s].order, t.slots[d].order});
    }
    total += CountCrossings(segs, static_cast<int>(t.ranks[r + 1].size()));
  }
  return total;
}

// One barycenter sweep over rank r: each slot moves to the mean order of its
// neighbours on the given side; a slot without any keeps its place.
void SortRank(ScopeTopology& t, int r, const std::vector<std::vector<int>>& nbrs) {
  std::vector<int>& rank = t.ranks[r];
  std::vector<std::pair<double, int>> keyed;
  keyed.reserve(rank.size());
  for (int s : rank) {
    double key = t.slots[s].order;
    if (!nbrs[s].empty()) {
      double sum = 0;
      for (int m : nbrs[s]) sum += t.slots[m].order;
      key = sum / static_cast<double>(nbrs[s].size());
    }
    keyed.push_back({key, s});
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t k = 0; k < keyed.size(); ++k) {
    rank[k] = keyed[k].second;
    t.slots[rank[k]].order = static_cast<int>(k);
  }
}

void OrderRanks(ScopeTopology& t) {
  const Adjacency adj = Segments(t);
  std::vector<std::vector<int>> best = t.ranks;
  int64_t best_crossings = TotalCrossings(t, adj);
  const int rank_count = static_cast<int>(t.ranks.size());
  // A few down-and-up sweeps; the best order seen is kept, and sweeping
  // stops once two in a row bring no improvement.
  int stale = 0;
  for (int pass = 0; pass < 8 && best_crossings > 0 && stale < 2; ++pass) {
    if (pass % 2 == 0) {
      for (int r = 1; r < rank_count; ++r) SortRank(t, r, adj.up);
    } else {
      for (int r = rank_count - 2; r >= 0; --r) SortRank(t, r, adj.down);
    }
    const int64_t c = TotalCrossings(t, adj);
    if (c < best_crossings) {
      best_crossings = c;
      best = t.ranks;
      stale = 0;
    } else {
      ++stale;
    }
  }
  t.ranks = std::move(best);
  for (const auto& rank : t.ranks) {
    for (size_t k = 0; k < rank.size(); ++k) t.slots[rank[k]].order = static_cast<int>(k);
  }
  t.crossings = best_crossings;
}

}  // namespace

int64_t CountCrossings(const std::vector<std::pair<int, int>>& segments, int lower_size) {
  // Sorted by the upper end, a crossing is a pair whose lower ends are in the
  // opposite order: count inversions with a Fenwick tree over lower orders.
  std::vector<std::pair<int, int>> s = segments;
  std::sort(s.begin(), s.end());
  std::vector<int64_t> tree(static_cast<size_t>(lower_size) + 1, 0);
  int64_t seen = 0, crossings = 0;
  for (const auto& [upper, lower] : s) {
    int64_t not_above = 0;  // earlier segments whose lower end is <= this one's
    for (int i = lower + 1; i > 0; i -= i & -i) not_above += tree[i];
    crossings += seen - not_above;
    for (int i = lower + 1; i <= lower_size; i += i & -i) ++tree[i];
    ++seen;
  }
  return crossings;
}

Layout LayOut(const Request& request) {
  const auto& scopes = request.scopes;
  const auto& items = request.items;
  const int scope_count = static_cast<int>(scopes.size());
  const std::vector<int> depth = ScopeDepths(scopes);
  // A scope's key is its first item in topological order; scopes holding
  // no item at all are left out.
  constexpr int kNone = std::numeric_limits<int>::max();
  std::vector<int> key(scope_count, kNone);
  for (int i = 0; i < static_cast<int>(items.size()); ++i) {
    for (int s = items[i].scope; s >= 0 && key[s] > i; s = scopes[s].parent) key[s] = i;
  }

  Layout layout;
  layout.topology.assign(scope_count, {});
  std::vector<int>& item_slot = layout.item_slot;
  std::vector<int>& scope_slot = layout.scope_slot;
  item_slot.assign(items.size(), -1);
  scope_slot.assign(scope_count, -1);
  {
    std::vector<std::vector<std::pair<int, Slot>>> children(scope_count);
    for (int i = 0; i < static_cast<int>(items.size()); ++i) {
      children[items[i].scope].push_back({i, Slot{Slot::kItem, i}});
    }
    for (int s = 1; s < scope_count; ++s) {
      if (key[s] != kNone) children[scopes[s].parent].push_back({key[s], Slot{Slot::kScope, s}});
    }
    for (int s = 0; s < scope_count; ++s) {
      // Ties (a scope and its own first item, in different scopes) cannot
      // occur within one parent; the kind breaks them anyway.
      std::sort(children[s].begin(), children[s].end(),
                [](const auto& a, const auto& b) { return std::tie(a.first, a.second.kind) < std::tie(b.first, b.second.kind); });
      auto& slots = layout.topology[s].slots;
      for (const auto& [k, slot] : children[s]) {
        (slot.kind == Slot::kItem ? item_slot[slot.index] : scope_slot[slot.index]) = static_cast<int>(slots.size());
        slots.push_back(slot);
      }
    }
  }

  // Each item edge becomes an edge between two children of the scopes'
  // lowest common scope; parallel ones merge with a weight.
  std::vector<std::tuple<int, int, int>> local;  // scope, from slot, to slot
  local.reserve(request.edges.size());
  for (const Edge& e : request.edges) {
    if (e.from == e.to) continue;
    const Climb c = ClimbToCommon(scopes, depth, items[e.from].scope, items[e.to].scope);
    const int a = c.from_scope < 0 ? item_slot[e.from] : scope_slot[c.from_scope];
    const int b = c.to_scope < 0 ? item_slot[e.to] : scope_slot[c.to_scope];
    local.emplace_back(c.lca, a, b);
  }
  std::sort(local.begin(), local.end());
  for (size_t i = 0; i < local.size();) {
    size_t j = i;
    while (j < local.size() && local[j] == local[i]) ++j;
    const auto [s, a, b] = local[i];
    // Slots are in key order, so an edge against it closes a cycle that
    // folding made: it is drawn reversed.
    LocalEdge le{.from = std::min(a, b), .to = std::max(a, b), .reversed = a > b,
                 .dummies = {}, .weight = static_cast<int64_t>(j - i)};
    layout.topology[s].edges.push_back(le);
    i = j;
  }

  for (int s = 0; s < scope_count; ++s) {
    ScopeTopology& t = layout.topology[s];
    if (t.slots.empty()) continue;
    std::sort(t.edges.begin(), t.edges.end(), [](const LocalEdge& x, const LocalEdge& y) {
      return std::tie(x.from, x.to) < std::tie(y.from, y.to);
    });
    // Both directions between two child scopes become one edge.
    std::vector<LocalEdge> merged;
    for (LocalEdge& e : t.edges) {
      if (!merged.empty() && merged.back().from == e.from && merged.back().to == e.to) merged.back().weight += e.weight;
      else merged.push_back(std::move(e));
    }
    t.edges = std::move(merged);
    const int n = static_cast<int>(t.slots.size());
    const std::vector<int> rank = Ranks(n, t.edges);
    int max_rank = 0;
    for (int i = 0; i < n; ++i) {
      t.slots[i].rank = rank[i];
      max_rank = std::max(max_rank, rank[i]);
    }
    for (int e = 0; e < static_cast<int>(t.edges.size()); ++e) {
      LocalEdge& le = t.edges[e];
      for (int r = rank[le.from] + 1; r < rank[le.to]; ++r) {
        le.dummies.push_back(static_cast<int>(t.slots.size()));
        t.slots.push_back(Slot{Slot::kDummy, e, r});
      }
    }
    t.ranks.assign(max_rank + 1, {});
    for (int i = 0; i < static_cast<int>(t.slots.size()); ++i) {
      Slot& slot = t.slots[i];
      slot.order = static_cast<int>(t.ranks[slot.rank].size());
      t.ranks[slot.rank].push_back(i);
    }
    OrderRanks(t);
    layout.crossings += t.crossings;
  }
  Place(request, layout);
  return layout;
}

}  // namespace opscope::layout
