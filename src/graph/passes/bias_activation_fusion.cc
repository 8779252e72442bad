// bias_activation_fusion: Conv / Gemm / MatMul, then an Add of a constant
// per-channel (per-column) bias, then (Conv only) an Add of a tensor of the
// output's own shape and dtype (a skip connection: ResNet's and
// mobilenet_v2's residual Add), then an activation -> one FusedConv /
// FusedGemm / FusedMatMul whose kernel adds the bias and the residual Z and
// applies the activation as the epilogue of the dense kernel. Any of them
// may be missing, not all. (The residual as its own Add + Relu had cost
// resnet18 a pass over each block's output, 0.5 ms of a 30 ms run.)
#include <limits>

#include "graph/passes/passes.h"
#include "graph/passes/pattern.h"

namespace opscope::graph {
namespace {

const char* const kActivations[] = {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "Gelu"};

// The bias as a 1-D vector of `channels` values when `value` is a constant
// that broadcasts along one axis only: axis 1 of a rank-`rank` output (Conv,
// axis_from_end = rank - 2) or the last axis (Gemm/MatMul, axis_from_end = 0).
std::optional<std::vector<double>> BiasVector(const Graph& g, const std::string& value, int rank, int axis_from_end,
                                              int64_t channels) {
  const Value* v = g.FindValue(value);
  if (!v || !v->constant || !IsFloat(v->constant->dtype()) || v->constant->numel() != channels) return std::nullopt;
  const Shape& s = v->constant->shape();
  if (s.rank() > rank) return std::nullopt;
  for (int i = 0; i < s.rank(); ++i) {
    const int from_end = s.rank() - 1 - i;
    if (from_end != axis_from_end && s[i] != 1) return std::nullopt;
  }
  if (channels > 1 && s.rank() <= axis_from_end) return std::nullopt;
  return kernels::ToDoubles(*v->constant);
}

// Sets the activation attributes for `act`; false when its parameters are not constant.
bool ActivationAttrs(const Graph& g, const Node& act, Attrs& attrs) {
  attrs.Set("activation", act.op_type);
  if (act.op_type == "LeakyRelu") attrs.Set("activation_alpha", act.attrs.f("alpha", 0.01));
  if (act.op_type == "Gelu") attrs.Set("activation_approximate", act.attrs.s("approximate", "none"));
  if (act.op_type == "Clip") {
    for (size_t i = 1; i < act.inputs.size() && i < 3; ++i) {
      if (act.inputs[i].empty()) continue;
      std::optional<double> v = ScalarConstant(g, act.inputs[i]);
      if (!v) return false;
      attrs.Set(i == 1 ? "activation_min" : "activation_max", *v);
    }
  }
  return true;
}

StatusOr<Tensor> MakeVector(DType dtype, const std::vector<double>& v) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dtype, Shape({static_cast<int64_t>(v.size())})));
  for (size_t i = 0; i < v.size(); ++i) t.FlatSetFromDouble(static_cast<int64_t>(i), v[i]);
  return t;
}

