#include "graph/export/graph_json.h"

#include <cstdio>
#include <filesystem>
#include <future>
#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>

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

// Distinct strings by first appearance: a column holds their indices and
// the layer's "tables" the strings (a 100,000-node model has a few dozen op
// types and attribute sets).
class Interned {
 public:
  int64_t Index(const std::string& s) {
    auto [it, added] = index_.emplace(s, static_cast<int64_t>(texts_.size()));
    if (added) texts_.push_back(s);
    return it->second;
  }
  void WriteStrings(JsonWriter& w) const {
    w.BeginArray();
    for (const std::string& s : texts_) w.String(s);
    w.EndArray();
  }
  void WriteRaw(JsonWriter& w) const {  // entries that are JSON text already
    w.BeginArray();
    for (const std::string& s : texts_) w.Raw(s);
    w.EndArray();
  }

 private:
  std::unordered_map<std::string, int64_t> index_;
  std::vector<std::string> texts_;
};

std::string AttrsText(const Node& n) {
  std::string text;
  JsonWriter w(text);
  w.BeginObject();
  for (const auto& [name, v] : n.attrs.all()) w.Key(name).Raw(JsonText(AttrJson(v)));
  w.EndObject();
  return text;
}

// One layer's tables, filled while its columns are written.
struct LayerTables {
  Interned op_types, kinds, domains, attrs, dtypes;
};

// A value's index in the layer's "values" columns.
using ValueIndex = std::unordered_map<std::string_view, int64_t>;

// A node's tensors: a value's index, -1 for an omitted optional input (""),
// the name itself for a name no value holds.
void WriteTensorRefs(JsonWriter& w, const std::vector<std::string>& names, const ValueIndex& values) {
  w.BeginArray();
  for (const std::string& t : names) {
    if (t.empty()) {
      w.Int(-1);
      continue;
    }
    auto v = values.find(t);
    if (v != values.end()) w.Int(v->second);
    else w.String(t);
  }
  w.EndArray();
}

// What a framework node's compiled node is, when the compiled layer has it.
const Node* CompiledInto(const Node& n, const Graph* compiled) {
  return n.absorbed_into >= 0 && compiled != nullptr ? compiled->FindNode(n.absorbed_into) : nullptr;
}

// Left out when a reader's default holds: its compiled node's, else none.
bool WritesTaskIds(const Node& n, const Node* into) {
  return into != nullptr ? into->mapped_task_ids != n.mapped_task_ids : !n.mapped_task_ids.empty();
}

// The members few nodes have, as version 2 wrote them, in the layer's
// "extra" object under the node's index. False when it has none.
bool WriteExtra(JsonWriter& w, size_t index, const Node& n, const GraphLayout& gl, const Node* into) {
  const auto drawn = gl.node_item.find(n.id);
  const auto attached = drawn == gl.node_item.end() ? gl.attached.find(n.id) : gl.attached.end();
  const bool visible = drawn != gl.node_item.end() && gl.layout.items[drawn->second].visible;
  const std::string reason = Executed(n) ? "" : NotExecutedReason(n);
  const bool writes_reason = !Executed(n) && (into == nullptr || reason != FusedIntoReason(*into));
  const bool writes_namespace = n.name_space != NamespaceOf(n.name);
  if (attached == gl.attached.end() && n.branch_of < 0 && n.branches.empty() && n.executable &&
      n.kind != NodeKind::kTransdata && n.mapped_by.empty() && !writes_namespace && n.note.empty() && !visible &&
      !writes_reason && n.subgraphs.empty()) {
    return false;
  }
  w.Key(std::to_string(index)).BeginObject();
  if (attached != gl.attached.end()) WriteInts(w.Key("attached_to"), attached->second);  // drawn with these nodes
  if (n.branch_of >= 0) w.Key("branch").BeginObject().Key("if").Int(n.branch_of).Key("name").String(n.branch).EndObject();
  if (!n.branches.empty()) {
    std::map<std::string, const std::vector<std::string>*> sorted;  // one per name, the first
    for (const Node::Branch& b : n.branches) sorted.emplace(b.name, &b.outputs);
    w.Key("branches").BeginObject();
    for (const auto& [name, outputs] : sorted) WriteStrings(w.Key(name), *outputs);
    w.EndObject();
  }
  if (!n.executable) w.Key("executable").Bool(false);
  if (n.kind == NodeKind::kTransdata) {
    w.Key("layout").BeginObject().Key("from").String(n.layout_from).Key("to").String(n.layout_to).EndObject();
  }
  if (!n.mapped_by.empty()) w.Key("mapped_by").String(n.mapped_by);
  if (writes_namespace) w.Key("namespace").String(n.name_space);
  if (!n.executable) w.Key("not_executable_reason").String(n.not_executable_reason);
  if (!n.note.empty()) w.Key("note").String(n.note);
  if (visible) {
    // A box only when the opening view shows it (not inside a folded scope).
    const layout::Box& b = gl.layout.items[drawn->second];
    w.Key("pos").BeginObject().Key("x").Double(b.x).Key("y").Double(b.y).EndObject();
  }
  if (writes_reason) w.Key("reason").String(reason);
  if (!n.subgraphs.empty()) WriteStrings(w.Key("subgraphs"), n.subgraphs);
  w.EndObject();
  return true;
}

