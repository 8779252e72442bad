// File: cli/inspector_run.h
// `inspector-cli run MODEL.onnx --output-dir DIR`: import, compile, schedule
// on N compute streams, execute on the cpu device, calibrate, map, then write
// DIR/graph.json, DIR/trace.json, DIR/summary.json, DIR/roofline.svg and
// DIR/capture.json (what the other commands read back) and print a short
// summary. After --warmup untimed iterations, every one of --iterations is
// timed and kept: times are medians over them with their quartiles (the
// run's noise), and trace.json shows the median iteration. Each task is held
// against the device's roofs: calibrated (once
// per machine) unless --peak-bw and --peak-flops give them. Nothing is written
// under DIR unless the whole run succeeded. With --expected, each graph
// output is compared with its file (the compare engine's rules, per-dtype
// defaults, ops-debug compare's tolerance flags): exit code 1 when one fails.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "opscope/compare.h"
#include "opscope/model.h"
#include "opscope/status.h"

namespace opscope::cli {

struct InspectorRunFlags {
  std::string model;
  std::string output_dir;
  int streams = 2;
  int warmup = 1;
  int iterations = 5;
  bool dump_passes = false;
  std::vector<std::string> disable_passes;
  std::string inputs;  // "a.npy,b.npy" (graph input order) or "name=a.npy,..."
  uint64_t seed = 0;
  std::string save_outputs;
  std::string expected;  // "y.npy,z.npy" (graph output order) or "y=y.npy,..."
  ToleranceSpec tolerance;
  std::vector<std::string> plugins;
  std::string peak_bw, peak_flops;  // --peak-bw GB/s, --peak-flops GFLOP/s; empty: calibrated
};

// What `run` prints of a run (and `import-ort` of an onnxruntime run).
void PrintModelRun(const ModelRunReport& r, std::ostream& out);

CLI::App* AddInspectorRun(CLI::App& app, InspectorRunFlags& flags);
// 0, or 1 when an output failed against --expected.
StatusOr<int> RunInspectorRun(const InspectorRunFlags& flags, std::ostream& out);

}  // namespace opscope::cli
