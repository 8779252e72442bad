// Checks on an ONNX model made before ONNX's own shape inference runs on it:
// what that inference assumes without checking (unique graph input and output
// names, positive strides) would otherwise crash it, or later the executor.
#pragma once

#include "onnx/onnx_pb.h"
#include "opscope/status.h"

namespace opscope::graph {

// Ok, or the first problem in one line naming the value or node: a graph
// input or output listed twice; a default-domain node (in any subgraph too)
// whose strides, dilations or kernel_shape hold a value below 1.
Status CheckBeforeOnnxInference(const onnx::ModelProto& model);

}  // namespace opscope::graph
