// `ops-debug sweep`: every flag of `ops-debug run` (the op instance; its
// --tunables is the current configuration), the values to sweep (--block,
// --vec, --tunable NAME=V1,V2; by default every declared value of every
// tunable), how to time (--warmup, --iters) and the roofs (--peak-bw,
// --peak-flops; calibrated once when not given). opscope/sweep.h runs it;
// this writes sweep.json and sweep.html into --output-dir (default:
// opscope-out/sweep), shows progress on a terminal, and stops after the current
// candidate on Ctrl-C (exit 130, sweep.json marked "complete": false).
//
//   ops-debug sweep --plugin libperf_ops.so --op window_l2norm_v1 --input-shapes "[1,8,256,256]" --block 64,256,1024
//   ops-debug sweep --graph examples/models/resnet_small.onnx --top 3 --output-dir sweeps
#pragma once

#include <atomic>
#include <ostream>
#include <string>
#include <vector>

#include "cli/run_command.h"
#include "opscope/sweep.h"

namespace CLI {
class App;
}

namespace opscope::cli {

struct SweepFlags {
  RunFlags run;
  std::string block, vec;            // "64,128,256"
  std::vector<std::string> tunable;  // "NAME=V1,V2", repeatable
  int warmup = 3;
  int iters = 20;
  double peak_bw = -1;  // -1: not given
  double peak_flops = -1;
  std::string output_dir = "opscope-out/sweep";
  bool no_cache = false;
  std::string graph;  // --graph MODEL.onnx: sweep the model's most expensive tasks
  int top = 5;        // --top: how many
};

// Parses the flags and checks --output-dir; nothing is written.
StatusOr<SweepRequest> SweepRequestFromFlags(const SweepFlags& flags);
// Sweeps, writes sweep.json and sweep.html, prints. Returns the exit code: 0
// a candidate passed, 1 none did, 130 stopped by `cancel`; or the error of a
// bad request (exit 2), with nothing written.
StatusOr<int> RunSweepCommand(const SweepFlags& flags, std::ostream& out, std::ostream& err,
                              const std::atomic<bool>* cancel);
// --graph: SweepModel (opscope/model.h) runs the model once, ranks its compiled nodes by
// their tasks' time, and sweeps the `top` ones as op instances (op type,
// input shapes and dtypes, attrs), each into --output-dir/NN_<op>/. A node
// whose op declares no tunables is listed and skipped.
StatusOr<int> RunGraphSweep(const SweepFlags& flags, std::ostream& out, std::ostream& err,
                            const std::atomic<bool>* cancel);
CLI::App* AddSweepCommand(CLI::App& app, SweepFlags& flags);

}  // namespace opscope::cli
