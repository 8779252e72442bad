// A run folder as the web UI's server reads it (report/report_dir.h): one of
// graph.json, trace.json, summary.json, roofline.svg (CheckInlineSvg) or
// diagnosis.json (converted to a timeline by the library) replaced by the
// input, the others those of tests/golden; then ReadReportDir and the page
// BuildReportHtml makes of it (what `export --format html` and `serve` do).
// The first byte picks the file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "report/report_page.h"
#include "fuzz/fuzz_scratch.h"

namespace {

namespace fz = opscope::fuzz;

struct Folders {
  std::string run;    // graph.json, trace.json, summary.json
  std::string alone;  // a trace-only folder: diagnosis.json
};

const Folders& MakeFolders() {
  static const Folders f = [] {
    Folders f{fz::ScratchDir() + "/run", fz::ScratchDir() + "/alone"};
    std::filesystem::create_directories(f.run);
    std::filesystem::create_directories(f.alone);
    return f;
  }();
  return f;
}

void WriteGolden(const std::string& dir, const char* name) {
  const std::string golden = std::string(OPSCOPE_SOURCE_DIR) + "/tests/golden/const_if." + name;
  fz::WriteScratchFile(dir + "/" + name, fz::ReadWholeFile(golden));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kFiles[] = {"graph.json", "trace.json", "summary.json", "roofline.svg",
                                       "diagnosis.json"};
  if (size < 1) return 0;
  const Folders& f = MakeFolders();
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const int which = data[0] % 5;
  std::string dir = f.run;
  if (which == 4) {
    dir = f.alone;
  } else {
    for (const char* name : {"graph.json", "trace.json", "summary.json"}) WriteGolden(f.run, name);
    fz::RemoveScratchFile(f.run + "/roofline.svg");
  }
  fz::WriteScratchFile(dir + "/" + kFiles[which], bytes);
  opscope::StatusOr<opscope::ReportData> report = opscope::ReadReportDir(dir);
  if (report.ok()) (void)opscope::BuildReportHtml(*report);
  return 0;
}
