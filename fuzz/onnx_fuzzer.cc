// ONNX import and the compiler: graph::ImportOnnx on arbitrary bytes (the
// protobuf parse, ONNX's own shape inference, opscope's checks and opset
// adapters), then, for a model it accepts, graph::Compile (every pass:
// shape inference, constant folding, fusions, layout, memory planning).
// Seeds: examples/models/*.onnx; dictionary: fuzz/onnx.dict.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_scratch.h"
#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // ImportOnnx, not ImportOnnxModel: the file checks before the parse are part of the tool's path.
  static const std::string path = opscope::fuzz::ScratchDir() + "/fuzz.onnx";
  opscope::fuzz::WriteScratchFile(path, std::string_view(reinterpret_cast<const char*>(data), size));
  opscope::StatusOr<opscope::graph::Model> model = opscope::graph::ImportOnnx(path);
  if (model.ok()) (void)opscope::graph::Compile(*model);
  return 0;
}
