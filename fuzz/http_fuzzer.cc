// The request parser of `inspector-cli serve` (cli/http_request.h
// ScanRequestHead and AnswerHttpRequest): the input is the bytes a client
// sent, framed as the server frames them (a head it takes must lie within
// them; a refusal is 400, 414 or 431), and answered whole, as any head might
// be, against a run folder holding the golden run files of tests/golden,
// once as a loopback server and once bound to every address.
// Seeds: fuzz/make_corpus.sh writes a few requests; dictionary: fuzz/http.dict.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "cli/http_request.h"
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
  const opscope::cli::RequestHeadScan scan = opscope::cli::ScanRequestHead(head);
  if (scan.head_size > size || (scan.head_size && scan.refuse)) __builtin_trap();
  if (scan.refuse && scan.refuse != 400 && scan.refuse != 414 && scan.refuse != 431) __builtin_trap();
  // The server reads no more than kMaxRequestHeadBytes: by then it must know.
  if (size >= opscope::cli::kMaxRequestHeadBytes && !scan.head_size && !scan.refuse) __builtin_trap();
  (void)opscope::cli::AnswerHttpRequest(head, dir, "127.0.0.1");
  (void)opscope::cli::AnswerHttpRequest(head, dir, "0.0.0.0");
  return 0;
}
