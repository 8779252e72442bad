// File: graph/runtime/inorder_eval.h
// Runs every node of one graph layer in its topological order through the
// dispatcher, one at a time on one device: a checking tool that tells whether
// two layers (framework vs compiled) compute the same thing. It has no
// streams, tasks or timing; that is the runtime executor's job.
//
//   OPSCOPE_ASSIGN_OR_RETURN(auto outs, graph::EvaluateInOrder(model.compiled, {{"x", x}}, cpu));
#pragma once

#include <functional>
#include <map>
#include <string>

#include "graph/ir/ir.h"

namespace opscope::graph {

// Returns the graph outputs by name, as host tensors. `device` nullptr runs
// the reference kernels (float64 outputs), each node's float inputs in
// float64 too (the golden chain); `values`, when given, receives every value
// the evaluation computed or was given (inputs, constants), by name.
// `keep`, when given, decides what is held of each value a node computed
// (accuracy's SpillStore: the tensor, or its copy spilled to a file).
using KeepValue = std::function<StatusOr<Tensor>(const std::string& name, Tensor t)>;
StatusOr<std::map<std::string, Tensor>> EvaluateInOrder(const Graph& g, const std::map<std::string, Tensor>& inputs,
                                                        Device* device, std::map<std::string, Tensor>* values = nullptr,
                                                        const KeepValue& keep = {});

}  // namespace opscope::graph
