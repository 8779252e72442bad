#include "graph/harness/model_inputs.h"

#include "opscope/npy.h"

namespace opscope::graph {

StatusOr<std::map<std::string, Tensor>> ReadInputs(const std::vector<std::string>& files,
                                                   const std::map<std::string, Tensor>& tensors, const Graph& g) {
  std::map<std::string, Tensor> inputs;
  if (files.size() > g.inputs().size()) {
    return InvalidArgumentError("input_files: " + std::to_string(files.size()) + " files for " +
                                std::to_string(g.inputs().size()) + " graph inputs");
  }
  for (size_t i = 0; i < files.size(); ++i) {
    std::string name = g.inputs()[i], path = files[i];
    if (size_t eq = path.find('='); eq != std::string::npos) {
      name = path.substr(0, eq);
      path = path.substr(eq + 1);
    }
    StatusOr<Tensor> t = ReadNpy(path);
    if (!t.ok()) return std::move(t).status().WithContext("input_files");
    inputs.emplace(name, std::move(t).value());
  }
  for (const auto& [name, t] : tensors) inputs[name] = t;
  return inputs;
}

Status CheckExecutable(const Model& m) {
  for (const Node& n : m.compiled.nodes()) {
    if (!n.executable) {
      return UnimplementedError(m.path + ": node '" + n.name + "' (" + n.op_type +
                                ") is not executable: " + n.not_executable_reason);
    }
  }
  return Status::Ok();
}

}  // namespace opscope::graph
