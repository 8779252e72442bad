#include "cli/inspector_diff.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "core/text_format.h"
#include "opscope/model.h"

namespace opscope::cli {
namespace {

using nlohmann::json;

constexpr size_t kDiffNameWidth = 28;


std::string Scalar(const json& v) {
  return v.is_string() ? v.get<std::string>() : JsonText(v);
}

// "812.4 us (IQR 3.1)", or the median alone when nothing spread it.
std::string Timed(const json& s) {
  char buf[64];
  if (s["samples"].get<int>() == 0) return "-";
  if (s["samples"].get<int>() < 2) {
    std::snprintf(buf, sizeof(buf), "%.1f us", s["median_us"].get<double>());
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f us (IQR %.1f)", s["median_us"].get<double>(), s["iqr_us"].get<double>());
  }
  return buf;
}

std::string Change(const json& e) {
  const std::string verdict = e["verdict"].get<std::string>();
  if (verdict == "new" || verdict == "gone") return verdict;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%+.1f%%  %s", e["change_pct"].get<double>(), verdict.c_str());
  return buf;
}

void PrintRow(const std::string& name, const json& e, std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof(line), "  %-*s %22s -> %-22s %s\n", static_cast<int>(kDiffNameWidth),
                CutMiddle(name, kDiffNameWidth).c_str(), Timed(e["base"]).c_str(), Timed(e["new"]).c_str(),
                Change(e).c_str());
  out << line;
}

// The rows that moved first (new, gone, slower, faster, within noise), then
// the largest; at most `top`, the rest counted.
void PrintTable(const char* title, const json& rows, const char* key, int top, std::ostream& out) {
  std::vector<const json*> order;
  for (const json& e : rows) order.push_back(&e);
  auto rank = [](const json& e) {
    const std::string v = e["verdict"].get<std::string>();
    return v == "slower" ? 0 : v == "new" ? 1 : v == "gone" ? 2 : v == "faster" ? 3 : v == "within noise" ? 4 : 5;
  };
  auto size = [](const json& e) {
    return std::max(e["base"]["median_us"].get<double>(), e["new"]["median_us"].get<double>());
  };
  std::stable_sort(order.begin(), order.end(), [&](const json* a, const json* b) {
    return rank(*a) != rank(*b) ? rank(*a) < rank(*b) : size(*a) > size(*b);
  });
  out << title << " (" << rows.size() << ")\n";
  for (size_t i = 0; i < order.size() && static_cast<int>(i) < top; ++i) {
    PrintRow((*order[i])[key].get<std::string>(), *order[i], out);
  }
  if (order.size() > static_cast<size_t>(std::max(top, 0))) {
    out << "  ... " << order.size() - top << " more (--top, or diff.json with --output)\n";
  }
}

}  // namespace

StatusOr<double> ParsePercent(const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end != '\0' || !(v >= 0)) {
    return InvalidArgumentError("--threshold-time '" + text + "': expected a percentage such as 10%");
  }
  return v;
}

CLI::App* AddInspectorDiff(CLI::App& app, InspectorDiffFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "diff", "compare two runs of a model, each time against both runs' noise; exit 1 when the span or total task "
              "time grew beyond the threshold and the noise");
  cmd->add_option("base_dir", flags.base_dir, "the baseline run folder")->required();
  cmd->add_option("new_dir", flags.new_dir, "the new run folder")->required();
  cmd->add_option("--output", flags.output, "write diff.json (schema opscope.diff/1) to this file");
  cmd->add_option("--threshold-time", flags.threshold_time,
                  "allowed growth of the median span and total task time (default 10%); a larger growth inside "
                  "the runs' noise (overlapping quartiles) is not a regression");
  cmd->add_option("--threshold-nodes", flags.threshold_nodes, "allowed change of a layer's node count (default 0)");
  cmd->add_flag("--allow-different-models", flags.allow_different_models,
                "compare runs of two different model files (refused by default)");
  cmd->add_option("--top", flags.top, "rows per op type and node table (default 10)");
  return cmd;
}

StatusOr<int> RunInspectorDiff(const InspectorDiffFlags& flags, std::ostream& out) {
  OPSCOPE_ASSIGN_OR_RETURN(double threshold_time, ParsePercent(flags.threshold_time));
  if (flags.threshold_nodes < 0) return InvalidArgumentError("--threshold-nodes: expected >= 0");
  if (flags.top < 0) return InvalidArgumentError("--top " + std::to_string(flags.top) + ": expected >= 0");
  OPSCOPE_ASSIGN_OR_RETURN(RunDiffReport d, DiffRunFolders({.base_dir = flags.base_dir, .new_dir = flags.new_dir,
                                                             .threshold_time_pct = threshold_time,
                                                             .threshold_nodes = flags.threshold_nodes,
                                                             .allow_different_models = flags.allow_different_models,
                                                             .output = flags.output}));
  const json j = json::parse(d.json);
  // What makes the times below incomparable comes before them.
  if (!j["models"]["same"].get<bool>()) {
    out << "models differ  " << j["models"]["base"].get<std::string>() << " -> "
        << j["models"]["new"].get<std::string>() << " (--allow-different-models)\n";
  }
  for (const auto& s : j["changed_settings"]) {
    out << "setting changed  " << s["setting"].get<std::string>() << "  " << Scalar(s["base"]) << " -> "
        << Scalar(s["new"]) << "\n";
  }
  for (const char* layer : {"framework", "compiled"}) {
    const json& n = j["nodes"][layer];
    out << layer << " nodes  " << n["base"].get<int64_t>() << " -> " << n["new"].get<int64_t>() << "\n";
    // The names behind the counts: at most --top of each, the rest counted.
    for (const char* kind : {"added", "removed"}) {
      const json& names = n[kind];
      for (size_t i = 0; i < names.size() && static_cast<int>(i) < flags.top; ++i) {
        out << "  " << kind << "  " << names[i].get<std::string>() << "\n";
      }
      if (names.size() > static_cast<size_t>(flags.top)) {
        out << "  ... " << names.size() - flags.top << " more " << kind << " (--top, or diff.json with --output)\n";
      }
    }
  }
  for (const auto& m : j["op_type_mix"]) {
    out << "  " << m["op_type"].get<std::string>() << "  " << m["base"].get<int64_t>() << " -> "
        << m["new"].get<int64_t>() << "\n";
  }
  for (const char* kind : {"added", "removed", "changed"}) {
    for (const auto& f : j["fusions"][kind]) out << "fusion " << kind << ": " << f["node"].get<std::string>() << "\n";
  }
  const json& noise = j["noise"];
  out << "noise  " << noise["base_iterations"].get<int>() << " -> " << noise["new_iterations"].get<int>()
      << " timed iterations; "
      << (noise["known"].get<bool>() ? "medians compared, a change inside the runs' quartiles is not a regression"
                                     : "noise unknown (one iteration on a side: run with --iterations 5 or more)")
      << "\n";
  out << "times (median of the iterations)\n";
  PrintRow("span", j["span"], out);
  PrintRow("total task time", j["total_task"], out);
  PrintTable("op types", j["op_types"], "op_type", flags.top, out);
  PrintTable("nodes", j["node_times"], "node", flags.top, out);
  for (const auto& why : j["regressions"]) out << "REGRESSION " << why.get<std::string>() << "\n";
  out << (d.regressed ? "FAILED" : "passed");
  if (!d.file.empty()) out << "  diff " << d.file;
  out << "\n";
  return d.regressed ? 1 : 0;
}

}  // namespace opscope::cli
