// The model harness (opscope/model.h): what `inspector-cli run` and `diff`
// do between parsing their flags and printing, as library calls.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/command_line.h"
#include "core/cpu_share.h"
#include "core/file_util.h"
#include "core/json_text.h"
#include "core/text_format.h"
#include "graph/export/capture_json.h"
#include "graph/export/graph_json.h"
#include "graph/export/run_folder.h"
#include "graph/export/session_graph.h"
#include "graph/harness/model_inputs.h"
#include "graph/harness/run_report.h"
#include "graph/harness/run_diff_report.h"
#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"
#include "graph/run/captured_run.h"
#include "graph/run/mapping.h"
#include "graph/run/output_checks.h"
#include "graph/run/run_diff.h"
#include "graph/run/run_identity.h"
#include "graph/run/run_summary.h"
#include "graph/run/summary.h"
#include "graph/run/task_roofline.h"
#include "graph/run/task_suspects.h"
#include "graph/runtime/executor.h"
#include "graph/runtime/run_races.h"
#include "opscope/calibrate.h"
#include "opscope/model.h"
#include "opscope/npy.h"
#include "opscope/plugin.h"

namespace opscope {
namespace {

Status CheckPeak(const char* flag, const std::optional<double>& v, const char* unit) {
  if (!v || (*v > 0 && std::isfinite(*v))) return Status::Ok();
  return InvalidArgumentError(std::string(flag) + " " + ShortNum(*v) + ": expected " + unit + ", a number > 0");
}

// The overrides where given; the device's calibrated peaks for the rest. A
// device that cannot be calibrated leaves its roofs unknown (0): the run
// goes on, and its tasks are said to have no bound.
RoofPeaks PeaksFor(const ModelRunRequest& r) {
  StatusOr<RoofPeaks> p = ObtainRoofPeaks(r.device, r.peak_bw_gbs.value_or(0), r.peak_gflops.value_or(0));
  if (p.ok()) return *p;
  RoofPeaks given{.source = "unknown (" + p.status().message() + ")"};  // the one roof given still holds
  if (r.peak_bw_gbs) given.bandwidth_gbs = *r.peak_bw_gbs;
  if (r.peak_gflops) given.gflops_f32 = given.gflops_f64 = *r.peak_gflops;
  return given;
}

std::string RunCommand(const ModelRunRequest& r) {
  CommandLine c("inspector-cli run");
  c.Arg(r.model).Flag("--output-dir", r.output_dir).Flag("--streams", r.streams).Flag("--warmup", r.warmup);
  c.Flag("--iterations", r.iterations).Flag("--seed", std::to_string(r.seed));
  if (!r.input_files.empty()) c.Flag("--inputs", r.input_files, ",");
  if (!r.expected_files.empty()) c.Flag("--expected", r.expected_files, ",").Append(ToleranceSpecFlags(r.tolerance));
  c.Repeated("--plugin", r.plugins);
  if (!r.disable_passes.empty()) c.Flag("--disable-pass", r.disable_passes, ",");
  if (r.peak_bw_gbs) c.Flag("--peak-bw", ShortNum(*r.peak_bw_gbs));
  if (r.peak_gflops) c.Flag("--peak-flops", ShortNum(*r.peak_gflops));
  return c.str();
}


// Where the race check's scratch ring goes: OUT/.flight.ring, beside the
// outputs it is judged for (a run's own folder, so concurrent runs never share
// one), or a private folder of its own in the temp folder (mkdtemp: no
// predictable name another user could plant a link at) for a run that writes
// nothing. The executor removes the ring once judged. A folder created for it
// is removed again unless the run succeeds: nothing is left by a failed run.
class ScratchRing {
 public:
  explicit ScratchRing(const std::string& output_dir) {
    std::error_code ec;
    if (output_dir.empty()) {
      std::string dir = (std::filesystem::temp_directory_path(ec) / "opscope-race-XXXXXX").string();
      if (::mkdtemp(dir.data()) == nullptr) {
        error_ = "race check: cannot make a private folder " + dir + ": " + std::strerror(errno);
        return;
      }
      created_ = dir;
      temp_ = true;
      path_ = dir + "/" + graph::kRaceRingFile;
      return;
    }
    const bool existed = std::filesystem::exists(output_dir, ec);
    if (Status made = MakeOutputDir(output_dir, "output_dir"); !made.ok()) {
      error_ = made.message();
      return;
    }
    if (!existed) created_ = output_dir;
    path_ = output_dir + "/" + graph::kRaceRingFile;
    // A ring (or a link) an earlier run left: the recorder makes its own anew (O_EXCL).
    std::filesystem::remove(path_, ec);
  }
  ~ScratchRing() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove(path_, ec);
    if ((!keep_folder_ || temp_) && !created_.empty()) std::filesystem::remove(created_, ec);  // only if still empty
  }
  Status status() const { return error_.empty() ? Status::Ok() : InvalidArgumentError(error_); }
  const std::string& path() const { return path_; }
  void KeepFolder() { keep_folder_ = true; }  // the run succeeded

