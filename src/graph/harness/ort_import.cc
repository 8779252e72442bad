// opscope/model.h's ImportOnnxruntimeRun: what `inspector-cli import-ort`
// does between parsing its flags and printing.

#include "core/command_line.h"
#include "core/file_util.h"
#include "graph/export/capture_json.h"
#include "graph/export/run_folder.h"
#include "graph/harness/run_report.h"
#include "graph/ort/ort_run.h"
#include "graph/run/run_identity.h"
#include "opscope/model.h"

namespace opscope {
namespace {

std::string ImportCommand(const OrtImportRequest& r) {
  CommandLine c("inspector-cli import-ort");
  c.Flag("--model", r.model).Flag("--optimized", r.optimized).Flag("--profile", r.profile);
  c.Flag("--output-dir", r.output_dir);
  if (r.warmup >= 0) c.Flag("--warmup", r.warmup);
  return c.str();
}

}  // namespace

StatusOr<OrtImportReport> ImportOnnxruntimeRun(const OrtImportRequest& r) {
  if (r.warmup < -1) return InvalidArgumentError("warmup " + std::to_string(r.warmup) + ": expected >= 0");
  OPSCOPE_ASSIGN_OR_RETURN(graph::OrtRun ort, graph::ImportOrtRun({.model = r.model,
                                                                    .optimized = r.optimized,
                                                                    .profile = r.profile,
                                                                    .warmup = r.warmup}));
  graph::CapturedRun& run = ort.run;
  run.dir = r.output_dir;
  if (!r.output_dir.empty()) {
    OPSCOPE_ASSIGN_OR_RETURN(std::string fingerprint, graph::ModelFingerprint(r.model));
    run.identity = graph::NewRunIdentity(fingerprint);
  }
  OrtImportReport out{.run = graph::ReportOfRun(run, ImportCommand(r)),
                      .providers = ort.providers,
                      .profile_runs = ort.profile_runs,
                      .runs_left_out = ort.runs_left_out,
                      .by_tensor_name = ort.mapping.by_tensor_name,
                      .by_layout = ort.mapping.by_layout,
                      .by_node_name = ort.mapping.by_node_name,
                      .in_region = ort.mapping.in_region,
                      .inserted = ort.mapping.inserted,
                      .framework_removed = ort.mapping.removed,
                      .framework_folded = ort.mapping.folded,
                      .unmapped_tasks = ort.unmapped_tasks};
  out.run.race_check = *run.race_check;
  if (!r.output_dir.empty()) {
    OPSCOPE_RETURN_IF_ERROR(MakeOutputDir(r.output_dir, "output_dir"));
    // As a run's: the previous files go first, capture.json comes last (run_folder.h).
    OPSCOPE_RETURN_IF_ERROR(graph::ClearRunFolder(r.output_dir).WithContext("output_dir"));
    OPSCOPE_ASSIGN_OR_RETURN(out.run.files, graph::WriteRunExports(run));
    OPSCOPE_RETURN_IF_ERROR(graph::WriteCapture(run));
    out.run.files.push_back(r.output_dir + "/" + graph::kCaptureFile);
  }
  return out;
}

}  // namespace opscope
