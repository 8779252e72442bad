// layernorm_fusion: LayerNorm written out as primitives (what exporters emit
// for opsets before 17):
//   m = ReduceMean(x)  d = Sub(x, m)  v = ReduceMean(Pow(d, 2))
//   n = Div(d, Sqrt(Add(v, eps)))     y = Add(Mul(n, gamma), beta)
// over trailing axes, with gamma (and beta) constant -> LayerNormalization.
#include "graph/passes/passes.h"
#include "graph/passes/pattern.h"

namespace opscope::graph {
namespace {

// The reduced axes of a ReduceMean as a trailing range: the first axis, or
// nullopt when they are not the last k axes of a rank-r input.
std::optional<int64_t> TrailingAxis(const Graph& g, const Node& rm, const std::string& x) {
  if (rm.attrs.i("keepdims", 1) != 1) return std::nullopt;
  std::vector<int64_t> axes = rm.attrs.ints("axes");
  if (axes.empty() && rm.inputs.size() > 1 && g.IsConstant(rm.inputs[1])) {
    axes = kernels::ToInt64s(*g.FindValue(rm.inputs[1])->constant);
  }
  if (axes.empty()) return std::nullopt;
  const Value* xv = g.FindValue(x);
  if (axes == std::vector<int64_t>{-1}) return -1;
  if (!xv || !xv->rank_known) return std::nullopt;
  const int64_t r = static_cast<int64_t>(xv->dims.size());
  for (int64_t& a : axes) a = a < 0 ? a + r : a;
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != r - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i)) return std::nullopt;
  }
  return axes[0];
}

const Node* Sole(const Graph& g, const std::string& v, std::string_view op) {
  const Node* n = g.SoleConsumer(v);
  return IsOp(n, op) ? n : nullptr;
}

StatusOr<int> FuseLayerNorms(CompileContext& ctx) {
  Graph& g = ctx.graph();
  if (!OpRegistry::Global().Find("LayerNormalization")) return 0;  // nothing to fuse into
  UsedSet used;
  int rewrites = 0;
  for (const Node& rm1 : g.nodes()) {
    if (!IsOp(&rm1, "ReduceMean") || rm1.inputs.empty()) continue;
    const std::string& x = rm1.inputs[0];
    std::optional<int64_t> axis = TrailingAxis(g, rm1, x);
    const Node* sub = Sole(g, rm1.outputs[0], "Sub");
    if (!axis || !sub || sub->inputs[0] != x || sub->inputs[1] != rm1.outputs[0]) continue;
    const Value* d = g.FindValue(sub->outputs[0]);
    if (!d || d->is_graph_output || d->consumers.size() != 2) continue;
    const Node* pow = nullptr;
    const Node* div = nullptr;
    for (int64_t id : d->consumers) {
      const Node* c = g.FindNode(id);
      if (IsOp(c, "Pow") && c->inputs[0] == d->name && Near(ScalarConstant(g, c->inputs[1]), 2.0)) pow = c;
      if (IsOp(c, "Div") && c->inputs[0] == d->name) div = c;
    }
    if (!pow || !div) continue;
    const Node* rm2 = Sole(g, pow->outputs[0], "ReduceMean");
    if (!rm2 || TrailingAxis(g, *rm2, pow->outputs[0]) != axis) continue;
    const Node* add_eps = Sole(g, rm2->outputs[0], "Add");
    if (!add_eps) continue;
    std::optional<double> eps = ScalarConstant(g, OtherInput(*add_eps, rm2->outputs[0]));
    const Node* sqrt = Sole(g, add_eps->outputs[0], "Sqrt");
    if (!eps || !sqrt || g.SoleConsumer(sqrt->outputs[0]) != div || div->inputs[1] != sqrt->outputs[0]) continue;
    const Node* mul = Sole(g, div->outputs[0], "Mul");
    if (!mul) continue;
    const std::string gamma = OtherInput(*mul, div->outputs[0]);
    if (gamma.empty() || !g.IsConstant(gamma)) continue;
    const Node* add_beta = Sole(g, mul->outputs[0], "Add");
    std::string beta = add_beta ? OtherInput(*add_beta, mul->outputs[0]) : "";
    if (beta.empty() || !g.IsConstant(beta)) add_beta = nullptr;
    std::vector<const Node*> parts = {&rm1, sub, pow, rm2, add_eps, sqrt, div, mul};
    if (add_beta) parts.push_back(add_beta);
    if (used.AnyUsedIn(parts)) continue;

    const Node* last = parts.back();
    Node ln = ctx.MakeNode(parts, rm1, "LayerNormalization", "", NodeKind::kFused);
    ln.inputs = {x, gamma};
    if (add_beta) ln.inputs.push_back(beta);
    ln.outputs = {last->outputs[0]};
    ln.attrs.Set("axis", *axis);
    ln.attrs.Set("epsilon", *eps);
    std::vector<int64_t> remove;
    for (const Node* p : parts) {
      used.Use(p);
      remove.push_back(p->id);
    }
    ctx.Replace(last->id, std::move(ln), remove);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace

Pass LayerNormFusionPass() {
  return Pass{"layernorm_fusion", "ReduceMean-Sub-Pow-ReduceMean-Add-Sqrt-Div-Mul-Add -> LayerNormalization", FuseLayerNorms};
}

}  // namespace opscope::graph
