#include "graph/export/capture_json.h"

#include <filesystem>
#include <future>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/json_field.h"
#include "core/json_text.h"
#include "graph/export/compiled_json.h"
#include "graph/export/graph_json.h"
#include "graph/export/run_folder.h"
#include "graph/export/trace_json.h"
#include "graph/onnx/onnx_import.h"
#include "graph/ort/ort_run.h"
#include "graph/passes/pass_manager.h"
#include "graph/run/mapping.h"
#include "graph/run/output_checks.h"
#include "graph/run/run_identity.h"
#include "graph/run/run_summary.h"
#include "graph/run/summary.h"
#include "graph/run/task_roofline.h"
#include "graph/run/task_suspects.h"
#include "graph/runtime/run_races.h"
#include "opscope/npy.h"

namespace opscope::graph {
namespace {

// Why a run folder's tasks no longer match the model: the first pass whose
// result differs between the run's compile (capture.json's "passes") and
// this opscope's, as the folder is reread with this opscope's compiler.
// Empty where the passes agree.
std::string CompilerDrift(const std::vector<PassResult>& then, const std::vector<PassResult>& now) {
  for (size_t i = 0; i < then.size() && i < now.size(); ++i) {
    if (then[i].name == now[i].name && then[i].nodes_after == now[i].nodes_after) continue;
    return "; this opscope compiles the model otherwise than the one that made the run: after pass " +
           std::to_string(i + 1) + " (" + then[i].name + ") the run's graph had " +
           std::to_string(then[i].nodes_after) + " nodes, this opscope's has " + std::to_string(now[i].nodes_after) +
           (now[i].name == then[i].name ? "" : " (after " + now[i].name + ")") +
           " (run the model again with this opscope to compare with it)";
  }
  return "";
}


using nlohmann::json;

// Every file a run writes carries its identity (run_identity.h).
Status CheckIdentity(const CapturedRun& run) {
  if (run.identity.id.empty() || run.identity.model_fingerprint.empty()) {
    return InternalError(run.dir + ": a run without an identity cannot be written (NewRunIdentity)");
  }
  return Status::Ok();
}

json LaunchJson(const LaunchConfig& l) {
  return {l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z, l.vector_width};
}

LaunchConfig LaunchFromJson(const JsonField& j) {
  LaunchConfig l;
  l.grid = {j[0].Int(), j[1].Int(), j[2].Int()};
  l.block = {j[3].Int(), j[4].Int(), j[5].Int()};
  l.vector_width = j[6].IntInRange(0, 1 << 20);
  return l;
}

json TaskJson(const ScheduledTask& t, const std::vector<IterationTimes>& iterations) {
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
            {"duration_us_calibrated", t.desc.duration_us_calibrated},
            // The schedule itself, so that a folder is read with the schedule it ran.
            {"kind", TaskKindName(t.desc.kind)},
            {"op_type", t.op_type},
            {"node_name", t.node_name},
            {"label", t.desc.label},
            {"value", t.value},
            {"deps", t.deps},
            {"wait_events", t.wait_events},
            {"events", {t.desc.event_before, t.desc.event_after}}};
  j["launch"] = t.launch_known ? LaunchJson(t.launch) : json(nullptr);
  if (iterations.empty()) return j;
  json its = json::array();
  for (const IterationTimes& it : iterations) {
    const TaskTimes& x = it[t.desc.task_id];
    its.push_back({x.raw_start_ns, x.raw_end_ns, x.cal_start_ns, x.cal_end_ns});
  }
  j["iterations_ns"] = std::move(its);
  return j;
}

// A task's times in every timed iteration, into `iterations` (one entry per
// iteration); absent in a capture written before runs kept them.
void RestoreIterations(const JsonField& j, int64_t task_id, std::vector<IterationTimes>& iterations) {
  if (!j.Has("iterations_ns")) return;
  const JsonField its = j["iterations_ns"];
  if (its.Size() != iterations.size()) {
    its.Fail("expected " + std::to_string(iterations.size()) + " iterations (the run's \"iterations\"), found " +
             std::to_string(its.Size()));
    return;
  }
  for (size_t k = 0; k < iterations.size(); ++k) {
    const JsonField x = its[k];
    TaskTimes& t = iterations[k][task_id];
    t = {.raw_start_ns = x[0].Int(), .raw_end_ns = x[1].Int(), .cal_start_ns = x[2].Int(), .cal_end_ns = x[3].Int()};
    if (t.cal_end_ns < t.cal_start_ns || t.raw_end_ns < t.raw_start_ns) x.Fail("expected an end at or after its start");
  }
}

// Puts what the executor measured back on a freshly scheduled task.
Status RestoreTask(const JsonField& j, ScheduledTask& t, const JsonFields& fields) {
  const int64_t node_id = j["node_id"].Int(), stream_id = j["stream_id"].Int();
  if (!fields.ok()) return fields.status();
  if (node_id != t.desc.op_node_id || stream_id != t.desc.stream_id) {
    return InvalidArgumentError(fields.file() + ": task " + std::to_string(t.desc.task_id) +
                                " does not match the model's schedule (was the model or opscope changed?)");
  }
  t.op_id = j["op_id"].Uint();
  t.desc.kernel_name = j["kernel"].String();
  t.raw_start_ns = j["raw_ns"][0].Int();
  t.raw_end_ns = j["raw_ns"][1].Int();
  t.cal_start_ns = j["cal_ns"][0].Int();
  t.cal_end_ns = j["cal_ns"][1].Int();
  t.desc.start_us = j["start_us"].Number();
  t.start_us_raw = j["start_us_raw"].Number();
  t.desc.duration_us_raw = j["duration_us_raw"].Number();
  t.desc.duration_us_calibrated = j["duration_us_calibrated"].Number();
  if (!j.Has("launch")) j["launch"].Fail("missing (expected an array, or null)");
  t.launch_known = j["launch"].Present();
  if (t.launch_known) {
    t.launch = LaunchFromJson(j["launch"]);
    t.desc.launch = t.launch;
  }
  return fields.status();
}

std::vector<int64_t> Ids(const JsonField& f, int64_t lo, int64_t hi, const char* what) {
  std::vector<int64_t> ids(f.Size());
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = f[i].Int();
    if (ids[i] < lo || ids[i] >= hi) f[i].Fail("expected " + std::string(what));
  }
  return ids;
}

