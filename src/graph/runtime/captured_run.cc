#include "graph/runtime/captured_run.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "graph/onnx_import.h"
#include "graph/runtime/mapping.h"
#include "graph/graph_json.h"
#include "graph/runtime/run_races.h"
#include "graph/runtime/summary.h"
#include "graph/runtime/task_suspects.h"
#include "graph/runtime/task_roofline.h"
#include "graph/runtime/trace_json.h"
#include "opscope/plugin.h"
#include "opscope/npy.h"
#include "core/text_distance.h"

namespace opscope::graph {
namespace {

using nlohmann::json;

json LaunchJson(const LaunchConfig& l) {
  return {l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z, l.vector_width};
}

LaunchConfig LaunchFromJson(const json& j) {
  LaunchConfig l;
  l.grid = {j.at(0).get<int64_t>(), j.at(1).get<int64_t>(), j.at(2).get<int64_t>()};
  l.block = {j.at(3).get<int64_t>(), j.at(4).get<int64_t>(), j.at(5).get<int64_t>()};
  l.vector_width = j.at(6).get<int>();
  return l;
}

json TaskJson(const ScheduledTask& t) {
  json j = {{"task_id", t.desc.task_id},
            {"node_id", t.desc.op_node_id},
            {"stream_id", t.desc.stream_id},
            {"op_id", t.op_id},
            {"kernel", t.desc.kernel_name},
            {"raw_ns", {t.raw_start_ns, t.raw_end_ns}},
            {"cal_ns", {t.cal_start_ns, t.cal_end_ns}},
            {"start_us", t.desc.start_us},
            {"start_us_raw", t.start_us_raw},
            {"duration_us_raw", t.desc.duration_us_raw},
            {"duration_us_calibrated", t.desc.duration_us_calibrated}};
  j["launch"] = t.launch_known ? LaunchJson(t.launch) : json(nullptr);
  return j;
}

// Puts what the executor measured back on a freshly scheduled task.
Status RestoreTask(const json& j, ScheduledTask& t, const std::string& file) {
  if (j.at("node_id").get<int64_t>() != t.desc.op_node_id || j.at("stream_id").get<int>() != t.desc.stream_id) {
    return InvalidArgumentError(file + ": task " + std::to_string(t.desc.task_id) +
                                " does not match the model's schedule (was the model or opscope changed?)");
  }
  t.op_id = j.at("op_id").get<uint64_t>();
  t.desc.kernel_name = j.at("kernel").get<std::string>();
  t.raw_start_ns = j.at("raw_ns").at(0).get<int64_t>();
  t.raw_end_ns = j.at("raw_ns").at(1).get<int64_t>();
  t.cal_start_ns = j.at("cal_ns").at(0).get<int64_t>();
  t.cal_end_ns = j.at("cal_ns").at(1).get<int64_t>();
  t.desc.start_us = j.at("start_us").get<double>();
  t.start_us_raw = j.at("start_us_raw").get<double>();
  t.desc.duration_us_raw = j.at("duration_us_raw").get<double>();
  t.desc.duration_us_calibrated = j.at("duration_us_calibrated").get<double>();
  t.launch_known = !j.at("launch").is_null();
  if (t.launch_known) {
    t.launch = LaunchFromJson(j.at("launch"));
    t.desc.launch = t.launch;
  }
  return Status::Ok();
}

json PeaksJson(const RoofPeaks& p) {
  return {{"bandwidth_gbs", p.bandwidth_gbs}, {"gflops_f32", p.gflops_f32}, {"gflops_f64", p.gflops_f64},
          {"source", p.source}};
}

RoofPeaks PeaksFromJson(const json& j) {
  return RoofPeaks{.bandwidth_gbs = j.at("bandwidth_gbs").get<double>(),
                   .gflops_f32 = j.at("gflops_f32").get<double>(),
                   .gflops_f64 = j.at("gflops_f64").get<double>(),
                   .source = j.at("source").get<std::string>()};
}

StatusOr<CapturedRun> LoadFromJson(const std::string& dir, const json& j, const std::string& file) {
  if (j.value("schema", "") != kCaptureSchema) {
    return InvalidArgumentError(file + ": expected \"schema\": \"" + kCaptureSchema + "\"");
  }
  CapturedRun run;
  run.dir = dir;
  run.device = j.at("device").get<std::string>();
  run.iterations = j.at("iterations").get<int>();
  run.seed = j.at("seed").get<uint64_t>();
  run.plugins = j.at("plugins").get<std::vector<std::string>>();
  if (j.contains("peaks") && !j.at("peaks").is_null()) run.peaks = PeaksFromJson(j.at("peaks"));
  if (j.contains("race_check") && !j.at("race_check").is_null()) run.race_check = RaceCheckFromJson(j.at("race_check"));
  const std::string model_path = j.at("model").at("path").get<std::string>();
  OPSCOPE_ASSIGN_OR_RETURN(std::string fingerprint, ModelFingerprint(model_path));
  if (fingerprint != j.at("model").at("fingerprint").get<std::string>()) {
    return InvalidArgumentError(file + ": the model " + model_path + " changed since the run (run it again)");
  }
  for (const std::string& plugin : run.plugins) {
    auto p = LoadPlugin(plugin);
    if (!p.ok()) return std::move(p).status().WithContext(file + ": plugin");
  }
  OPSCOPE_ASSIGN_OR_RETURN(run.model, ImportOnnx(model_path));
  OPSCOPE_RETURN_IF_ERROR(Compile(run.model));
  OPSCOPE_ASSIGN_OR_RETURN(run.schedule,
                           ScheduleGraph(run.model.compiled, {.compute_streams = j.at("streams").get<int>()}));
  const json& tasks = j.at("tasks");
  if (tasks.size() != run.schedule.tasks.size()) {
    return InvalidArgumentError(file + ": " + std::to_string(tasks.size()) + " tasks captured, the model schedules " +
                                std::to_string(run.schedule.tasks.size()));
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    OPSCOPE_RETURN_IF_ERROR(RestoreTask(tasks[i], run.schedule.tasks[i], file));
  }
  for (const json& p : j.at("passes")) {
    run.passes.push_back({.index = p.at("index").get<int>(),
                          .name = p.at("name").get<std::string>(),
                          .rewrites = p.at("rewrites").get<int>(),
                          .wall_ms = p.at("wall_ms").get<double>(),
                          .nodes_after = p.at("nodes_after").get<int64_t>()});
  }
  OPSCOPE_RETURN_IF_ERROR(MapTasks(run.model, run.schedule));
  return run;
}

}  // namespace

StatusOr<std::string> ModelFingerprint(const std::string& path) {
  OPSCOPE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return std::to_string(bytes.size()) + ":" + hex;
}

Status WriteCapture(const CapturedRun& run) {
  OPSCOPE_ASSIGN_OR_RETURN(std::string fingerprint, ModelFingerprint(run.model.path));
  std::error_code ec;
  const std::string model_path = std::filesystem::absolute(run.model.path, ec).string();
  json tasks = json::array(), passes = json::array();
  for (const ScheduledTask& t : run.schedule.tasks) tasks.push_back(TaskJson(t));
  for (const PassResult& p : run.passes) {
    passes.push_back({{"index", p.index}, {"name", p.name}, {"rewrites", p.rewrites}, {"wall_ms", p.wall_ms},
                      {"nodes_after", p.nodes_after}});
  }
  json j = {{"schema", kCaptureSchema},
            {"model", {{"path", ec ? run.model.path : model_path}, {"fingerprint", fingerprint}}},
            {"device", run.device},
            {"streams", run.schedule.compute_streams},
            {"iterations", run.iterations},
            {"seed", run.seed},
            {"plugins", run.plugins},
            {"peaks", run.peaks ? PeaksJson(*run.peaks) : json(nullptr)},
            {"race_check", run.race_check ? RaceCheckJson(*run.race_check) : json(nullptr)},
            {"passes", std::move(passes)},
            {"tasks", std::move(tasks)}};
  return WriteFileAtomic(run.dir + "/" + kCaptureFile, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

StatusOr<CapturedRun> LoadCapture(const std::string& dir) {
  const std::string file = dir + "/" + kCaptureFile;
  if (!std::filesystem::is_directory(dir)) return NotFoundError(dir + ": no such folder (an inspector-cli run output folder)");
  if (!std::filesystem::exists(file)) {
    return NotFoundError(file + ": missing (write it with `inspector-cli run MODEL.onnx --output-dir " + dir + "`)");
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::string text, ReadFile(file));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgumentError(file + ": not valid JSON");
  try {
    return LoadFromJson(dir, j, file);
  } catch (const json::exception& e) {
    return InvalidArgumentError(file + ": missing or malformed field (" + e.what() + ")");
  }
}

StatusOr<std::vector<std::string>> WriteRunExports(const CapturedRun& run) {
  const std::string graph = run.dir + "/graph.json", trace = run.dir + "/trace.json",
                    summary = run.dir + "/summary.json";
  OPSCOPE_RETURN_IF_ERROR(WriteGraphJson(run.model, run.passes, graph));
  TraceData trace_data = BuildTraceData(run.schedule, run.model.compiled, run.device);
  Summary s = Summarize(run.schedule, kSummaryTopTasks);
  s.race_check = run.race_check;
  std::vector<TaskRoof> roofs;
  if (run.peaks) {
    roofs = TaskRooflines(run.schedule, run.model.compiled, *run.peaks);
    AddRoofline(trace_data, roofs);
    AddRoofline(s, run.schedule, roofs, *run.peaks);
    AddSuspects(s, run.schedule, run.model.compiled, roofs, *run.peaks, ComputeUnitsOf(run.device));
  }
  OPSCOPE_RETURN_IF_ERROR(WriteTraceJson(trace, trace_data));
  OPSCOPE_RETURN_IF_ERROR(WriteSummaryJson(summary, s));
  std::vector<std::string> files{graph, trace, summary};
  if (run.peaks) {
    files.push_back(run.dir + "/" + kRooflineFile);
    const std::string svg = RunRooflineSvg(run.schedule, roofs, *run.peaks);
    OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(files.back(), svg).WithContext(kRooflineFile));
  }
  return files;
}

StatusOr<const Node*> FindNodeByName(const Graph& g, const std::string& name) {
  std::vector<std::string> names;
  for (const Node& n : g.nodes()) {
    if (n.name == name) return &n;
    names.push_back(n.name);
  }
  std::vector<std::string> close = ClosestStrings(name, names, 3);
  std::string msg = "--node '" + name + "': no " + LayerName(g.layer()) + " node has that name";
  if (!close.empty()) msg += " (closest: " + JoinStrings(close, ", ") + ")";
  return NotFoundError(msg);
}

}  // namespace opscope::graph
