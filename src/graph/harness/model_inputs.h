// File: graph/harness/model_inputs.h
// What a model run needs before it runs, shared by `run` (RunModel) and
// `accuracy` (RunAccuracy): the graph inputs read from .npy files, and the
// check that every compiled node has a kernel.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/ir/ir.h"
#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope::graph {

// "x.npy" feeds the graph inputs in order; "name=x.npy" by name; `tensors`
// (a caller's, by name) over those. Errors name `input_files`.
StatusOr<std::map<std::string, Tensor>> ReadInputs(const std::vector<std::string>& files,
                                                   const std::map<std::string, Tensor>& tensors, const Graph& g);

// Every compiled node runs on some kernel; else the first that does not, named.
Status CheckExecutable(const Model& m);

}  // namespace opscope::graph
