#include "cli/inspector_diff.h"

#include <cstdlib>

#include "opscope/model.h"

namespace opscope::cli {

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
  PrintRunDiff(d, flags.top, out);
  return d.regressed ? 1 : 0;
}

}  // namespace opscope::cli
