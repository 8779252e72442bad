#include "graph/run/node_path.h"

#include <algorithm>
#include <set>

#include "core/text_distance.h"
#include "core/text_format.h"
#include "graph/run/captured_run.h"
#include "graph/run/critical_path.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

json ShapeText(const Value& v) {
  if (!v.rank_known) return nullptr;
  std::string s = "[";
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (i) s += ",";
    if (v.dims[i] >= 0) s += std::to_string(v.dims[i]);
    else s += i < v.dim_params.size() && !v.dim_params[i].empty() ? v.dim_params[i] : "?";
  }
  return s + "]";
}

std::string NameOf(const Graph& g, int64_t id) {
  const Node* n = g.FindNode(id);
  return n ? n->name : std::to_string(id);
}

json TensorJson(const Graph& g, const std::string& name, bool input) {
  json t = {{"name", name}};
  const Value* v = name.empty() ? nullptr : g.FindValue(name);
  if (!v) {
    t["dtype"] = t["shape"] = nullptr;
    return t;
  }
  t["dtype"] = v->dtype_known ? json(DTypeName(v->dtype)) : json(nullptr);
  t["shape"] = ShapeText(*v);
  if (input) {
    t["from"] = v->producer >= 0 ? json(NameOf(g, v->producer))
                : v->constant     ? json("constant")
                : v->is_graph_input ? json("graph input")
                                    : json(nullptr);
  } else {
    json to = json::array();
    for (int64_t c : v->consumers) to.push_back(NameOf(g, c));
    if (v->is_graph_output) to.push_back("graph output");
    t["to"] = std::move(to);
  }
  return t;
}

// The nodes one step up (producers of the inputs) or down (consumers of the
// outputs), each once, with the value that links them.
std::vector<std::pair<int64_t, std::string>> Neighbours(const Graph& g, const Node& n, bool up) {
  std::vector<std::pair<int64_t, std::string>> out;
  std::set<int64_t> seen;
  for (const std::string& name : up ? n.inputs : n.outputs) {
    const Value* v = name.empty() ? nullptr : g.FindValue(name);
    if (!v) continue;
    std::vector<int64_t> ids = up ? std::vector<int64_t>{v->producer} : v->consumers;
    for (int64_t id : ids) {
      if (id >= 0 && g.FindNode(id) && seen.insert(id).second) out.emplace_back(id, name);
    }
  }
  return out;
}

// Nodes reachable from `n` one way, `n` not counted.
int64_t Reach(const Graph& g, const Node& n, bool up) {
  std::set<int64_t> seen;
  std::vector<const Node*> todo{&n};
  while (!todo.empty()) {
    const Node* x = todo.back();
    todo.pop_back();
    for (const auto& [id, via] : Neighbours(g, *x, up)) {
      if (seen.insert(id).second) todo.push_back(g.FindNode(id));
    }
  }
  return static_cast<int64_t>(seen.size());
}

// The children of `n` in the tree, `levels` more levels deep.
json Tree(const Graph& g, const Node& n, bool up, int levels, std::set<int64_t>& shown) {
  json children = json::array();
  for (const auto& [id, via] : Neighbours(g, n, up)) {
    const Node* c = g.FindNode(id);
    json e = {{"node", c->name}, {"op_type", c->op_type}, {"via", via}};
    if (!shown.insert(id).second) {
      e["repeat"] = true;  // shown above in this tree: its own branches are there
    } else if (levels <= 1) {
      const int64_t beyond = Reach(g, *c, up);
      if (beyond > 0) e["beyond"] = beyond;
    } else {
      e["children"] = Tree(g, *c, up, levels - 1, shown);
    }
    children.push_back(std::move(e));
  }
  return children;
}

StatusOr<json> LayerCone(const Graph& g, const Node& n, int depth) {
  OPSCOPE_ASSIGN_OR_RETURN(NodeCone cone, ConeOf(g, n.id));
  json names_up = json::array(), names_down = json::array(), ins = json::array(), outs = json::array();
  for (int64_t id : cone.ancestors) names_up.push_back(g.FindNode(id)->name);
  for (int64_t id : cone.descendants) names_down.push_back(g.FindNode(id)->name);
  for (const std::string& in : n.inputs) {
    if (!in.empty()) ins.push_back(TensorJson(g, in, true));
  }
  for (const std::string& out : n.outputs) {
    if (!out.empty()) outs.push_back(TensorJson(g, out, false));
  }
  std::set<int64_t> shown_up{n.id}, shown_down{n.id};
  json j = {{"node", n.name},
            {"node_id", n.id},
            {"op_type", n.op_type},
            {"inputs", ins},
            {"outputs", outs},
            {"ancestors", names_up},
            {"descendants", names_down},
            {"ancestor_tree", Tree(g, n, true, depth, shown_up)},
            {"descendant_tree", Tree(g, n, false, depth, shown_down)}};
  // Another engine's node (import-ort): how it was tied to the framework's.
  if (!n.mapped_by.empty()) j["mapped_by"] = n.mapped_by;
  return j;
}

