#include "graph/graph_layout.h"

#include <algorithm>
#include <vector>

namespace opscope::graph {
namespace {

// Node-to-node edges (producer index -> consumer index) over graph order.
void Edges(const Graph& g, const std::unordered_map<int64_t, size_t>& idx, std::vector<std::vector<size_t>>& preds,
           std::vector<std::vector<size_t>>& succs) {
  const auto& nodes = g.nodes();
  preds.assign(nodes.size(), {});
  succs.assign(nodes.size(), {});
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& in : nodes[i].inputs) {
      const Value* v = in.empty() ? nullptr : g.FindValue(in);
      if (!v || v->producer < 0) continue;
      auto it = idx.find(v->producer);
      if (it == idx.end()) continue;
      preds[i].push_back(it->second);
      succs[it->second].push_back(i);
    }
  }
}

}  // namespace

std::unordered_map<int64_t, NodePosition> LayoutGraph(const Graph& g) {
  const auto& nodes = g.nodes();
  std::unordered_map<int64_t, size_t> idx;
  for (size_t i = 0; i < nodes.size(); ++i) idx[nodes[i].id] = i;
  std::vector<std::vector<size_t>> preds, succs;
  Edges(g, idx, preds, succs);

  // Nodes are in topological order, so one forward sweep gives longest paths.
  std::vector<int> rank(nodes.size(), 0);
  int max_rank = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t p : preds[i]) rank[i] = std::max(rank[i], rank[p] + 1);
    max_rank = std::max(max_rank, rank[i]);
  }
  std::vector<std::vector<size_t>> layers(nodes.empty() ? 0 : max_rank + 1);
  for (size_t i = 0; i < nodes.size(); ++i) layers[rank[i]].push_back(i);
  std::vector<double> order(nodes.size(), 0);
  for (auto& layer : layers) {
    for (size_t k = 0; k < layer.size(); ++k) order[layer[k]] = static_cast<double>(k);
  }
  // Barycenter sweeps: down using predecessors, then up using successors.
  auto sweep = [&](int r, const std::vector<std::vector<size_t>>& nbrs) {
    std::vector<size_t>& layer = layers[r];
    std::vector<std::pair<double, size_t>> keyed;
    for (size_t n : layer) {
      double sum = 0;
      for (size_t m : nbrs[n]) sum += order[m];
      keyed.push_back({nbrs[n].empty() ? order[n] : sum / static_cast<double>(nbrs[n].size()), n});
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t k = 0; k < keyed.size(); ++k) {
      layer[k] = keyed[k].second;
      order[layer[k]] = static_cast<double>(k);
    }
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (int r = 1; r <= max_rank && !layers.empty(); ++r) sweep(r, preds);
    for (int r = max_rank - 1; r >= 0; --r) sweep(r, succs);
  }
  std::unordered_map<int64_t, NodePosition> out;
  out.reserve(nodes.size() * 2);
  for (const auto& layer : layers) {
    const double width = static_cast<double>(layer.size());
    for (size_t k = 0; k < layer.size(); ++k) {
      size_t n = layer[k];
      NodePosition p;
      p.rank = rank[n];
      p.order = static_cast<int>(k);
      p.x = (static_cast<double>(k) - (width - 1) / 2) * kLayoutDx;  // each rank centred on x = 0
      p.y = rank[n] * kLayoutDy;
      out[nodes[n].id] = p;
    }
  }
  return out;
}

int64_t CountCrossings(const Graph& g, const std::unordered_map<int64_t, NodePosition>& pos) {
  // Edges between adjacent ranks only; long edges are left out of the count.
  std::vector<std::pair<NodePosition, NodePosition>> edges;
  for (const Node& n : g.nodes()) {
    for (const std::string& in : n.inputs) {
      const Value* v = in.empty() ? nullptr : g.FindValue(in);
      if (!v || v->producer < 0) continue;
      const NodePosition& a = pos.at(v->producer);
      const NodePosition& b = pos.at(n.id);
      if (b.rank == a.rank + 1) edges.push_back({a, b});
    }
  }
  int64_t crossings = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    for (size_t j = i + 1; j < edges.size(); ++j) {
      const auto& [a1, b1] = edges[i];
      const auto& [a2, b2] = edges[j];
      if (a1.rank != a2.rank) continue;
      if ((a1.order < a2.order && b1.order > b2.order) || (a1.order > a2.order && b1.order < b2.order)) ++crossings;
    }
  }
  return crossings;
}

}  // namespace opscope::graph
