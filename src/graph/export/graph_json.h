// File: graph/export/graph_json.h
// graph.json (schema "opscope.graph/1"): both graph layers with values,
// attributes and per-node layout coordinates, the compiler's passes, the
// memory plan, and the mapping framework node -> compiled node. The web UI
// draws from it; scripts read it.
//
//   OPSCOPE_RETURN_IF_ERROR(graph::WriteGraphJson(model, passes, "graph.json"));
//
// Writes are atomic: a temporary file renamed into place.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/ir/ir.h"
#include "graph/passes/pass_manager.h"
#include "graph/run/run_identity.h"

namespace opscope::graph {

inline constexpr const char* kGraphSchema = "opscope.graph/1";

struct RunTiming;

// graph.json's text, written as it goes (a 100,000-node model's is about
// 100 MB: no document of it is built). `run` adds the run's identity,
// `timing` the run's timing and each compiled node's times ("time_us").
std::string GraphJsonText(const Model& m, const std::vector<PassResult>& passes, const RunIdentity* run = nullptr,
                          const RunTiming* timing = nullptr);
// The same as documents, for small graphs and tests.
nlohmann::json LayerJson(const Graph& g);
nlohmann::json GraphJson(const Model& m, const std::vector<PassResult>& passes = {});
Status WriteGraphJson(const Model& m, const std::vector<PassResult>& passes, const std::string& path);

// --dump-passes: <dir>/<NN>_<pass>.json holding the compiled graph after the
// pass (same layer form as graph.json) and the identity of the run
// (graph/run/run_identity.h). Creates `dir` when missing.
Status WritePassDump(const std::string& dir, const PassResult& pass, const Model& m, const RunIdentity& run);

}  // namespace opscope::graph