// The schedule the run executed, as capture.json keeps it (a folder written
// since "compiled_graph" was kept): every task's node, stream, kind,
// dependencies and events, checked against the graph they come with.
Schedule ScheduleFromJson(const JsonField& tasks, int streams, int64_t num_events, const Graph& compiled) {
  Schedule s;
  s.compute_streams = streams;
  s.copy_stream = streams;
  s.num_events = num_events;
  for (size_t i = 0; i < tasks.Size(); ++i) {
    const JsonField j = tasks[i];
    ScheduledTask t;
    t.desc.task_id = static_cast<int64_t>(i);
    if (j["task_id"].Int() != t.desc.task_id) j["task_id"].Fail("expected " + std::to_string(i) + " (tasks in order)");
    t.desc.op_node_id = j["node_id"].Int();
    if (t.desc.op_node_id != -1 && !compiled.FindNode(t.desc.op_node_id)) {
      j["node_id"].Fail("names compiled node " + std::to_string(t.desc.op_node_id) + ", which compiled_graph lacks");
    }
    t.desc.stream_id = j["stream_id"].IntInRange(0, streams);
    const std::optional<TaskKind> kind = TaskKindFromName(j["kind"].String());
    if (!kind) j["kind"].Fail("expected \"kernel\", \"memcpy_h2d\", \"memcpy_d2h\", \"transdata\" or \"event\"");
    t.desc.kind = kind.value_or(TaskKind::kKernel);
    t.op_type = j["op_type"].String();
    t.node_name = j["node_name"].String();
    t.desc.label = j["label"].String();
    t.value = j["value"].String();
    t.deps = Ids(j["deps"], 0, t.desc.task_id, "an earlier task's id");
    t.wait_events = Ids(j["wait_events"], 0, num_events, "an event id below num_events");
    const std::vector<int64_t> events = Ids(j["events"], -1, num_events, "-1 or an event id below num_events");
    if (events.size() != 2) j["events"].Fail("expected [event before, event after]");
    else t.desc.event_before = events[0], t.desc.event_after = events[1];
    s.tasks.push_back(std::move(t));
  }
  return s;
}

