#include "graph/export/graph_json.h"

#include <cstdio>
#include <filesystem>

#include "core/file_util.h"
#include "core/json_text.h"
#include "graph/export/graph_layout.h"
#include "opscope/npy.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

json ShapeJson(const Value& v) {
  if (!v.rank_known) return nullptr;
  json dims = json::array();
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (v.dims[i] >= 0) dims.push_back(v.dims[i]);
    else if (i < v.dim_params.size() && !v.dim_params[i].empty()) dims.push_back(v.dim_params[i]);
    else dims.push_back(nullptr);
  }
  return dims;
}

json TensorRef(const Graph& g, const std::string& name) {
  json t = {{"name", name}};
  const Value* v = name.empty() ? nullptr : g.FindValue(name);
  if (v) {
    t["dtype"] = v->dtype_known ? json(DTypeName(v->dtype)) : json(nullptr);
    t["shape"] = ShapeJson(*v);
  }
  return t;
}

json AttrJson(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> json {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, Tensor>) return x.Describe();
        else return x;
      },
      v);
}

// A node that cannot run never ran, whatever stage the graph is at (an
// import that was never executed still says so, and why).
bool Executed(const Node& n) { return n.executed && n.executable; }

// The compiler's reason comes first: a node it removed (on an If branch not
// taken) never reached the runtime, so whether it could run does not matter.
std::string NotExecutedReason(const Node& n) {
  if (!n.not_executed_reason.empty()) return n.not_executed_reason;
  if (!n.executable) return "not executable: " + n.not_executable_reason;
  return "";
}

json NodeJson(const Graph& g, const Node& n, const GraphLayout& gl) {
  json j = {{"node_id", n.id},          {"layer", LayerName(n.layer)}, {"kind", NodeKindName(n.kind)},
            {"op_type", n.op_type},     {"domain", n.domain},          {"name", n.name},
            {"namespace", n.name_space}, {"executed", Executed(n)},    {"executable", n.executable}};
  json ins = json::array(), outs = json::array(), attrs = json::object();
  for (const std::string& in : n.inputs) ins.push_back(TensorRef(g, in));
  for (const std::string& out : n.outputs) outs.push_back(TensorRef(g, out));
  for (const auto& [name, v] : n.attrs.all()) attrs[name] = AttrJson(v);
  j["inputs"] = std::move(ins);
  j["outputs"] = std::move(outs);
  j["attrs"] = std::move(attrs);
  j["fused_from"] = n.fused_from;
  j["mapped_task_ids"] = n.mapped_task_ids;
  if (!Executed(n)) j["reason"] = NotExecutedReason(n);
  if (!n.executable) j["not_executable_reason"] = n.not_executable_reason;
  if (!n.subgraphs.empty()) j["subgraphs"] = n.subgraphs;
  if (!n.branches.empty()) {
    json branches = json::object();
    for (const Node::Branch& b : n.branches) branches[b.name] = b.outputs;
    j["branches"] = std::move(branches);
  }
  if (n.branch_of >= 0) j["branch"] = {{"if", n.branch_of}, {"name", n.branch}};
  if (n.absorbed_into >= 0) j["compiled_node_id"] = n.absorbed_into;
  if (n.kind == NodeKind::kTransdata) j["layout"] = {{"from", n.layout_from}, {"to", n.layout_to}};
  if (!n.note.empty()) j["note"] = n.note;
  if (!n.mapped_by.empty()) j["mapped_by"] = n.mapped_by;
  if (auto it = gl.node_item.find(n.id); it != gl.node_item.end()) {
    // Every drawn node has a slot in its scope; a box only when the opening
    // view shows it (not inside a folded scope).
    const int item = it->second;
    const layout::Box& b = gl.layout.items[item];
    const layout::Slot& slot = gl.layout.topology[gl.request.items[item].scope].slots[gl.layout.item_slot[item]];
    j["scope"] = gl.request.items[item].scope;
    j["pos"] = {{"rank", slot.rank}, {"order", slot.order}};
    if (b.visible) j["pos"]["x"] = b.x, j["pos"]["y"] = b.y;
  } else if (auto a = gl.attached.find(n.id); a != gl.attached.end()) {
    j["attached_to"] = a->second;  // drawn with these nodes, not as a box
  }
  return j;
}

