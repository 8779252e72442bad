#include "graph/export/graph_layout.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace opscope::graph {
namespace {


std::vector<std::string> ScopeParts(const std::string& ns) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= ns.size()) {
    const size_t end = std::min(ns.find('/', start), ns.size());
    if (end > start) parts.push_back(ns.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// The scopes as names give them, before the ones that would only add a frame
// around one node (or around one other frame) are dropped.
struct RawScope {
  std::string part, path;
  std::map<std::string, int> children;
  std::vector<int> items;  // items whose namespace ends here
  int64_t count = 0;       // items at any depth
};

// A constant's value, or one computed from constants only by an attached node.
bool ConstantInput(const Graph& g, const std::string& name, const std::unordered_map<int64_t, bool>& attached) {
  const Value* v = name.empty() ? nullptr : g.FindValue(name);
  if (!v) return false;
  if (v->producer < 0) return v->constant.has_value();
  auto it = attached.find(v->producer);
  return it != attached.end() && it->second;
}

// A Constant, or a node that reads constants only (an Identity of a tied
// weight, the Unsqueeze and Concat of a shape PyTorch writes out): work done
// before any input arrives, drawn with what reads it.
bool Attached(const Graph& g, const Node& n, const std::unordered_map<int64_t, bool>& attached) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  if (n.op_type == "Constant") return true;
  if (n.inputs.empty() || !n.subgraphs.empty() || !n.branches.empty()) return false;
  bool any = false;
  for (const std::string& in : n.inputs) {
    if (in.empty()) continue;  // an omitted optional input
    if (!ConstantInput(g, in, attached)) return false;
    any = true;
  }
  return any;
}

class ScopeBuilder {
 public:
  explicit ScopeBuilder(GraphLayout& gl) : gl_(gl) { raw_.push_back({}); }

  void Add(int item, const std::string& ns) {
    int r = 0;
    ++raw_[0].count;
    std::string path;
    for (const std::string& part : ScopeParts(ns)) {
      path += "/" + part;
      auto it = raw_[r].children.find(part);
      if (it == raw_[r].children.end()) {
        raw_.push_back({part, path, {}, {}, 0});
        it = raw_[r].children.emplace(part, static_cast<int>(raw_.size()) - 1).first;
      }
      r = it->second;
      ++raw_[r].count;
    }
    raw_[r].items.push_back(item);
  }

  void Build() {
    gl_.request.scopes = {layout::Scope{}};
    gl_.scope_path = {""};
    gl_.scope_label = {""};
    Emit(0, 0, "");
  }

 private:
  // A raw scope of one item gives that item to the frame above; one holding
  // nothing but one child scope merges into it ("encoder/layer.0").
  void Emit(int r, int parent, const std::string& prefix) {
    int scope = parent;
    const RawScope& raw = raw_[r];
    if (r != 0 && raw.count >= 2) {
      if (raw.items.empty() && raw.children.size() == 1) {
        Emit(raw.children.begin()->second, parent, prefix + raw.part + "/");
        return;
      }
      scope = static_cast<int>(gl_.request.scopes.size());
      gl_.request.scopes.push_back(layout::Scope{parent, false});
      gl_.scope_path.push_back(raw.path);
      gl_.scope_label.push_back(prefix + raw.part);
    }
    for (int item : raw.items) gl_.request.items[item].scope = scope;
    for (const auto& [part, child] : raw.children) Emit(child, scope, "");
  }

  GraphLayout& gl_;
  std::vector<RawScope> raw_;
};

// Outermost scopes first, each opened while what the screen holds stays
// within kOpenBoxes; a small graph opens with everything open.
void FoldForOpening(GraphLayout& gl) {
  auto& scopes = gl.request.scopes;
  if (gl.request.items.size() <= static_cast<size_t>(kOpenBoxes)) return;
  std::vector<int> children(scopes.size(), 0);
  for (const layout::Item& it : gl.request.items) ++children[it.scope];
  for (size_t s = 1; s < scopes.size(); ++s) ++children[scopes[s].parent];
  for (size_t s = 1; s < scopes.size(); ++s) scopes[s].folded = true;
  int64_t boxes = children[0];
  // Scopes were created parent before child, depth-first; open by depth.
  std::vector<int> depth(scopes.size(), 0), order;
  for (size_t s = 1; s < scopes.size(); ++s) depth[s] = depth[scopes[s].parent] + 1, order.push_back(static_cast<int>(s));
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return depth[a] < depth[b]; });
  for (int s : order) {
    if (scopes[scopes[s].parent].folded) continue;  // its parent stays shut
    if (boxes + children[s] - 1 > kOpenBoxes) continue;
    scopes[s].folded = false;
    boxes += children[s] - 1;
  }
}