json PeaksJson(const RoofPeaks& p) {
  return {{"bandwidth_gbs", p.bandwidth_gbs}, {"gflops_f32", p.gflops_f32}, {"gflops_f64", p.gflops_f64},
          {"fma_gflops_f32", p.fma_gflops_f32}, {"fma_gflops_f64", p.fma_gflops_f64}, {"source", p.source}};
}

RoofPeaks PeaksFromJson(const JsonField& j) {
  // A folder from before the FMA loop's peaks were kept has none (0: unknown).
  auto optional = [&](std::string_view key) { return j[key].Present() ? j[key].Number() : 0.0; };
  return RoofPeaks{.bandwidth_gbs = j["bandwidth_gbs"].Number(),
                   .gflops_f32 = j["gflops_f32"].Number(),
                   .gflops_f64 = j["gflops_f64"].Number(),
                   .fma_gflops_f32 = optional("fma_gflops_f32"),
                   .fma_gflops_f64 = optional("fma_gflops_f64"),
                   .source = j["source"].String()};
}

json FileJson(const std::string& path, const std::string& fingerprint) {
  return {{"path", path}, {"fingerprint", fingerprint}};
}

json EngineJson(const EngineSource& e) {
  return {{"name", e.engine},
          {"optimized_model", FileJson(e.optimized_model, e.optimized_fingerprint)},
          {"profile", FileJson(e.profile, e.profile_fingerprint)}};
}

// Another engine's run is rebuilt from the files it was read from, as ours
// is from the model: each must still be the file the run was read from.
StatusOr<CapturedRun> LoadEngineRun(const std::string& dir, const JsonField& j, const std::string& file,
                                    const RunIdentity& identity, const std::string& model_path,
                                    const JsonFields& fields) {
  const JsonField e = j["engine"];
  const std::string name = e["name"].String();
  const std::string optimized = e["optimized_model"]["path"].String(), profile = e["profile"]["path"].String();
  const std::string optimized_fp = e["optimized_model"]["fingerprint"].String(),
                    profile_fp = e["profile"]["fingerprint"].String();
  const int warmup = j["warmup"].IntInRange(0, 1 << 20), iterations = j["iterations"].IntInRange(1, 1 << 20);
  OPSCOPE_RETURN_IF_ERROR(fields.status());
  if (name != kOnnxruntime) {
    return InvalidArgumentError(file + ": field engine.name: expected \"" + std::string(kOnnxruntime) + "\", found \"" +
                                name + "\"");
  }
  for (const auto& [path, fp] : {std::pair{optimized, optimized_fp}, std::pair{profile, profile_fp}}) {
    OPSCOPE_ASSIGN_OR_RETURN(std::string now, ModelFingerprint(path));
    if (now != fp) return InvalidArgumentError(file + ": " + path + " changed since the run was imported (import it again)");
  }
  OPSCOPE_ASSIGN_OR_RETURN(OrtRun ort,
                           ImportOrtRun({.model = model_path, .optimized = optimized, .profile = profile, .warmup = warmup}));
  if (ort.run.iterations != iterations) {
    return InvalidArgumentError(file + ": field iterations " + std::to_string(iterations) + ", the profile " + profile +
                                " gives " + std::to_string(ort.run.iterations));
  }
  ort.run.dir = dir;
  ort.run.identity = identity;
  return std::move(ort.run);
}

