// File: graph/export/compiled_json.h
// The compiled graph a run executed, as capture.json keeps it
// ("compiled_graph"), and back. A run folder is read with the graph it ran,
// not with whatever this opscope's compiler makes of the model today: a run
// from an older opscope, or one compiled with passes left out
// (`inspector-cli run --disable-pass`), is shown and compared as it ran.
//
// Kept: every compiled node (id, kind, op type, domain, name, inputs,
// outputs, typed attributes, fused_from, layouts, executable), every value
// (dtype, dims, symbolic dims, constant or not, arena offset), the graph's
// inputs and outputs, the memory plan, and why each framework node that no
// compiled node stands for was removed. Constants keep no data (the model
// file has it): a constant value reads back as a constant without a tensor,
// as nothing that reads a run folder executes it. A tensor attribute is kept
// whole up to kMaxInlineTensorBytes; a larger one is taken back from the
// framework node of the same id (where a pass copied it from), and refused
// if that node has no such tensor.
//
//   j["compiled_graph"] = CompiledGraphJson(run.model);
//   ...
//   JsonFields fields(file);
//   OPSCOPE_RETURN_IF_ERROR(RestoreCompiledGraph(fields.Root(doc)["compiled_graph"], model, fields));
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "core/json_field.h"
#include "graph/ir/ir.h"
#include "opscope/status.h"

namespace opscope::graph {

inline constexpr size_t kMaxInlineTensorBytes = 64 * 1024;

nlohmann::json CompiledGraphJson(const Model& model);

// Fills model.compiled (and the framework nodes' absorbed_into, executed and
// reasons) from `j`; model.framework must be the model's framework graph, as
// imported. Errors name the file and the field: a node id used twice, a
// fused_from naming no framework node, a value no node produces and that is
// no graph input or constant, a cycle, a dims entry below -1.
Status RestoreCompiledGraph(const JsonField& j, Model& model, const JsonFields& fields);

}  // namespace opscope::graph
