#include "graph/onnx/onnx_precheck.h"

#include <string>
#include <unordered_set>

#include "graph/onnx/onnx_convert.h"
#include "onnx/defs/schema.h"

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

// ir_version 0 is protobuf's unset default, not a version; one above what
// this build's ONNX knows is refused by ONNX's checker too.
Status CheckIrVersion(const onnx::ModelProto& model) {
  const int64_t ir = model.ir_version();
  if (ir >= 1 && ir <= onnx::IR_VERSION) return Status::Ok();
  return InvalidArgumentError("ir_version " + std::to_string(ir) + " (expected 1 to " +
                              std::to_string(static_cast<int>(onnx::IR_VERSION)) +
                              (ir < 1 ? ", 0 is the field left unset)" : ", the newest this build's ONNX reads)"));
}

// Each domain once, at a version its operator set has: a negative or huge
// opset would otherwise pass as "absent" or "newer" and be run anyway.
Status CheckOpsets(const onnx::ModelProto& model) {
  std::unordered_set<std::string> seen;
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const auto& op : model.opset_import()) {
    const std::string domain = IsDefaultOnnxDomain(op.domain()) ? "ai.onnx" : op.domain();
    const std::string what = "opset_import of domain '" + domain + "'";
    if (!seen.insert(domain).second) return InvalidArgumentError(what + " is listed twice");
    if (op.version() < 1) {
      return InvalidArgumentError(what + ": version " + std::to_string(op.version()) + " (expected >= 1)");
    }
    auto range = known.find(IsDefaultOnnxDomain(op.domain()) ? std::string("") : op.domain());
    if (range != known.end() && op.version() > range->second.second) {
      return InvalidArgumentError(what + ": version " + std::to_string(op.version()) + " (this build's ONNX knows " +
                                  std::to_string(range->second.first) + " to " + std::to_string(range->second.second) + ")");
    }
  }
  return Status::Ok();
}

// Names ONNX requires unique, which a later map keyed by name would silently
// collapse: initializers (in every subgraph too) and a node's attributes.
Status CheckGraphNames(const onnx::GraphProto& g, const std::string& where) {
  std::unordered_set<std::string> inits;
  for (const auto& t : g.initializer()) {
    // "" names an absent optional input: ONNX's inference would hand such an
    // initializer's shape to every node that leaves an input out.
    if (t.name().empty()) return InvalidArgumentError(where + "an initializer has an empty name (names must not be empty)");
    if (!inits.insert(t.name()).second) {
      return InvalidArgumentError(where + "initializer '" + t.name() + "' is listed twice (names must be unique)");
    }
  }
  for (const auto& in : g.input()) {
    if (in.name().empty()) return InvalidArgumentError(where + "a graph input has an empty name (names must not be empty)");
  }
  for (int n = 0; n < g.node_size(); ++n) {
    const onnx::NodeProto& node = g.node(n);
    const std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(n) : node.name();
    std::unordered_set<std::string> attrs;
    for (const auto& a : node.attribute()) {
      if (!attrs.insert(a.name()).second) {
        return InvalidArgumentError(where + "node '" + name + "' (" + node.op_type() + "): attribute " + a.name() +
                                    " is given twice");
      }
      if (a.has_g()) OPSCOPE_RETURN_IF_ERROR(CheckGraphNames(a.g(), where + "node '" + name + "' " + a.name() + ": "));
      for (const auto& sub : a.graphs()) {
        OPSCOPE_RETURN_IF_ERROR(CheckGraphNames(sub, where + "node '" + name + "' " + a.name() + ": "));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckBeforeOnnxInference(const onnx::ModelProto& model) {
  OPSCOPE_RETURN_IF_ERROR(CheckIrVersion(model));
  OPSCOPE_RETURN_IF_ERROR(CheckOpsets(model));
  if (model.graph().output_size() == 0) {
    return InvalidArgumentError("graph '" + model.graph().name() + "' has no outputs (nothing it computes is kept)");
  }
  OPSCOPE_RETURN_IF_ERROR(CheckUnique(model.graph().input(), "graph input"));
  OPSCOPE_RETURN_IF_ERROR(CheckUnique(model.graph().output(), "graph output"));
  OPSCOPE_RETURN_IF_ERROR(CheckGraphNames(model.graph(), ""));
  return CheckNodes(model.graph());
}

}  // namespace opscope::graph
