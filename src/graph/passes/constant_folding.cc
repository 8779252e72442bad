// constant_folding: a node whose inputs are all constants runs now, through
// the dispatcher's cpu kernel (the one that would run later), and its outputs
// become constants. ONNX Constant nodes simply leave: their value is already
// on their output. Shape and Size read only their input's dims, so they fold
// wherever those are known (inputs must have their declared shapes), and
// whatever computes on their result folds after them. A transformer's Shape
// -> Gather -> Div -> Reshape had run on the device, and the host waited for
// the stream at the Reshape, whose shape input it reads at dispatch: the
// encoder of bench/make_torch_models.py ran 68 tasks, now 54, with no such
// wait (its span moved within this machine's noise).
#include "capture/dispatcher.h"
#include "graph/passes/passes.h"

namespace opscope::graph {
namespace {

// Results larger than this stay computed at run time: folding them would
// bloat the model more than it saves.
constexpr int64_t kMaxFoldBytes = 64 << 20;

// Shape and Size of a value whose dims are all known, in the default domain.
bool ReadsOnlyDims(const Graph& g, const Node& n) {
  if ((n.op_type != "Shape" && n.op_type != "Size") || !(n.domain.empty() || n.domain == "ai.onnx")) return false;
  if (!n.executable || n.inputs.size() != 1 || n.inputs[0].empty()) return false;
  const Value* v = g.FindValue(n.inputs[0]);
  return v != nullptr && v->dtype_known && v->shape_known();
}

// A stand-in for a value with those dims: one element seen through zero
// strides, so a 64 MiB activation costs no memory to ask its shape.
StatusOr<Tensor> DimsOnly(const Value& v) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor one, Tensor::Empty(v.dtype, Shape({1})));
  return Tensor(one.buffer(), v.dtype, v.shape(), std::vector<int64_t>(v.dims.size(), 0));
}

bool Foldable(const Graph& g, const Node& n) {
  if (ReadsOnlyDims(g, n)) return true;
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
                  for (const std::string& in : n.inputs) {
                    const Value* v = in.empty() ? nullptr : g.FindValue(in);
                    if (v == nullptr) {
                      inputs.emplace_back();
                    } else if (v->constant) {
                      inputs.push_back(*v->constant);
                    } else {  // ReadsOnlyDims
                      OPSCOPE_ASSIGN_OR_RETURN(Tensor dims, DimsOnly(*v));
                      inputs.push_back(std::move(dims));
                    }
                  }
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