StatusOr<int> FuseBiasActivations(CompileContext& ctx) {
  Graph& g = ctx.graph();
  UsedSet used;
  int rewrites = 0;
  for (const Node& base : g.nodes()) {
    const bool conv = IsOp(&base, "Conv"), gemm = IsOp(&base, "Gemm"), matmul = IsOp(&base, "MatMul");
    // A node short of its inputs (a malformed model) is left for the
    // schema check to refuse: nothing here may index past them.
    if (!(conv || gemm || matmul) || base.outputs.size() != 1 || base.inputs.size() < 2 || base.inputs[1].empty() ||
        used.AnyUsed({&base})) {
      continue;
    }
    const Value* y = g.FindValue(base.outputs[0]);
    const Value* w = g.FindValue(base.inputs[1]);
    if (!y || !y->dtype_known || !IsFloat(y->dtype) || !w || !w->rank_known) continue;

    // Channels and the output rank the bias must line up with.
    int64_t channels = -1;
    int rank = 0, axis_from_end = 0;
    if (conv) {
      if (w->dims.empty()) continue;
      channels = w->dims[0];
      rank = static_cast<int>(w->dims.size());
      axis_from_end = rank - 2;
    } else if (gemm) {
      if (w->dims.size() != 2) continue;
      channels = base.attrs.i("transB") ? w->dims[0] : w->dims[1];
      rank = 2;
    } else {
      if (!y->rank_known || y->dims.empty()) continue;
      channels = y->dims.back();
      rank = static_cast<int>(y->dims.size());
    }
    const bool has_c = base.inputs.size() > 2 && !base.inputs[2].empty();

    std::vector<const Node*> parts = {&base};
    std::string out = base.outputs[0];
    std::optional<std::vector<double>> bias;
    const Node* add = g.SoleConsumer(out);
    if (IsOp(add, "Add") && add->inputs.size() == 2 && add->outputs.size() == 1 && channels > 0 && !(gemm && has_c)) {
      bias = BiasVector(g, OtherInput(*add, out), rank, axis_from_end, channels);
      if (bias && (!conv || !has_c || g.IsConstant(base.inputs[2]))) {
        parts.push_back(add);
        out = add->outputs[0];
      } else {
        bias.reset();
      }
    }
    // A skip connection: the other operand is exactly the output's shape.
    // It joins the fused node's inputs, which then runs where the Add ran:
    // after every node that computes Z.
    std::string residual;
    if (conv) {
      const Node* add2 = g.SoleConsumer(out);
      if (IsOp(add2, "Add") && add2->inputs.size() == 2 && add2->outputs.size() == 1) {
        const std::string z = OtherInput(*add2, out);
        const Value* zv = z.empty() ? nullptr : g.FindValue(z);
        const Value* ov = g.FindValue(out);
        if (zv && ov && zv->shape_known() && ov->shape_known() && zv->dtype_known && zv->dtype == ov->dtype &&
            zv->dims == ov->dims) {
          parts.push_back(add2);
          out = add2->outputs[0];
          residual = z;
        }
      }
    }
    Attrs attrs = base.attrs;
    const Node* act = g.SoleConsumer(out);
    bool fused_act = false;
    for (const char* a : kActivations) {
      if (IsOp(act, a) && !act->inputs.empty() && act->outputs.size() == 1 && act->inputs[0] == out &&
          ActivationAttrs(g, *act, attrs)) {
        parts.push_back(act);
        out = act->outputs[0];
        fused_act = true;
        break;
      }
    }
    if (!bias && !fused_act && residual.empty()) continue;
    if (used.AnyUsedIn(parts)) continue;

    const char* op = conv ? "FusedConv" : (gemm ? "FusedGemm" : "FusedMatMul");
    Node fused = ctx.MakeNode(parts, base, op, "opscope", NodeKind::kFused);
    fused.inputs = {base.inputs[0], base.inputs[1]};
    if (has_c) fused.inputs.push_back(base.inputs[2]);
    fused.outputs = {out};
    fused.attrs = attrs;
    if (bias) {
      if (conv && has_c) {
        std::vector<double> b0 = kernels::ToDoubles(*g.FindValue(base.inputs[2])->constant);
        for (size_t i = 0; i < bias->size() && i < b0.size(); ++i) (*bias)[i] += b0[i];
      }
      OPSCOPE_ASSIGN_OR_RETURN(Tensor t, MakeVector(y->dtype, *bias));
      const std::string name = g.UniqueValueName(base.name + "_fused_bias");
      Value& bv = g.GetOrAddValue(name);
      bv.SetDesc(t.dtype(), t.shape());
      bv.constant = t;
      if (has_c) fused.inputs[2] = name;
      else fused.inputs.push_back(name);
      if (gemm) fused.attrs.Set("beta", 1.0);
    }
    if (!residual.empty()) {
      fused.inputs.resize(3);  // B stays "" (left out) where there is none
      fused.inputs.push_back(residual);
    }
    std::vector<int64_t> remove;
    for (const Node* p : parts) {
      used.Use(p);
      remove.push_back(p->id);
    }
    ctx.Replace(parts.back()->id, std::move(fused), remove);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace

Pass BiasActivationFusionPass() {
  return Pass{"bias_activation_fusion",
              "Conv/Gemm/MatMul + Add(bias) [+ Add(residual Z), Conv only] + Relu/Sigmoid/Tanh/LeakyRelu/Clip/Gelu "
              "-> FusedConv/FusedGemm/FusedMatMul",
              FuseBiasActivations};
}

}  // namespace opscope::graph
