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

void WriteStrings(JsonWriter& w, const std::vector<std::string>& v) {
  w.BeginArray();
  for (const std::string& s : v) w.String(s);
  w.EndArray();
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

// graph.json leaves out of a node what a reader rebuilds exactly
// (graph_json.h's ExpandGraphJson, web/model.js, python/opscope's
// load_run): its tensors' dtype and shape (the values'), its layer, a
// namespace that is its name less the last part, the defaults (kind "op",
// no domain, no attributes, executable), a fused node's reason and tasks
// (its compiled node's), pos's rank and order (the layout's slots). A
// 100,000-node model's file was 127 MB with them.
void WriteNode(JsonWriter& w, const Node& n, const GraphLayout& gl, const RunTiming* timing, const Graph* compiled) {
  w.BeginObject();
  const auto drawn = gl.node_item.find(n.id);
  const auto attached = drawn == gl.node_item.end() ? gl.attached.find(n.id) : gl.attached.end();
  if (attached != gl.attached.end()) WriteInts(w.Key("attached_to"), attached->second);  // drawn with these nodes
  if (!n.attrs.all().empty()) {
    w.Key("attrs").BeginObject();
    for (const auto& [name, v] : n.attrs.all()) w.Key(name).Raw(JsonText(AttrJson(v)));
    w.EndObject();
  }
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
  const Node* into = nullptr;  // the compiled node a framework node became
  if (n.absorbed_into >= 0) {
    w.Key("compiled_node_id").Int(n.absorbed_into);
    if (compiled != nullptr) into = compiled->FindNode(n.absorbed_into);
  }
  if (!n.domain.empty()) w.Key("domain").String(n.domain);
  if (!n.executable) w.Key("executable").Bool(false);
  w.Key("executed").Bool(Executed(n));
  if (!n.fused_from.empty()) WriteInts(w.Key("fused_from"), n.fused_from);
  WriteStrings(w.Key("inputs"), n.inputs);
  if (n.kind != NodeKind::kOp) w.Key("kind").String(NodeKindName(n.kind));
  if (n.kind == NodeKind::kTransdata) {
    w.Key("layout").BeginObject().Key("from").String(n.layout_from).Key("to").String(n.layout_to).EndObject();
  }
  if (!n.mapped_by.empty()) w.Key("mapped_by").String(n.mapped_by);
  // Left out when a reader's default holds: its compiled node's, else none.
  if (into != nullptr ? into->mapped_task_ids != n.mapped_task_ids : !n.mapped_task_ids.empty()) {
    WriteInts(w.Key("mapped_task_ids"), n.mapped_task_ids);
  }
  w.Key("name").String(n.name);
  if (n.name_space != NamespaceOf(n.name)) w.Key("namespace").String(n.name_space);
  w.Key("node_id").Int(n.id);
  if (!n.executable) w.Key("not_executable_reason").String(n.not_executable_reason);
  if (!n.note.empty()) w.Key("note").String(n.note);
  w.Key("op_type").String(n.op_type);
  WriteStrings(w.Key("outputs"), n.outputs);
  int scope = -1;
  if (drawn != gl.node_item.end()) {
    // Every drawn node has a slot in its scope; a box only when the opening
    // view shows it (not inside a folded scope).
    const int item = drawn->second;
    const layout::Box& b = gl.layout.items[item];
    scope = gl.request.items[item].scope;
    if (b.visible) w.Key("pos").BeginObject().Key("x").Double(b.x).Key("y").Double(b.y).EndObject();
  }
  if (!Executed(n)) {
    const std::string reason = NotExecutedReason(n);
    if (into == nullptr || reason != FusedIntoReason(*into)) w.Key("reason").String(reason);
  }
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
  if (v.constant.has_value()) w.Key("constant").Bool(true);  // a reader's default is false
  WriteDType(w.Key("dtype"), v);
  if (v.is_graph_input) w.Key("graph_input").Bool(true);
  if (v.is_graph_output) w.Key("graph_output").Bool(true);
  if (v.mem_offset >= 0) w.Key("mem_offset").Int(v.mem_offset);
  w.Key("name").String(v.name);  // producer and consumers: the nodes' inputs and outputs say
  WriteShape(w.Key("shape"), v);
  w.EndObject();
}

// `compiled`: for the framework layer, the compiled graph its nodes became.
void WriteLayer(JsonWriter& w, const Graph& g, const RunTiming* timing, const Graph* compiled) {
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
  for (const Node& n : g.nodes()) WriteNode(w, n, gl, timing, compiled);
  w.EndArray();
  WriteStrings(w.Key("outputs"), g.outputs());
  w.Key("values").BeginArray();
  for (const std::string& name : g.value_order()) WriteValue(w, *g.FindValue(name));
  w.EndArray();
  w.EndObject();
}

}  // namespace

std::string GraphJsonText(const Model& m, const std::vector<PassResult>& passes, const RunIdentity* run,
                          const RunTiming* timing) {
  std::string text;
  JsonWriter w(text);
  w.BeginObject();
  WriteLayer(w.Key("compiled"), m.compiled, timing, nullptr);
  // No "mapping": each framework node's compiled_node_id, and each compiled
  // node's fused_from, say it (ExpandGraphJson writes it out again).
  WriteLayer(w.Key("framework"), m.framework, nullptr, &m.compiled);
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
  WriteLayer(w, g, nullptr, nullptr);
  return json::parse(text);
}

json GraphJson(const Model& m, const std::vector<PassResult>& passes) {
  json g = json::parse(GraphJsonText(m, passes));
  ExpandGraphJson(g);
  return g;
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
