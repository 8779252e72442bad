#include "cli/inspector_import_ort.h"

#include "cli/inspector_run.h"
#include "opscope/model.h"

namespace opscope::cli {

CLI::App* AddInspectorImportOrt(CLI::App& app, InspectorImportOrtFlags& flags) {
  CLI::App* cmd = app.add_subcommand(
      "import-ort", "read an onnxruntime run (the model, its optimized model and its profile) as a run folder");
  cmd->add_option("--model", flags.model, "the .onnx model as written")->required();
  cmd->add_option("--optimized", flags.optimized,
                  "the model onnxruntime optimized and saved (SessionOptions optimized_model_filepath)")
      ->required();
  cmd->add_option("--profile", flags.profile,
                  "onnxruntime's profile of the session that ran it (enable_profiling; the .json end_profiling wrote)")
      ->required();
  cmd->add_option("--output-dir", flags.output_dir, "where graph.json, trace.json, summary.json, capture.json go")
      ->required();
  cmd->add_option("--warmup", flags.warmup,
                  "the profile's first runs left untimed (default: 1 when it holds several runs, else 0)");
  return cmd;
}

Status RunInspectorImportOrt(const InspectorImportOrtFlags& flags, std::ostream& out) {
  OPSCOPE_ASSIGN_OR_RETURN(OrtImportReport r, ImportOnnxruntimeRun({.model = flags.model,
                                                                    .optimized = flags.optimized,
                                                                    .profile = flags.profile,
                                                                    .output_dir = flags.output_dir,
                                                                    .warmup = flags.warmup}));
  std::string providers;
  for (const std::string& p : r.providers) providers += (providers.empty() ? "" : ", ") + p;
  out << "engine   onnxruntime (" << providers << "): " << r.profile_runs << " run(s) in the profile, "
      << r.run.warmup << " warm-up, " << r.run.iterations << " timed";
  if (r.runs_left_out > 0) out << ", " << r.runs_left_out << " left out (they ran other kernels)";
  out << "\n";
  out << "mapping  " << r.run.compiled_nodes << " optimized nodes: " << r.by_tensor_name << " by tensor name, "
      << r.by_layout << " through a reorder, " << r.by_node_name << " by node name, " << r.in_region
      << " sharing a region, " << r.inserted << " inserted by onnxruntime; " << r.framework_removed
      << " framework node(s) removed (" << r.framework_folded << " folded into constants)\n";
  if (r.unmapped_tasks > 0) {
    out << "unmapped " << r.unmapped_tasks << " kernel event(s) name no node of the optimized model\n";
  }
  PrintModelRun(r.run, out);
  return Status::Ok();
}

}  // namespace opscope::cli
