// What `inspector-cli accuracy` prints and writes (opscope/accuracy.h).
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/json_field.h"
#include "core/json_text.h"
#include "core/text_format.h"
#include "graph/harness/accuracy_json.h"
#include "graph/run/output_checks.h"

namespace opscope {
namespace {

nlohmann::json ErrorJson(const TensorError& e) {
  if (!e.compared) return {{"tensor", e.tensor}, {"compared", false}};
  nlohmann::json bins = nlohmann::json::array();
  for (const HistogramBin& b : e.histogram) {
    bins.push_back({{"abs_golden", b.Label()}, {"count", b.count}, {"mismatched", b.mismatched},
                    {"max_abs_err", graph::FiniteOrNull(b.max_abs_err)}});
  }
  nlohmann::json j = {{"tensor", e.tensor},
                      {"compared", true},
                      {"compiled_dtype", DTypeName(e.compiled_dtype)},
                      {"framework_dtype", DTypeName(e.framework_dtype)},
                      {"mismatched", e.mismatched},
                      {"total", e.total},
                      {"max_abs_err", graph::FiniteOrNull(e.max_abs_err)},
                      {"max_rel_err", graph::FiniteOrNull(e.max_rel_err)},
                      {"mean_abs_err", graph::FiniteOrNull(e.mean_abs_err)},
                      {"cosine", graph::FiniteOrNull(e.cosine)},
                      {"histogram", std::move(bins)}};
  // null: an Inf or NaN on one side only; absent: a rule with no scale (bit-exact).
  if (e.tolerance_ratio >= 0) j["tolerance_ratio"] = graph::FiniteOrNull(e.tolerance_ratio);
  return j;
}

nlohmann::json StagesJson(const std::vector<StageAccuracy>& stages) {
  nlohmann::json out = nlohmann::json::array();
  for (const StageAccuracy& s : stages) {
    out.push_back({{"framework_node", s.framework_node}, {"local", ErrorJson(s.local)}, {"diverges", s.diverges}});
  }
  return out;
}

// "3 / 1,000 out of tolerance, max abs err 2.1e-3 (Y)" or why it was not judged.
// The relative error is over the finite pairs: beside an infinite absolute
// error it would read as a small one, so it is left out there.
std::string ErrorText(const TensorError& e) {
  if (!e.compared) return "not compared (no golden)";
  const std::string errors = std::isfinite(e.max_abs_err)
                                 ? "max abs err " + ShortNum(e.max_abs_err) + ", max rel err " + ShortNum(e.max_rel_err)
                                 : "max abs err " + ShortNum(e.max_abs_err) + " (an Inf or NaN on one side only)";
  return WithThousands(e.mismatched) + " / " + WithThousands(e.total) + " out of tolerance, " + errors + " (" + e.tensor +
         ", " + DTypeName(e.compiled_dtype) + ")";
}

}  // namespace

std::string AccuracyJsonText(const AccuracyReport& r) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeAccuracy& a : r.nodes) {
    nodes.push_back({{"node_id", a.node_id},
                     {"name", a.name},
                     {"op_type", a.op_type},
                     {"mapping", a.mapping},
                     {"framework_nodes", a.framework_nodes},
                     {"inherited", ErrorJson(a.inherited)},
                     {"output", ErrorJson(a.output)},
                     {"local", ErrorJson(a.local)},
                     {"stages", StagesJson(a.stages)},
                     {"diverges", a.diverges},
                     {"tolerance", a.tolerance},
                     {"decisions", a.decisions},
                     {"instance_key", a.instance_key},
                     {"replay", a.replay.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.replay)},
                     {"replay_files", a.replay_files}});
  }
  nlohmann::json j = {{"schema", kAccuracySchema},
                      {"model", r.model},
                      {"framework_nodes", r.framework_nodes},
                      {"compiled_nodes", r.compiled_nodes},
                      {"disabled_passes", r.disabled_passes},
                      {"clean", r.clean()},
                      {"first_divergent", r.first_divergent >= 0 ? nlohmann::json(r.nodes[r.first_divergent].name)
                                                                 : nlohmann::json(nullptr)},
                      {"statistic", "local: the node alone on the golden inputs; inherited: the worst of its inputs in "
                                    "the compiled run; output: the worst of its outputs there; all against the "
                                    "framework graph run on the ops' double-precision references"},
                      {"time_ms", {{"golden", r.golden_ms}, {"compiled", r.compiled_ms}, {"judge", r.judge_ms}}},
                      {"memory", {{"kept_bytes", r.kept_bytes}, {"spilled_bytes", r.spilled_bytes},
                                  {"spilled_tensors", r.spilled_tensors}}},
                      {"nodes", std::move(nodes)},
                      {"outputs_checked", graph::OutputChecksJson(r.output_checks)},
                      {"notes", r.notes},
                      {"run", r.run_id.empty() ? nlohmann::json(nullptr)
                                               : nlohmann::json{{"id", r.run_id}, {"model_fingerprint", r.model_fingerprint}}},
                      {"repro", r.repro}};
  return JsonText(j, 2) + "\n";
}

