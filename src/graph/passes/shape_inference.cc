// shape_inference: ONNX's inference ran at import; this pass asks each op's
// own schema (the same InferOutputs the dispatcher uses) for the outputs ONNX
// left unknown, e.g. after ops ONNX cannot see through or fused nodes. It
// runs in graph order, so one inferred shape feeds the next node.
#include "graph/passes/passes.h"

namespace opscope::graph {
namespace {

// Fills the node's unknown outputs; false when it could not.
bool InferNode(Graph& g, const Node& n) {
  bool missing = false;
  for (const std::string& out : n.outputs) {
    const Value* v = g.FindValue(out);
    if (!out.empty() && v && !(v->dtype_known && v->shape_known())) missing = true;
  }
  if (!missing || !n.executable) return false;
  const OpSchema* schema = OpRegistry::Global().Find(n.op_type);
  if (!schema) return false;
  std::vector<TensorDesc> inputs;
  std::vector<const Tensor*> values;
  for (const std::string& in : n.inputs) {
    if (in.empty()) {
      inputs.push_back(TensorDesc{DType::kF32, Shape(), false});
      values.push_back(nullptr);
      continue;
    }
    const Value* v = g.FindValue(in);
    if (!v || !v->dtype_known || !v->shape_known()) return false;
    inputs.push_back(v->desc());
    values.push_back(v->constant ? &*v->constant : nullptr);
  }
  Attrs attrs = n.attrs;
  if (!schema->ValidateAttrs(attrs).ok()) return false;
  StatusOr<std::vector<TensorDesc>> outs =
      schema->InferOutputs(inputs, values, attrs, static_cast<int>(n.outputs.size()));
  if (!outs.ok()) return false;
  bool changed = false;
  for (size_t i = 0; i < n.outputs.size() && i < outs->size(); ++i) {
    Value* v = g.FindValue(n.outputs[i]);
    if (!v || n.outputs[i].empty() || (v->dtype_known && v->shape_known())) continue;
    v->SetDesc((*outs)[i].dtype, (*outs)[i].shape);
    changed = true;
  }
  return changed;
}

}  // namespace

// Also used by the rewrite passes for the nodes they create.
int InferShapes(Graph& g) {
  int filled = 0;
  for (const Node& n : g.nodes()) filled += InferNode(g, n) ? 1 : 0;
  return filled;
}

Pass ShapeInferencePass() {
  return Pass{"shape_inference", "fills shapes ONNX's inference left unknown, from each op's schema",
              [](CompileContext& ctx) -> StatusOr<int> { return InferShapes(ctx.graph()); }};
}

}  // namespace opscope::graph