 private:
  std::string path_, created_, error_;
  bool temp_ = false;
  bool keep_folder_ = false;
};

}  // namespace

StatusOr<ModelRunReport> RunModel(const ModelRunRequest& r) {
  if (r.streams < 1) return InvalidArgumentError("streams " + std::to_string(r.streams) + ": expected >= 1");
  if (r.iterations < 1) return InvalidArgumentError("iterations " + std::to_string(r.iterations) + ": expected >= 1");
  if (r.warmup < 0) return InvalidArgumentError("warmup " + std::to_string(r.warmup) + ": expected >= 0");
  // Every iteration's times are kept in capture.json; past this a run is a benchmark, not a profile.
  constexpr int kMaxIterations = 10000;
  if (r.iterations > kMaxIterations || r.warmup > kMaxIterations) {
    return InvalidArgumentError(std::string(r.iterations > kMaxIterations ? "iterations " : "warmup ") +
                                std::to_string(std::max(r.iterations, r.warmup)) + ": expected at most " +
                                std::to_string(kMaxIterations));
  }
  OPSCOPE_RETURN_IF_ERROR(CheckPeak("peak_bw_gbs", r.peak_bw_gbs, "GB/s"));
  OPSCOPE_RETURN_IF_ERROR(CheckPeak("peak_gflops", r.peak_gflops, "GFLOP/s"));
  for (const std::string& path : r.plugins) {
    auto p = LoadPlugin(path);
    if (!p.ok()) return std::move(p).status().WithContext("plugins");
  }
  graph::CapturedRun run;
  run.dir = r.output_dir;
  run.plugins = r.plugins;
  for (const std::string& path : r.plugins) {
    OPSCOPE_ASSIGN_OR_RETURN(std::string fingerprint, graph::ModelFingerprint(path));
    run.plugin_fingerprints.push_back(fingerprint);
  }
  run.iterations = r.iterations;
  run.warmup = r.warmup;
  run.seed = r.seed;
  run.device = r.device;
  OPSCOPE_ASSIGN_OR_RETURN(run.model, graph::ImportOnnx(r.model));
  if (!r.output_dir.empty()) {
    // Taken now, of the bytes just imported, rather than after a long run.
    OPSCOPE_ASSIGN_OR_RETURN(std::string fingerprint, graph::ModelFingerprint(r.model));
    run.identity = graph::NewRunIdentity(fingerprint);
  }
  // Pass snapshots are kept in memory and written only once the run succeeded.
  std::vector<std::pair<graph::PassResult, graph::Model>> snapshots;
  graph::AfterPassFn keep = [&](const graph::PassResult& p, const graph::Model& m) {
    snapshots.emplace_back(p, m);
    return Status::Ok();
  };
  graph::PassManager compiler = graph::PassManager::Default();
  OPSCOPE_RETURN_IF_ERROR(compiler.Disable(r.disable_passes).WithContext("disable_passes"));
  OPSCOPE_ASSIGN_OR_RETURN(run.passes, compiler.Run(run.model, r.dump_passes ? keep : nullptr));
  OPSCOPE_RETURN_IF_ERROR(graph::CheckExecutable(run.model));
  OPSCOPE_ASSIGN_OR_RETURN(auto inputs, graph::ReadInputs(r.input_files, r.input_tensors, run.model.compiled));
  // The expected outputs and the rule for each, checked before the model runs.
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<graph::ExpectedOutput> expected,
                           graph::ReadExpectedOutputs(r.expected_files, run.model.compiled));
  for (const graph::ExpectedOutput& e : expected) {
    OPSCOPE_RETURN_IF_ERROR(ResolveTolerance(r.tolerance, e.tensor.dtype()).status());
  }
  OPSCOPE_ASSIGN_OR_RETURN(run.schedule, graph::ScheduleGraph(run.model.compiled, {.compute_streams = r.streams}));
  auto device = GetDevice(run.device);
  if (!device.ok()) return std::move(device).status().WithContext("device");
  ScratchRing ring(r.output_dir);
  OPSCOPE_RETURN_IF_ERROR(ring.status());
  const CpuSample cpu_before = SampleCpu();
  StatusOr<graph::ExecutionResult> executed = graph::Execute(run.model, run.schedule,
                                                             {.device = *device,
                                                              .warmup = r.warmup,
                                                              .iterations = r.iterations,
                                                              .inputs = std::move(inputs),
                                                              .seed = r.seed,
                                                              .save_outputs_dir = r.save_outputs,
                                                              .race_ring = ring.path()});
  // Named by the model: a graph input too large to allocate is the file's fault.
  if (!executed.ok()) return std::move(executed).status().WithContext(r.model);
  graph::ExecutionResult result = std::move(executed).value();
  run.other_cpu_share = OtherCpuShare(cpu_before, SampleCpu());
  run.peak_tensor_bytes = result.peak_tensor_bytes;
  run.made_tensor_bytes = result.produced_tensor_bytes;
  OPSCOPE_ASSIGN_OR_RETURN(run.output_checks, graph::CheckOutputs(expected, result.outputs, r.tolerance));
  graph::RecordSessionExecution(&run.model, run.model.compiled, run.schedule, result, **device);
  run.race_check = result.race_check;
  run.iteration_times = std::move(result.iterations);
  run.median_iteration = result.median_iteration;
  OPSCOPE_RETURN_IF_ERROR(graph::MapTasks(run.model, run.schedule));
  // After the run, so that calibrating does not share the machine with it.
  run.peaks = PeaksFor(r);

  const graph::RunSummary summarized = graph::SummarizeRun(run, graph::kSummaryTopTasks);
  ModelRunReport report = graph::ReportOfRun(run, summarized, RunCommand(r));
  report.outputs = std::move(result.outputs);
  report.output_checks = run.output_checks;
  report.race_check = std::move(result.race_check);
  if (!r.output_dir.empty()) {
    OPSCOPE_RETURN_IF_ERROR(MakeOutputDir(r.output_dir, "output_dir"));
    // The previous run's files go before any of this run's is written, and
    // capture.json is written last: a kill at any point leaves either the old
    // run whole or files that readers refuse (run_identity.h).
    OPSCOPE_RETURN_IF_ERROR(graph::ClearRunFolder(r.output_dir).WithContext("output_dir"));
    OPSCOPE_ASSIGN_OR_RETURN(report.files, graph::WriteRunExports(run, summarized));
    OPSCOPE_RETURN_IF_ERROR(graph::WriteCapture(run));
    report.files.push_back(r.output_dir + "/" + graph::kCaptureFile);
    for (const auto& [pass, model] : snapshots) {
      OPSCOPE_RETURN_IF_ERROR(graph::WritePassDump(r.output_dir + "/passes", pass, model, run.identity));
    }
    if (!snapshots.empty()) {
      report.files.push_back(r.output_dir + "/passes/ (" + std::to_string(snapshots.size()) + " files)");
    }
  }
  for (const std::string& f : result.saved_files) report.files.push_back(f);
  ring.KeepFolder();
  return report;
}