std::vector<std::string> AccuracySummaryLines(const std::string& dir, const std::string& run_id, int top) {
  std::error_code ec;
  const std::string file = dir + "/" + kAccuracyFile;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) return {};
  StatusOr<std::string> text = ReadFolderFile(dir, kAccuracyFile);  // never through a link
  if (!text.ok()) return {"accuracy  " + text.status().message()};
  StatusOr<nlohmann::json> doc = ParseJsonText(*text, file);
  if (!doc.ok()) return {"accuracy  " + doc.status().message()};
  JsonFields fields(file);
  const JsonField j = fields.Root(*doc);
  if (j["schema"].String() != kAccuracySchema && fields.ok()) return {"accuracy  " + file + ": not an " + kAccuracySchema + " file"};
  const std::string id = j["run"].Present() ? j["run"]["id"].String() : "";
  std::vector<std::string> lines;
  const JsonField nodes = j["nodes"];
  const std::string first = j["first_divergent"].Present() ? j["first_divergent"].String() : "";
  for (size_t i = 0; fields.ok() && i < nodes.Size() && static_cast<int>(i) < top; ++i) {
    const JsonField n = nodes[i], local = n["local"];
    std::string line = "  " + std::string(n["diverges"].Bool() ? "DIVERGES " : "ok       ") + n["name"].String() + " (" +
                       n["op_type"].String() + ")";
    if (local["compared"].Bool()) {
      line += "  local " + WithThousands(local["mismatched"].Int()) + " / " + WithThousands(local["total"].Int()) +
              " out of tolerance, max abs err " +
              (local["max_abs_err"].Present() ? ShortNum(local["max_abs_err"].Number()) : std::string("not finite"));
    }
    const std::vector<std::string> decisions = n["decisions"].Strings();
    if (!decisions.empty()) line += "; " + decisions[0];
    lines.push_back(line);
  }
  if (!fields.ok()) return {"accuracy  " + fields.status().message()};
  if (id != run_id) {
    return {"accuracy  " + file + " is of another run (" + (id.empty() ? "none recorded" : id) +
            "): run `inspector-cli accuracy MODEL --output-dir " + dir + "` again"};
  }
  lines.insert(lines.begin(), "accuracy  (accuracy.json, nodes by local error) " +
                                  (first.empty() ? std::string("no compiled node diverges")
                                                 : "the first diverging node along the data flow: " + first));
  return lines;
}

void PrintAccuracy(const AccuracyReport& r, int top, std::ostream& out) {
  out << "model    " << r.model << "\n";
  out << "nodes    framework " << r.framework_nodes << "  compiled " << r.compiled_nodes << "  compared "
      << r.nodes.size();
  if (!r.disabled_passes.empty()) out << "  passes disabled: " << JoinStrings(r.disabled_passes, ", ");
  out << "\n";
  size_t diverging = 0;
  for (const NodeAccuracy& a : r.nodes) diverging += a.diverges;
  if (r.nodes.empty()) {
    out << "verdict  nothing compared: no compiled node's tensors have a golden (the notes say why)\n";
  } else if (r.first_divergent < 0) {
    out << "verdict  no compiled node diverges: each one alone is within tolerance of the golden\n";
  } else {
    const NodeAccuracy& f = r.nodes[r.first_divergent];
    out << "verdict  " << diverging << " compiled node(s) diverge; the first along the data flow is " << f.name << " ("
        << f.op_type << ")\n";
  }
  for (const OutputCheck& c : r.output_checks) out << c.text;
  int shown = 0;
  for (const NodeAccuracy& a : r.nodes) {
    if (shown >= top) break;
    ++shown;
    out << "\n" << (a.diverges ? "DIVERGES " : "ok       ") << a.name << " (" << a.op_type << ", " << a.mapping;
    if (a.framework_nodes.size() > 1) out << ": " << JoinStrings(a.framework_nodes, ", ");
    out << ")\n";
    out << "  local      " << ErrorText(a.local) << "\n";
    out << "  inherited  " << ErrorText(a.inherited) << "\n";
    out << "  output     " << ErrorText(a.output) << "\n";
    for (const StageAccuracy& s : a.stages) {
      out << "  stage      " << (s.diverges ? "DIVERGES " : "") << "after " << s.framework_node << ": " << ErrorText(s.local)
          << "\n";
    }
    if (!a.tolerance.empty()) out << "  tolerance  " << a.tolerance << "\n";
    for (const std::string& d : a.decisions) out << "  decision   " << d << "\n";
    if (!a.replay.empty()) out << "  replay     " << a.replay << "\n";
  }
  if (r.nodes.size() > static_cast<size_t>(shown)) out << "  ... " << r.nodes.size() - shown << " more (--top)\n";
  for (const std::string& n : r.notes) out << "note     " << n << "\n";
  char time[160];
  std::snprintf(time, sizeof time, "time     golden %.1f ms (the references), compiled %.1f ms, judging %.1f ms\n",
                r.golden_ms, r.compiled_ms, r.judge_ms);
  out << time;
  out << "memory   " << FormatBytes(static_cast<double>(r.kept_bytes)) << " of intermediate tensors held in memory";
  if (r.spilled_tensors) {
    out << ", " << r.spilled_tensors << " (" << FormatBytes(static_cast<double>(r.spilled_bytes))
        << ") spilled to files past --keep-bytes and mapped back";
  }
  out << "\n";
  for (const std::string& f : r.files) out << "wrote    " << f << "\n";
  if (!r.repro.empty()) out << "repro    " << r.repro << "\n";
}

}  // namespace opscope
