// capture.json of an inspector-cli run folder (graph/run/captured_run.h):
// graph::LoadCapture, which export, summary, path and diff all start from. It
// parses the file, re-imports the model it names (checking its fingerprint),
// restores the compiled graph and the schedule the file keeps (compiled_json.h)
// and checks them against each other, or, for a file without them, recompiles
// and reschedules the model and lines the captured tasks up with it.
// Seeds: the capture.json of runs of examples/models (fuzz/make_corpus.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_scratch.h"
#include "graph/export/capture_json.h"
#include "graph/run/captured_run.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = opscope::fuzz::ScratchDir();
  opscope::fuzz::WriteScratchFile(dir + "/" + opscope::graph::kCaptureFile,
                                  std::string_view(reinterpret_cast<const char*>(data), size));
  (void)opscope::graph::LoadCapture(dir);
  return 0;
}