double Round(double v) { return std::round(v * 10) / 10; }

}  // namespace

GraphLayout LayoutGraph(const Graph& g) {
  GraphLayout gl;
  gl.request.spacing = layout::Spacing{};
  std::unordered_map<int64_t, bool> attached;
  ScopeBuilder scopes(gl);
  for (const Node& n : g.nodes()) {
    const bool a = Attached(g, n, attached);
    attached[n.id] = a;
    if (a) continue;
    const int item = static_cast<int>(gl.item_node.size());
    gl.node_item[n.id] = item;
    gl.item_node.push_back(n.id);
    gl.request.items.push_back({0, kNodeWidth, kNodeHeight});
    scopes.Add(item, n.name_space);
  }
  scopes.Build();
  for (const Node& n : g.nodes()) {
    for (const std::string& in : n.inputs) {
      const Value* v = in.empty() ? nullptr : g.FindValue(in);
      if (!v || v->producer < 0) continue;
      auto to = gl.node_item.find(n.id);
      auto from = gl.node_item.find(v->producer);
      if (from == gl.node_item.end()) {
        if (to != gl.node_item.end()) gl.attached[v->producer].push_back(n.id);
        continue;
      }
      if (to != gl.node_item.end()) gl.request.edges.push_back({from->second, to->second});
    }
  }
  // An attached node that feeds only other attached nodes (a Constant behind
  // an Identity) is listed with the drawn nodes those feed.
  for (auto it = g.nodes().rbegin(); it != g.nodes().rend(); ++it) {
    if (!attached[it->id] || gl.attached.count(it->id)) continue;
    std::vector<int64_t>& to = gl.attached[it->id];
    for (const std::string& out : it->outputs) {
      const Value* v = out.empty() ? nullptr : g.FindValue(out);
      if (!v) continue;
      for (int64_t c : v->consumers) {
        auto found = gl.attached.find(c);
        if (found != gl.attached.end()) to.insert(to.end(), found->second.begin(), found->second.end());
      }
    }
  }
  gl.scope_nodes.assign(gl.request.scopes.size(), 0);
  for (const layout::Item& item : gl.request.items) {
    for (int s = item.scope; s >= 0; s = gl.request.scopes[s].parent) ++gl.scope_nodes[s];
  }
  FoldForOpening(gl);
  gl.layout = layout::LayOut(gl.request);
  return gl;
}

namespace {

void WriteBox(JsonWriter& w, const layout::Box& b) {
  if (!b.visible) {
    w.Null();
    return;
  }
  w.BeginArray().Double(Round(b.x)).Double(Round(b.y)).Double(Round(b.width)).Double(Round(b.height)).EndArray();
}

// A route's end: a node's id, or -1 - s for scope s.
int64_t EndId(const GraphLayout& gl, bool scope, int index) { return scope ? -1 - index : gl.item_node[index]; }

}  // namespace

