// File: graph/export/graph_json.h
// graph.json (schema "opscope.graph/2"): both graph layers with values,
// attributes and per-node layout coordinates, the compiler's passes, the
// memory plan, and each framework node's compiled node. The web UI draws
// from it; scripts read it (python/opscope's load_run). It holds nothing a
// reader can rebuild exactly (a node's tensors are names, their dtype and
// shape are the values'; defaults are left out; see graph_json.cc's
// WriteNode): ExpandGraphJson rebuilds it. Version 1 wrote all of it, which
// made a 100,000-node model's file 127 MB.
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

inline constexpr const char* kGraphSchema = "opscope.graph/2";

struct RunTiming;

// graph.json's text, written as it goes (a 100,000-node model's is about
// 100 MB: no document of it is built). `run` adds the run's identity,
// `timing` the run's timing and each compiled node's times ("time_us").
std::string GraphJsonText(const Model& m, const std::vector<PassResult>& passes, const RunIdentity* run = nullptr,
                          const RunTiming* timing = nullptr);
// One layer as graph.json holds it (--dump-passes' files).
nlohmann::json LayerJson(const Graph& g);
// graph.json as a document with what the file leaves out written back in
// (ExpandGraphJson), for small graphs and tests.
nlohmann::json GraphJson(const Model& m, const std::vector<PassResult>& passes = {});

// Writes back into a parsed graph.json what version 2 leaves out, as
// version 1 held it: each node's layer, namespace, kind, domain, attrs,
// fused_from, executable, mapped_task_ids (a fused framework node's are its
// compiled node's) and fusion reason; its inputs and outputs as
// {"name", "dtype", "shape"}; pos's rank and order; each value's producer,
// consumers and "constant"; the top-level "mapping". A version 1 document
// is left as it is. Lenient: what is not there, or not of its type, is
// skipped (the reader checks what it needs).
void ExpandGraphJson(nlohmann::json& g);
Status WriteGraphJson(const Model& m, const std::vector<PassResult>& passes, const std::string& path);

// --dump-passes: <dir>/<NN>_<pass>.json holding the compiled graph after the
// pass (same layer form as graph.json) and the identity of the run
// (graph/run/run_identity.h). Creates `dir` when missing.
Status WritePassDump(const std::string& dir, const PassResult& pass, const Model& m, const RunIdentity& run);

}  // namespace opscope::graph
