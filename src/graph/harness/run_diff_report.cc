// DiffRunFolders' typed report read off the diff.json it wrote (one place
// knows its fields), and `inspector-cli diff`'s text of it.
#include "graph/harness/run_diff_report.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "core/text_format.h"
#include "opscope/model.h"

namespace opscope {
namespace {

using nlohmann::json;

constexpr size_t kDiffNameWidth = 28;

std::string Scalar(const json& v) { return v.is_string() ? v.get<std::string>() : JsonText(v); }
double Number(const json& v) { return v.is_number() ? v.get<double>() : 0; }

TimeSpread SpreadOf(const json& s) {
  return TimeSpread{.median_us = Number(s["median_us"]), .iqr_us = Number(s["iqr_us"]),
                    .samples = s["samples"].is_number_integer() ? s["samples"].get<int>() : 0};
}

TimeDiff TimeDiffOf(const json& e, const std::string& name) {
  return TimeDiff{.name = name, .base = SpreadOf(e["base"]), .now = SpreadOf(e["new"]),
                  .change_pct = Number(e["change_pct"]), .change_us = Number(e["change_us"]),
                  .verdict = e["verdict"].get<std::string>()};
}

std::vector<TimeDiff> TimeDiffsOf(const json& rows, const char* key) {
  std::vector<TimeDiff> out;
  for (const json& e : rows) out.push_back(TimeDiffOf(e, e[key].get<std::string>()));
  return out;
}

// "812.4 us (IQR 3.1)", or the median alone when nothing spread it.
std::string Timed(const TimeSpread& s) {
  char buf[64];
  if (s.samples == 0) return "-";
  if (s.samples < 2) {
    std::snprintf(buf, sizeof(buf), "%.1f us", s.median_us);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f us (IQR %.1f)", s.median_us, s.iqr_us);
  }
  return buf;
}

std::string Change(const TimeDiff& e) {
  if (e.verdict == "new" || e.verdict == "gone") return e.verdict;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%+.1f%%  %s", e.change_pct, e.verdict.c_str());
  return buf;
}

void PrintRow(const TimeDiff& e, std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof(line), "  %-*s %22s -> %-22s %s\n", static_cast<int>(kDiffNameWidth),
                CutMiddle(e.name, kDiffNameWidth).c_str(), Timed(e.base).c_str(), Timed(e.now).c_str(),
                Change(e).c_str());
  out << line;
}

// The rows that moved first (slower, new, gone, faster, within noise), then
// the largest; at most `top`, the rest counted.
void PrintTable(const char* title, const std::vector<TimeDiff>& rows, int top, std::ostream& out) {
  std::vector<const TimeDiff*> order;
  for (const TimeDiff& e : rows) order.push_back(&e);
  auto rank = [](const TimeDiff& e) {
    const std::string& v = e.verdict;
    return v == "slower" ? 0 : v == "new" ? 1 : v == "gone" ? 2 : v == "faster" ? 3 : v == "within noise" ? 4 : 5;
  };
  auto size = [](const TimeDiff& e) { return std::max(e.base.median_us, e.now.median_us); };
  std::stable_sort(order.begin(), order.end(), [&](const TimeDiff* a, const TimeDiff* b) {
    return rank(*a) != rank(*b) ? rank(*a) < rank(*b) : size(*a) > size(*b);
  });
  out << title << " (" << rows.size() << ")\n";
  for (size_t i = 0; i < order.size() && static_cast<int>(i) < top; ++i) PrintRow(*order[i], out);
  if (order.size() > static_cast<size_t>(std::max(top, 0))) {
    out << "  ... " << order.size() - top << " more (--top, or diff.json with --output)\n";
  }
}

std::string Us(double us) {
  char s[32];
  std::snprintf(s, sizeof(s), "%.1f us", us);
  return s;
}

std::optional<EngineSide> EngineSideOf(const json& j) {
  if (j.is_null()) return std::nullopt;
  return EngineSide{.node = j["node"].get<std::string>(),
                    .op_type = j["op_type"].get<std::string>(),
                    .framework = j["framework"].get<std::vector<std::string>>(),
                    .time_us = j["time_us"].is_null() ? -1 : j["time_us"].get<double>()};
}

EngineLayouts EngineLayoutsOf(const json& j) {
  EngineLayouts out{.other_layout_nodes = j["other_layout_nodes"].get<int64_t>(),
                    .other_layout = j["other_layout"].get<std::string>()};
  for (const json& c : j["conversions"]) {
    out.conversions.push_back({.node = c["node"].get<std::string>(),
                               .op_type = c["op_type"].get<std::string>(),
                               .from = c["from"].get<std::string>(),
                               .to = c["to"].get<std::string>(),
                               .time_us = c["time_us"].is_null() ? -1 : c["time_us"].get<double>()});
  }
  return out;
}

EngineDiff EngineDiffOf(const json& j) {
  EngineDiff e{.base = j["base"].get<std::string>(), .now = j["new"].get<std::string>()};
  for (const json& r : j["fusions"]) {
    e.fusions.push_back({.at = r["at"].get<std::string>(),
                         .framework = r["framework"].get<std::vector<std::string>>(),
                         .base = EngineSideOf(r["base"]),
                         .now = EngineSideOf(r["new"])});
  }
  e.base_layouts = EngineLayoutsOf(j["layouts"]["base"]);
  e.new_layouts = EngineLayoutsOf(j["layouts"]["new"]);
  e.framework_op_types = TimeDiffsOf(j["framework_op_types"], "op_type");
  return e;
}

// "FusedConv  3 nodes  118.1 us", or "-" where the engine ran none of the group.
std::string SideText(const std::optional<EngineSide>& s) {
  if (!s) return "-";
  char line[160];
  std::snprintf(line, sizeof(line), "%-20.20s %2zu node%s %9s", s->op_type.c_str(), s->framework.size(),
                s->framework.size() == 1 ? " " : "s",
                s->time_us < 0 ? "-" : Us(s->time_us).c_str());
  return line;
}

std::string LayoutsText(const EngineLayouts& l) {
  std::string out = std::to_string(l.conversions.size()) + " conversion(s)";
  for (const LayoutConversion& c : l.conversions) {
    out += "; " + c.op_type + " '" + c.node + "' " + c.from + " -> " + c.to;
    if (c.time_us >= 0) out += " " + Us(c.time_us);
  }
  if (l.other_layout_nodes > 0) out += "; " + std::to_string(l.other_layout_nodes) + " node(s) run in " + l.other_layout;
  return out;
}

void PrintEngines(const EngineDiff& e, int top, std::ostream& out) {
  out << "engines  base " << e.base << ", new " << e.now
      << ": their compiled graphs compared through the framework graph; their times compare the engines "
         "and are no regression\n";
  out << "fusions  framework nodes either engine ran as one kernel (base | new)\n";
  for (size_t i = 0; i < e.fusions.size() && static_cast<int>(i) < top; ++i) {
    const EngineFusionRow& r = e.fusions[i];
    std::string label = r.at;
    if (r.framework.size() > 1) label += " +" + std::to_string(r.framework.size() - 1);
    char line[512];
    std::snprintf(line, sizeof(line), "  %-34.34s %s | %s\n", label.c_str(), SideText(r.base).c_str(),
                  SideText(r.now).c_str());
    out << line;
  }
  if (e.fusions.size() > static_cast<size_t>(std::max(top, 0))) {
    out << "  ... " << e.fusions.size() - top << " more (--top, or diff.json with --output)\n";
  }
  out << "layouts  base: " << LayoutsText(e.base_layouts) << "\n";
  out << "layouts  new: " << LayoutsText(e.new_layouts) << "\n";
}

}  // namespace

