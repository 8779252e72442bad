#include "graph/onnx/synthetic_model.h"

#include <cmath>
#include <random>
#include <string>

#include "onnx/onnx_pb.h"
#include "opscope/npy.h"

namespace opscope::graph {
namespace {

void SetTensorInfo(onnx::ValueInfoProto* v, const std::string& name, int64_t width) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(1);
  t->mutable_shape()->add_dim()->set_dim_value(width);
}

void AddWeights(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims, float scale,
                std::mt19937& rng) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  std::normal_distribution<float> dist(0.0f, scale);
  for (int64_t i = 0; i < n; ++i) t->add_float_data(dist(rng));
}

onnx::ModelProto MakeSyntheticModel(int64_t num_nodes, int64_t width) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("opscope-synthetic");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("synthetic_" + std::to_string(num_nodes));
  std::mt19937 rng(7);
  AddWeights(g, "w", {width, width}, 1.0f / std::sqrt(static_cast<float>(width)), rng);
  AddWeights(g, "b", {width}, 0.1f, rng);
  SetTensorInfo(g->add_input(), "input", width);

  std::string x = "input";
  auto add = [&](const std::string& op, std::vector<std::string> inputs, const std::string& scope) {
    const std::string name = scope + "/" + op + "_" + std::to_string(g->node_size());
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const std::string& in : inputs) n->add_input(in);
    n->add_output(name);
    return name;
  };
  for (int64_t block = 0; g->node_size() + 6 <= num_nodes; ++block) {
    const std::string scope = "/block" + std::to_string(block);
    std::string mm = add("MatMul", {x, "w"}, scope);
    mm = add("Add", {mm, "b"}, scope);
    mm = add("Relu", {mm}, scope);
    std::string s = add("Sigmoid", {x}, scope);
    std::string j = add("Mul", {mm, s}, scope);
    x = add("Add", {j, x}, scope);
  }
  while (g->node_size() < num_nodes) x = add("Relu", {x}, "/tail");
  if (g->node_size() > 0) g->mutable_node(g->node_size() - 1)->set_output(0, "output");
  SetTensorInfo(g->add_output(), g->node_size() > 0 ? "output" : "input", width);
  return m;
}

}  // namespace

Status WriteSyntheticModel(int64_t num_nodes, const std::string& path, int64_t width) {
  if (num_nodes < 0) return InvalidArgumentError("synthetic model: node count " + std::to_string(num_nodes) + " is negative");
  return WriteFileAtomic(path, MakeSyntheticModel(num_nodes, width).SerializeAsString());
}

}  // namespace opscope::graph
