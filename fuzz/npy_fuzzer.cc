// The .npy reader (core/npy.cc) on arbitrary bytes: the header literal, the
// dtype and shape checks, the size check against the data. Seeds: every .npy
// of examples/ and tests/ (fuzz/make_corpus.sh).
#include <cstddef>
#include <cstdint>
#include <string>

#include "opscope/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  opscope::StatusOr<opscope::Tensor> t = opscope::ParseNpy(bytes, "fuzz.npy");
  if (t.ok()) {
    // What was accepted must write back: a tensor that serialises wrongly is a bug too.
    (void)opscope::SerializeNpy(*t);
  }
  return 0;
}