// The run's fields are read and checked before anything is done with them
// (the model imported); the tasks' once the model is
// scheduled again to line them up with.
StatusOr<CapturedRun> LoadFromJson(const std::string& dir, const json& doc, const std::string& file,
                                   const RunIdentity& identity) {
  JsonFields fields(file);
  const JsonField j = fields.Root(doc);
  const std::string schema = j["schema"].String();
  if (fields.ok() && schema != kCaptureSchema) {
    return InvalidArgumentError(file + ": field schema: expected \"" + std::string(kCaptureSchema) + "\", found \"" +
                                schema + "\"");
  }
  CapturedRun run;
  run.dir = dir;
  run.identity = identity;
  run.device = j["device"].String();
  run.iterations = j["iterations"].IntInRange(1, 1 << 20);
  run.warmup = j.Has("warmup") ? j["warmup"].IntInRange(0, 1 << 20) : 0;
  const bool kept = j["median_iteration"].Present();
  run.median_iteration = kept ? j["median_iteration"].IntInRange(0, std::max(0, run.iterations - 1)) : 0;
  run.seed = j["seed"].Uint();
  run.plugins = j["plugins"].Strings();
  if (j["plugin_fingerprints"].Present()) run.plugin_fingerprints = j["plugin_fingerprints"].Strings();
  if (j["peaks"].Present()) run.peaks = PeaksFromJson(j["peaks"]);
  if (j["race_check"].Present()) run.race_check = RaceCheckFromJson(j["race_check"]);
  if (j["other_cpu_share"].Present()) run.other_cpu_share = j["other_cpu_share"].Number();
  if (j["tensor_memory"].Present()) {
    for (auto [key, field] : {std::pair{"peak_bytes", &run.peak_tensor_bytes}, {"made_bytes", &run.made_tensor_bytes}}) {
      *field = j["tensor_memory"][key].Int();
      if (*field < 0) j["tensor_memory"][key].Fail("expected bytes, at least 0");
    }
  }
  if (j["outputs_checked"].Present()) run.output_checks = OutputChecksFromJson(j["outputs_checked"]);
  // The layouts the run's compiler gave ops (a plugin's schema may have asked: it is not loaded here).
  std::map<std::string, std::string> layouts;
  if (j["layout_preferences"].Present()) {
    const JsonField l = j["layout_preferences"];
    if (l.Object()) {
      for (const auto& [op, layout] : l.raw().items()) {
        const std::string value = l[op].String();
        if (value != "NHWC") l[op].Fail("expected \"NHWC\"");
        layouts[op] = value;
      }
    }
  }
  const std::string model_path = j["model"]["path"].String();
  const std::string model_fingerprint = j["model"]["fingerprint"].String();
  const int streams = j["streams"].IntInRange(1, 1 << 16);
  const JsonField tasks = j["tasks"], passes = j["passes"];
  const size_t task_count = tasks.Size();
  for (size_t i = 0; i < passes.Size(); ++i) {
    const JsonField p = passes[i];
    run.passes.push_back({.index = p["index"].IntInRange(0, std::numeric_limits<int>::max()),
                          .name = p["name"].String(),
                          .rewrites = p["rewrites"].IntInRange(0, std::numeric_limits<int>::max()),
                          .wall_ms = p["wall_ms"].Number(),
                          .nodes_after = p["nodes_after"].Int()});
  }
  OPSCOPE_RETURN_IF_ERROR(fields.status());
  if (model_fingerprint != identity.model_fingerprint) {
    return InvalidArgumentError(file + ": field model.fingerprint " + model_fingerprint +
                                " is not the run's model_fingerprint " + identity.model_fingerprint);
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::string fingerprint, ModelFingerprint(model_path));
  if (fingerprint != model_fingerprint) {
    return InvalidArgumentError(file + ": the model " + model_path + " changed since the run (run it again)");
  }
  // The plugins the run loaded are shown, never loaded: a folder is data that
  // someone may have sent, and no path in it names code this process runs.
  // Nothing is executed here; a node whose op no loaded plugin defines is
  // scheduled all the same, its times being the captured ones.
  if (j["engine"].Present()) return LoadEngineRun(dir, j, file, identity, model_path, fields);
  OPSCOPE_ASSIGN_OR_RETURN(run.model, ImportOnnx(model_path));
  run.model.layout_preferences = layouts;
  if (j.Has("compiled_graph")) {
    // The graph and the schedule the run executed, whichever compiler made them.
    OPSCOPE_RETURN_IF_ERROR(RestoreCompiledGraph(j["compiled_graph"], run.model, fields));
    const int64_t num_events = j["num_events"].Int();
    if (num_events < 0 || num_events > static_cast<int64_t>(2 * task_count)) {
      j["num_events"].Fail("expected 0 to twice the number of tasks");
    }
    run.schedule = ScheduleFromJson(tasks, streams, num_events, run.model.compiled);
    OPSCOPE_RETURN_IF_ERROR(fields.status());
  } else {
    // A folder written before capture.json kept the graph: compiled again,
    // which gives the run's graph only while the compiler is the same.
    OPSCOPE_ASSIGN_OR_RETURN(const std::vector<PassResult> compiled_now, PassManager::Default().Run(run.model));
    OPSCOPE_ASSIGN_OR_RETURN(run.schedule,
                             ScheduleGraph(run.model.compiled, {.compute_streams = streams, .replay = true}));
    if (task_count != run.schedule.tasks.size()) {
      return InvalidArgumentError(file + ": " + std::to_string(task_count) + " tasks captured, the model schedules " +
                                  std::to_string(run.schedule.tasks.size()) + CompilerDrift(run.passes, compiled_now));
    }
  }
  // Sized only once the file has shown it holds that many iterations: a
  // large "iterations" over a small file must not allocate for them.
  if (kept && (task_count == 0 || tasks[0]["iterations_ns"].Size() == static_cast<size_t>(run.iterations))) {
    run.iteration_times.assign(run.iterations, IterationTimes(task_count));
  } else if (kept) {
    run.iteration_times.resize(1, IterationTimes(task_count));  // RestoreIterations names the mismatch
  }
  for (size_t i = 0; i < task_count; ++i) {
    OPSCOPE_RETURN_IF_ERROR(RestoreTask(tasks[i], run.schedule.tasks[i], fields));
    if (kept) RestoreIterations(tasks[i], static_cast<int64_t>(i), run.iteration_times);
    if (kept && !tasks[i].Has("iterations_ns")) tasks[i]["iterations_ns"].Fail("missing (expected an array)");
    OPSCOPE_RETURN_IF_ERROR(fields.status());
  }
  OPSCOPE_RETURN_IF_ERROR(MapTasks(run.model, run.schedule));
  return run;
}

}  // namespace

