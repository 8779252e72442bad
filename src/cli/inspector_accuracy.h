// File: cli/inspector_accuracy.h
// `inspector-cli accuracy MODEL.onnx`: where the numbers change between the
// framework graph (run on the ops' double-precision references) and the
// compiled graph (run as it executes), which compiler decision is behind the
// first node that diverges, and that node replayed alone in ops-debug
// (opscope/accuracy.h). Writes DIR/accuracy.json and DIR/replay/; exit 1
// when a node diverges or an output fails against --expected.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "opscope/compare.h"
#include "opscope/status.h"

namespace opscope::cli {

struct InspectorAccuracyFlags {
  std::string model;
  std::string output_dir = "opscope-out/accuracy";
  std::string inputs;
  uint64_t seed = 0;
  std::vector<std::string> plugins;
  std::vector<std::string> disable_passes;
  std::string expected;
  ToleranceSpec tolerance;
  int top = 5;
  int replay = 3;
  std::string keep_bytes;  // "64M", "1G", "0"; empty: all in memory
};

CLI::App* AddInspectorAccuracy(CLI::App& app, InspectorAccuracyFlags& flags);
StatusOr<int> RunInspectorAccuracy(const InspectorAccuracyFlags& flags, std::ostream& out);

}  // namespace opscope::cli
