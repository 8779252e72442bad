// File: graph/run/captured_run.h
// One run of a model as data: the graphs, the executed schedule with every
// timed iteration, the passes, the roofs and the race check's verdict, under
// the run's identity. `inspector-cli run` keeps it in its folder as
// capture.json (graph/export/capture_json.h), from which export, summary,
// path and diff rebuild it without running the model again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/ir/ir.h"
#include "graph/passes/pass_manager.h"
#include "graph/run/run_identity.h"
#include "graph/runtime/iteration_stats.h"
#include "graph/runtime/scheduler.h"
#include "opscope/model.h"
#include "opscope/roofline.h"

namespace opscope::graph {

// A run of another engine, read from the files it wrote (graph/ort): the
// run folder is rebuilt from them as opscope's own runs are from the model.
struct EngineSource {
  std::string engine;  // "onnxruntime"
  std::string optimized_model, optimized_fingerprint;
  std::string profile, profile_fingerprint;
};

struct CapturedRun {
  std::string dir;
  RunIdentity identity;  // every file written for the run carries it
  Model model;
  Schedule schedule;
  std::vector<PassResult> passes;
  std::vector<std::string> plugins;
  // ModelFingerprint of each plugin when the run loaded it (its version, as
  // diff reports it); empty: a capture written before they were kept.
  std::vector<std::string> plugin_fingerprints;
  std::string device = "cpu";
  int iterations = 1;
  int warmup = 0;
  // Every timed iteration's task times (iteration_stats.h); the schedule
  // holds iteration_times[median_iteration]. Empty: a capture written before
  // runs kept them (its one iteration is the schedule's).
  std::vector<IterationTimes> iteration_times;
  int median_iteration = 0;
  uint64_t seed = 0;
  std::optional<RoofPeaks> peaks;  // empty: a capture written before roofs were kept
  std::optional<RaceCheckOutcome> race_check;  // empty: a capture written before runs were checked
  // Other processes' share of the machine's CPU while the iterations ran
  // (core/cpu_share.h); -1: not known (an older capture, or a run too short
  // for the kernel's ticks).
  double other_cpu_share = -1;
  // Device memory of tensors while the iterations ran (executor.h's
  // ExecutionResult): the most held at once, and all an iteration made;
  // -1: not known (an older capture, another engine's run).
  int64_t peak_tensor_bytes = -1;
  int64_t made_tensor_bytes = -1;
  // --expected: each output given against its file (opscope/model.h); empty when none was.
  std::vector<OutputCheck> output_checks;
  // Set for a run of another engine; its model is the framework graph, and
  // the compiled graph and the tasks are that engine's.
  std::optional<EngineSource> source;
};

// The run's times over its iterations: medians and quartiles.
RunTiming TimingOf(const CapturedRun& run);

}  // namespace opscope::graph