Status WriteCapture(const CapturedRun& run) {
  OPSCOPE_RETURN_IF_ERROR(CheckIdentity(run));
  const bool kept = !run.iteration_times.empty();
  if (kept && run.iteration_times.size() != static_cast<size_t>(run.iterations)) {
    return InternalError(run.dir + ": " + std::to_string(run.iteration_times.size()) + " iterations kept of " +
                         std::to_string(run.iterations));
  }
  std::error_code ec;
  const std::string model_path = std::filesystem::absolute(run.model.path, ec).string();
  json tasks = json::array(), passes = json::array();
  for (const ScheduledTask& t : run.schedule.tasks) tasks.push_back(TaskJson(t, run.iteration_times));
  for (const PassResult& p : run.passes) {
    passes.push_back({{"index", p.index}, {"name", p.name}, {"rewrites", p.rewrites}, {"wall_ms", p.wall_ms},
                      {"nodes_after", p.nodes_after}});
  }
  json layouts = json::object();
  for (const Node& n : run.model.compiled.nodes()) {
    const AttrValue* layout = n.kind == NodeKind::kOp ? n.attrs.Find("layout") : nullptr;
    const std::string* s = layout ? std::get_if<std::string>(layout) : nullptr;
    const Value* x = s && !n.inputs.empty() ? run.model.compiled.FindValue(n.inputs[0]) : nullptr;
    const Node* from = x ? run.model.compiled.FindNode(x->producer) : nullptr;
    if (from && from->kind == NodeKind::kTransdata && *s == "NHWC") layouts[n.op_type] = *s;  // the layout pass's doing
  }
  json j = {{"schema", kCaptureSchema},
            {"run", RunIdentityJson(run.identity)},
            {"model", {{"path", ec ? run.model.path : model_path}, {"fingerprint", run.identity.model_fingerprint}}},
            {"device", run.device},
            {"streams", run.schedule.compute_streams},
            {"iterations", run.iterations},
            {"warmup", run.warmup},
            {"median_iteration", kept ? json(run.median_iteration) : json(nullptr)},
            {"seed", run.seed},
            {"plugins", run.plugins},
            {"plugin_fingerprints", run.plugin_fingerprints},
            {"peaks", run.peaks ? PeaksJson(*run.peaks) : json(nullptr)},
            {"race_check", run.race_check ? RaceCheckJson(*run.race_check) : json(nullptr)},
            {"other_cpu_share", run.other_cpu_share >= 0 ? json(run.other_cpu_share) : json(nullptr)},
            {"tensor_memory", run.peak_tensor_bytes >= 0
                                  ? json{{"peak_bytes", run.peak_tensor_bytes}, {"made_bytes", run.made_tensor_bytes}}
                                  : json(nullptr)},
            {"outputs_checked", run.output_checks.empty() ? json(nullptr) : OutputChecksJson(run.output_checks)},
            {"layout_preferences", layouts.empty() ? json(nullptr) : layouts},
            {"passes", std::move(passes)},
            {"tasks", std::move(tasks)}};
  if (run.source) {
    j["engine"] = EngineJson(*run.source);
  } else {
    j["compiled_graph"] = CompiledGraphJson(run.model);
    j["num_events"] = run.schedule.num_events;
  }
  return WriteFileAtomic(run.dir + "/" + kCaptureFile, JsonText(j) + "\n");
}