json ValueJson(const Value& v) {
  json j = {{"name", v.name},
            {"dtype", v.dtype_known ? json(DTypeName(v.dtype)) : json(nullptr)},
            {"shape", ShapeJson(v)},
            {"constant", v.constant.has_value()},
            {"producer", v.producer >= 0 ? json(v.producer) : json(nullptr)},
            {"consumers", v.consumers}};
  if (v.is_graph_input) j["graph_input"] = true;
  if (v.is_graph_output) j["graph_output"] = true;
  if (v.mem_offset >= 0) j["mem_offset"] = v.mem_offset;
  const int64_t bytes = v.bytes();
  if (bytes >= 0) j["bytes"] = bytes;
  return j;
}

}  // namespace

json LayerJson(const Graph& g) {
  const GraphLayout gl = LayoutGraph(g);
  json nodes = json::array(), values = json::array();
  for (const Node& n : g.nodes()) nodes.push_back(NodeJson(g, n, gl));
  for (const std::string& name : g.value_order()) values.push_back(ValueJson(*g.FindValue(name)));
  json j = {{"nodes", std::move(nodes)}, {"values", std::move(values)}, {"inputs", g.inputs()},
            {"outputs", g.outputs()}, {"layout", LayoutJson(gl)}};
  if (g.memory().planned) {
    const MemoryPlan& m = g.memory();
    j["memory"] = {{"arena_bytes", m.arena_bytes},       {"no_reuse_bytes", m.no_reuse_bytes},
                   {"max_live_bytes", m.max_live_bytes}, {"planned_values", m.planned_values},
                   {"unknown_size_values", m.unknown_size_values}};
  }
  return j;
}

json GraphJson(const Model& m, const std::vector<PassResult>& passes) {
  json opsets = json::array();
  for (const OpsetImport& o : m.opsets) opsets.push_back({{"domain", o.domain}, {"version", o.version}});
  json j = {{"schema", kGraphSchema},
            {"model",
             {{"path", m.path}, {"ir_version", m.ir_version}, {"producer", m.producer}, {"opsets", opsets},
              {"warnings", m.warnings}}},
            {"framework", LayerJson(m.framework)},
            {"compiled", LayerJson(m.compiled)}};
  json pj = json::array();
  for (const PassResult& p : passes) {
    pj.push_back({{"index", p.index}, {"name", p.name}, {"rewrites", p.rewrites}, {"wall_ms", p.wall_ms},
                  {"nodes_after", p.nodes_after}});
  }
  j["passes"] = std::move(pj);
  // Framework node -> compiled node, and compiled nodes no framework node
  // explains (inserted layout conversions).
  json mapping = json::array();
  for (const Node& f : m.framework.nodes()) {
    json e = {{"framework", f.id}, {"compiled", f.absorbed_into >= 0 ? json(f.absorbed_into) : json(nullptr)},
              {"executed", Executed(f)}};
    if (!Executed(f)) e["reason"] = NotExecutedReason(f);
    const Node* c = f.absorbed_into >= 0 ? m.compiled.FindNode(f.absorbed_into) : nullptr;
    if (c != nullptr && !c->mapped_by.empty()) e["how"] = c->mapped_by;
    mapping.push_back(std::move(e));
  }
  for (const Node& c : m.compiled.nodes()) {
    if (c.fused_from.empty()) {
      const std::string label =
          c.mapped_by.empty() ? "inserted by the compiler: " + std::string(NodeKindName(c.kind)) : c.mapped_by;
      mapping.push_back({{"framework", nullptr}, {"compiled", c.id}, {"label", label}});
    }
  }
  j["mapping"] = std::move(mapping);
  return j;
}

Status WriteGraphJson(const Model& m, const std::vector<PassResult>& passes, const std::string& path) {
  return WriteFileAtomic(path, JsonText(GraphJson(m, passes)));
}

Status WritePassDump(const std::string& dir, const PassResult& pass, const Model& m, const RunIdentity& run) {
  OPSCOPE_RETURN_IF_ERROR(MakeOutputDir(dir, "dump_passes"));
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%02d_", pass.index);
  json j = {{"schema", kGraphSchema},
            {"run", RunIdentityJson(run)},
            {"pass", {{"index", pass.index}, {"name", pass.name}, {"rewrites", pass.rewrites}}},
            {"compiled", LayerJson(m.compiled)}};
  return WriteFileAtomic(dir + "/" + prefix + pass.name + ".json", JsonText(j));
}

}  // namespace opscope::graph
