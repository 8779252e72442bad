// The request parser of `inspector-cli serve` (cli/inspector_web.h
// AnswerHttpRequest): the input is a request head (request line and
// headers), answered against a run folder holding the golden run files of
// tests/golden, once as a loopback server and once bound to every address.
// Seeds: fuzz/make_corpus.sh writes a few requests; dictionary: fuzz/http.dict.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "cli/inspector_web.h"
#include "fuzz/fuzz_scratch.h"

namespace {

std::string MakeRunFolder() {
  const std::string dir = opscope::fuzz::ScratchDir();
  for (const char* name : {"graph.json", "trace.json", "summary.json"}) {
    opscope::fuzz::WriteScratchFile(
        dir + "/" + name,
        opscope::fuzz::ReadWholeFile(std::string(OPSCOPE_SOURCE_DIR) + "/tests/golden/const_if." + name));
  }
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = MakeRunFolder();
  const std::string_view head(reinterpret_cast<const char*>(data), size);
  (void)opscope::cli::AnswerHttpRequest(head, dir, "127.0.0.1");
  (void)opscope::cli::AnswerHttpRequest(head, dir, "0.0.0.0");
  return 0;
}
