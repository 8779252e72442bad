#include "cli/inspector_accuracy.h"

#include "cli/app_driver.h"
#include "cli/compare_command.h"
#include "cli/flag_parsing.h"
#include "opscope/accuracy.h"
#include "report/report_dir.h"
#include "report/report_page.h"

namespace opscope::cli {

CLI::App* AddInspectorAccuracy(CLI::App& app, InspectorAccuracyFlags& f) {
  CLI::App* c = app.add_subcommand(
      "accuracy", "where the compiled graph's numbers leave the framework graph's double-precision golden, and why");
  c->add_option("model", f.model, "the .onnx model")->required();
  c->add_option("--output-dir", f.output_dir,
                "where accuracy.json and replay/ (the diverging nodes' real inputs) go (default opscope-out/accuracy)");
  c->add_option("--inputs", f.inputs, "x.npy[,...] in graph input order, or name=x.npy");
  AddSeedOption(c, f.seed, "seed of the fill for inputs not given (as run's)");
  c->add_option("--plugin", f.plugins, "a custom-op library to load (repeatable)");
  c->add_option("--disable-pass", f.disable_passes, "compile without this pass (repeatable, or a,b)")->delimiter(',');
  c->add_option("--expected", f.expected, "the outputs computed elsewhere, as run --expected takes them");
  AddToleranceFlags(*c, f.tolerance);
  c->add_option("--top", f.top, "nodes listed, most local error first (default 5)");
  c->add_option("--replay", f.replay, "diverging nodes whose real inputs are written for ops-debug (default 3)");
  return c;
}

StatusOr<int> RunInspectorAccuracy(const InspectorAccuracyFlags& f, std::ostream& out) {
  if (f.top < 0) return InvalidArgumentError("--top " + std::to_string(f.top) + ": expected >= 0");
  OPSCOPE_ASSIGN_OR_RETURN(AccuracyReport report,
                           RunAccuracy({.model = f.model,
                                        .output_dir = f.output_dir,
                                        .input_files = SplitList(f.inputs, ','),
                                        .seed = f.seed,
                                        .plugins = f.plugins,
                                        .disable_passes = f.disable_passes,
                                        .expected_files = SplitList(f.expected, ','),
                                        .tolerance = f.tolerance,
                                        .replay = f.replay}));
  // Written into a run's folder that has its page: the page again, now
  // coloured by each node's own error (report/report_dir.h reads accuracy.json).
  if (!report.run_id.empty() && FolderHolds(f.output_dir, "report.html")) {
    OPSCOPE_ASSIGN_OR_RETURN(std::string page, WriteReportHtml(f.output_dir));
    report.files.push_back(page);
  }
  PrintAccuracy(report, f.top, out);
  return report.ExitCode();
}

}  // namespace opscope::cli
