// gelu_fusion: GELU written out as primitives -> one Gelu node.
//   erf form:  0.5 * x * (1 + Erf(x / sqrt(2)))         (or x * 0.70710678)
//   tanh form: 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
// The outer 0.5 * x * (...) is matched in both orders exporters write:
// Mul(Mul(x, p), 0.5) and Mul(Mul(x, 0.5), p).
#include "graph/passes/passes.h"
#include "graph/passes/pattern.h"

namespace opscope::graph {
namespace {

const Node* SoleOp(const Graph& g, const std::string& v, std::string_view op) {
  const Node* n = g.SoleConsumer(v);
  return IsOp(n, op) ? n : nullptr;
}

// Matches (1 + inner) * 0.5 * x from the output of `inner`; appends the
// matched nodes and returns the final output name ("" on no match).
std::string MatchTail(const Graph& g, const std::string& inner, const std::string& x,
                      std::vector<const Node*>& parts) {
  const Node* add = SoleOp(g, inner, "Add");
  if (!add || !Near(ScalarConstant(g, OtherInput(*add, inner)), 1.0)) return "";
  const Node* m1 = SoleOp(g, add->outputs[0], "Mul");
  if (!m1) return "";
  const std::string other = OtherInput(*m1, add->outputs[0]);
  if (other == x) {  // Mul(Mul(x, 1 + inner), 0.5)
    const Node* m2 = SoleOp(g, m1->outputs[0], "Mul");
    if (!m2 || !Near(ScalarConstant(g, OtherInput(*m2, m1->outputs[0])), 0.5)) return "";
    parts.insert(parts.end(), {add, m1, m2});
    return m2->outputs[0];
  }
  const Node* half = ProducerOf(g, other);  // Mul(Mul(x, 0.5), 1 + inner)
  if (!IsOp(half, "Mul") || g.SoleConsumer(other) != m1 || !Near(ScalarConstant(g, OtherInput(*half, x)), 0.5)) {
    return "";
  }
  parts.insert(parts.end(), {add, half, m1});
  return m1->outputs[0];
}

// Erf(x / sqrt2): returns x, or "" when `erf` is not of that form.
std::string MatchErfArg(const Graph& g, const Node& erf, std::vector<const Node*>& parts) {
  const Node* scale = ProducerOf(g, erf.inputs[0]);
  if (!scale || g.SoleConsumer(erf.inputs[0]) != &erf || scale->inputs.size() != 2) return "";
  const std::string x = scale->inputs[0];
  if (IsOp(scale, "Div") && Near(ScalarConstant(g, scale->inputs[1]), M_SQRT2)) {
    parts.push_back(scale);
    return x;
  }
  if (IsOp(scale, "Mul")) {
    for (int i = 0; i < 2; ++i) {
      if (Near(ScalarConstant(g, scale->inputs[1 - i]), M_SQRT1_2)) {
        parts.push_back(scale);
        return scale->inputs[i];
      }
    }
  }
  return "";
}

// Tanh(sqrt(2/pi) * (x + 0.044715 * Pow(x, 3))): returns x or "".
std::string MatchTanhArg(const Graph& g, const Node& tanh, std::vector<const Node*>& parts) {
  const Node* scale = ProducerOf(g, tanh.inputs[0]);
  if (!IsOp(scale, "Mul") || g.SoleConsumer(tanh.inputs[0]) != &tanh) return "";
  const double k = 0.7978845608028654;
  std::string sum;
  for (int i = 0; i < 2; ++i) {
    if (Near(ScalarConstant(g, scale->inputs[1 - i]), k)) sum = scale->inputs[i];
  }
  const Node* add = ProducerOf(g, sum);
  if (!IsOp(add, "Add") || g.SoleConsumer(sum) != scale) return "";
  for (int i = 0; i < 2; ++i) {
    const std::string x = add->inputs[i], cube_scaled = add->inputs[1 - i];
    const Node* mul = ProducerOf(g, cube_scaled);
    if (!IsOp(mul, "Mul") || g.SoleConsumer(cube_scaled) != add) continue;
    for (int j = 0; j < 2; ++j) {
      const Node* pow = ProducerOf(g, mul->inputs[j]);
      if (IsOp(pow, "Pow") && pow->inputs[0] == x && Near(ScalarConstant(g, pow->inputs[1]), 3.0) &&
          g.SoleConsumer(mul->inputs[j]) == mul && Near(ScalarConstant(g, mul->inputs[1 - j]), 0.044715)) {
        parts.insert(parts.end(), {pow, mul, add, scale});
        return x;
      }
    }
  }
  return "";
}

StatusOr<int> FuseGelus(CompileContext& ctx) {
  Graph& g = ctx.graph();
  UsedSet used;
  int rewrites = 0;
  for (const Node& n : g.nodes()) {
    const bool is_erf = IsOp(&n, "Erf"), is_tanh = IsOp(&n, "Tanh");
    if (!is_erf && !is_tanh) continue;
    std::vector<const Node*> parts;
    const std::string x = is_erf ? MatchErfArg(g, n, parts) : MatchTanhArg(g, n, parts);
    if (x.empty() || !IsFloatValue(g, x)) continue;
    parts.push_back(&n);
    const std::string y = MatchTail(g, n.outputs[0], x, parts);
    if (y.empty() || used.AnyUsedIn(parts)) continue;
    const Node* last = ProducerOf(g, y);
    Node gelu = ctx.MakeNode(parts, *parts.front(), "Gelu", "", NodeKind::kFused);
    gelu.inputs = {x};
    gelu.outputs = {y};
    gelu.attrs.Set("approximate", std::string(is_erf ? "none" : "tanh"));
    std::vector<int64_t> remove;
    for (const Node* p : parts) {
      used.Use(p);
      remove.push_back(p->id);
    }
    ctx.Replace(last->id, std::move(gelu), remove);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace

Pass GeluFusionPass() {
  return Pass{"gelu_fusion", "erf and tanh GELU patterns written as primitives -> Gelu", FuseGelus};
}

}  // namespace opscope::graph
