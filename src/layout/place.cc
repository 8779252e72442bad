// Coordinates for a topology (layered.h): sizes bottom-up, each scope's
// slots placed in its own frame, then frames made absolute top-down, then
// the edges routed through their dummies, each box's ports spread along its sides.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "layout/layered.h"
#include "layout/scope_tree.h"

namespace opscope::layout {
namespace {

// Ports: the routes that leave or enter one side of a box are spread along
// that side in the order of where they head (the next bend, then the far
// end), so that they neither meet at its centre nor cross right at it; a
// lone route keeps the centre. web/graph_layout.js does the same after a fold.
void SpreadPorts(Layout& layout) {
  struct End {
    size_t route;
    bool start;
    double toward, far_x, far_y;
  };
  const auto box_of = [&](bool scope, int index) -> const Box& {
    return scope ? layout.scopes[index] : layout.items[index];
  };
  std::map<std::tuple<bool, int, bool>, std::vector<End>> sides;  // (a scope?, index, bottom side?)
  for (size_t i = 0; i < layout.routes.size(); ++i) {
    const Route& r = layout.routes[i];
    const std::vector<double>& p = r.points;
    const size_t n = p.size();
    sides[{r.from_scope, r.from, p[1] > box_of(r.from_scope, r.from).y}].push_back({i, true, p[2], p[n - 2], p[n - 1]});
    sides[{r.to_scope, r.to, p[n - 1] > box_of(r.to_scope, r.to).y}].push_back({i, false, p[n - 4], p[0], p[1]});
  }
  // Compared on a 1/64-px grid, as the page compares them: its copy of the
  // placement may differ from this one in the last bits.
  const auto grid = [](double v) { return std::floor(v * 64); };
  for (auto& [side, ends] : sides) {
    if (ends.size() < 2) continue;
    std::stable_sort(ends.begin(), ends.end(), [&](const End& a, const End& b) {
      return std::tuple(grid(a.toward), grid(a.far_x), grid(a.far_y)) <
             std::tuple(grid(b.toward), grid(b.far_x), grid(b.far_y));
    });
    const Box& box = box_of(std::get<0>(side), std::get<1>(side));
    for (size_t k = 0; k < ends.size(); ++k) {
      const double x = box.x - box.width / 2 + box.width * static_cast<double>(k + 1) / static_cast<double>(ends.size() + 1);
      std::vector<double>& p = layout.routes[ends[k].route].points;
      p[ends[k].start ? 0 : p.size() - 2] = x;
    }
  }
}

// x for one rank's slots, in their order: the weighted least-squares fit to
// `want` under x[i] - x[i-1] >= sep[i]. Subtracting the running sum of the
// separations turns it into isotonic regression, which pool-adjacent-
// violators solves exactly in one pass.
void FitRank(const std::vector<double>& want, const std::vector<double>& weight, const std::vector<double>& sep,
             std::vector<double>& x) {
  const size_t n = want.size();
  std::vector<double> offset(n, 0);
  for (size_t i = 1; i < n; ++i) offset[i] = offset[i - 1] + sep[i];
  struct Block {
    double w, wt;
    size_t count;
  };
  std::vector<Block> blocks;
  for (size_t i = 0; i < n; ++i) {
    blocks.push_back({weight[i], weight[i] * (want[i] - offset[i]), 1});
    while (blocks.size() >= 2) {
      Block& b = blocks.back();
      Block& a = blocks[blocks.size() - 2];
      if (a.wt / a.w <= b.wt / b.w) break;
      a = {a.w + b.w, a.wt + b.wt, a.count + b.count};
      blocks.pop_back();
    }
  }
  size_t i = 0;
  for (const Block& b : blocks) {
    for (size_t k = 0; k < b.count; ++k, ++i) x[i] = b.wt / b.w + offset[i];
  }
}

// One scope's slots in its own frame (top-left at 0,0): centre x, and the
// vertical extent (a box's own, or a dummy's whole rank band).
struct Frame {
  std::vector<double> x, y0, y1;
  double width = 0, height = 0;
};

Frame PlaceScope(const ScopeTopology& t, const std::vector<double>& w, const std::vector<double>& h, bool root,
                 const Spacing& sp) {
  const size_t n = t.slots.size();
  Frame f;
  f.x.assign(n, 0);
  f.y0.assign(n, 0);
  f.y1.assign(n, 0);
  std::vector<std::vector<int>> up(n), down(n);
  for (const LocalEdge& e : t.edges) {
    int prev = e.from;
    for (int next : e.dummies) {
      down[prev].push_back(next), up[next].push_back(prev);
      prev = next;
    }
    down[prev].push_back(e.to), up[e.to].push_back(prev);
  }
  auto gap = [&](int a, int b) {
    const bool dummy = t.slots[a].kind == Slot::kDummy || t.slots[b].kind == Slot::kDummy;
    return (w[a] + w[b]) / 2 + (dummy ? sp.dummy_gap : sp.node_gap);
  };
  std::vector<double> want, weight, sep, x;
  auto fit = [&](const std::vector<int>& rank, const std::vector<std::vector<int>>* a,
                 const std::vector<std::vector<int>>* b) {
    const size_t m = rank.size();
    want.assign(m, 0), weight.assign(m, 0), sep.assign(m, 0), x.assign(m, 0);
    for (size_t k = 0; k < m; ++k) {
      const int s = rank[k];
      double sum = 0;
      size_t count = 0;
      for (const auto* side : {a, b}) {
        if (!side) continue;
        for (int nb : (*side)[s]) sum += f.x[nb], ++count;
      }
      // A slot with no neighbour on these sides stays near where it is.
      want[k] = count ? sum / static_cast<double>(count) : f.x[s];
      weight[k] = count ? static_cast<double>(count) : 0.25;
      if (k > 0) sep[k] = gap(rank[k - 1], s);
    }
    FitRank(want, weight, sep, x);
    for (size_t k = 0; k < m; ++k) f.x[rank[k]] = x[k];
  };
  for (const auto& rank : t.ranks) {
    for (size_t k = 0; k < rank.size(); ++k) f.x[rank[k]] = k == 0 ? 0 : f.x[rank[k - 1]] + gap(rank[k - 1], rank[k]);
  }
  const int ranks = static_cast<int>(t.ranks.size());
  for (int pass = 0; pass < 4; ++pass) {
    for (int r = 1; r < ranks; ++r) fit(t.ranks[r], &up, nullptr);
    for (int r = ranks - 2; r >= 0; --r) fit(t.ranks[r], &down, nullptr);
  }
  for (int r = 0; r < ranks; ++r) fit(t.ranks[r], &up, &down);

  const double top = root ? sp.pad : sp.header + sp.pad;
  double y = top, left = 0, right = 0;
  bool any = false;
  for (const auto& rank : t.ranks) {
    double band = 0;
    for (int s : rank) band = std::max(band, h[s]);
    for (int s : rank) {
      const bool dummy = t.slots[s].kind == Slot::kDummy;
      f.y0[s] = y;
      f.y1[s] = dummy ? y + band : y + h[s];  // boxes hang from the top of their rank
      if (dummy) continue;
      left = any ? std::min(left, f.x[s] - w[s] / 2) : f.x[s] - w[s] / 2;
      right = any ? std::max(right, f.x[s] + w[s] / 2) : f.x[s] + w[s] / 2;
      any = true;
    }
    y += band + sp.rank_gap;
  }
  for (double& v : f.x) v += sp.pad - left;
  f.width = right - left + 2 * sp.pad;
  f.height = y - sp.rank_gap + sp.pad;
  return f;
}

}  // namespace

void Place(const Request& request, Layout& layout) {
  const auto& scopes = request.scopes;
  const auto& items = request.items;
  const Spacing& sp = request.spacing;
  const int scope_count = static_cast<int>(scopes.size());
  const std::vector<int> depth = ScopeDepths(scopes);
  std::vector<int> by_depth(scope_count);
  for (int s = 0; s < scope_count; ++s) by_depth[s] = s;
  std::stable_sort(by_depth.begin(), by_depth.end(), [&](int a, int b) { return depth[a] > depth[b]; });

  // The outermost folded scope around each scope (itself included), or -1.
  std::vector<int> hidden_by(scope_count, -1);
  for (auto it = by_depth.rbegin(); it != by_depth.rend(); ++it) {
    const int s = *it;
    const int p = scopes[s].parent;
    hidden_by[s] = p >= 0 && hidden_by[p] >= 0 ? hidden_by[p] : (s != 0 && scopes[s].folded ? s : -1);
  }

  std::vector<double> sw(scope_count, 0), sh(scope_count, 0);
  std::vector<Frame> frames(scope_count);
  for (int s : by_depth) {
    const ScopeTopology& t = layout.topology[s];
    if (t.slots.empty()) continue;
    if (s != 0 && scopes[s].folded) {
      sw[s] = sp.folded_width, sh[s] = sp.folded_height;
      continue;
    }
    std::vector<double> w(t.slots.size(), 0), h(t.slots.size(), 0);
    for (size_t i = 0; i < t.slots.size(); ++i) {
      const Slot& slot = t.slots[i];
      if (slot.kind == Slot::kItem) w[i] = items[slot.index].width, h[i] = items[slot.index].height;
      if (slot.kind == Slot::kScope) w[i] = sw[slot.index], h[i] = sh[slot.index];
    }
    frames[s] = PlaceScope(t, w, h, s == 0, sp);
    sw[s] = std::max(frames[s].width, sp.folded_width);
    sh[s] = frames[s].height;
  }

  layout.items.assign(items.size(), {});
  layout.scopes.assign(scope_count, {});
  std::vector<double> ox(scope_count, 0), oy(scope_count, 0);  // each frame's top-left
  layout.scopes[0] = {sw[0] / 2, sh[0] / 2, sw[0], sh[0], true};
  for (auto it = by_depth.rbegin(); it != by_depth.rend(); ++it) {
    const int s = *it;
    if (hidden_by[s] >= 0) continue;  // folded or inside a folded scope: its slots are not drawn
    const ScopeTopology& t = layout.topology[s];
    const Frame& f = frames[s];
    for (size_t i = 0; i < t.slots.size(); ++i) {
      const Slot& slot = t.slots[i];
      if (slot.kind == Slot::kDummy) continue;
      const bool is_item = slot.kind == Slot::kItem;
      const double w = is_item ? items[slot.index].width : sw[slot.index];
      const double h = is_item ? items[slot.index].height : sh[slot.index];
      Box b{ox[s] + f.x[i], oy[s] + f.y0[i] + h / 2, w, h, true};
      if (is_item) {
        layout.items[slot.index] = b;
      } else {
        layout.scopes[slot.index] = b;
        ox[slot.index] = b.x - w / 2;
        oy[slot.index] = b.y - h / 2;
      }
    }
  }
  layout.width = sw[0];
  layout.height = sh[0];

  // Routes between what is visible, one per pair of boxes.
  std::map<std::tuple<bool, int, bool, int>, size_t> seen;
  layout.routes.clear();
  for (const Edge& e : request.edges) {
    if (e.from == e.to) continue;
    const int hu = hidden_by[items[e.from].scope], hv = hidden_by[items[e.to].scope];
    const auto key = std::make_tuple(hu >= 0, hu >= 0 ? hu : e.from, hv >= 0, hv >= 0 ? hv : e.to);
    if (std::get<0>(key) == std::get<2>(key) && std::get<1>(key) == std::get<3>(key)) continue;  // inside one fold
    if (auto it = seen.find(key); it != seen.end()) {
      ++layout.routes[it->second].weight;
      continue;
    }
    Route r{.from_scope = std::get<0>(key), .to_scope = std::get<2>(key), .from = std::get<1>(key),
            .to = std::get<3>(key), .weight = 1, .points = {}};
    const Box& a = r.from_scope ? layout.scopes[r.from] : layout.items[r.from];
    const Box& b = r.to_scope ? layout.scopes[r.to] : layout.items[r.to];
    // The dummies of the edge in the lowest common scope, which the two
    // boxes' own edge shares (a fold does not change that scope).
    const Climb c = ClimbToCommon(scopes, depth, items[e.from].scope, items[e.to].scope);
    const int sa = c.from_scope < 0 ? layout.item_slot[e.from] : layout.scope_slot[c.from_scope];
    const int sb = c.to_scope < 0 ? layout.item_slot[e.to] : layout.scope_slot[c.to_scope];
    const ScopeTopology& t = layout.topology[c.lca];
    const LocalEdge probe{.from = std::min(sa, sb), .to = std::max(sa, sb), .reversed = false, .dummies = {}, .weight = 0};
    auto le = std::lower_bound(t.edges.begin(), t.edges.end(), probe, [](const LocalEdge& x, const LocalEdge& y) {
      return std::tie(x.from, x.to) < std::tie(y.from, y.to);
    });
    const bool downward = sa < sb;  // the producer's slot ranks above the consumer's
    r.points = {a.x, downward ? a.y + a.height / 2 : a.y - a.height / 2};
    if (le != t.edges.end() && le->from == probe.from && le->to == probe.to) {
      const Frame& f = frames[c.lca];
      auto add = [&](int d) {
        const double y0 = oy[c.lca] + f.y0[d], y1 = oy[c.lca] + f.y1[d];
        r.points.insert(r.points.end(), {ox[c.lca] + f.x[d], downward ? y0 : y1, ox[c.lca] + f.x[d], downward ? y1 : y0});
      };
      if (downward) for (int d : le->dummies) add(d);
      else for (auto d = le->dummies.rbegin(); d != le->dummies.rend(); ++d) add(*d);
    }
    r.points.insert(r.points.end(), {b.x, downward ? b.y - b.height / 2 : b.y + b.height / 2});
    seen.emplace(key, layout.routes.size());
    layout.routes.push_back(std::move(r));
  }
  SpreadPorts(layout);
}

}  // namespace opscope::layout
