#include "analysis/harness/golden.h"

#include "capture/dispatcher.h"
#include "opscope/npy.h"

namespace opscope {

namespace {

// Splits on `sep` outside braces.
std::vector<std::string> SplitOutsideBraces(const std::string& text, char sep) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : text) {
    depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (c == sep && depth == 0) parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

std::string Trim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  return s;
}

}  // namespace

StatusOr<Baseline> ParseBaseline(const std::string& text, const OpSchema& op, const Attrs& attrs, Device* run_device,
                                 const std::vector<Tensor>& inputs) {
  Baseline b;
  b.text = text;
  b.device = run_device;
  std::string chain = text;
  const size_t at = text.rfind('@');
  if (at != std::string::npos && text.find('}', at) == std::string::npos) {
    chain = text.substr(0, at);
    auto dev = GetDevice(Trim(text.substr(at + 1)));
    if (!dev.ok()) return std::move(dev).status().WithContext("baseline '" + text + "'");
    b.device = *dev;
  }
  const std::string backend = b.device->backend();
  for (std::string stage : SplitOutsideBraces(chain, '>')) {
    stage = Trim(stage);
    std::string name = stage, attr_text;
    const size_t brace = stage.find('{');
    if (brace != std::string::npos) {
      if (stage.back() != '}') {
        return InvalidArgumentError("baseline '" + text + "': stage '" + stage + "': expected OP{name=value,...}");
      }
      name = Trim(stage.substr(0, brace));
      attr_text = stage.substr(brace + 1, stage.size() - brace - 2);
    }
    if (name.empty()) {
      return InvalidArgumentError("baseline '" + text + "': empty stage (expected OP[{attrs}][>OP...][@DEVICE])");
    }
    auto found = OpRegistry::Global().Lookup(name);
    if (!found.ok()) return std::move(found).status().WithContext("baseline");
    BaselineStage s{.op = *found};
    if (brace == std::string::npos && name == op.name) {
      s.attrs = attrs;
    } else {
      auto parsed = s.op->ParseAttrs(attr_text);
      if (!parsed.ok()) return std::move(parsed).status().WithContext("baseline: stage " + name);
      s.attrs = *parsed;
    }
    if (!s.op->kernels.count(backend)) {
      return InvalidArgumentError("baseline: op " + name + " has no " + backend + " kernel");
    }
    b.stages.push_back(std::move(s));
  }
  // Shapes and types through the chain, on empty stand-ins, before anything runs.
  std::vector<Tensor> current = inputs;
  for (const BaselineStage& s : b.stages) {
    Attrs a = s.attrs;
    auto outs = Dispatcher::Global().InferOutputs(*s.op, current, a, -1);
    if (!outs.ok()) return std::move(outs).status().WithContext("baseline: stage " + s.op->name);
    current.clear();
    b.outputs = *outs;
    for (const TensorDesc& d : *outs) {
      OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(d.dtype, d.shape));
      current.push_back(std::move(t));
    }
  }
  return b;
}

StatusOr<std::vector<Tensor>> RunBaseline(const Baseline& b, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> current;
  for (const Tensor& t : inputs) {
    OPSCOPE_ASSIGN_OR_RETURN(Tensor d, ToDevice(t, b.device));
    current.push_back(std::move(d));
  }
  for (const BaselineStage& s : b.stages) {
    auto run = Dispatcher::Global().Run(*s.op, current, s.attrs, RunOptions{.device = b.device});
    if (!run.ok()) return std::move(run).status().WithContext("baseline: stage " + s.op->name);
    current = std::move(run->outputs);
  }
  std::vector<Tensor> host;
  for (const Tensor& t : current) {
    if (!t.defined()) { host.push_back(t); continue; }
    OPSCOPE_ASSIGN_OR_RETURN(Tensor h, ToHost(t));
    host.push_back(std::move(h));
  }
  return host;
}

StatusOr<std::vector<Tensor>> ReadExpected(const std::vector<std::string>& files, const std::vector<TensorDesc>& outputs,
                                           const std::vector<std::string>& names) {
  std::vector<Tensor> read;
  for (const std::string& file : files) {
    auto t = ReadNpy(file);
    if (!t.ok()) return std::move(t).status().WithContext("expected_files");
    read.push_back(*std::move(t));
  }
  return CheckExpected(read, files, outputs, names);
}

StatusOr<std::vector<Tensor>> CheckExpected(const std::vector<Tensor>& tensors, const std::vector<std::string>& files,
                                            const std::vector<TensorDesc>& outputs,
                                            const std::vector<std::string>& names) {
  if (tensors.size() != outputs.size()) {
    return InvalidArgumentError("expected_files: " + std::to_string(tensors.size()) + " file(s) for " +
                                std::to_string(outputs.size()) + " output(s) (give one .npy per output, in order)");
  }
  std::vector<Tensor> out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor* t = &tensors[i];
    const std::string what = i < files.size() ? files[i] : "tensor " + std::to_string(i);
    if (t->shape() != outputs[i].shape) {
      return InvalidArgumentError("expected_files " + what + ": holds " + t->Describe() + " but output " + names[i] +
                                  " is " + std::string(DTypeName(outputs[i].dtype)) + outputs[i].shape.ToString());
    }
    out.push_back(*t);
  }
  return out;
}

}  // namespace opscope
