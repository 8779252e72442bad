// The compact flag values of ops-debug (cli/flag_parsing.h): --input-shapes
// ("[4,256,64];[64]"), the dtype lists, --tunables ("block=256,vec=4") and
// the positive numbers. The first byte picks the parser, the rest is the text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cli/flag_parsing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace cli = opscope::cli;
  switch (data[0] % 4) {
    case 0: (void)cli::ParseShapeList("--input-shapes", text); break;
    case 1: (void)cli::ParseDTypeList("--dtypes", text); break;
    case 2: (void)cli::ParseIntAssignments("--tunables", text); break;
    case 3: (void)cli::ParsePositiveNumber("--peak-gflops", text, "GFLOP/s"); break;
  }
  return 0;
}
