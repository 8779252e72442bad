// constant_folding: a node whose inputs are all constants runs now, through
// the dispatcher's cpu kernel (the one that would run later), and its outputs
// become constants. ONNX Constant nodes simply leave: their value is already
// on their output.
#include "capture/dispatcher.h"
#include "graph/passes/passes.h"

namespace opscope::graph {
namespace {

// Results larger than this stay computed at run time: folding them would
// bloat the model more than it saves.
constexpr int64_t kMaxFoldBytes = 64 << 20;

bool Foldable(const Graph& g, const Node& n) {
  if (!n.executable || n.inputs.empty()) return false;
  for (const std::string& in : n.inputs) {
    if (!in.empty() && !g.IsConstant(in)) return false;
  }
  for (const std::string& out : n.outputs) {
    const Value* v = g.FindValue(out);
    if (v && v->bytes() > kMaxFoldBytes) return false;
  }
  return true;
}

}  // namespace

Pass ConstantFoldingPass() {
  return Pass{"constant_folding", "runs all-constant nodes now; their outputs become constants",
              [](CompileContext& ctx) -> StatusOr<int> {
                Graph& g = ctx.graph();
                OPSCOPE_ASSIGN_OR_RETURN(Device * cpu, GetDevice("cpu"));
                std::vector<int64_t> folded;
                for (const Node& n : g.nodes()) {
                  if (n.op_type == "Constant" && n.executable) {
                    ctx.MarkRemoved(n, "a constant: its value is part of the compiled graph");
                    folded.push_back(n.id);
                    continue;
                  }
                  if (!Foldable(g, n)) continue;
                  const OpSchema* schema = OpRegistry::Global().Find(n.op_type);
                  if (!schema) continue;
                  std::vector<Tensor> inputs;
                  for (const std::string& in : n.inputs) inputs.push_back(in.empty() ? Tensor() : *g.FindValue(in)->constant);
                  RunOptions opts{.device = cpu, .num_outputs = static_cast<int>(n.outputs.size()), .fingerprint = false};
                  StatusOr<OpRun> run = Dispatcher::Global().Run(*schema, inputs, n.attrs, opts);
                  if (!run.ok()) continue;  // it fails the same way at run time, where it is reported
                  for (size_t i = 0; i < n.outputs.size() && i < run->outputs.size(); ++i) {
                    if (n.outputs[i].empty() || !run->outputs[i].defined()) continue;
                    StatusOr<Tensor> host = ToHost(run->outputs[i]);
                    if (!host.ok()) return std::move(host).status();
                    Value& v = g.GetOrAddValue(n.outputs[i]);
                    v.SetDesc(host->dtype(), host->shape());
                    v.constant = std::move(host).value();
                  }
                  ctx.MarkRemoved(n, "folded into a constant at compile time");
                  folded.push_back(n.id);
                }
                OPSCOPE_RETURN_IF_ERROR(g.RemoveNodes(folded));
                return static_cast<int>(folded.size());
              }};
}

}  // namespace opscope::graph
