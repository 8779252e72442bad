// The files of a capture session folder (capture/session.h): session.json
// (ReadSessionConfig), and the records programs leave there, runtime-<pid>.json
// and graph-<pid>-<n>.json, read by inspector-cli summary and path
// (graph::MergeSession, graph::LastSessionGraph). The first byte picks the
// file; the folder holds that one file, beside a valid session.json.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "capture/session.h"
#include "fuzz/fuzz_scratch.h"
#include "graph/export/session_export.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = opscope::fuzz::ScratchDir();
  static const char* const kFiles[] = {"session.json", "runtime-1.json", "graph-1-0.json"};
  if (size < 1) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const int which = data[0] % 3;
  for (const char* f : kFiles) opscope::fuzz::RemoveScratchFile(dir + "/" + f);
  if (which == 0) {
    opscope::fuzz::WriteScratchFile(dir + "/session.json", bytes);
    (void)opscope::ReadSessionConfig(dir);
    return 0;
  }
  opscope::fuzz::WriteScratchFile(
      dir + "/session.json", R"({"schema": "opscope.session/1", "collectors": {"graph": true, "runtime": true}})");
  opscope::fuzz::WriteScratchFile(dir + "/" + kFiles[which], bytes);
  (void)opscope::graph::MergeSession(dir);
  (void)opscope::graph::LastSessionGraph(dir);
  return 0;
}