// graph.json version 3 writes a layer's nodes as columns: one array per
// member, node i's entry at index i, so no member name is written per node
// (version 2, a list of objects, was 62 MB at 100,000 nodes). What a reader
// rebuilds exactly stays out, as in version 2: the tensors' dtype and shape
// (the values'), the layer, a namespace its name gives, the defaults, a
// fused node's reason and tasks (its compiled node's), pos's rank and order
// (the layout's slots). graph_json.h lists the columns; the readers
// (ExpandGraphJson, web/graph_rows.js) turn them back into objects.
void WriteNodeColumns(JsonWriter& w, const Graph& g, const GraphLayout& gl, const RunTiming* timing,
                      const Graph* compiled, const ValueIndex& values, LayerTables& tables) {
  const std::vector<Node>& nodes = g.nodes();
  std::vector<const Node*> into(nodes.size(), nullptr);
  bool any_compiled = false, any_attrs = false, any_kind = false, any_domain = false, any_fused = false,
       any_tasks = false, any_time = false;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    into[i] = CompiledInto(n, compiled);
    any_compiled |= n.absorbed_into >= 0;
    any_attrs |= !n.attrs.all().empty();
    any_kind |= n.kind != NodeKind::kOp;
    any_domain |= !n.domain.empty();
    any_fused |= !n.fused_from.empty();
    any_tasks |= WritesTaskIds(n, into[i]);
    any_time |= timing != nullptr && timing->nodes.count(n.id) > 0;
  }
  // Each column: a key, then one entry per node.
  auto column = [&](const char* key, auto&& entry) {
    w.Key(key).BeginArray();
    for (size_t i = 0; i < nodes.size(); ++i) entry(i, nodes[i]);
    w.EndArray();
  };
  w.BeginObject();
  if (any_attrs) {
    column("attrs", [&](size_t, const Node& n) { w.Int(n.attrs.all().empty() ? -1 : tables.attrs.Index(AttrsText(n))); });
  }
  if (any_compiled) column("compiled_node_id", [&](size_t, const Node& n) { w.Int(n.absorbed_into); });
  if (any_domain) column("domain", [&](size_t, const Node& n) { w.Int(tables.domains.Index(n.domain)); });
  column("executed", [&](size_t, const Node& n) { w.Int(Executed(n) ? 1 : 0); });
  if (any_fused) {
    column("fused_from", [&](size_t, const Node& n) {
      if (n.fused_from.empty()) w.Null();
      else WriteInts(w, n.fused_from);
    });
  }
  column("inputs", [&](size_t, const Node& n) { WriteTensorRefs(w, n.inputs, values); });
  if (any_kind) column("kind", [&](size_t, const Node& n) { w.Int(tables.kinds.Index(NodeKindName(n.kind))); });
  if (any_tasks) {
    column("mapped_task_ids", [&](size_t i, const Node& n) {
      if (WritesTaskIds(n, into[i])) WriteInts(w, n.mapped_task_ids);
      else w.Null();
    });
  }
  column("name", [&](size_t, const Node& n) { w.String(n.name); });
  // Each id as its step from the one before (the first from 0): ids run in
  // order, so most steps are 1.
  int64_t previous = 0;
  column("node_id_steps", [&](size_t, const Node& n) {
    w.Int(n.id - previous);
    previous = n.id;
  });
  column("op_type", [&](size_t, const Node& n) { w.Int(tables.op_types.Index(n.op_type)); });
  column("outputs", [&](size_t, const Node& n) { WriteTensorRefs(w, n.outputs, values); });
  column("scope", [&](size_t, const Node& n) {
    const auto drawn = gl.node_item.find(n.id);
    w.Int(drawn == gl.node_item.end() ? -1 : gl.request.items[drawn->second].scope);
  });
  if (any_time) {
    // A node's spread, as version 2's "time_us" object held it less its iqr
    // (q3 - q1); null for a node that was not timed.
    auto spread_column = [&](const char* key, auto&& field) {
      w.Key(key).BeginArray();
      for (const Node& n : nodes) {
        auto t = timing->nodes.find(n.id);
        if (t == timing->nodes.end()) w.Null();
        else field(t->second);
      }
      w.EndArray();
    };
    w.Key("time_us").BeginObject();
    spread_column("median_us", [&](const Spread& s) { w.Double(s.median_us); });
    spread_column("q1_us", [&](const Spread& s) { w.Double(s.q1_us); });
    spread_column("q3_us", [&](const Spread& s) { w.Double(s.q3_us); });
    spread_column("samples", [&](const Spread& s) { w.Int(s.samples); });
    w.EndObject();
  }
  w.EndObject();
  w.Key("extra").BeginObject();
  for (size_t i = 0; i < nodes.size(); ++i) WriteExtra(w, i, nodes[i], gl, into[i]);
  w.EndObject();
}

