// File: graph/passes/layout.h
// Which kernels want their data input in another layout than ONNX's NCHW.
// An op registers a preference here; the layout pass then wraps each such
// node in transdata nodes (NCHW -> NHWC before, NHWC -> NCHW after), sets the
// node's "layout" attribute to the layout it now receives, and cancels
// back-to-back conversions between two such nodes.
//
// None of the built-in cpu kernels registers one: their Conv runs im2col +
// GEMM over NCHW directly, so on our own models the pass inserts nothing. A
// backend whose convolution prefers NHWC registers here; a plugin op declares
// it in its schema (OpDef::PrefersLayout("NHWC"), opscope/op.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/ir/ir.h"

namespace opscope::graph {

struct LayoutPreference {
  std::string op_type;
  std::string layout = "NHWC";  // the only other layout the pass converts to
  // Whether this node wants it (e.g. only depthwise convolutions); null: always.
  std::function<bool(const Node&, const Graph&)> applies;
};

void RegisterLayoutPreference(LayoutPreference pref);
void UnregisterLayoutPreference(const std::string& op_type);
std::vector<LayoutPreference> LayoutPreferences();

}  // namespace opscope::graph
