// race_demo: a program of one's own on libopscope, with the most common
// stream bug: Relu writes y on stream 1, Sigmoid reads y on stream 2, and
// nothing orders them (`--fixed` records an event after Relu and makes
// stream 2 wait for it). Without diagnose it often works: Relu is quick.
//
//   ops-debug diagnose -- build/bin/race_demo            # race: Relu's y, Sigmoid's x, both kernels named
//   ops-debug diagnose -- build/bin/race_demo --fixed    # clean
#include <cstdio>
#include <cstring>

#include "opscope/dispatch.h"
#include "opscope/fill.h"

namespace {

using namespace opscope;

Status RunDemo(bool fixed) {
  OPSCOPE_ASSIGN_OR_RETURN(Device * cpu, GetDevice("cpu"));
  OPSCOPE_ASSIGN_OR_RETURN(auto s1, cpu->CreateStream());
  OPSCOPE_ASSIGN_OR_RETURN(auto s2, cpu->CreateStream());
  OPSCOPE_ASSIGN_OR_RETURN(Tensor x, Tensor::Empty(DType::kF32, Shape({256, 1024})));
  OPSCOPE_RETURN_IF_ERROR(Fill(x, {.kind = FillKind::kNormal, .seed = 3}));
  OPSCOPE_ASSIGN_OR_RETURN(OpRun relu, Dispatch("Relu", {x}, {}, {.device = cpu, .stream = s1.get(), .synchronize = false}));
  if (fixed) {
    OPSCOPE_ASSIGN_OR_RETURN(auto ready, cpu->CreateEvent());
    OPSCOPE_RETURN_IF_ERROR(s1->Record(*ready));
    OPSCOPE_RETURN_IF_ERROR(s2->Wait(*ready));
  }
  OPSCOPE_ASSIGN_OR_RETURN(OpRun sig, Dispatch("Sigmoid", {relu.outputs[0]}, {}, {.device = cpu, .stream = s2.get(), .synchronize = false}));
  OPSCOPE_RETURN_IF_ERROR(cpu->Synchronize());
  std::printf("Sigmoid(Relu(x)): %s\n", sig.outputs[0].Describe().c_str());
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  if (argc > 2 || (argc == 2 && !fixed)) {
    std::fprintf(stderr, "usage: race_demo [--fixed]\n");
    return 2;
  }
  Status st = RunDemo(fixed);
  if (!st.ok()) {
    std::fprintf(stderr, "race_demo: error: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
