#include "graph/runtime/inorder_eval.h"

#include <unordered_map>

#include "capture/dispatcher.h"

namespace opscope::graph {

StatusOr<std::map<std::string, Tensor>> EvaluateInOrder(const Graph& g, const std::map<std::string, Tensor>& inputs,
                                                        Device* device, std::map<std::string, Tensor>* values,
                                                        const KeepValue& keep) {
  std::unordered_map<std::string, Tensor> env;
  for (const std::string& name : g.inputs()) {
    auto it = inputs.find(name);
    if (it == inputs.end()) return InvalidArgumentError("no tensor given for graph input '" + name + "'");
    env[name] = it->second;
  }
  for (const std::string& name : g.value_order()) {
    const Value* v = g.FindValue(name);
    if (v->constant) env[name] = *v->constant;
  }
  for (const Node& n : g.nodes()) {
    if (!n.executable) {
      return FailedPreconditionError("node '" + n.name + "' (" + n.op_type + ") cannot run: " + n.not_executable_reason);
    }
    if (n.op_type == "Constant" && !n.outputs.empty() && g.IsConstant(n.outputs[0])) continue;
    OPSCOPE_ASSIGN_OR_RETURN(const OpSchema* schema, OpRegistry::Global().Lookup(n.op_type));
    std::vector<Tensor> args;
    for (const std::string& in : n.inputs) {
      if (in.empty()) {
        args.emplace_back();
        continue;
      }
      auto it = env.find(in);
      if (it == env.end()) return InternalError("node '" + n.name + "' reads '" + in + "' before it is computed");
      args.push_back(it->second);
    }
    RunOptions opts{.device = device, .num_outputs = static_cast<int>(n.outputs.size()), .fingerprint = false};
    StatusOr<OpRun> run = Dispatcher::Global().Run(*schema, args, n.attrs, opts);
    if (!run.ok()) return std::move(run).status().WithContext("node '" + n.name + "' (" + n.op_type + ")");
    for (size_t i = 0; i < n.outputs.size() && i < run->outputs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      if (!keep) {
        env[n.outputs[i]] = run->outputs[i];
        continue;
      }
      StatusOr<Tensor> kept = keep(n.outputs[i], std::move(run->outputs[i]));
      if (!kept.ok()) return std::move(kept).status();
      env[n.outputs[i]] = *std::move(kept);
    }
  }
  if (values) {
    for (auto& [name, t] : env) {
      OPSCOPE_ASSIGN_OR_RETURN((*values)[name], ToHost(t));
    }
  }
  std::map<std::string, Tensor> out;
  for (const std::string& name : g.outputs()) {
    auto it = env.find(name);
    if (it == env.end()) return InternalError("graph output '" + name + "' was never computed");
    OPSCOPE_ASSIGN_OR_RETURN(out[name], ToHost(it->second));
  }
  return out;
}

}  // namespace opscope::graph
