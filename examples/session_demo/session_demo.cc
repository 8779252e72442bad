// An ordinary user of the opscope library: it imports an ONNX model,
// compiles it, runs it on the cpu device on two streams, and dispatches two
// ops of its own. It knows nothing of capture sessions; run it under
// `inspector-cli start` and its graph and launches are recorded all the same:
//
//   eval "$(build/bin/inspector-cli start --output-dir /tmp/s --enable-graph --enable-runtime)"
//   build/bin/session_demo examples/models/two_branch.onnx
//   build/bin/inspector-cli export --input-dir /tmp/s --format json
#include <cstdio>

#include "opscope/dispatch.h"
#include "opscope/fill.h"
#include "opscope/model.h"

namespace {

using namespace opscope;

Status RunDemo(const std::string& model_path) {
  // The whole model: import, compile, two streams, execute on cpu; nothing written.
  OPSCOPE_ASSIGN_OR_RETURN(ModelRunReport model, RunModel({.model = model_path, .streams = 2, .seed = 1}));
  for (const auto& [name, t] : model.outputs) std::printf("output %s %s\n", name.c_str(), t.Describe().c_str());

  // Two ops of its own, straight through the dispatcher: the second one
  // asynchronous, waited for by synchronizing the stream.
  OPSCOPE_ASSIGN_OR_RETURN(Device * cpu, GetDevice("cpu"));
  OPSCOPE_ASSIGN_OR_RETURN(Tensor x, Tensor::Empty(DType::kF32, Shape({4, 1024})));
  OPSCOPE_RETURN_IF_ERROR(Fill(x, {.kind = FillKind::kNormal, .seed = 2}));
  OPSCOPE_ASSIGN_OR_RETURN(OpRun relu, Dispatch("Relu", {x}, {}, {.device = cpu}));
  OPSCOPE_ASSIGN_OR_RETURN(OpRun add, Dispatch("Add", {relu.outputs[0], x}, {}, {.device = cpu, .synchronize = false}));
  OPSCOPE_RETURN_IF_ERROR(cpu->default_stream().Synchronize());
  std::printf("dispatched Relu and Add: %s\n", add.outputs[0].Describe().c_str());
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: session_demo MODEL.onnx\n");
    return 2;
  }
  Status st = RunDemo(argv[1]);
  if (!st.ok()) {
    std::fprintf(stderr, "session_demo: error: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
