// File: graph/onnx/onnx_adapter.h
// Rewrites an ONNX node written against an older opset into the form the
// built-in ops implement (ONNX opset 17 semantics): attributes that later
// became inputs (Squeeze/Unsqueeze axes, Split split, ReduceSum axes, Pad
// pads/value, Clip min/max, Slice starts/ends/axes, TopK k, Reshape shape,
// Upsample/Resize scales) turn into constant inputs, retired attributes
// (consumed_inputs, is_test, legacy broadcast) are dropped where the new form
// means the same, and renamed ops (Upsample) become their successors.
//
//   NodeEnv env{.opset = OpsetVersion(model, node.domain())};
//   OPSCOPE_ASSIGN_OR_RETURN(AdaptedNode a, AdaptOnnxNode(node, env));
//   // a.node is in opset-17 form; its inputs named in a.constants are values
//   // the rewrite made from attributes.
//
// Where the old meaning cannot be expressed by one current node (Softmax
// before 13 over more than the last axis, legacy axis broadcasting), the
// answer is Unimplemented with the reason.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "onnx/onnx_pb.h"
#include "opscope/op.h"
#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope {

// What the caller knows about the node's surroundings. Tensor names not in
// `descs` are simply unknown; rewrites that need them say so.
struct NodeEnv {
  int64_t opset = 17;                        // the model's opset for the node's domain
  std::map<std::string, TensorDesc> descs;   // dtype and shape of tensors, by name
  std::map<std::string, Tensor> values;      // constant values (initializers), by name
};

struct AdaptedNode {
  onnx::NodeProto node;                      // the node in the current form
  std::map<std::string, Tensor> constants;   // inputs the rewrite made, by their new names
  bool changed = false;                      // false: `node` is the input as it was
};

StatusOr<AdaptedNode> AdaptOnnxNode(const onnx::NodeProto& node, const NodeEnv& env);

// The op type AdaptOnnxNode will give the node ("Resize" for an Upsample),
// known before the node's inputs are: enough to ask the registry early.
std::string AdaptedOpType(const onnx::NodeProto& node, int64_t opset);

}  // namespace opscope
