// layout: wraps the nodes whose kernel prefers NHWC (layout.h) in transdata
// nodes, Transpose ops of kind "transdata" that the runtime shows as layout
// conversion tasks.
#include "graph/passes/layout.h"

#include <mutex>

#include "graph/passes/passes.h"
#include "graph/passes/pattern.h"

namespace opscope::graph {
namespace {

std::mutex& PrefMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<LayoutPreference>& Prefs() {
  static std::vector<LayoutPreference> prefs;
  return prefs;
}

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
const std::vector<int64_t> kToNchw = {0, 3, 1, 2};

Node Transdata(CompileContext& ctx, const Node& around, const std::string& in, const std::string& out, bool to_nhwc) {
  Node t = ctx.MakeNode({}, around, "Transpose", "", NodeKind::kTransdata);
  t.name = around.name + (to_nhwc ? "/to_nhwc" : "/to_nchw");
  t.inputs = {in};
  t.outputs = {out};
  t.attrs.Set("perm", to_nhwc ? kToNhwc : kToNchw);
  t.layout_from = to_nhwc ? "NCHW" : "NHWC";
  t.layout_to = to_nhwc ? "NHWC" : "NCHW";
  return t;
}

std::vector<int64_t> Permute(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  for (int64_t p : perm) out.push_back(dims[p]);
  return out;
}

// NHWC -> NCHW followed only by NCHW -> NHWC: both go, the consumers read
// the NHWC tensor directly.
Status CancelPairs(Graph& g) {
  std::vector<int64_t> drop;
  std::map<std::string, std::string> rename;
  for (const Node& back : g.nodes()) {
    if (back.kind != NodeKind::kTransdata || back.layout_to != "NCHW") continue;
    const Node* again = g.SoleConsumer(back.outputs[0]);
    if (!again || again->kind != NodeKind::kTransdata || again->layout_to != "NHWC") continue;
    rename[again->outputs[0]] = back.inputs[0];
    drop.push_back(back.id);
    drop.push_back(again->id);
  }
  for (Node& n : g.mutable_nodes()) {
    for (std::string& in : n.inputs) {
      auto it = rename.find(in);
      if (it != rename.end()) in = it->second;
    }
  }
  return g.RemoveNodes(drop);
}

StatusOr<int> InsertTransdata(CompileContext& ctx) {
  Graph& g = ctx.graph();
  std::vector<LayoutPreference> prefs = LayoutPreferences();
  std::vector<Node> added;
  int wrapped = 0;
  for (Node& n : g.mutable_nodes()) {
    const LayoutPreference* pref = nullptr;
    for (const LayoutPreference& p : prefs) {
      if (p.op_type == n.op_type && (!p.applies || p.applies(n, g))) pref = &p;
    }
    // An op that declares its layout (OpDef::PrefersLayout, a plugin's way)
    // wants it always; a run folder read back says which ops got one, its
    // plugin not loaded (the node then has no kernel here, nor shapes past it).
    LayoutPreference declared;
    bool recorded = false;
    if (const OpSchema* schema = pref ? nullptr : OpRegistry::Global().Find(n.op_type);
        schema && schema->preferred_layout == "NHWC") {  // the one layout the pass converts to
      declared = {.op_type = n.op_type, .layout = schema->preferred_layout};
      pref = &declared;
    } else if (auto it = ctx.model().layout_preferences.find(n.op_type);
               !pref && it != ctx.model().layout_preferences.end() && it->second == "NHWC") {
      declared = {.op_type = n.op_type, .layout = it->second};
      pref = &declared;
      recorded = true;
    }
    if (!pref || (!n.executable && !recorded) || n.inputs.empty() || n.outputs.size() != 1) continue;
    Value* x = g.FindValue(n.inputs[0]);
    Value* y = g.FindValue(n.outputs[0]);
    const bool y_unknown_here = recorded && y && !y->rank_known;
    if (!x || !y || !x->rank_known || x->dims.size() != 4 || (!y_unknown_here && (!y->rank_known || y->dims.size() != 4))) {
      continue;
    }
    const std::string x_nhwc = g.UniqueValueName(n.inputs[0] + "_nhwc");
    const std::string y_nhwc = g.UniqueValueName(n.outputs[0] + "_nhwc");
    Value& xv = g.GetOrAddValue(x_nhwc);
    xv.SetDesc(x->dtype, Shape(Permute(x->dims, kToNhwc)));
    Value& yv = g.GetOrAddValue(y_nhwc);
    if (!y_unknown_here) yv.SetDesc(y->dtype, Shape(Permute(y->dims, kToNhwc)));
    added.push_back(Transdata(ctx, n, n.inputs[0], x_nhwc, true));
    added.push_back(Transdata(ctx, n, y_nhwc, n.outputs[0], false));
    n.inputs[0] = x_nhwc;
    n.outputs[0] = y_nhwc;
    n.attrs.Set("layout", pref->layout);
    ++wrapped;
  }
  for (Node& t : added) g.mutable_nodes().push_back(std::move(t));
  OPSCOPE_RETURN_IF_ERROR(g.Rebuild());
  OPSCOPE_RETURN_IF_ERROR(CancelPairs(g));
  return wrapped;
}

}  // namespace

void RegisterLayoutPreference(LayoutPreference pref) {
  std::lock_guard<std::mutex> lock(PrefMutex());
  Prefs().push_back(std::move(pref));
}

void UnregisterLayoutPreference(const std::string& op_type) {
  std::lock_guard<std::mutex> lock(PrefMutex());
  std::erase_if(Prefs(), [&](const LayoutPreference& p) { return p.op_type == op_type; });
}

std::vector<LayoutPreference> LayoutPreferences() {
  std::lock_guard<std::mutex> lock(PrefMutex());
  return Prefs();
}

Pass LayoutPass() {
  return Pass{"layout", "transdata nodes around kernels that prefer NHWC; back-to-back conversions cancel", InsertTransdata};
}

}  // namespace opscope::graph