void FillRunDiffReport(const json& j, RunDiffReport& d) {
  d.same_model = j["models"]["same"].get<bool>();
  d.base_model = j["models"]["base"].get<std::string>();
  d.new_model = j["models"]["new"].get<std::string>();
  if (j.contains("compiler") && j["compiler"].is_object()) d.compiler = j["compiler"]["summary"].get<std::string>();
  for (const json& s : j["changed_settings"]) {
    d.changed_settings.push_back({s["setting"].get<std::string>(), Scalar(s["base"]), Scalar(s["new"])});
  }
  for (const char* layer : {"framework", "compiled"}) {
    const json& n = j["nodes"][layer];
    d.layers.push_back({.layer = layer, .base = n["base"].get<int64_t>(), .now = n["new"].get<int64_t>(),
                        .added = n["added"].get<std::vector<std::string>>(),
                        .removed = n["removed"].get<std::vector<std::string>>()});
  }
  for (const json& m : j["op_type_mix"]) {
    d.op_type_mix.push_back({m["op_type"].get<std::string>(), m["base"].get<int64_t>(), m["new"].get<int64_t>()});
  }
  for (const char* kind : {"added", "removed", "changed"}) {
    for (const json& f : j["fusions"][kind]) d.fusions.push_back({kind, f["node"].get<std::string>()});
  }
  d.base_iterations = j["noise"]["base_iterations"].get<int>();
  d.new_iterations = j["noise"]["new_iterations"].get<int>();
  d.noise_known = j["noise"]["known"].get<bool>();
  if (j["noise"].value("machine_loaded", false)) d.machine_noise = j["noise"].value("rule", "");
  d.load_unknown = j["noise"].value("load_unknown", "");
  // Absent from an older diff, null for a run that did not record it.
  const json memory = j.value("tensor_memory", json::object());
  if (memory.is_object()) {
    d.base_peak_tensor_bytes = memory.value("base", json()).is_number_integer() ? memory["base"].get<int64_t>() : -1;
    d.new_peak_tensor_bytes = memory.value("new", json()).is_number_integer() ? memory["new"].get<int64_t>() : -1;
  }
  d.span = TimeDiffOf(j["span"], "span");
  d.total_task = TimeDiffOf(j["total_task"], "total task time");
  d.op_types = TimeDiffsOf(j["op_types"], "op_type");
  d.nodes = TimeDiffsOf(j["node_times"], "node");
  for (const json& why : j["regressions"]) d.regressions.push_back(why.get<std::string>());
  if (j.contains("engines")) d.engines = EngineDiffOf(j["engines"]);
}

