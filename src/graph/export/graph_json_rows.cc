// graph.json version 3's columns turned back into version 2's lists of
// objects (graph_json_rows.h). web/graph_rows.js does the same for the page.
#include "graph/export/graph_json_rows.h"

#include <string>
#include <utility>

namespace opscope::graph {
namespace {

using nlohmann::json;

const json& Empty() {
  static const json empty;
  return empty;
}

// j[key] when j is an object holding that member, else null.
const json& MemberOf(const json& j, const char* key) {
  if (!j.is_object()) return Empty();
  auto it = j.find(key);
  return it != j.end() ? *it : Empty();
}

// Entry i of a column, null when the column is missing, short or not a list.
const json& At(const json& column, size_t i) { return column.is_array() && i < column.size() ? column[i] : Empty(); }

// An index into a table: the entry, null when it is not one.
const json& TableEntry(const json& table, const json& index) {
  if (!index.is_number_integer() || index.get<int64_t>() < 0) return Empty();
  return At(table, static_cast<size_t>(index.get<int64_t>()));
}

int64_t IntOr(const json& j, int64_t fallback) { return j.is_number_integer() ? j.get<int64_t>() : fallback; }

size_t ColumnSize(const json& columns, const char* key) {
  const json& c = MemberOf(columns, key);
  return c.is_array() ? c.size() : 0;
}

json ValueRows(const json& columns, const json& tables) {
  json rows = json::array();
  const json &names = MemberOf(columns, "name"), &dtypes = MemberOf(columns, "dtype"),
             &shapes = MemberOf(columns, "shape"), &bytes = MemberOf(columns, "bytes"),
             &flags = MemberOf(columns, "flags"), &offsets = MemberOf(columns, "mem_offset");
  const json& dtype_names = MemberOf(tables, "dtypes");
  for (size_t i = 0; i < ColumnSize(columns, "name"); ++i) {
    json v = {{"name", At(names, i)}};
    const json& dtype = TableEntry(dtype_names, At(dtypes, i));
    v["dtype"] = dtype.is_string() ? dtype : json(nullptr);
    v["shape"] = At(shapes, i).is_array() ? At(shapes, i) : json(nullptr);
    if (IntOr(At(bytes, i), -1) >= 0) v["bytes"] = At(bytes, i);
    const int64_t f = IntOr(At(flags, i), 0);
    if (f & 1) v["constant"] = true;
    if (f & 2) v["graph_input"] = true;
    if (f & 4) v["graph_output"] = true;
    if (IntOr(At(offsets, i), -1) >= 0) v["mem_offset"] = At(offsets, i);
    rows.push_back(std::move(v));
  }
  return rows;
}

// A node's tensors: value indices become the values' names, -1 the empty
// name of an omitted input; a name is kept as it is.
json TensorNames(const json& refs, const json& values) {
  json names = json::array();
  if (!refs.is_array()) return names;
  for (const json& t : refs) {
    if (t.is_number_integer()) {
      const int64_t i = t.get<int64_t>();
      names.push_back(i < 0 ? json("") : MemberOf(At(values, static_cast<size_t>(i)), "name"));
    } else {
      names.push_back(t);
    }
  }
  return names;
}

json NodeRows(const json& columns, const json& extra, const json& tables, const json& values) {
  json rows = json::array();
  const json &steps = MemberOf(columns, "node_id_steps"), &names = MemberOf(columns, "name"),
             &op_types = MemberOf(columns, "op_type"), &inputs = MemberOf(columns, "inputs"),
             &outputs = MemberOf(columns, "outputs"), &executed = MemberOf(columns, "executed"),
             &scope = MemberOf(columns, "scope"), &compiled = MemberOf(columns, "compiled_node_id"),
             &attrs = MemberOf(columns, "attrs"), &kinds = MemberOf(columns, "kind"),
             &domains = MemberOf(columns, "domain"), &fused = MemberOf(columns, "fused_from"),
             &tasks = MemberOf(columns, "mapped_task_ids"), &time = MemberOf(columns, "time_us");
  const json &median = MemberOf(time, "median_us"), &q1 = MemberOf(time, "q1_us"), &q3 = MemberOf(time, "q3_us"),
             &samples = MemberOf(time, "samples");
  int64_t id = 0;
  for (size_t i = 0; i < ColumnSize(columns, "node_id_steps"); ++i) {
    id += IntOr(At(steps, i), 0);
    json n = {{"node_id", id}, {"name", At(names, i)}, {"op_type", TableEntry(MemberOf(tables, "op_types"), At(op_types, i))},
              {"inputs", TensorNames(At(inputs, i), values)}, {"outputs", TensorNames(At(outputs, i), values)},
              {"executed", IntOr(At(executed, i), 1) != 0}};
    if (IntOr(At(scope, i), -1) >= 0) n["scope"] = At(scope, i);
    if (IntOr(At(compiled, i), -1) >= 0) n["compiled_node_id"] = At(compiled, i);
    if (const json& a = TableEntry(MemberOf(tables, "attrs"), At(attrs, i)); a.is_object()) n["attrs"] = a;
    if (const json& k = TableEntry(MemberOf(tables, "kinds"), At(kinds, i)); k.is_string()) n["kind"] = k;
    if (const json& d = TableEntry(MemberOf(tables, "domains"), At(domains, i)); d.is_string() && !d.empty()) {
      n["domain"] = d;
    }
    if (At(fused, i).is_array()) n["fused_from"] = At(fused, i);
    if (At(tasks, i).is_array()) n["mapped_task_ids"] = At(tasks, i);
    if (At(median, i).is_number()) {
      const double a = At(q1, i).is_number() ? At(q1, i).get<double>() : 0, b = At(q3, i).is_number() ? At(q3, i).get<double>() : 0;
      n["time_us"] = {{"median_us", At(median, i)}, {"q1_us", a}, {"q3_us", b}, {"iqr_us", b - a},
                      {"samples", IntOr(At(samples, i), 0)}};
    }
    if (const json& more = MemberOf(extra, std::to_string(i).c_str()); more.is_object()) {
      for (auto it = more.begin(); it != more.end(); ++it) n[it.key()] = it.value();
    }
    rows.push_back(std::move(n));
  }
  return rows;
}

// A route's end: a node's id, or -1 - s for scope s.
json RouteEnd(const json& end) {
  const int64_t e = IntOr(end, 0);
  return e >= 0 ? json{{"node", e}} : json{{"scope", -1 - e}};
}

void LayoutRows(json& layout) {
  if (!layout.is_object()) return;
  if (const json& routes = MemberOf(layout, "routes"); routes.is_object()) {
    json rows = json::array();
    const json &from = MemberOf(routes, "from"), &to = MemberOf(routes, "to"), &points = MemberOf(routes, "points"),
               &weight = MemberOf(routes, "weight");
    for (size_t i = 0; i < ColumnSize(routes, "from"); ++i) {
      rows.push_back({{"from", RouteEnd(At(from, i))}, {"to", RouteEnd(At(to, i))},
                      {"points", At(points, i).is_array() ? At(points, i) : json::array()}, {"weight", IntOr(At(weight, i), 0)}});
    }
    layout["routes"] = std::move(rows);
  }
  const json& scopes = MemberOf(layout, "scopes");
  if (!scopes.is_object()) return;
  json rows = json::array();
  for (size_t s = 0; s < ColumnSize(scopes, "path"); ++s) {
    json sc = {{"id", s}};
    for (const char* key : {"box", "crossings", "label", "nodes", "parent", "path", "ranks"}) sc[key] = At(MemberOf(scopes, key), s);
    sc["folded"] = IntOr(At(MemberOf(scopes, "folded"), s), 0) != 0;
    // Four numbers per slot and per edge; an edge's dummies beside.
    json slots = json::array(), edges = json::array();
    const json& flat_slots = At(MemberOf(scopes, "slots"), s);
    for (size_t k = 0; flat_slots.is_array() && k + 4 <= flat_slots.size(); k += 4) {
      slots.push_back({flat_slots[k], flat_slots[k + 1], flat_slots[k + 2], flat_slots[k + 3]});
    }
    const json &flat_edges = At(MemberOf(scopes, "edges"), s), &dummies = At(MemberOf(scopes, "dummies"), s);
    for (size_t k = 0; flat_edges.is_array() && k + 4 <= flat_edges.size(); k += 4) {
      const json& d = At(dummies, k / 4);
      edges.push_back({flat_edges[k], flat_edges[k + 1], IntOr(flat_edges[k + 2], 0) != 0, flat_edges[k + 3],
                       d.is_array() ? d : json::array()});
    }
    sc["slots"] = std::move(slots);
    sc["edges"] = std::move(edges);
    rows.push_back(std::move(sc));
  }
  layout["scopes"] = std::move(rows);
}

}  // namespace

void LayerRowsOfColumns(json& layer) {
  if (!layer.is_object() || !MemberOf(layer, "nodes").is_object()) return;
  const json tables = MemberOf(layer, "tables");
  json values = ValueRows(MemberOf(layer, "values"), tables);
  layer["nodes"] = NodeRows(MemberOf(layer, "nodes"), MemberOf(layer, "extra"), tables, values);
  layer["values"] = std::move(values);
  layer.erase("extra");
  layer.erase("tables");
  if (layer.contains("layout")) LayoutRows(layer["layout"]);
}

}  // namespace opscope::graph
