// File: graph/ort/ort_mapping.h
// Ties the graph onnxruntime optimized (SessionOptions
// optimized_model_filepath) to the model as written, so that each of its
// nodes stands for the framework nodes it computes, as opscope's own
// compiled graph does (Node::fused_from, absorbed_into).
//
// onnxruntime renames little but rewrites much: fusions (FusedConv,
// FusedGemm, FusedMatMul, LayerNormalization, Gelu, ...), NCHWc layout
// (com.microsoft.nchwc Conv named "<framework tensor>_nchwc", its outputs
// "reorder_token_N", ReorderInput/ReorderOutput between layouts), Reshapes
// inserted around a Gemm, constants folded. The mapping works on tensors:
//  1. a compiled tensor of the same name as a non-constant framework tensor
//     is that tensor;
//  2. the two sides of a ReorderInput/ReorderOutput are the same tensor in
//     two layouts;
//  3. a node named after a framework tensor (an nchwc node's "<T>_nchwc")
//     computes it, carried on through the Add its Sum input fused and the
//     activation its "activation" attribute names.
// Cut at those tensors, the compiled graph falls into regions; a region
// computes the framework nodes between its input and output tensors. Within
// a region of several nodes, a framework node goes to the compiled node that
// produces its output with its op type, or is named after it, else to the
// region's main node (the first that is not a reshape or layout helper);
// the others are "inserted by onnxruntime". Every compiled node's
// `mapped_by` says which rule tied it; a framework node no region covers is
// not executed, with the reason (folded into a constant, or removed).
//
//   OrtMapping m = MapOrtGraph(model);   // model.compiled: the optimized graph
#pragma once

#include <cstdint>

#include "graph/ir/ir.h"

namespace opscope::graph {

struct OrtMapping {
  int64_t by_tensor_name = 0;  // compiled nodes tied by a tensor of the same name
  int64_t by_layout = 0;       // ... through a reorder
  int64_t by_node_name = 0;    // ... by a name made from a framework tensor's
  int64_t in_region = 0;       // ... as one of several nodes between tied tensors
  int64_t inserted = 0;        // compiled nodes no framework node stands behind
  int64_t removed = 0;         // framework nodes no compiled node computes
  int64_t folded = 0;          // ... of those, the ones whose outputs became constants
};

// Fills fused_from, kind (kFused for a node of several framework nodes,
// kTransdata for a reorder), layout_from/to and mapped_by on model.compiled,
// and absorbed_into, executed and not_executed_reason on model.framework.
OrtMapping MapOrtGraph(Model& model);

}  // namespace opscope::graph
