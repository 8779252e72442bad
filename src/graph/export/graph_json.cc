#include "graph/export/graph_json.h"

#include <cstdio>
#include <filesystem>
#include <map>

#include "core/file_util.h"
#include "core/json_text.h"
#include "core/json_writer.h"
#include "graph/export/graph_layout.h"
#include "graph/runtime/iteration_stats.h"
#include "opscope/npy.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

// The text is written as it goes (core/json_writer.h), members in the
// sorted order nlohmann's documents had, so graph.json is the same file it
// was; small parts (attributes, the model's header, the layout) still go
// through nlohmann.

void WriteShape(JsonWriter& w, const Value& v) {
  if (!v.rank_known) {
    w.Null();
    return;
  }
  w.BeginArray();
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (v.dims[i] >= 0) w.Int(v.dims[i]);
    else if (i < v.dim_params.size() && !v.dim_params[i].empty()) w.String(v.dim_params[i]);
    else w.Null();
  }
  w.EndArray();
}

void WriteDType(JsonWriter& w, const Value& v) {
  if (v.dtype_known) w.String(DTypeName(v.dtype));
  else w.Null();
}

void WriteTensorRef(JsonWriter& w, const Graph& g, const std::string& name) {
  const Value* v = name.empty() ? nullptr : g.FindValue(name);
  w.BeginObject();
  if (v) WriteDType(w.Key("dtype"), *v);
  w.Key("name").String(name);
  if (v) WriteShape(w.Key("shape"), *v);
  w.EndObject();
}