StatusOr<RunDiffReport> DiffRunFolders(const RunDiffRequest& r) {
  if (!(r.threshold_time_pct >= 0)) return InvalidArgumentError("threshold_time_pct: expected a percentage >= 0");
  if (r.threshold_nodes < 0) return InvalidArgumentError("threshold_nodes: expected >= 0");
  OPSCOPE_ASSIGN_OR_RETURN(graph::CapturedRun base, graph::LoadCapture(r.base_dir));
  OPSCOPE_ASSIGN_OR_RETURN(graph::CapturedRun now, graph::LoadCapture(r.new_dir));
  if (!r.allow_different_models && base.identity.model_fingerprint != now.identity.model_fingerprint) {
    return InvalidArgumentError(r.base_dir + " and " + r.new_dir + " are runs of different models (" + base.model.path +
                                " " + base.identity.model_fingerprint + ", " + now.model.path + " " +
                                now.identity.model_fingerprint + "): pass `allow_different_models` to compare them");
  }
  graph::RunDiff d = graph::DiffRuns(base, now, {.threshold_time_pct = r.threshold_time_pct,
                                                 .threshold_nodes = r.threshold_nodes});
  // Which two runs were compared: a later run into either folder makes this diff stale.
  d.json["runs"] = {{"base", graph::RunIdentityJson(base.identity)}, {"new", graph::RunIdentityJson(now.identity)}};
  RunDiffReport out{.json = JsonText(d.json, 2) + "\n",
                    .file = r.output, .regressed = d.regressed};
  FillRunDiffReport(d.json, out);
  if (!r.output.empty()) OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(r.output, out.json).WithContext("output"));
  return out;
}

}  // namespace opscope
