// File: graph/export/graph_json.h
// graph.json (schema "opscope.graph/3"): both graph layers with values,
// attributes and per-node layout coordinates, the compiler's passes, the
// memory plan, and each framework node's compiled node. The web UI draws
// from it; scripts read it (python/opscope's load_run). It holds nothing a
// reader can rebuild exactly, and each layer's nodes, values, layout scopes
// and routes are columns: one array per member, entry i for item i.
//
// A layer (version 3):
//   nodes:   node_id_steps (each id less the one before, the first from 0),
//            name, op_type (an index into tables.op_types), inputs and
//            outputs (value indices; -1 an omitted input, a string a name no
//            value holds), executed (0/1), scope (the layout scope it is
//            drawn in, -1 none); where any node needs them: compiled_node_id
//            (-1 none), attrs (tables.attrs, -1 none), kind (tables.kinds),
//            domain (tables.domains), fused_from and mapped_task_ids (null:
//            none, or a fused node's compiled node's tasks), time_us
//            {median_us, q1_us, q3_us, samples} (null: not timed).
//   extra:   {"<node index>": {members few nodes have, as version 2 wrote
//            them: attached_to, branch, branches, executable, layout,
//            mapped_by, namespace, not_executable_reason, note, pos, reason,
//            subgraphs}}.
//   values:  name, dtype (tables.dtypes, -1 unknown), shape, bytes (-1
//            unknown), flags (1 constant, 2 graph input, 4 graph output),
//            mem_offset (-1 none; once memory is planned).
//   layout:  graph_layout.h's scopes and routes, as columns too.
// Version 2 held lists of objects (62 MB at 100,000 nodes, 22 MB now);
// version 1 also wrote what a reader rebuilds (127 MB). ExpandGraphJson
// reads all three into version 1's form.
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

inline constexpr const char* kGraphSchema = "opscope.graph/3";

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

// Writes back into a parsed graph.json what versions 2 and 3 leave out, as
// version 1 held it: the columns as lists of objects (graph_json_rows.h), each node's layer, namespace, kind, domain, attrs,
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
