#include "report/page_data.h"
#include "core/json_text.h"
#include "graph/export/graph_json.h"
#include "graph/harness/accuracy_json.h"
#include "graph/ir/ir.h"

#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

namespace opscope {
namespace {

using nlohmann::json;

std::string Str(const json& n, const char* key) {
  auto it = n.find(key);
  return it != n.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// What web/model.js rebuilds (graph::NamespaceOf is the namespace's rule there too).
std::string FusedReason(const json& compiled) {
  return graph::FusedIntoReason(Str(compiled, "op_type"), Str(compiled, "name"), compiled.value("node_id", int64_t{-1}));
}

// Drops from one node what the page can rebuild exactly, and only then.
void SlimNode(json& n, const std::string& layer, const std::map<int64_t, const json*>& compiled) {
  for (const char* side : {"inputs", "outputs"}) {
    auto list = n.find(side);
    if (list == n.end() || !list->is_array()) continue;
    for (json& t : *list) {
      if (t.is_object() && t.contains("name")) t = json{{"name", t["name"]}};
    }
  }
  if (Str(n, "layer") == layer) n.erase("layer");
  if (n.contains("namespace") && Str(n, "namespace") == graph::NamespaceOf(Str(n, "name"))) n.erase("namespace");
  if (auto c = n.find("compiled_node_id"); c != n.end() && c->is_number_integer() && n.contains("reason")) {
    auto it = compiled.find(c->get<int64_t>());
    if (it != compiled.end() && Str(n, "reason") == FusedReason(*it->second)) n.erase("reason");
  }
  for (const char* key : {"fused_from", "mapped_task_ids", "attrs", "domain"}) {
    auto it = n.find(key);
    if (it != n.end() && (it->empty() || (it->is_string() && it->get<std::string>().empty()))) n.erase(it);
  }
  if (auto e = n.find("executable"); e != n.end() && e->is_boolean() && e->get<bool>()) n.erase(e);  // the default
  if (auto pos = n.find("pos"); pos != n.end() && pos->is_object()) {
    pos->erase("rank");  // the layout's slots hold them
    pos->erase("order");
  }
}

}  // namespace

std::string GraphForPage(const std::string& graph_json) {
  // Versions 2 and 3 (graph/export/graph_json.h) hold nothing the page
  // rebuilds: they go as they are, unparsed (a 100,000-node model's is tens
  // of MB). The key and value with their quotes can only be JSON's own
  // structure, never inside a string, where a quote is escaped.
  for (const char* schema : {graph::kGraphSchema, "opscope.graph/2"}) {
    if (graph_json.find(std::string("\"schema\":\"") + schema + "\"") != std::string::npos) return graph_json;
  }
  json g = json::parse(graph_json, nullptr, false);
  if (!g.is_object()) return graph_json;
  std::map<int64_t, json> compiled_copy;  // the compiled nodes as written, before their own slimming
  if (auto c = g.find("compiled"); c != g.end() && c->is_object() && c->contains("nodes") && (*c)["nodes"].is_array()) {
    for (const json& n : (*c)["nodes"]) {
      if (n.is_object() && n.contains("node_id") && n["node_id"].is_number_integer()) {
        compiled_copy[n["node_id"].get<int64_t>()] = json{{"op_type", n.value("op_type", "")},
                                                          {"name", n.value("name", "")},
                                                          {"node_id", n["node_id"]}};
      }
    }
  }
  std::map<int64_t, const json*> compiled;
  for (const auto& [id, n] : compiled_copy) compiled[id] = &n;
  for (const char* layer : {"framework", "compiled"}) {
    auto l = g.find(layer);
    if (l == g.end() || !l->is_object()) continue;
    auto nodes = l->find("nodes");
    if (nodes == l->end() || !nodes->is_array()) continue;
    for (json& n : *nodes) {
      if (n.is_object()) SlimNode(n, layer, compiled);
    }
    if (auto values = l->find("values"); values != l->end() && values->is_array()) {
      for (json& v : *values) {
        if (!v.is_object()) continue;
        auto c = v.find("constant");
        if (c != v.end() && c->is_boolean() && !c->get<bool>()) v.erase(c);  // absent reads as false
        v.erase("producer");  // the nodes' inputs and outputs say
        v.erase("consumers");
      }
    }
  }
  g.erase("mapping");  // each framework node's compiled_node_id says the same
  return JsonText(g);
}

std::string SummaryForPage(const std::string& summary_json) {
  json s = json::parse(summary_json, nullptr, false);
  if (!s.is_object()) return summary_json;
  s.erase("suspects");
  if (auto r = s.find("roofline"); r != s.end() && r->is_object()) r->erase("tasks");  // the trace's args hold each task's
  return JsonText(s);
}

std::string DiffForPage(const std::string& diff_json) {
  json d = json::parse(diff_json, nullptr, false);
  if (!d.is_object()) return diff_json;
  for (const char* legacy : {"op_type_time", "total_task_us", "top_tasks"}) d.erase(legacy);
  if (auto times = d.find("node_times"); times != d.end() && times->is_array()) {
    json kept = json::array();
    int64_t unchanged = 0, within_noise = 0;
    // To the nanosecond and the thousandth of a percent: what the page prints, and less.
    const auto rounded = [](const json& v) { return v.is_number() ? json(std::round(v.get<double>() * 1e3) / 1e3) : v; };
    for (const json& e : *times) {
      if (!e.is_object()) continue;
      const std::string verdict = Str(e, "verdict");
      if (verdict == "unchanged" || verdict == "within noise") {
        ++(verdict == "unchanged" ? unchanged : within_noise);
        continue;
      }
      const auto median = [&](const char* side) {
        auto s = e.find(side);
        return s != e.end() && s->is_object() && s->contains("median_us") ? rounded((*s)["median_us"]) : json(nullptr);
      };
      kept.push_back({{"node", e.value("node", json(nullptr))},
                      {"verdict", verdict},
                      {"change_pct", rounded(e.value("change_pct", json(nullptr)))},
                      {"change_us", rounded(e.value("change_us", json(nullptr)))},
                      {"base_us", median("base")},
                      {"new_us", median("new")}});
    }
    *times = std::move(kept);
    d["node_times_unchanged"] = unchanged;
    d["node_times_within_noise"] = within_noise;
  }
  return JsonText(d);
}

std::string AccuracyForPage(const std::string& accuracy_json, const std::string& run_id, const std::string& file) {
  const auto refused = [&](const std::string& why) { return JsonText(json{{"error", file + ": " + why}}); };
  json a = json::parse(accuracy_json, nullptr, false);
  if (!a.is_object() || Str(a, "schema") != kAccuracySchema) return refused(std::string("not an ") + kAccuracySchema + " file");
  auto run = a.find("run");
  const std::string id = run != a.end() && run->is_object() ? Str(*run, "id") : "";
  if (id != run_id) {
    return refused("of another run (" + (id.empty() ? std::string("none recorded") : id) + " here, " + run_id +
                   " in the folder): run `inspector-cli accuracy MODEL --output-dir DIR` again");
  }
  if (!a.contains("nodes") || !a["nodes"].is_array()) return refused("no \"nodes\" list");
  for (const char* unread : {"time_ms", "repro", "statistic"}) a.erase(unread);
  for (json& n : a["nodes"]) {
    if (n.is_object()) n.erase("replay_files");
  }
  return JsonText(a);
}

}  // namespace opscope
