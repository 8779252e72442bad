// File: graph/run/engine_diff.h
// Two runs of one model by different engines (opscope's compiler and cpu
// runtime; onnxruntime, read by `inspector-cli import-ort`) share only the
// framework graph: their compiled nodes have other names, other op types
// (FusedConv against an NCHWc Conv) and other layouts. run_diff.h compares
// them through it, side by side:
//  - fusions: each group of framework nodes that either engine ran as one
//    kernel, with the compiled node each engine made of it and its time;
//  - layouts: the layout conversions each engine inserted, and how many of
//    its nodes ran in a layout other than the model's;
//  - time by framework op type: each compiled node's time under the op type
//    of the framework node it is built around (a Conv+BatchNorm+Relu under
//    Conv), so that the engines' op-type tables line up.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "graph/run/captured_run.h"
#include "graph/runtime/iteration_stats.h"

namespace opscope::graph {

// "opscope" for a run of opscope's own, else the engine it was read from.
std::string EngineOf(const CapturedRun& run);

// The framework node compiled node `c` is built around: its first member
// that computes (not a reshape, a layout helper or a Constant), else its
// first member; nullptr when it stands for none (inserted by a compiler).
// Two engines' nodes built around the same framework node are the same
// work: onnxruntime's NCHWc Conv "..._output_0_nchwc" with members
// [Identity_0, Conv, Constant, Constant_1, Clip] and opscope's FusedConv
// [Conv, Clip] are both the Conv's.
const Node* PrincipalFrameworkNode(const Model& m, const Node& c);

// Compiled node name -> per-iteration total of its tasks, keyed for a
// comparison across engines by the principal framework node's name
// ("inserted <name>" for a node that stands for none): {key, {name, spread}}.
std::map<std::string, std::pair<std::string, Spread>> NodeTimesByFramework(const CapturedRun& run,
                                                                          const RunTiming& t);

// [{"at": the first framework node where the two sides' grouping differs,
// "framework": [names], "base": side, "new": side}], side =
// {"node", "op_type", "framework": [names], "time_us"}: one row per group
// of framework nodes that one engine or the other fused, in framework order.
nlohmann::json EngineFusions(const CapturedRun& base, const RunTiming& tb, const CapturedRun& now,
                             const RunTiming& tn);

// {"conversions": [{"node", "op_type", "from", "to", "time_us"}], "other_layout_nodes": N,
//  "other_layout": "NHWC" | "NCHWc" | ""}.
nlohmann::json LayoutChanges(const CapturedRun& run, const RunTiming& t);

// Framework op type -> its per-iteration total: each compiled node's tasks
// under the op type of the first framework node it stands for that computes
// (not a reshape or a layout helper); inserted nodes under "inserted <op type>".
std::map<std::string, Spread> FrameworkOpTypeTimes(const CapturedRun& run);

}  // namespace opscope::graph
