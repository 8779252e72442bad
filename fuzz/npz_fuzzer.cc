// The .npz reader (core/npy.cc ReadNpz) on arbitrary bytes: the zip central
// directory, zip64 extras, local headers, inflate, then each member's .npy.
// ReadNpz takes a path (it maps the archive), so each input is a file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_scratch.h"
#include "opscope/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = opscope::fuzz::ScratchDir() + "/fuzz.npz";
  opscope::fuzz::WriteScratchFile(path, std::string_view(reinterpret_cast<const char*>(data), size));
  (void)opscope::ReadNpz(path);
  return 0;
}
