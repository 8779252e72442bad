// elementwise_chain_fusion: a maximal chain of unary/binary elementwise ops
// where each link's result feeds only the next link -> one FusedElementwise
// node whose attributes hold the program (see fused_elementwise.cc). Inputs
// of the chain that do not come from the chain become the node's inputs.
#include <algorithm>

#include "graph/passes/passes.h"
#include "graph/passes/pattern.h"

namespace opscope::graph {
namespace {

bool IsChainOp(const Node& n) {
  static const char* const kOps[] = {"Add", "Sub", "Mul", "Div", "Pow", "Relu", "Sigmoid", "Tanh", "Exp", "Log",
                                     "Sqrt", "Abs", "Neg", "Erf", "LeakyRelu", "Elu", "Softplus", "HardSigmoid",
                                     "Gelu"};
  bool known = false;
  for (const char* op : kOps) known = known || IsOp(&n, op);
  if (!known || n.outputs.size() != 1) return false;
  const bool binary = n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div" ||
                      n.op_type == "Pow";
  return n.inputs.size() == (binary ? 2u : 1u);
}

// All operands and the result share one float dtype (the fused kernel's T).
bool SameFloatType(const Graph& g, const Node& n) {
  const Value* out = g.FindValue(n.outputs[0]);
  if (!out || !out->dtype_known || !IsFloat(out->dtype)) return false;
  for (const std::string& in : n.inputs) {
    const Value* v = g.FindValue(in);
    if (!v || !v->dtype_known || v->dtype != out->dtype) return false;
  }
  return true;
}

StatusOr<int> FuseElementwiseChains(CompileContext& ctx) {
  Graph& g = ctx.graph();
  UsedSet used;
  int rewrites = 0;
  for (const Node& first : g.nodes()) {
    if (used.AnyUsed({&first}) || !IsChainOp(first) || !SameFloatType(g, first)) continue;
    std::vector<const Node*> chain = {&first};
    while (true) {
      const Node* next = g.SoleConsumer(chain.back()->outputs[0]);
      if (!next || used.AnyUsed({next}) || !IsChainOp(*next) || !SameFloatType(g, *next)) break;
      chain.push_back(next);
    }
    if (chain.size() < 2) continue;

    std::vector<std::string> inputs, ops;
    std::vector<int64_t> args;
    std::vector<double> alphas, betas;
    auto ref = [&](const std::string& v, size_t step) -> int64_t {
      if (step > 0 && v == chain[step - 1]->outputs[0]) return -1;
      auto it = std::find(inputs.begin(), inputs.end(), v);
      if (it != inputs.end()) return it - inputs.begin();
      inputs.push_back(v);
      return static_cast<int64_t>(inputs.size()) - 1;
    };
    for (size_t k = 0; k < chain.size(); ++k) {
      const Node& n = *chain[k];
      ops.push_back(n.op_type);
      args.push_back(ref(n.inputs[0], k));
      args.push_back(n.inputs.size() > 1 ? ref(n.inputs[1], k) : -2);
      double alpha = n.attrs.f("alpha", n.op_type == "LeakyRelu" ? 0.01 : (n.op_type == "HardSigmoid" ? 0.2 : 1.0));
      if (n.op_type == "Gelu") alpha = n.attrs.s("approximate", "none") == "tanh" ? 1.0 : 0.0;
      alphas.push_back(alpha);
      betas.push_back(n.attrs.f("beta", n.op_type == "HardSigmoid" ? 0.5 : 0.0));
    }
    Node fused = ctx.MakeNode(chain, first, "FusedElementwise", "opscope", NodeKind::kFused);
    fused.inputs = inputs;
    fused.outputs = {chain.back()->outputs[0]};
    fused.attrs.Set("ops", ops);
    fused.attrs.Set("args", args);
    fused.attrs.Set("alphas", alphas);
    fused.attrs.Set("betas", betas);
    std::vector<int64_t> remove;
    for (const Node* p : chain) {
      used.Use(p);
      remove.push_back(p->id);
    }
    ctx.Replace(chain.back()->id, std::move(fused), remove);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace

Pass ElementwiseChainFusionPass() {
  return Pass{"elementwise_chain_fusion",
              "chains of single-consumer elementwise ops -> FusedElementwise (one pass per element)", FuseElementwiseChains};
}

}  // namespace opscope::graph