// Scopes and routes as columns (graph.json version 3; graph_layout.h says
// what each holds). A scope's id is its index.
void WriteLayoutJson(JsonWriter& w, const GraphLayout& gl) {
  const layout::Spacing& sp = gl.request.spacing;
  const size_t scopes = gl.request.scopes.size();
  w.BeginObject();
  // Keyed by node id as text, in the text's order.
  std::map<std::string, const std::vector<int64_t>*> attached;
  for (const auto& [node, consumers] : gl.attached) attached.emplace(std::to_string(node), &consumers);
  w.Key("attached").BeginObject();
  for (const auto& [node, consumers] : attached) {
    w.Key(node).BeginArray();
    for (int64_t c : *consumers) w.Int(c);
    w.EndArray();
  }
  w.EndObject();
  w.Key("crossings").Int(gl.layout.crossings).Key("height").Double(Round(gl.layout.height));
  w.Key("node_height").Double(kNodeHeight).Key("node_width").Double(kNodeWidth);
  const std::vector<layout::Route>& routes = gl.layout.routes;
  w.Key("routes").BeginObject();
  w.Key("from").BeginArray();
  for (const layout::Route& r : routes) w.Int(EndId(gl, r.from_scope, r.from));
  w.EndArray().Key("points").BeginArray();
  for (const layout::Route& r : routes) {
    w.BeginArray();
    for (double v : r.points) w.Double(Round(v));
    w.EndArray();
  }
  w.EndArray().Key("to").BeginArray();
  for (const layout::Route& r : routes) w.Int(EndId(gl, r.to_scope, r.to));
  w.EndArray().Key("weight").BeginArray();
  for (const layout::Route& r : routes) w.Int(r.weight);
  w.EndArray().EndObject();
  auto column = [&](const char* key, auto&& entry) {
    w.Key(key).BeginArray();
    for (size_t s = 0; s < scopes; ++s) entry(s, gl.layout.topology[s]);
    w.EndArray();
  };
  w.Key("scopes").BeginObject();
  column("box", [&](size_t s, const layout::ScopeTopology&) { WriteBox(w, gl.layout.scopes[s]); });
  column("crossings", [&](size_t, const layout::ScopeTopology& t) { w.Int(t.crossings); });
  // Per edge, each dummy slot from `from`'s rank towards `to`'s.
  column("dummies", [&](size_t, const layout::ScopeTopology& t) {
    w.BeginArray();
    for (const layout::LocalEdge& e : t.edges) {
      w.BeginArray();
      for (int d : e.dummies) w.Int(d);
      w.EndArray();
    }
    w.EndArray();
  });
  // Per edge four numbers: from, to (slot indices), reversed (0 or 1), weight.
  column("edges", [&](size_t, const layout::ScopeTopology& t) {
    w.BeginArray();
    for (const layout::LocalEdge& e : t.edges) w.Int(e.from).Int(e.to).Int(e.reversed ? 1 : 0).Int(e.weight);
    w.EndArray();
  });
  column("folded", [&](size_t s, const layout::ScopeTopology&) { w.Int(gl.request.scopes[s].folded ? 1 : 0); });
  column("label", [&](size_t s, const layout::ScopeTopology&) { w.String(gl.scope_label[s]); });
  column("nodes", [&](size_t s, const layout::ScopeTopology&) { w.Int(gl.scope_nodes[s]); });
  column("parent", [&](size_t s, const layout::ScopeTopology&) { w.Int(gl.request.scopes[s].parent); });
  column("path", [&](size_t s, const layout::ScopeTopology&) { w.String(gl.scope_path[s]); });
  column("ranks", [&](size_t, const layout::ScopeTopology& t) { w.Int(static_cast<int64_t>(t.ranks.size())); });
  // Per slot four numbers: kind (0 a node, 1 a scope, 2 a dummy), id (the
  // node's id, the scope's, or the dummy's edge index), rank, order.
  column("slots", [&](size_t, const layout::ScopeTopology& t) {
    w.BeginArray();
    for (const layout::Slot& slot : t.slots) {
      const int64_t id = slot.kind == layout::Slot::kItem ? gl.item_node[slot.index] : slot.index;
      w.Int(static_cast<int>(slot.kind)).Int(id).Int(slot.rank).Int(slot.order);
    }
    w.EndArray();
  });
  w.EndObject();
  w.Key("spacing").BeginObject().Key("dummy_gap").Double(sp.dummy_gap).Key("folded_height").Double(sp.folded_height);
  w.Key("folded_width").Double(sp.folded_width).Key("header").Double(sp.header).Key("node_gap").Double(sp.node_gap);
  w.Key("pad").Double(sp.pad).Key("rank_gap").Double(sp.rank_gap).EndObject();
  w.Key("width").Double(Round(gl.layout.width));
  w.EndObject();
}

}  // namespace opscope::graph