void WriteInts(JsonWriter& w, const std::vector<int64_t>& v) {
  w.BeginArray();
  for (int64_t x : v) w.Int(x);
  w.EndArray();
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

void WriteSpread(JsonWriter& w, const Spread& s) {
  w.BeginObject().Key("iqr_us").Double(s.iqr_us()).Key("median_us").Double(s.median_us);
  w.Key("q1_us").Double(s.q1_us).Key("q3_us").Double(s.q3_us).Key("samples").Int(s.samples).EndObject();
}

void WriteNode(JsonWriter& w, const Graph& g, const Node& n, const GraphLayout& gl, const RunTiming* timing) {
  w.BeginObject();
  const auto drawn = gl.node_item.find(n.id);
  const auto attached = drawn == gl.node_item.end() ? gl.attached.find(n.id) : gl.attached.end();
  if (attached != gl.attached.end()) WriteInts(w.Key("attached_to"), attached->second);  // drawn with these nodes
  w.Key("attrs").BeginObject();
  for (const auto& [name, v] : n.attrs.all()) w.Key(name).Raw(JsonText(AttrJson(v)));
  w.EndObject();
  if (n.branch_of >= 0) w.Key("branch").BeginObject().Key("if").Int(n.branch_of).Key("name").String(n.branch).EndObject();
  if (!n.branches.empty()) {
    std::map<std::string, const std::vector<std::string>*> sorted;  // one per name, the first
    for (const Node::Branch& b : n.branches) sorted.emplace(b.name, &b.outputs);
    w.Key("branches").BeginObject();
    for (const auto& [name, outputs] : sorted) {
      w.Key(name).BeginArray();
      for (const std::string& o : *outputs) w.String(o);
      w.EndArray();
    }
    w.EndObject();
  }
  if (n.absorbed_into >= 0) w.Key("compiled_node_id").Int(n.absorbed_into);
  w.Key("domain").String(n.domain).Key("executable").Bool(n.executable).Key("executed").Bool(Executed(n));
  WriteInts(w.Key("fused_from"), n.fused_from);
  w.Key("inputs").BeginArray();
  for (const std::string& in : n.inputs) WriteTensorRef(w, g, in);
  w.EndArray();
  w.Key("kind").String(NodeKindName(n.kind)).Key("layer").String(LayerName(n.layer));
  if (n.kind == NodeKind::kTransdata) {
    w.Key("layout").BeginObject().Key("from").String(n.layout_from).Key("to").String(n.layout_to).EndObject();
  }
  if (!n.mapped_by.empty()) w.Key("mapped_by").String(n.mapped_by);
  WriteInts(w.Key("mapped_task_ids"), n.mapped_task_ids);
  w.Key("name").String(n.name).Key("namespace").String(n.name_space).Key("node_id").Int(n.id);
  if (!n.executable) w.Key("not_executable_reason").String(n.not_executable_reason);
  if (!n.note.empty()) w.Key("note").String(n.note);
  w.Key("op_type").String(n.op_type);
  w.Key("outputs").BeginArray();
  for (const std::string& out : n.outputs) WriteTensorRef(w, g, out);
  w.EndArray();
  int scope = -1;
  if (drawn != gl.node_item.end()) {
    // Every drawn node has a slot in its scope; a box only when the opening
    // view shows it (not inside a folded scope).
    const int item = drawn->second;
    const layout::Box& b = gl.layout.items[item];
    scope = gl.request.items[item].scope;
    const layout::Slot& slot = gl.layout.topology[scope].slots[gl.layout.item_slot[item]];
    w.Key("pos").BeginObject().Key("order").Int(slot.order).Key("rank").Int(slot.rank);
    if (b.visible) w.Key("x").Double(b.x).Key("y").Double(b.y);
    w.EndObject();
  }
  if (!Executed(n)) w.Key("reason").String(NotExecutedReason(n));
  if (scope >= 0) w.Key("scope").Int(scope);
  if (!n.subgraphs.empty()) {
    w.Key("subgraphs").BeginArray();
    for (const std::string& sg : n.subgraphs) w.String(sg);
    w.EndArray();
  }
  if (timing != nullptr) {
    if (auto t = timing->nodes.find(n.id); t != timing->nodes.end()) WriteSpread(w.Key("time_us"), t->second);
  }
  w.EndObject();
}

void WriteValue(JsonWriter& w, const Value& v) {
  w.BeginObject();
  const int64_t bytes = v.bytes();
  if (bytes >= 0) w.Key("bytes").Int(bytes);
  w.Key("constant").Bool(v.constant.has_value());
  w.Key("consumers").BeginArray();
  for (const auto& c : v.consumers) w.Int(c);
  w.EndArray();
  WriteDType(w.Key("dtype"), v);
  if (v.is_graph_input) w.Key("graph_input").Bool(true);
  if (v.is_graph_output) w.Key("graph_output").Bool(true);
  if (v.mem_offset >= 0) w.Key("mem_offset").Int(v.mem_offset);
  w.Key("name").String(v.name);
  if (v.producer >= 0) w.Key("producer").Int(v.producer);
  else w.Key("producer").Null();
  WriteShape(w.Key("shape"), v);
  w.EndObject();
}

void WriteStrings(JsonWriter& w, const std::vector<std::string>& v) {
  w.BeginArray();
  for (const std::string& s : v) w.String(s);
  w.EndArray();
}

void WriteLayer(JsonWriter& w, const Graph& g, const RunTiming* timing) {
  const GraphLayout gl = LayoutGraph(g);
  w.BeginObject();
  WriteStrings(w.Key("inputs"), g.inputs());
  WriteLayoutJson(w.Key("layout"), gl);
  if (g.memory().planned) {
    const MemoryPlan& m = g.memory();
    w.Key("memory").BeginObject().Key("arena_bytes").Int(m.arena_bytes).Key("max_live_bytes").Int(m.max_live_bytes);
    w.Key("no_reuse_bytes").Int(m.no_reuse_bytes).Key("planned_values").Int(m.planned_values);
    w.Key("unknown_size_values").Int(m.unknown_size_values).EndObject();
  }
  w.Key("nodes").BeginArray();
  for (const Node& n : g.nodes()) WriteNode(w, g, n, gl, timing);
  w.EndArray();
  WriteStrings(w.Key("outputs"), g.outputs());
  w.Key("values").BeginArray();
  for (const std::string& name : g.value_order()) WriteValue(w, *g.FindValue(name));
  w.EndArray();
  w.EndObject();
}

// Framework node -> compiled node, and compiled nodes no framework node
// explains (inserted layout conversions).
void WriteMapping(JsonWriter& w, const Model& m) {
  w.BeginArray();
  for (const Node& f : m.framework.nodes()) {
    w.BeginObject().Key("compiled");
    if (f.absorbed_into >= 0) w.Int(f.absorbed_into);
    else w.Null();
    w.Key("executed").Bool(Executed(f)).Key("framework").Int(f.id);
    const Node* c = f.absorbed_into >= 0 ? m.compiled.FindNode(f.absorbed_into) : nullptr;
    if (c != nullptr && !c->mapped_by.empty()) w.Key("how").String(c->mapped_by);
    if (!Executed(f)) w.Key("reason").String(NotExecutedReason(f));
    w.EndObject();
  }
  for (const Node& c : m.compiled.nodes()) {
    if (!c.fused_from.empty()) continue;
    const std::string label =
        c.mapped_by.empty() ? "inserted by the compiler: " + std::string(NodeKindName(c.kind)) : c.mapped_by;
    w.BeginObject().Key("compiled").Int(c.id).Key("framework").Null().Key("label").String(label).EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string GraphJsonText(const Model& m, const std::vector<PassResult>& passes, const RunIdentity* run,
                          const RunTiming* timing) {
  std::string text;
  JsonWriter w(text);
  w.BeginObject();
  WriteLayer(w.Key("compiled"), m.compiled, timing);
  WriteLayer(w.Key("framework"), m.framework, nullptr);
  WriteMapping(w.Key("mapping"), m);
  json opsets = json::array();
  for (const OpsetImport& o : m.opsets) opsets.push_back({{"domain", o.domain}, {"version", o.version}});
  const json model = {{"path", m.path},
                      {"ir_version", m.ir_version},
                      {"producer", m.producer},
                      {"opsets", opsets},
                      {"warnings", m.warnings}};
  w.Key("model").Raw(JsonText(model));
  json pj = json::array();
  for (const PassResult& p : passes) {
    pj.push_back({{"index", p.index}, {"name", p.name}, {"rewrites", p.rewrites}, {"wall_ms", p.wall_ms},
                  {"nodes_after", p.nodes_after}});
  }
  w.Key("passes").Raw(JsonText(pj));
  if (run != nullptr) w.Key("run").Raw(JsonText(RunIdentityJson(*run)));
  w.Key("schema").String(kGraphSchema);
  if (timing != nullptr) w.Key("timing").Raw(JsonText(RunTimingJson(*timing)));
  w.EndObject();
  return text;
}

json LayerJson(const Graph& g) {
  std::string text;
  JsonWriter w(text);
  WriteLayer(w, g, nullptr);
  return json::parse(text);
}

json GraphJson(const Model& m, const std::vector<PassResult>& passes) {
  return json::parse(GraphJsonText(m, passes));
}

Status WriteGraphJson(const Model& m, const std::vector<PassResult>& passes, const std::string& path) {
  return WriteFileAtomic(path, GraphJsonText(m, passes));
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
