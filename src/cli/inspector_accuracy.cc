#include "cli/inspector_accuracy.h"

#include <cstdint>
#include <stdexcept>

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
  c->add_option("--keep-bytes", f.keep_bytes,
                "intermediate tensors held in memory up to this size (bytes, or 64K, 256M, 2G); the rest are spilled to "
                "OUTPUT_DIR/spill and mapped back (default: all in memory)");
  return c;
}

namespace {

// "256M" -> 268435456; -1 for none given.
StatusOr<int64_t> ByteCount(const std::string& text) {
  if (text.empty()) return int64_t{-1};
  size_t used = 0;
  int64_t n = -1;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  if (used == 0 || n < 0 || shift < 0 || n > (INT64_MAX >> shift)) {
    return InvalidArgumentError("--keep-bytes '" + text + "': expected a size in bytes, or with K, M or G (256M)");
  }
  return n << shift;
}

}  // namespace

StatusOr<int> RunInspectorAccuracy(const InspectorAccuracyFlags& f, std::ostream& out) {
  if (f.top < 0) return InvalidArgumentError("--top " + std::to_string(f.top) + ": expected >= 0");
  OPSCOPE_ASSIGN_OR_RETURN(const int64_t keep_bytes, ByteCount(f.keep_bytes));
  OPSCOPE_ASSIGN_OR_RETURN(AccuracyReport report,
                           RunAccuracy({.model = f.model,
                                        .output_dir = f.output_dir,
                                        .input_files = SplitList(f.inputs, ','),
                                        .seed = f.seed,
                                        .plugins = f.plugins,
                                        .disable_passes = f.disable_passes,
                                        .expected_files = SplitList(f.expected, ','),
                                        .tolerance = f.tolerance,
                                        .replay = f.replay,
                                        .keep_bytes = keep_bytes}));
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
