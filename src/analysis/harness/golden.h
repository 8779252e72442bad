// The golden `ops-debug run` compares the kernel with: the op's reference
// kernel (the default), .npy files (--expected), or another op or a chain of
// ops on some device (--baseline), e.g. built-in ops standing in for a custom
// fused op:  --baseline "Add>Gelu{approximate=tanh}@cpu"
// Stage 1 takes the run's inputs; each later stage takes the outputs of the
// one before. A stage's attrs go in braces; a lone stage naming the op under
// test reuses --attrs (so "my_op@cuda" checks one backend against another).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "opscope/device.h"
#include "opscope/op.h"
#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope {

// Runs the golden on some inputs; the outputs come back on the host.
using GoldenFn = std::function<StatusOr<std::vector<Tensor>>(const std::vector<Tensor>& inputs)>;

struct BaselineStage {
  const OpSchema* op = nullptr;
  Attrs attrs;
};

struct Baseline {
  std::string text;
  std::vector<BaselineStage> stages;
  Device* device = nullptr;
  std::vector<TensorDesc> outputs;  // what the last stage gives, by shape inference
};

// Parses and checks the chain against the inputs (types, shapes) without
// running it; errors name --baseline.
StatusOr<Baseline> ParseBaseline(const std::string& text, const OpSchema& op, const Attrs& attrs, Device* run_device,
                                 const std::vector<Tensor>& inputs);
StatusOr<std::vector<Tensor>> RunBaseline(const Baseline& b, const std::vector<Tensor>& inputs);

// One .npy per output, checked against the outputs shape inference predicts;
// errors name --expected and say both shapes.
StatusOr<std::vector<Tensor>> ReadExpected(const std::vector<std::string>& files, const std::vector<TensorDesc>& outputs,
                                           const std::vector<std::string>& output_names);
// The same checks on tensors a caller gave (`files` names them where known).
StatusOr<std::vector<Tensor>> CheckExpected(const std::vector<Tensor>& tensors, const std::vector<std::string>& files,
                                            const std::vector<TensorDesc>& outputs,
                                            const std::vector<std::string>& output_names);

}  // namespace opscope