void PrintRunDiff(const RunDiffReport& d, int top, std::ostream& out) {
  if (!d.same_model) out << "models differ  " << d.base_model << " -> " << d.new_model << " (--allow-different-models)\n";
  for (const SettingDiff& s : d.changed_settings) {
    out << "setting changed  " << s.setting << "  " << s.base << " -> " << s.now << "\n";
  }
  if (!d.compiler.empty()) out << "compiler  " << d.compiler << "\n";
  for (const LayerNodesDiff& n : d.layers) {
    out << n.layer << " nodes  " << n.base << " -> " << n.now << "\n";
    // Another engine's compiled nodes share no names with ours: PrintEngines lines them up.
    if (d.engines && n.layer == "compiled") continue;
    // The names behind the counts: at most `top` of each, the rest counted.
    for (const auto& [kind, names] : {std::pair{"added", &n.added}, std::pair{"removed", &n.removed}}) {
      for (size_t i = 0; i < names->size() && static_cast<int>(i) < top; ++i) {
        out << "  " << kind << "  " << (*names)[i] << "\n";
      }
      if (names->size() > static_cast<size_t>(std::max(top, 0))) {
        out << "  ... " << names->size() - top << " more " << kind << " (--top, or diff.json with --output)\n";
      }
    }
  }
  if (d.engines) {
    PrintEngines(*d.engines, top, out);
  } else {
    for (const OpTypeCountDiff& m : d.op_type_mix) out << "  " << m.op_type << "  " << m.base << " -> " << m.now << "\n";
    for (const FusionDiff& f : d.fusions) out << "fusion " << f.kind << ": " << f.node << "\n";
  }
  out << "noise  " << d.base_iterations << " -> " << d.new_iterations << " timed iterations; "
      << (d.noise_known ? "medians compared, a change inside the runs' quartiles is not a regression"
                        : "noise unknown (one iteration on a side: run with --iterations 5 or more)")
      << "\n";
  if (!d.machine_noise.empty()) out << "noise  too large to judge times: " << d.machine_noise << "\n";
  if (!d.load_unknown.empty()) out << "noise  " << d.load_unknown << "\n";
  if (d.base_peak_tensor_bytes >= 0 || d.new_peak_tensor_bytes >= 0) {
    auto held = [](int64_t b) { return b >= 0 ? FormatBytes(static_cast<double>(b)) : std::string("unknown"); };
    out << "memory   tensors held at most " << held(d.base_peak_tensor_bytes) << " -> "
        << held(d.new_peak_tensor_bytes) << "\n";
  }
  out << "times (median of the iterations)\n";
  PrintRow(d.span, out);
  PrintRow(d.total_task, out);
  PrintTable("op types", d.op_types, top, out);
  if (d.engines) PrintTable("framework op types", d.engines->framework_op_types, top, out);
  PrintTable("nodes", d.nodes, top, out);
  for (const std::string& why : d.regressions) out << "REGRESSION " << why << "\n";
  out << (d.regressed ? "FAILED" : "passed");
  if (!d.file.empty()) out << "  diff " << d.file;
  out << "\n";
}

}  // namespace opscope
