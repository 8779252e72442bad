// graph.json's reader side: what graph_json.cc leaves out of the file,
// written back into a parsed document (graph_json.h's ExpandGraphJson).
#include <string>
#include <unordered_map>
#include <utility>

#include "core/json_field.h"
#include "graph/export/graph_json.h"
#include "graph/export/graph_json_rows.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

// j[key] when j is an object holding an array there, else an empty array:
// no copy of a layer's lists.
const json& ArrayAt(const json& j, const char* key) {
  static const json empty = json::array();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

// The members a v1 file held of every node; a v2 file writes them only
// where they differ from these.
void SetNodeDefaults(json& n, const char* layer) {
  const std::string name = StringMember(n, "name");
  if (!n.contains("layer")) n["layer"] = layer;
  if (!n.contains("namespace")) n["namespace"] = NamespaceOf(name);
  if (!n.contains("executable")) n["executable"] = true;
  if (!n.contains("kind")) n["kind"] = "op";
  if (!n.contains("domain")) n["domain"] = "";
  if (!n.contains("attrs")) n["attrs"] = json::object();
  if (!n.contains("fused_from")) n["fused_from"] = json::array();
}

// A node's tensors by name become {"name", "dtype", "shape"} as its values
// hold them (a name no value holds stays a name alone, as v1 wrote it).
void ExpandTensorRefs(json& list, const std::unordered_map<std::string, const json*>& values) {
  if (!list.is_array()) return;
  for (json& t : list) {
    if (!t.is_string()) continue;
    json ref = {{"name", t}};
    auto v = values.find(t.get<std::string>());
    if (v != values.end()) {
      ref["dtype"] = v->second->value("dtype", json(nullptr));
      ref["shape"] = v->second->value("shape", json(nullptr));
    }
    t = std::move(ref);
  }
}

std::string NameOf(const json& t) { return t.is_string() ? t.get<std::string>() : StringMember(t, "name"); }

// pos's rank and order, from the layout's slots: [kind, id, rank, order],
// kind 0 an item (a drawn node, by node id).
std::unordered_map<int64_t, std::pair<int64_t, int64_t>> SlotsOfNodes(const json& layer) {
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> slots;
  auto layout = layer.find("layout");
  if (layout == layer.end()) return slots;
  for (const json& scope : ArrayAt(*layout, "scopes")) {
    for (const json& s : ArrayAt(scope, "slots")) {
      if (!s.is_array() || s.size() != 4 || s[0] != 0) continue;
      if (s[1].is_number_integer() && s[2].is_number_integer() && s[3].is_number_integer()) {
        slots[s[1].get<int64_t>()] = {s[2].get<int64_t>(), s[3].get<int64_t>()};
      }
    }
  }
  return slots;
}

// Each value's producer and consumers from the nodes, as Graph::Rebuild
// sets them: the last node writing it, each reading node once, in node order.
void DeriveEdges(json& layer, std::unordered_map<std::string, json*>& values) {
  for (auto& [name, v] : values) {
    (*v)["producer"] = nullptr;
    (*v)["consumers"] = json::array();
  }
  for (const json& n : layer["nodes"]) {
    if (!n.is_object()) continue;
    const json id = n.value("node_id", json(nullptr));
    for (const json& t : ArrayAt(n, "outputs")) {
      auto v = values.find(NameOf(t));
      if (v != values.end() && !v->first.empty()) (*v->second)["producer"] = id;
    }
    for (const json& t : ArrayAt(n, "inputs")) {
      auto v = values.find(NameOf(t));
      if (v == values.end() || v->first.empty()) continue;
      json& c = (*v->second)["consumers"];
      if (c.empty() || c.back() != id) c.push_back(id);
    }
  }
}

void ExpandLayer(json& layer, const char* name, const std::unordered_map<int64_t, const json*>& compiled) {
  if (!layer.is_object() || !layer.contains("nodes") || !layer["nodes"].is_array()) return;
  if (!layer.contains("values") || !layer["values"].is_array()) layer["values"] = json::array();
  std::unordered_map<std::string, json*> values;
  bool has_edges = true;
  for (json& v : layer["values"]) {
    if (!v.is_object()) continue;
    values[StringMember(v, "name")] = &v;
    if (!v.contains("constant")) v["constant"] = false;
    has_edges = has_edges && v.contains("consumers");
  }
  if (!has_edges) DeriveEdges(layer, values);  // before the refs become objects: both forms are read
  const std::unordered_map<std::string, const json*> by_name(values.begin(), values.end());
  const auto slots = SlotsOfNodes(layer);
  for (json& n : layer["nodes"]) {
    if (!n.is_object()) continue;
    SetNodeDefaults(n, name);
    ExpandTensorRefs(n["inputs"], by_name);
    ExpandTensorRefs(n["outputs"], by_name);
    const json* into = nullptr;
    if (auto c = n.find("compiled_node_id"); c != n.end() && c->is_number_integer()) {
      auto it = compiled.find(c->get<int64_t>());
      if (it != compiled.end()) into = it->second;
    }
    if (!n.contains("mapped_task_ids")) {
      n["mapped_task_ids"] = into != nullptr ? ArrayAt(*into, "mapped_task_ids") : json::array();
    }
    if (!n.contains("reason") && n.value("executed", json(true)) == false && into != nullptr) {
      n["reason"] = FusedIntoReason(StringMember(*into, "op_type"), StringMember(*into, "name"),
                                    IntMember(*into, "node_id", -1));
    }
    if (auto s = slots.find(IntMember(n, "node_id", -1)); s != slots.end()) {
      json& pos = n["pos"];
      pos["rank"] = s->second.first;
      pos["order"] = s->second.second;
    }
  }
}

// v1's "mapping": each framework node -> its compiled node, then the
// compiled nodes no framework node explains.
json MappingOf(const json& framework, const json& compiled_layer, const std::unordered_map<int64_t, const json*>& compiled) {
  json mapping = json::array();
  for (const json& f : ArrayAt(framework, "nodes")) {
    if (!f.is_object()) continue;
    json e = {{"framework", f.value("node_id", json(nullptr))}, {"executed", f.value("executed", json(true))}};
    e["compiled"] = f.value("compiled_node_id", json(nullptr));
    if (e["compiled"].is_number_integer()) {
      auto c = compiled.find(e["compiled"].get<int64_t>());
      if (c != compiled.end() && !StringMember(*c->second, "mapped_by").empty()) e["how"] = StringMember(*c->second, "mapped_by");
    }
    if (e["executed"] == false && f.contains("reason")) e["reason"] = f["reason"];
    mapping.push_back(std::move(e));
  }
  for (const json& c : ArrayAt(compiled_layer, "nodes")) {
    if (!c.is_object() || !ArrayAt(c, "fused_from").empty()) continue;
    const std::string by = StringMember(c, "mapped_by");
    mapping.push_back({{"compiled", c.value("node_id", json(nullptr))},
                       {"framework", nullptr},
                       {"label", by.empty() ? "inserted by the compiler: " + StringMember(c, "kind", "op") : by}});
  }
  return mapping;
}

}  // namespace

void ExpandGraphJson(json& g) {
  if (!g.is_object()) return;
  for (const char* layer : {"compiled", "framework"}) {  // version 3's columns first
    if (auto it = g.find(layer); it != g.end()) LayerRowsOfColumns(*it);
  }
  std::unordered_map<int64_t, const json*> compiled;
  json* compiled_layer = g.contains("compiled") && g["compiled"].is_object() ? &g["compiled"] : nullptr;
  if (compiled_layer != nullptr) {
    ExpandLayer(*compiled_layer, "compiled", compiled);
    for (const json& c : ArrayAt(*compiled_layer, "nodes")) {
      if (c.is_object() && c.contains("node_id") && c["node_id"].is_number_integer()) compiled[c["node_id"].get<int64_t>()] = &c;
    }
  }
  if (g.contains("framework")) ExpandLayer(g["framework"], "framework", compiled);
  if (!g.contains("mapping") && compiled_layer != nullptr && g.contains("framework") && g["framework"].is_object()) {
    g["mapping"] = MappingOf(g["framework"], *compiled_layer, compiled);
  }
}

}  // namespace opscope::graph