// A layer's values as columns: name, dtype (an index into the tables, -1
// unknown), shape, bytes (-1 unknown), flags (1 constant, 2 a graph input,
// 4 a graph output) and, once memory is planned, mem_offset (-1 none).
// Producer and consumers: the nodes' inputs and outputs say.
void WriteValueColumns(JsonWriter& w, const Graph& g, LayerTables& tables) {
  std::vector<const Value*> values;
  values.reserve(g.value_order().size());
  bool any_offset = false;
  for (const std::string& name : g.value_order()) {
    values.push_back(g.FindValue(name));
    any_offset |= values.back()->mem_offset >= 0;
  }
  auto column = [&](const char* key, auto&& entry) {
    w.Key(key).BeginArray();
    for (const Value* v : values) entry(*v);
    w.EndArray();
  };
  w.BeginObject();
  column("bytes", [&](const Value& v) { w.Int(std::max<int64_t>(v.bytes(), -1)); });
  column("dtype", [&](const Value& v) { w.Int(v.dtype_known ? tables.dtypes.Index(DTypeName(v.dtype)) : -1); });
  column("flags", [&](const Value& v) {
    w.Int((v.constant.has_value() ? 1 : 0) | (v.is_graph_input ? 2 : 0) | (v.is_graph_output ? 4 : 0));
  });
  if (any_offset) column("mem_offset", [&](const Value& v) { w.Int(std::max<int64_t>(v.mem_offset, -1)); });
  column("name", [&](const Value& v) { w.String(v.name); });
  column("shape", [&](const Value& v) { WriteShape(w, v); });
  w.EndObject();
}

// `compiled`: for the framework layer, the compiled graph its nodes became.
void WriteLayer(JsonWriter& w, const Graph& g, const RunTiming* timing, const Graph* compiled) {
  const GraphLayout gl = LayoutGraph(g);
  ValueIndex values;
  values.reserve(g.value_order().size());
  for (const std::string& name : g.value_order()) values.emplace(name, static_cast<int64_t>(values.size()));
  LayerTables tables;
  w.BeginObject();
  WriteStrings(w.Key("inputs"), g.inputs());
  WriteLayoutJson(w.Key("layout"), gl);
  if (g.memory().planned) {
    const MemoryPlan& m = g.memory();
    w.Key("memory").BeginObject().Key("arena_bytes").Int(m.arena_bytes).Key("max_live_bytes").Int(m.max_live_bytes);
    w.Key("no_reuse_bytes").Int(m.no_reuse_bytes).Key("planned_values").Int(m.planned_values);
    w.Key("unknown_size_values").Int(m.unknown_size_values).EndObject();
  }
  WriteNodeColumns(w.Key("nodes"), g, gl, timing, compiled, values, tables);
  WriteStrings(w.Key("outputs"), g.outputs());
  WriteValueColumns(w.Key("values"), g, tables);
  w.Key("tables").BeginObject();
  tables.attrs.WriteRaw(w.Key("attrs"));
  tables.domains.WriteStrings(w.Key("domains"));
  tables.dtypes.WriteStrings(w.Key("dtypes"));
  tables.kinds.WriteStrings(w.Key("kinds"));
  tables.op_types.WriteStrings(w.Key("op_types"));
  w.EndObject();
  w.EndObject();
}

}  // namespace

std::string GraphJsonText(const Model& m, const std::vector<PassResult>& passes, const RunIdentity* run,
                          const RunTiming* timing) {
  // The framework layer is laid out and written on a second thread while
  // this one does the compiled layer: they only read the model, and each is
  // a third of a large model's exports.
  std::future<std::string> framework = std::async(std::launch::async, [&m] {
    std::string layer;
    JsonWriter w(layer);
    // No "mapping": each framework node's compiled_node_id, and each compiled
    // node's fused_from, say it (ExpandGraphJson writes it out again).
    WriteLayer(w, m.framework, nullptr, &m.compiled);
    return layer;
  });
  std::string text;
  JsonWriter w(text);
  w.BeginObject();
  WriteLayer(w.Key("compiled"), m.compiled, timing, nullptr);
  w.Key("framework").Raw(framework.get());
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
