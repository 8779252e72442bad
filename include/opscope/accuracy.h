// File: opscope/accuracy.h
// Where a model's numbers change between the graph as written and the graph
// the compiler made of it, and why (`inspector-cli accuracy`). The framework
// graph runs node by node on the ops' double-precision references (the
// golden); the compiled graph runs as it executes (its fused kernels, its
// dtypes, its inserted nodes) on the same inputs. Every compiled node is then
// held three ways against the golden of the framework tensors it maps to (by
// value name: a fused node's output is its last absorbed node's):
//   inherited  the error already at its inputs (compiled run vs golden);
//   output     the error at its outputs in the compiled run;
//   local      the node alone on the golden inputs (cast to the dtypes it
//              takes), against the golden outputs: its own error, which
//              accumulated error upstream cannot inflate.
// The nodes are ranked by their local error, the first along the data flow
// whose local error crosses the tolerance is the first divergent node, and
// each diverging node is named with the compiler decision behind it (the
// fusion and its framework nodes, a dtype that differs from the framework's,
// a layout change, inputs folded to constants) and replayed alone: its real
// inputs written as .npy with the `ops-debug run` line that runs it on them.
//
//   AccuracyRequest req{.model = "examples/models/transformer_block.onnx", .output_dir = "/tmp/acc"};
//   OPSCOPE_ASSIGN_OR_RETURN(AccuracyReport r, RunAccuracy(req));
//   if (r.first_divergent >= 0) std::puts(r.nodes[r.first_divergent].name.c_str());
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "opscope/compare.h"
#include "opscope/model.h"
#include "opscope/status.h"

namespace opscope {

struct AccuracyRequest {
  std::string model;                        // the .onnx file
  std::string output_dir;                   // accuracy.json and replay/; empty: nothing written
  std::vector<std::string> input_files;     // --inputs, as `run` takes them
  uint64_t seed = 0;                        // --seed: the fill of inputs not given (as `run`'s)
  std::vector<std::string> plugins;         // --plugin
  std::vector<std::string> disable_passes;  // --disable-pass: compiled without these
  std::vector<std::string> expected_files;  // --expected: the outputs against files too (as `run`)
  ToleranceSpec tolerance;                  // per compiled dtype; --mode, --abserr, --relerr
  int replay = 3;                           // --replay: diverging nodes written out, most local error first
  // --keep-bytes: the intermediate tensors of both runs held in memory up to
  // this many bytes, the rest spilled to output_dir/spill as .npy and mapped
  // back (graph/harness/spill_store.h); -1: all in memory.
  int64_t keep_bytes = -1;
};

// One tensor's compiled values against its golden.
struct TensorError {
  std::string tensor;            // the value's name
  DType compiled_dtype = DType::kF32, framework_dtype = DType::kF32;
  int64_t mismatched = 0, total = 0;
  double max_abs_err = 0, max_rel_err = 0, cosine = 1, mean_abs_err = 0;
  // The worst element's error as a multiple of the error its tolerance allows
  // it (|a-e| / (atol + rtol*|e|) under the mixed rule, ulps / max_ulp under
  // ulp): above 1 exactly where elements are out of tolerance, and how far
  // below 1 says how close a passing tensor came. Infinite for an Inf or NaN
  // on one side only; -1 where the rule has no scale (bit-exact).
  double tolerance_ratio = -1;
  std::vector<HistogramBin> histogram;  // the elements by decade of |golden|: count, out of tolerance, worst error
  bool compared = false;         // false: no golden for it (inserted by the compiler)
  bool passed() const { return !compared || mismatched == 0; }
  double share() const { return total ? static_cast<double>(mismatched) / static_cast<double>(total) : 0; }
};

// A fused node at one of its inner stages (graph/harness/fused_stages.h: the
// framework values its kernel holds on the way), the node cut to stop there
// and run alone on the golden inputs, like `local`.
struct StageAccuracy {
  std::string framework_node;  // whose output the stage is
  TensorError local;
  bool diverges = false;
};

struct NodeAccuracy {
  int64_t node_id = -1;
  std::string name, op_type;
  std::string mapping;                      // "one-to-one", "fuses 3 framework nodes", "inserted by the compiler"
  std::vector<std::string> framework_nodes; // the names of those it stands for (fused_from)
  TensorError inherited;                    // the worst of its inputs
  TensorError output;                       // the worst of its outputs, in the compiled run
  TensorError local;                        // the worst of its outputs, the node alone on golden inputs
  std::vector<StageAccuracy> stages;        // a fused node's inner stages, in data-flow order
  bool diverges = false;                    // its local error crosses the tolerance
  std::string tolerance;                    // the rule its outputs were held to
  std::vector<std::string> decisions;       // the compiler's, in words
  std::string instance_key;                 // the op instance (as ops-debug's report.json keys it)
  std::vector<std::string> replay_files;    // its real inputs (.npy), when replayed
  std::string replay;                       // the ops-debug line that runs it alone on them
};

struct AccuracyReport {
  std::string model;
  int64_t framework_nodes = 0, compiled_nodes = 0;
  std::vector<std::string> disabled_passes;
  std::vector<NodeAccuracy> nodes;   // compared kernel nodes, most local error first
  int first_divergent = -1;          // index into nodes: the first along the data flow; -1: none
  std::vector<OutputCheck> output_checks;  // --expected
  std::vector<std::string> notes;    // what was not compared, and why
  std::vector<std::string> files;    // written
  std::string repro;
  // When the output folder holds an `inspector-cli run` of the same model:
  // that run's id, written in accuracy.json, so `summary DIR` lists the top
  // nodes beside the run's tables (and knows a later run made them stale).
  std::string run_id, model_fingerprint;
  // Wall time of each part: the golden chain (the framework graph on the
  // double-precision references), the compiled graph (run, then in order for
  // every value), and judging every node (each alone again, the compares).
  double golden_ms = 0, compiled_ms = 0, judge_ms = 0;
  // The intermediate tensors of both runs: bytes held in memory, and spilled
  // to files (--keep-bytes) with their count.
  int64_t kept_bytes = 0, spilled_bytes = 0, spilled_tensors = 0;
  bool clean() const;  // no node diverges, every --expected output passes, something was compared
  int ExitCode() const { return clean() ? 0 : 1; }
};

StatusOr<AccuracyReport> RunAccuracy(const AccuracyRequest& request);
// The text `inspector-cli accuracy` prints: the verdict, the first divergent
// node, then at most `top` nodes by local error with their decisions and replays.
void PrintAccuracy(const AccuracyReport& report, int top, std::ostream& out);

}  // namespace opscope
