#include "graph/onnx_precheck.h"

#include <string>
#include <unordered_set>

#include "graph/onnx_convert.h"

namespace opscope::graph {
namespace {

// Repeated names make the executor copy one value twice; ONNX requires them unique.
Status CheckUnique(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list, const char* what) {
  std::unordered_set<std::string> seen;
  for (const auto& v : list) {
    if (!seen.insert(v.name()).second) {
      return InvalidArgumentError(std::string(what) + " '" + v.name() + "' is listed twice (names must be unique)");
    }
  }
  return Status::Ok();
}

// ONNX's conv and pool inference divides by strides and multiplies by the
// dilated kernel: a zero stride is SIGFPE inside libonnx.
Status CheckNodes(const onnx::GraphProto& g) {
  for (int n = 0; n < g.node_size(); ++n) {
    const onnx::NodeProto& node = g.node(n);
    // Named as the importer names it: an unnamed node by its op and index.
    const std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(n) : node.name();
    for (const auto& a : node.attribute()) {
      if (a.has_g()) OPSCOPE_RETURN_IF_ERROR(CheckNodes(a.g()));
      for (const auto& sub : a.graphs()) OPSCOPE_RETURN_IF_ERROR(CheckNodes(sub));
      if (!IsDefaultOnnxDomain(node.domain())) continue;
      if (a.name() != "strides" && a.name() != "dilations" && a.name() != "kernel_shape") continue;
      for (int i = 0; i < a.ints_size(); ++i) {
        if (a.ints(i) >= 1) continue;
        return InvalidArgumentError("node '" + name + "' (" + node.op_type() + "): attribute " + a.name() +
                                    " has " + std::to_string(a.ints(i)) + " at index " + std::to_string(i) +
                                    " (expected >= 1)");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckBeforeOnnxInference(const onnx::ModelProto& model) {
  OPSCOPE_RETURN_IF_ERROR(CheckUnique(model.graph().input(), "graph input"));
  OPSCOPE_RETURN_IF_ERROR(CheckUnique(model.graph().output(), "graph output"));
  return CheckNodes(model.graph());
}

}  // namespace opscope::graph
