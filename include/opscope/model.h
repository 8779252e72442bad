// File: opscope/model.h
// A whole model as one library call: import an ONNX file, compile it,
// schedule its tasks onto streams, execute them on a device, map what ran
// back onto both graph layers, and export graph.json, trace.json,
// summary.json and capture.json into a folder (what `inspector-cli run`
// does). And the run-to-run diff of two such folders.
//
//   ModelRunRequest req{.model = "examples/models/two_branch.onnx", .output_dir = "/tmp/run"};
//   OPSCOPE_ASSIGN_OR_RETURN(ModelRunReport r, RunModel(req));
//   std::printf("%lld tasks, %.1f us span\n", (long long)r.tasks, r.span_us);
//
// Nothing is written under output_dir unless the whole run succeeded. Then
// the previous run's files there are removed first, and every file written
// carries this run's identity (an id and the model's fingerprint), so that a
// run killed half way leaves files that readers refuse, never a mix of two
// runs that they would read as one.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "opscope/compare.h"
#include "opscope/roofline.h"
#include "opscope/status.h"
#include "opscope/suspects.h"
#include "opscope/sweep.h"
#include "opscope/tensor.h"

namespace opscope {

struct ModelRunRequest {
  std::string model;                 // the .onnx file
  std::string output_dir;            // --output-dir: empty runs without writing anything
  int streams = 2;                   // --streams: compute streams (plus one copy stream)
  // --warmup: untimed iterations first (caches, threads, allocator).
  // --iterations: every one is timed and kept; task times are medians over
  // them, their quartiles the run's noise, and the trace shows the median one.
  // The library's defaults run the model once, as a program embedding it
  // expects (a capture session records every execution); `inspector-cli
  // run` defaults to 1 warm-up and 5 timed iterations.
  int warmup = 0;
  int iterations = 1;
  bool dump_passes = false;          // --dump-passes: DIR/passes/NN_<pass>.json
  // --disable-pass: compile without these passes (names as `inspector-cli
  // accuracy --disable-pass` takes them), to measure what a pass buys:
  // `inspector-cli diff` of a run with and without it.
  std::vector<std::string> disable_passes;
  // Graph inputs: files in graph input order ("x.npy") or by name
  // ("name=x.npy"), and/or tensors by name; the rest are filled from `seed`.
  std::vector<std::string> input_files;  // --inputs
  std::map<std::string, Tensor> input_tensors;
  uint64_t seed = 0;                 // --seed
  std::string save_outputs;          // --save-outputs: DIR2/<name>.npy per graph output
  // --expected: the outputs as computed elsewhere (onnxruntime, the training
  // framework), one .npy per graph output in order, or "name=y.npy" for some
  // of them; read and checked (shape, dtype) before the model runs, then
  // each output is compared with the compare engine's rules (`tolerance`:
  // the per-dtype defaults unless set).
  std::vector<std::string> expected_files;
  ToleranceSpec tolerance;
  std::vector<std::string> plugins;  // --plugin
  std::string device = "cpu";
  // The roofs each task is held against. Without these, the device's
  // calibrated peaks (CalibrateDevice: measured once per machine, ~5 s, then
  // cached); with both, no calibration runs. Each must be > 0.
  std::optional<double> peak_bw_gbs;   // --peak-bw: GB/s
  std::optional<double> peak_gflops;   // --peak-flops: GFLOP/s, the float32 and float64 roof alike
};

struct OpTypeTime {
  std::string op_type;
  int64_t count = 0;
  double total_us = 0;
  double share_pct = 0;
};

// An op type's tasks that have a roofline bound (see graph/runtime/summary.h).
struct OpTypeLoss {
  std::string op_type;
  int64_t count = 0;
  double measured_us = 0, lower_bound_us = 0, lost_us = 0;  // lost: measured - lower bound
  double efficiency = 0;                                     // lower bound / measured
  std::string above_roof;  // over 100%: which roof was beaten and why (AboveRoofNote)
};

// One compiled node that ran a kernel: its time (the median iteration's,
// calibrated) against its roofline, as the hot chain saw it.
struct NodeTime {
  std::string name, op_type;
  std::vector<TensorDesc> inputs;  // the op instance, as ops-debug sweep --graph runs it again
  Attrs attrs;                     // validated (defaults filled)
  RooflinePoint roofline;  // measured_us < 0: untimed; has_cost false: no cost model
  bool on_critical_path = false;
};

// One side of a race between streams: a task that read or wrote a buffer.
struct RaceAccess {
  int64_t task_id = -1;     // -1: no task of the schedule made this access
  std::string name;         // the compiled node, or "H2D copy of x" / "D2H copy of y"
  std::string op_type, kernel;
  int stream_id = -1;       // the schedule's stream (the copy stream is the last)
  std::string tensor;       // what this side calls the buffer: "Relu.Y", "copy destination"
  bool writes = false;
};

// Two accesses on different streams to overlapping bytes, one writing, that
// no stream order, event or host synchronisation of the run orders.
struct StreamRace {
  uint64_t begin = 0, bytes = 0;  // the overlap (addresses of this run, not stable)
  RaceAccess first, second;       // first enqueued first
};

// The race check over the run's last iteration (graph/runtime/run_races.h).
struct RaceCheckOutcome {
  bool ran = false;
  std::string skipped;          // why it did not run, when it did not
  int64_t accesses = 0;         // kernel launches and copies replayed
  int64_t sync_records = 0;     // event records and waits, copies, host syncs the ring took
  int64_t ring_slots = 0;       // launch slots per stream the ring had
  std::string unjudged;         // what was left unjudged and why; "" when everything was judged
  std::vector<StreamRace> races;
};

// A graph output held against its expected file (ModelRunRequest::expected_files).
struct OutputCheck {
  std::string name, file;  // the graph output; the expected .npy
  std::string describe;    // the output: "float32[1,10]"
  bool passed = false;
  std::string rule;        // "mixed |a-e| <= 1e-05 + 1e-05*|e|"
  int64_t mismatched = 0, total = 0;
  double max_abs_err = 0, max_rel_err = 0, cosine = 1;  // NaN: not finite (written as null)
  std::string pattern;     // where the mismatches are, in words ("" when none)
  std::vector<std::string> warnings;  // a pass that may hide an error (compare.h)
  std::string text;        // the verdict as `inspector-cli run` prints it, lines ending in '\n'
};

struct ModelRunReport {
  std::string model;
  int64_t framework_nodes = 0, compiled_nodes = 0, tasks = 0;
  int compute_streams = 0, streams = 0;  // streams includes the copy stream
  int iterations = 1, warmup = 0;
  std::string device;
  // Medians over the iterations (span and critical path: of the median iteration, by span).
  double total_task_us = 0, span_us = 0, critical_path_us = 0;
  double total_task_q1_us = 0, total_task_q3_us = 0, span_q1_us = 0, span_q3_us = 0;  // the noise
  bool memory_planned = false;
  int64_t arena_bytes = 0, no_reuse_bytes = 0;  // the compiler's plan: peak memory with and without buffer reuse
  // What the run held on the device: the most tensor bytes at once (its
  // streams' arenas, inputs and the values no arena took); -1: not known.
  int64_t peak_tensor_bytes = -1;
  std::vector<OpTypeTime> op_types;             // longest total time first
  RoofPeaks peaks;                              // what the tasks were held against
  int64_t tasks_with_bound = 0;                 // timed tasks with a cost model and known roofs
  std::vector<OpTypeLoss> lost;                 // most time lost against the lower bound first
  std::vector<NodeTime> nodes;                  // kernel nodes, in enqueue order
  std::vector<Suspect> suspects;                // the hot chain's, ranked (opscope/suspects.h)
  std::map<std::string, Tensor> outputs;        // graph outputs (host), from the last iteration
  std::vector<OutputCheck> output_checks;       // --expected: one per output given, in graph output order
  bool outputs_passed() const {
    for (const OutputCheck& c : output_checks) {
      if (!c.passed) return false;
    }
    return true;
  }
  std::vector<std::string> files;               // written, in order
  RaceCheckOutcome race_check;                  // summary.json "races"
  std::string repro;                            // the inspector-cli line that runs this again
};

StatusOr<ModelRunReport> RunModel(const ModelRunRequest& request);

// What changed between two run folders (their capture.json): the settings
// first (streams, iterations, warm-up, device, plugins), then span, total
// task time, per op type and per compiled node, each as medians over the
// runs' iterations. A change is a regression only when it grows by more than
// threshold_time_pct and by more than the noise of both runs (their
// quartile intervals do not overlap); with one iteration on a side the noise
// is unknown and the threshold alone decides. Two runs of different models
// (their fingerprints) are refused unless allow_different_models. diff.json
// is written to `output` when it is given, never into a run's folder.
struct RunDiffRequest {
  std::string base_dir, new_dir;
  double threshold_time_pct = 10;
  int64_t threshold_nodes = 0;
  bool allow_different_models = false;
  std::string output;  // diff.json; empty: not written
};

// A time over a run's timed iterations.
struct TimeSpread {
  double median_us = 0, iqr_us = 0;
  int samples = 0;  // 0: nothing timed (the row is new or gone on this side)
};

// One time compared, base -> new, with its verdict: "unchanged", "within
// noise", "slower", "faster", "new" or "gone" (diff.json's words).
struct TimeDiff {
  std::string name;  // the op type or the compiled node; "span", "total task time"
  TimeSpread base, now;
  double change_pct = 0, change_us = 0;
  std::string verdict;
};

struct SettingDiff {
  std::string setting, base, now;  // the values as text
};

struct LayerNodesDiff {
  std::string layer;  // "framework", "compiled"
  int64_t base = 0, now = 0;
  std::vector<std::string> added, removed;
};

struct OpTypeCountDiff {
  std::string op_type;
  int64_t base = 0, now = 0;
};

struct FusionDiff {
  std::string kind;  // "added", "removed", "changed"
  std::string node;
};

// Two engines' runs of one model (opscope's, and one `inspector-cli
// import-ort` read from onnxruntime) compared through the framework graph
// they share (graph/run/engine_diff.h).
struct EngineSide {  // what one engine made of a group of framework nodes
  std::string node, op_type;
  std::vector<std::string> framework;  // the framework nodes it stands for
  double time_us = -1;                 // median per iteration; -1: not timed
};
struct EngineFusionRow {
  std::string at;                       // the framework node the row starts at
  std::vector<std::string> framework;   // both sides' framework nodes, in graph order
  std::optional<EngineSide> base, now;  // empty: that engine ran none of them
};
struct LayoutConversion {
  std::string node, op_type, from, to;
  double time_us = -1;
};
struct EngineLayouts {
  std::vector<LayoutConversion> conversions;  // inserted by the engine
  int64_t other_layout_nodes = 0;             // nodes run in a layout other than the model's
  std::string other_layout;                   // "NHWC", "NCHWc"; "" when none
};
struct EngineDiff {
  std::string base, now;  // "opscope", "onnxruntime"
  std::vector<EngineFusionRow> fusions;
  EngineLayouts base_layouts, new_layouts;
  std::vector<TimeDiff> framework_op_types;  // each compiled node under its framework node's op type
};

struct RunDiffReport {
  std::string json;   // diff.json ("opscope.diff/1"): all of what follows, and the two runs' identities
  std::string file;   // where it was written; empty: nowhere
  bool regressed = false;
  std::vector<std::string> regressions;  // why, in words
  // What makes the times incomparable comes first.
  bool same_model = true;
  std::string base_model, new_model;     // the model files' paths
  std::vector<SettingDiff> changed_settings;
  // How the runs' compilers differed (passes left out with --disable-pass,
  // or another opscope's pass), in words; empty: they compiled alike.
  std::string compiler;
  std::vector<LayerNodesDiff> layers;    // framework, then compiled
  std::vector<OpTypeCountDiff> op_type_mix;
  std::vector<FusionDiff> fusions;
  int base_iterations = 0, new_iterations = 0;
  bool noise_known = false;              // both sides timed two or more iterations
  std::string machine_noise;             // why no time is judged: other processes loaded the machine (empty: they did not)
  std::string load_unknown;              // a side whose load is not known, and why (empty: both are known)
  // The most tensor bytes each run held at once (ModelRunReport's); -1: not known for that run.
  int64_t base_peak_tensor_bytes = -1, new_peak_tensor_bytes = -1;
  TimeDiff span, total_task;
  std::vector<TimeDiff> op_types, nodes;
  std::optional<EngineDiff> engines;     // set when the two runs are of different engines
};

StatusOr<RunDiffReport> DiffRunFolders(const RunDiffRequest& request);

// `inspector-cli diff`'s text: the settings and graph changes, the noise,
// span and total task time, then at most `top` rows per table (those that
// moved first, then the largest), the regressions and the verdict.
void PrintRunDiff(const RunDiffReport& diff, int top, std::ostream& out);

// ---- inspector-cli import-ort: an onnxruntime run as the three layers ----
// The model as written is the framework graph; the model onnxruntime
// optimized and saved (SessionOptions optimized_model_filepath, with its
// fused and layout nodes) is the compiled graph, each of its nodes tied to
// the framework nodes it computes (graph/ort/ort_mapping.h says how: by
// tensor names, through reorders, by names made from a framework tensor's,
// or as one of several nodes between tied tensors); the tasks are the kernel
// events of onnxruntime's profile (enable_profiling), one stream per thread.
// output_dir then holds graph.json, trace.json, summary.json and
// capture.json as `inspector-cli run` writes them, so that summary, path,
// diff, export and the report page read it unchanged; capture.json names
// the three files (with fingerprints) it is rebuilt from.
struct OrtImportRequest {
  std::string model;       // --model: the .onnx as written
  std::string optimized;   // --optimized: onnxruntime's optimized model
  std::string profile;     // --profile: onnxruntime's profile (.json)
  std::string output_dir;  // --output-dir: empty writes nothing
  int warmup = -1;         // --warmup: the profile's first runs left untimed; -1: one when it holds several
};

struct OrtImportReport {
  ModelRunReport run;  // nodes, tasks, times and op types as RunModel reports them; files written
  std::vector<std::string> providers;  // the execution providers that ran kernels
  int profile_runs = 0;                // runs of the model in the profile
  int runs_left_out = 0;               // timed runs that ran other kernels than the first timed one
  // How the optimized model's nodes were tied to the model's (OrtMapping).
  int64_t by_tensor_name = 0, by_layout = 0, by_node_name = 0, in_region = 0, inserted = 0;
  int64_t framework_removed = 0, framework_folded = 0;
  int64_t unmapped_tasks = 0;  // kernel events naming no node of the optimized model
};

StatusOr<OrtImportReport> ImportOnnxruntimeRun(const OrtImportRequest& request);

// ---- ops-debug sweep --graph: a model's hot kernels swept ----------------
// The model is run once as RunModel runs it; its compiled nodes whose ops
// declare tunables are ranked by their tasks' time, and the `top` ones are
// swept as op instances (RunSweep of opscope/sweep.h: op type, input shapes
// and dtypes, attrs), node k into output_dir/k_<op>/ (sweep.json and
// sweep.html). A node that cannot be swept alone is skipped, with why.
struct HotNode {
  std::string name, op_type;
  std::vector<Shape> input_shapes;  // its present inputs (trailing optional ones left out)
  std::vector<DType> dtypes;
  std::string attrs;                // as --attrs takes them, defaults filled
  double us = 0;                    // its tasks' time in the model run
};

// The nodes of one run of `model` whose ops declare tunables, slowest first.
StatusOr<std::vector<HotNode>> HotNodes(const ModelRunRequest& model);

struct SweptNode {
  HotNode node;
  std::string dir;                    // where its sweep.json and sweep.html are
  std::optional<SweepReport> report;  // empty: skipped
  std::string skipped;                // why
  std::string page;                   // sweep.html
};

struct ModelSweepRequest {
  ModelRunRequest model;  // the run that ranks the nodes: model, plugins, device, peaks
  int top = 5;
  // How each node is swept: the values, the timing, the cache, progress and
  // cancel. Its op instance (base.run's op, inputs, dtypes, attrs) is each node's.
  SweepRequest each;
  std::string output_dir = ".";
  // Before node k (1-based) of `total` is swept, and once it is.
  std::function<void(int k, int total, const HotNode& node)> on_node;
  std::function<void(const SweptNode& swept)> on_swept;
};

struct ModelSweep {
  std::vector<SweptNode> nodes;  // the top ones, in the order swept
  bool complete = true;          // false: each.cancel stopped it
};

// Errors (exit 2) before anything is written: top < 1, an op named in
// `each` (the nodes name theirs), the model's run errors, a model none of
// whose kernels declares a tunable.
StatusOr<ModelSweep> SweepModel(const ModelSweepRequest& request);

}  // namespace opscope
