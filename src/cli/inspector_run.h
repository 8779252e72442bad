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
// under DIR unless the whole run succeeded.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "opscope/status.h"

namespace opscope::cli {

struct InspectorRunFlags {
  std::string model;
  std::string output_dir;
  int streams = 2;
  int warmup = 1;
  int iterations = 5;
  bool dump_passes = false;
  std::string inputs;  // "a.npy,b.npy" (graph input order) or "name=a.npy,..."
  uint64_t seed = 0;
  std::string save_outputs;
  std::vector<std::string> plugins;
  std::string peak_bw, peak_flops;  // --peak-bw GB/s, --peak-flops GFLOP/s; empty: calibrated
};

CLI::App* AddInspectorRun(CLI::App& app, InspectorRunFlags& flags);
Status RunInspectorRun(const InspectorRunFlags& flags, std::ostream& out);

}  // namespace opscope::cli
