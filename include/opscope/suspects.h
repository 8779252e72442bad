// File: opscope/suspects.h
// The hot chain: where a run could get faster along its data flow, not only
// which bars are longest. From facts about each node (its op, tensors,
// attrs, launches, measured time and roofline, whether it is on the
// critical path) and the edges between nodes, a ranked list of suspects,
// each with its numbers and a direction:
//   kFusion      two adjacent ops that each stream the same large tensor in
//                full: "fuse Relu into Sigmoid: saves 128.00 MiB of traffic,
//                about 14.2 ms at the measured 9.4 GB/s" (the intermediate
//                written and read again, at the pair's own bandwidth);
//   kReads       from the op's index map (OpDef::InputRegion): an input read
//                much more than once (the boxes of all outputs add up to
//                several times its size), boxes that step along an outer
//                dim (strided window reads), or adjacent outputs whose boxes
//                lie far apart (strided reads): "tile the reads / prefetch";
//   kSmallGrid   a kernel far below its bound whose grid has fewer blocks
//                than a few per compute unit: "too few blocks to fill the device";
//   kSlowKernel  a kernel far over its lower bound that nothing above
//                explains, with a share of the run worth it: "MaxPool: the
//                kernel itself: 90.0x its lower bound ... the largest loss in
//                the run". A node being a fusion partner does not hide it.
// What the facts cannot tell is not guessed: an op without an index map
// gets no kReads suspect (its access pattern inside a work item is the
// kernel's own, not described anywhere), an untimed node saves nothing.
// Ranking: by the run time a suspect could save. Off the critical path a
// faster node shortens nothing, so a suspect whose nodes are on the path (or
// feed it) comes before one off it, then by the node time it could save.
//
//   SuspectFacts f{.nodes = {relu, sigmoid}, .edges = {{.producer = 0, .consumer = 1, .bytes = 64 << 20}},
//                  .compute_units = 16};
//   for (const Suspect& s : FindSuspects(f)) std::printf("%s\n", s.text.c_str());
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opscope/op.h"
#include "opscope/roofline.h"

namespace opscope {

struct SuspectNode {
  std::string name;               // node name in a model, the op's name alone
  const OpSchema* op = nullptr;   // nullptr: unknown op (only edges and time are used)
  std::vector<TensorDesc> inputs, outputs;
  Attrs attrs;                    // validated (defaults filled)
  std::vector<KernelLaunchInfo> launches;
  RooflinePoint roofline;         // measured_us < 0: untimed
  bool on_critical_path = false;
};

// One producer -> consumer link through a tensor.
struct SuspectEdge {
  int producer = -1, consumer = -1;  // indexes into SuspectFacts::nodes
  std::string tensor;
  int64_t bytes = 0;                 // the tensor's size
  int consumers = 1;                 // nodes that read the tensor
  bool graph_output = false;         // it must be written anyway
};

struct SuspectFacts {
  std::vector<SuspectNode> nodes;
  std::vector<SuspectEdge> edges;
  int compute_units = 1;       // worker threads / SMs of the device
  double bandwidth_gbs = 0;    // the calibrated memory roof: fusion's rate when a pair is untimed
};

struct SuspectOptions {
  int64_t min_fusion_bytes = 1 << 20;  // a smaller intermediate stays in cache anyway
  double over_read_ratio = 2.0;        // an input read this many times over is a suspect
  double far_below_efficiency = 0.5;   // "far below its bound": lower bound / measured under this
  int blocks_per_unit = 2;             // a grid under this many blocks per compute unit is small
  int64_t sampled_outputs = 4096;      // index-map probes per input (every output when fewer)
  int64_t min_read_bytes = 1 << 20;    // a smaller input re-read comes from cache: no read suspect
  double slow_kernel_ratio = 4.0;      // a kernel this many times over its bound is a suspect of its own
  double slow_kernel_share = 0.05;     // ... in a run, when what it could save is this share of the node time
};

enum class SuspectKind { kFusion, kReads, kSmallGrid, kSlowKernel };
const char* SuspectKindName(SuspectKind k);  // "fusion", "reads", "small_grid", "slow_kernel"

// How an op reads one input, from its index map over output 0.
struct ReadPattern {
  bool known = false;         // the op declares an index map and the input is present
  double ratio = 0;           // (sum over outputs of the elements its box reads) / input numel
  int64_t box_elements = 0;   // of a typical (interior) output's box
  int64_t box_runs = 0;       // contiguous runs in memory of that box (1: one contiguous piece)
  int64_t run_stride = 0;     // elements between two runs of it (0 when one run)
  int64_t neighbour_step = 0; // flat offset from an output's box to its innermost neighbour's
  IndexBox typical_box;       // the box of that interior output, as the map gives it
  bool strided() const { return box_runs > 1; }
  // "strided window reads" (or "strided column reads": runs of one element),
  // "strided reads", "over-reads" (ratio >= over_read_ratio), or "" when none.
  std::string Name(double over_read_ratio = 2.0) const;
};
ReadPattern ReadPatternOf(const OpSchema& op, const std::vector<TensorDesc>& inputs,
                          const std::vector<TensorDesc>& outputs, const Attrs& attrs, int input,
                          int64_t sampled_outputs = 4096);

struct Suspect {
  SuspectKind kind = SuspectKind::kReads;
  std::vector<int> nodes;         // one node, or producer then consumer
  std::vector<std::string> names; // their names, in the same order
  std::string direction;          // "fuse Relu into Sigmoid", "tile the reads / prefetch", ...
  std::string text;               // the whole line: direction, numbers, why
  double saving_us = 0;           // node time it could save (0: untimed or already at its bound)
  bool critical = false;          // a node of it is on the critical path or feeds it
  // kFusion
  std::string tensor;
  int64_t traffic_bytes = 0;      // intermediate written + read again
  double bandwidth_gbs = 0;       // the rate saving_us is computed at
  std::string bandwidth_source;   // "measured over the pair", "calibrated roof"
  // kReads
  int input = -1;
  std::string input_name;
  ReadPattern reads;
  // kSmallGrid
  std::string kernel;
  int64_t grid_blocks = 0;
  int compute_units = 0;
  double efficiency = -1;
};

// Every suspect of the facts, ranked (see the file comment).
std::vector<Suspect> FindSuspects(const SuspectFacts& facts, const SuspectOptions& options = {});

// The suspects of one node alone (kReads, kSmallGrid): ops-debug profile's.
std::vector<Suspect> NodeSuspects(const SuspectNode& node, int compute_units, const SuspectOptions& options = {});

}  // namespace opscope
