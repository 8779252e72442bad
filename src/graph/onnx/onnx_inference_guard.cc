#include "graph/onnx/onnx_inference_guard.h"

#include <map>
#include <optional>
#include <unordered_set>

#include "graph/onnx/onnx_convert.h"

namespace opscope::graph {
namespace {

// The ops whose ONNX inference derives the kernel from the weight, and the
// weight's input index.
std::optional<int> WeightInput(const onnx::NodeProto& node) {
  if (!IsDefaultOnnxDomain(node.domain())) return std::nullopt;
  const std::string& op = node.op_type();
  if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose") return 1;
  if (op == "QLinearConv") return 3;
  return std::nullopt;
}

bool HasAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return true;
  }
  return false;
}

// Names in scope whose dims are known before inference: initializers,
// Constant outputs and fully shaped graph inputs, of this graph and the
// graphs around it.
using KnownDims = std::map<std::string, std::vector<int64_t>>;

void AddScope(const onnx::GraphProto& g, KnownDims& known) {
  for (const auto& t : g.initializer()) known[t.name()] = {t.dims().begin(), t.dims().end()};
  for (const auto& in : g.input()) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    std::vector<int64_t> dims;
    bool full = true;
    for (const auto& d : in.type().tensor_type().shape().dim()) {
      full = full && d.has_dim_value();
      dims.push_back(d.dim_value());
    }
    if (full && !known.count(in.name())) known[in.name()] = dims;
  }
  for (const auto& node : g.node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1 || !IsDefaultOnnxDomain(node.domain())) continue;
    for (const auto& a : node.attribute()) {
      if (a.name() == "value" && a.has_t()) known[node.output(0)] = {a.t().dims().begin(), a.t().dims().end()};
    }
  }
}

// Every value name of `g` and the graphs inside it.
void CollectNames(const onnx::GraphProto& g, std::unordered_set<std::string>& names) {
  for (const auto& t : g.initializer()) names.insert(t.name());
  for (const auto& v : g.input()) names.insert(v.name());
  for (const auto& node : g.node()) {
    for (const std::string& o : node.output()) names.insert(o);
    for (const auto& a : node.attribute()) {
      if (a.has_g()) CollectNames(a.g(), names);
      for (const auto& sub : a.graphs()) CollectNames(sub, names);
    }
  }
}

}  // namespace

OnnxInferenceGuard::OnnxInferenceGuard(onnx::ModelProto& model) {
  // A hidden weight is renamed to a name no value has, so that inference
  // finds no type for it (not "", which a malformed file may give a value).
  std::unordered_set<std::string> names;
  CollectNames(model.graph(), names);
  std::string unused = "opscope.hidden_weight";
  while (names.count(unused)) unused += "_";
  // Depth first through subgraphs, each seeing the names of the graphs around it.
  struct Walk {
    OnnxInferenceGuard& guard;
    const std::string& unused;
    void Graph(onnx::GraphProto& g, KnownDims known) {
      AddScope(g, known);
      for (onnx::NodeProto& node : *g.mutable_node()) {
        for (onnx::AttributeProto& a : *node.mutable_attribute()) {
          if (a.has_g()) Graph(*a.mutable_g(), known);
          for (onnx::GraphProto& sub : *a.mutable_graphs()) Graph(sub, known);
        }
        const std::optional<int> w = WeightInput(node);
        if (!w || node.input_size() <= *w || node.input(*w).empty() || HasAttribute(node, "kernel_shape")) continue;
        const auto it = known.find(node.input(*w));
        if (it != known.end() && it->second.size() >= 2) {
          onnx::AttributeProto* k = node.add_attribute();
          k->set_name("kernel_shape");
          k->set_type(onnx::AttributeProto::INTS);
          for (size_t d = 2; d < it->second.size(); ++d) k->add_ints(it->second[d]);
          guard.added_.push_back(&node);
        } else {
          guard.hidden_.push_back({&node, *w, node.input(*w)});
          node.set_input(*w, unused);
        }
      }
    }
  };
  Walk{*this, unused}.Graph(*model.mutable_graph(), {});
}

OnnxInferenceGuard::~OnnxInferenceGuard() {
  for (onnx::NodeProto* node : added_) node->mutable_attribute()->RemoveLast();
  for (const Hidden& h : hidden_) h.node->set_input(h.input, h.name);
}

}  // namespace opscope::graph