StatusOr<CapturedRun> LoadCapture(const std::string& dir) {
  const std::string file = dir + "/" + kCaptureFile;
  if (!std::filesystem::is_directory(dir)) return NotFoundError(dir + ": no such folder (an inspector-cli run output folder)");
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) {
    return NotFoundError(file + ": missing (write it with `inspector-cli run MODEL.onnx --output-dir " + dir + "`)");
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::string text, ReadFolderFile(dir, kCaptureFile));  // never through a link
  // Every run file beside it must be of the same run: a rerun killed half way
  // leaves the new model's graph.json beside the old one's capture.json.
  OPSCOPE_ASSIGN_OR_RETURN(RunIdentity identity, CheckRunFolder(dir, {{kCaptureFile, &text}}));
  OPSCOPE_ASSIGN_OR_RETURN(json j, ParseJsonText(text, file));
  return LoadFromJson(dir, j, file, identity);
}

StatusOr<std::vector<std::string>> WriteRunExports(const CapturedRun& run) {
  return WriteRunExports(run, SummarizeRun(run, kSummaryTopTasks));
}

StatusOr<std::vector<std::string>> WriteRunExports(const CapturedRun& run, const RunSummary& summarized) {
  OPSCOPE_RETURN_IF_ERROR(CheckIdentity(run));
  const std::string graph = run.dir + "/graph.json", trace = run.dir + "/trace.json",
                    summary = run.dir + "/summary.json";
  const RunTiming& timing = summarized.timing;
  // graph.json, the largest, is made on other threads while this one makes
  // the others' text (each only reads the run). The files are written in
  // their old order, graph.json, trace.json, summary.json: a run killed
  // between them leaves summary.json only beside the other two, which
  // `export --format html` relies on (tests/inspector_kill_test.cc).
  std::future<std::string> graph_text = std::async(std::launch::async, [&run, &timing] {
    return GraphJsonText(run.model, run.passes, &run.identity, &timing);
  });
  TraceData trace_data = BuildTraceData(run.schedule, run.model.compiled, run.device);
  trace_data.run = run.identity;
  AddTiming(trace_data, timing);
  if (run.peaks) AddRoofline(trace_data, summarized.roofs);
  const std::string trace_text = TraceJson(trace_data);
  json summary_json = SummaryJson(summarized.summary);
  summary_json["run"] = RunIdentityJson(run.identity);
  const std::string summary_text = JsonText(summary_json, 2) + "\n";
  const std::string svg =
      run.peaks ? StampSvg(RunRooflineSvg(run.schedule, summarized.roofs, *run.peaks), run.identity) : "";
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(graph, graph_text.get()).WithContext("graph.json"));
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(trace, trace_text).WithContext("trace.json"));
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(summary, summary_text).WithContext("summary.json"));
  std::vector<std::string> files{graph, trace, summary};
  if (run.peaks) {
    files.push_back(run.dir + "/" + kRooflineFile);
    OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(files.back(), svg).WithContext(kRooflineFile));
  }
  return files;
}

}  // namespace opscope::graph
