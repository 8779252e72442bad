#include "cli/inspector_run.h"

#include <cstdio>
#include <optional>

#include "cli/app_driver.h"
#include "cli/compare_command.h"
#include "cli/flag_parsing.h"
#include "core/text_format.h"
#include "graph/runtime/run_races.h"
#include "opscope/model.h"
#include "opscope/roofline.h"

namespace opscope::cli {

void PrintModelRun(const ModelRunReport& r, std::ostream& out) {
  char line[256];
  out << "model    " << r.model << "\n";
  out << "nodes    framework " << r.framework_nodes << "  compiled " << r.compiled_nodes << "\n";
  out << "tasks    " << r.tasks << " on " << r.streams << " streams (" << r.compute_streams << " compute + copy), "
      << r.iterations << " timed iteration(s) after " << r.warmup << " warm-up, device " << r.device << "\n";
  std::snprintf(line, sizeof(line), "time     %.1f us of tasks, %.1f us span, critical path %.1f us",
                r.total_task_us, r.span_us, r.critical_path_us);
  out << line;
  if (r.iterations > 1) {
    std::snprintf(line, sizeof(line), " (medians; IQR %.1f us of tasks, %.1f us span)\n",
                  r.total_task_q3_us - r.total_task_q1_us, r.span_q3_us - r.span_q1_us);
    out << line;
  } else {
    out << " (one iteration: noise unknown)\n";
  }
  if (r.memory_planned) {
    out << "memory   planned peak " << FormatBytes(static_cast<double>(r.arena_bytes)) << " with reuse, "
        << FormatBytes(static_cast<double>(r.no_reuse_bytes)) << " without";
    if (r.peak_tensor_bytes >= 0) {
      out << "; the run held at most " << FormatBytes(static_cast<double>(r.peak_tensor_bytes)) << " of tensors on "
          << r.device;
    }
    out << "\n";
  }
  out << "top op types\n";
  for (size_t i = 0; i < r.op_types.size() && i < 5; ++i) {
    const OpTypeTime& t = r.op_types[i];
    std::snprintf(line, sizeof(line), "  %-22s %5lld  %10.1f us  %5.1f%%\n", t.op_type.c_str(),
                  static_cast<long long>(t.count), t.total_us, t.share_pct);
    out << line;
  }
  if (r.peaks.source.empty()) {
    out << "roofline none: the run was not held against a device's roofs\n";
  } else {
    std::snprintf(line, sizeof(line), "roofline %.4g GB/s, %.4g GFLOP/s float32, %.4g float64 (0: unknown); ",
                  r.peaks.bandwidth_gbs, r.peaks.gflops_f32, r.peaks.gflops_f64);
    out << line << r.tasks_with_bound << " of " << r.tasks << " tasks with a bound; peaks " << r.peaks.source << "\n";
  }
  for (size_t i = 0; i < r.lost.size() && i < 3; ++i) {
    const OpTypeLoss& l = r.lost[i];
    std::snprintf(line, sizeof(line), "  %-22s %5lld  %10.1f us over its bound  efficiency %5.1f%%\n",
                  l.op_type.c_str(), static_cast<long long>(l.count), l.lost_us, 100 * l.efficiency);
    out << line;
  }
  // The same three, said once with why when one beat its bound (summary's rule).
  std::vector<std::pair<std::string, std::string>> notes;
  for (size_t i = 0; i < r.lost.size() && i < 3; ++i) notes.emplace_back(r.lost[i].op_type, r.lost[i].above_roof);
  if (const std::string groups = AboveRoofGroups(notes, "    "); !groups.empty()) {
    out << "  above their roof (efficiency over 100%):\n" << groups;
  }
  // Races between streams: a line each, nothing when there are none.
  const RaceCheckOutcome& rc = r.race_check;
  for (const StreamRace& race : rc.races) out << "race     " << graph::RaceText(race) << "\n";
  if (rc.ran && !rc.unjudged.empty()) out << "race     check incomplete, not judged: " << rc.unjudged << "\n";
  if (!rc.ran && !rc.skipped.empty()) out << "race     not checked: " << rc.skipped << "\n";
  for (const OutputCheck& c : r.output_checks) out << c.text;
  for (const std::string& f : r.files) out << "wrote    " << f << "\n";
  out << "repro    " << r.repro << "\n";
}

CLI::App* AddInspectorRun(CLI::App& app, InspectorRunFlags& flags) {
  CLI::App* cmd = app.add_subcommand("run", "run an ONNX model on the cpu device and export what ran");
  cmd->add_option("model", flags.model, "the .onnx model")->required();
  cmd->add_option("--output-dir", flags.output_dir, "where graph.json, trace.json, summary.json go")->required();
  cmd->add_option("--streams", flags.streams, "compute streams (default 2)");
  cmd->add_option("--warmup", flags.warmup, "untimed iterations run first (default 1)");
  cmd->add_option("--iterations", flags.iterations,
                  "timed iterations, all kept (default 5): times are their medians with the quartiles as noise; "
                  "the trace shows the median one");
  cmd->add_flag("--dump-passes", flags.dump_passes, "also write DIR/passes/NN_<pass>.json");
  cmd->add_option("--disable-pass", flags.disable_passes,
                  "compile without this pass (repeatable, or a,b); `inspector-cli diff` against a run with it "
                  "shows what it buys")
      ->delimiter(',');
  cmd->add_option("--inputs", flags.inputs, "x.npy[,...] in graph input order, or name=x.npy");
  AddSeedOption(cmd, flags.seed, "seed of the fill for inputs not given");
  cmd->add_option("--save-outputs", flags.save_outputs, "write each graph output as DIR2/<name>.npy");
  cmd->add_option("--expected", flags.expected,
                  "the outputs computed elsewhere: y.npy[,...] in graph output order, or name=y.npy; each output is "
                  "compared with its file (exit 1 when one fails)");
  AddToleranceFlags(*cmd, flags.tolerance);
  cmd->add_option("--plugin", flags.plugins, "a custom-op library to load (repeatable)");
  cmd->add_option("--peak-bw", flags.peak_bw, "memory roof in GB/s (default: the device's calibrated triad)");
  cmd->add_option("--peak-flops", flags.peak_flops,
                  "compute roof in GFLOP/s, float32 and float64 (default: the calibrated GEMM rates)");
  return cmd;
}

StatusOr<int> RunInspectorRun(const InspectorRunFlags& flags, std::ostream& out) {
  std::optional<double> peak_bw, peak_flops;
  if (!flags.peak_bw.empty()) {
    OPSCOPE_ASSIGN_OR_RETURN(peak_bw, ParsePositiveNumber("--peak-bw", flags.peak_bw, "GB/s"));
  }
  if (!flags.peak_flops.empty()) {
    OPSCOPE_ASSIGN_OR_RETURN(peak_flops, ParsePositiveNumber("--peak-flops", flags.peak_flops, "GFLOP/s"));
  }
  ModelRunRequest request{.model = flags.model,
                          .output_dir = flags.output_dir,
                          .streams = flags.streams,
                          .warmup = flags.warmup,
                          .iterations = flags.iterations,
                          .dump_passes = flags.dump_passes,
                          .disable_passes = flags.disable_passes,
                          .input_files = SplitList(flags.inputs, ','),
                          .seed = flags.seed,
                          .save_outputs = flags.save_outputs,
                          .expected_files = SplitList(flags.expected, ','),
                          .tolerance = flags.tolerance,
                          .plugins = flags.plugins,
                          .peak_bw_gbs = peak_bw,
                          .peak_gflops = peak_flops};
  OPSCOPE_ASSIGN_OR_RETURN(ModelRunReport report, RunModel(request));
  PrintModelRun(report, out);
  return report.outputs_passed() ? 0 : 1;
}

}  // namespace opscope::cli
