// conv_bn_folding: BatchNormalization (inference form) after a Conv whose
// weights are constant folds into the Conv: per output channel m,
//   s = scale[m] / sqrt(var[m] + eps)
//   W'[m] = W[m] * s        b'[m] = (b[m] - mean[m]) * s + B[m]
// computed in double and stored in the weights' dtype.
#include "graph/passes/passes.h"
#include "graph/passes/pattern.h"

namespace opscope::graph {
namespace {

StatusOr<int> FoldConvBn(CompileContext& ctx) {
  Graph& g = ctx.graph();
  UsedSet used;
  int rewrites = 0;
  for (const Node& bn : g.nodes()) {
    if (!IsOp(&bn, "BatchNormalization") || bn.inputs.size() != 5) continue;
    bool extra_outputs = false;
    for (size_t i = 1; i < bn.outputs.size(); ++i) {
      const Value* v = g.FindValue(bn.outputs[i]);
      if (!bn.outputs[i].empty() && v && (!v->consumers.empty() || v->is_graph_output)) extra_outputs = true;
    }
    if (extra_outputs) continue;  // training-mode statistics are used: keep the BN
    const Node* conv = ProducerOf(g, bn.inputs[0]);
    if (!IsOp(conv, "Conv") || g.SoleConsumer(bn.inputs[0]) != &bn || used.AnyUsed({conv, &bn})) continue;
    const Value* w = g.FindValue(conv->inputs[1]);
    const bool has_bias = conv->inputs.size() > 2 && !conv->inputs[2].empty();
    if (!w || !w->constant || !IsFloat(w->constant->dtype()) || (has_bias && !g.IsConstant(conv->inputs[2]))) continue;
    bool params_const = true;
    for (int i = 1; i < 5; ++i) params_const = params_const && g.IsConstant(bn.inputs[i]);
    if (!params_const) continue;

    const Tensor& wt = *w->constant;
    const int64_t m = wt.rank() ? wt.dim(0) : 0;
    std::vector<double> scale = kernels::ToDoubles(*g.FindValue(bn.inputs[1])->constant);
    std::vector<double> shift = kernels::ToDoubles(*g.FindValue(bn.inputs[2])->constant);
    std::vector<double> mean = kernels::ToDoubles(*g.FindValue(bn.inputs[3])->constant);
    std::vector<double> var = kernels::ToDoubles(*g.FindValue(bn.inputs[4])->constant);
    if (m == 0 || static_cast<int64_t>(scale.size()) != m || static_cast<int64_t>(shift.size()) != m ||
        static_cast<int64_t>(mean.size()) != m || static_cast<int64_t>(var.size()) != m) {
      continue;
    }
    std::vector<double> bias(m, 0.0);
    if (has_bias) bias = kernels::ToDoubles(*g.FindValue(conv->inputs[2])->constant);
    if (static_cast<int64_t>(bias.size()) != m) continue;
    const double eps = bn.attrs.f("epsilon", 1e-5);

    OPSCOPE_ASSIGN_OR_RETURN(Tensor new_w, Tensor::Empty(wt.dtype(), wt.shape()));
    OPSCOPE_ASSIGN_OR_RETURN(Tensor new_b, Tensor::Empty(wt.dtype(), Shape({m})));
    const int64_t per = wt.numel() / m;
    std::vector<double> wv = kernels::ToDoubles(wt);
    for (int64_t c = 0; c < m; ++c) {
      const double s = scale[c] / std::sqrt(var[c] + eps);
      for (int64_t k = 0; k < per; ++k) new_w.FlatSetFromDouble(c * per + k, wv[c * per + k] * s);
      new_b.FlatSetFromDouble(c, (bias[c] - mean[c]) * s + shift[c]);
    }
    const std::string w_name = g.UniqueValueName(conv->inputs[1] + "_bn_folded");
    g.GetOrAddValue(w_name).SetDesc(new_w.dtype(), new_w.shape());
    g.FindValue(w_name)->constant = new_w;
    const std::string b_name = g.UniqueValueName(bn.name + "_bias_folded");
    g.GetOrAddValue(b_name).SetDesc(new_b.dtype(), new_b.shape());
    g.FindValue(b_name)->constant = new_b;

    Node folded = ctx.MakeNode({conv, &bn}, *conv, "Conv", conv->domain, NodeKind::kFused);
    folded.inputs = {conv->inputs[0], w_name, b_name};
    folded.outputs = {bn.outputs[0]};
    folded.attrs = conv->attrs;
    folded.note = "BatchNormalization folded into the weights";
    used.Use(conv);
    used.Use(&bn);
    ctx.Replace(bn.id, std::move(folded), {conv->id});
    ++rewrites;
  }
  return rewrites;
}

}  // namespace

Pass ConvBnFoldingPass() {
  return Pass{"conv_bn_folding", "Conv + BatchNormalization with constant parameters -> Conv with new weights",
              FoldConvBn};
}

}  // namespace opscope::graph
