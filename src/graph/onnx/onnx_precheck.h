// Checks on an ONNX model made before ONNX's own shape inference runs on it:
// what that inference assumes without checking (unique graph input and output
// names, positive strides) would otherwise crash it, or later the executor.
#pragma once

#include "onnx/onnx_pb.h"
#include "opscope/status.h"

namespace opscope::graph {

// Ok, or the first problem in one line naming the field, value or node: an
// ir_version outside 1..onnx::IR_VERSION; an opset_import domain listed twice
// or at a version below 1 or above what this build's ONNX knows; a graph with
// no outputs; a graph input, output or initializer (any subgraph's too)
// listed twice; a node given one attribute twice; a default-domain node
// whose strides, dilations or kernel_shape hold a value below 1.
Status CheckBeforeOnnxInference(const onnx::ModelProto& model);

}  // namespace opscope::graph
