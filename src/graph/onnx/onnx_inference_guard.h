// File: graph/onnx/onnx_inference_guard.h
// ONNX's inference of Conv, ConvInteger, QLinearConv and ConvTranspose
// takes the kernel's rank from the weight when the node has no kernel_shape,
// then indexes the input's dims and the strides and dilations by it without
// checking that the ranks agree: a weight of rank 5 on an input of rank 4
// reads past both and crashes inside libonnx (onnx_fuzzer found it; the
// reproducer is fuzz/crashes/onnx/conv_weight_rank_above_input's). While a
// guard lives, each such node either carries the kernel_shape ONNX would
// have derived (the weight's dims past the first two, where the weight is an
// initializer, a Constant or a graph input of known shape), which ONNX does
// check against the input's rank, or, where the weight's shape is known only
// to inference, hides its weight from inference so that ONNX leaves the
// node's output shape to opscope's own inference (the weight renamed, for
// the while, to a name no value has). The destructor puts the
// model back as it was read.
//
//   { OnnxInferenceGuard guard(proto); onnx::shape_inference::InferShapes(proto, ...); }
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace opscope::graph {

class OnnxInferenceGuard {
 public:
  explicit OnnxInferenceGuard(onnx::ModelProto& model);
  ~OnnxInferenceGuard();
  OnnxInferenceGuard(const OnnxInferenceGuard&) = delete;
  OnnxInferenceGuard& operator=(const OnnxInferenceGuard&) = delete;

  int kernel_shapes_added() const { return static_cast<int>(added_.size()); }
  int weights_hidden() const { return static_cast<int>(hidden_.size()); }

 private:
  struct Hidden {
    onnx::NodeProto* node;
    int input;
    std::string name;
  };
  std::vector<onnx::NodeProto*> added_;  // each got one kernel_shape, appended last
  std::vector<Hidden> hidden_;
};

}  // namespace opscope::graph