// The compiled node standing for framework node `f`.
const Node* CompiledOf(const Model& m, const Node& f) {
  for (const Node& c : m.compiled.nodes()) {
    if (std::find(c.fused_from.begin(), c.fused_from.end(), f.id) != c.fused_from.end()) return &c;
  }
  return nullptr;
}

Status NoSuchNode(const Model& m, const std::string& name) {
  std::vector<std::string> names;
  for (const Graph* g : {&m.framework, &m.compiled}) {
    for (const Node& n : g->nodes()) {
      if (std::find(names.begin(), names.end(), n.name) == names.end()) names.push_back(n.name);
    }
  }
  // A short name ("Concat") is often the last part of an exported path name
  // ("/join/concat/Concat") or an op type: those nodes first, then the
  // closest spellings.
  std::vector<std::string> ending;
  const std::string lower = AsciiLower(name);
  for (const Graph* g : {&m.framework, &m.compiled}) {
    for (const Node& n : g->nodes()) {
      const std::string last = AsciiLower(n.name.substr(n.name.find_last_of('/') + 1));
      const bool match = last == lower || AsciiLower(n.op_type) == lower;
      if (match && std::find(ending.begin(), ending.end(), n.name) == ending.end()) ending.push_back(n.name);
    }
  }
  const std::vector<std::string> close = ClosestStrings(name, names, 3);
  // A session graph run without its Model has no framework layer.
  std::string msg = "node '" + name + "': no " + (m.framework.nodes().empty() ? "compiled" : "framework or compiled") +
                    " node has that name";
  if (!ending.empty()) {
    const size_t shown = std::min<size_t>(ending.size(), 5);
    msg += "; did you mean " + JoinStrings(std::vector<std::string>(ending.begin(), ending.begin() + static_cast<std::ptrdiff_t>(shown)), ", ") +
           (ending.size() > shown ? ", ... (" + std::to_string(ending.size()) + " nodes named or typed " + name + ")" : "") + "?";
  } else if (!close.empty()) {
    msg += " (closest: " + JoinStrings(close, ", ") + ")";
  }
  return NotFoundError(msg);
}

}  // namespace

std::string TaskTitle(const ScheduledTask& t) {
  if (!t.node_name.empty()) return t.node_name + " (" + t.op_type + ")";
  return t.desc.label.empty() ? t.op_type : t.desc.label;
}

StatusOr<json> NodePathJson(const Model& m, const Schedule& schedule, const std::string& node_name, int depth) {
  if (depth < 1) return InvalidArgumentError("depth " + std::to_string(depth) + ": expected >= 1");
  const Node* f = nullptr;
  const Node* c = nullptr;
  if (auto found = FindNodeByName(m.framework, node_name); found.ok()) {
    f = *found;
    c = CompiledOf(m, *f);
  } else if (auto compiled = FindNodeByName(m.compiled, node_name); compiled.ok()) {
    c = *compiled;
    if (!c->fused_from.empty()) f = m.framework.FindNode(c->fused_from.front());
  } else {
    return NoSuchNode(m, node_name);
  }
  json j = {{"schema", "opscope.path/1"}, {"node", node_name}, {"depth", depth},
            {"framework", nullptr}, {"compiled", nullptr}};
  if (f) {
    OPSCOPE_ASSIGN_OR_RETURN(j["framework"], LayerCone(m.framework, *f, depth));
  }
  if (c) {
    OPSCOPE_ASSIGN_OR_RETURN(j["compiled"], LayerCone(m.compiled, *c, depth));
  }
  const CriticalPath cp = ComputeCriticalPath(schedule);
  json tasks = json::array();
  bool on_path = false;
  for (int64_t id : cp.task_ids) {
    const ScheduledTask& t = schedule.tasks[id];
    on_path = on_path || (c && t.desc.op_node_id == c->id);
    tasks.push_back({{"task_id", id}, {"name", TaskTitle(t)}, {"duration_us", t.desc.duration_us_calibrated}});
  }
  j["critical_path"] = {{"total_us", cp.total_us}, {"tasks", tasks}, {"node_on_path", on_path}};
  return j;
}

}  // namespace opscope::graph
