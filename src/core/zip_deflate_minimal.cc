// The minimal build's stand-in for zip_deflate.cc (no zlib there): the CRC
// that stored .npz members carry, computed here, and a refusal in one line for
// a deflated member, which np.savez_compressed writes and np.savez does not.
#include <array>

#include "core/zip_archive.h"

namespace opscope::zip {
namespace {

constexpr char kNoZlib[] =
    ": a deflated .npz member (np.savez_compressed) is not readable or writable in this build "
    "(the minimal build has no zlib): use np.savez, whose members are stored";

// CRC-32 as zip defines it: the reflected polynomial 0xEDB88320, a byte at a time.
constexpr std::array<uint32_t, 256> kCrcTable = [] {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}();

}  // namespace

uint32_t Crc32(uint32_t crc, std::string_view bytes) {
  uint32_t c = ~crc;
  for (unsigned char b : bytes) c = kCrcTable[(c ^ b) & 0xFF] ^ (c >> 8);
  return ~c;
}

StatusOr<std::string> Deflate(const std::vector<std::string_view>&, const std::string& name) {
  return UnimplementedError(name + kNoZlib);
}

Status Inflate(std::string_view, char*, size_t, const std::string& name) { return UnimplementedError(name + kNoZlib); }

StatusOr<std::string> InflatePrefix(std::string_view, size_t, const std::string& name) {
  return UnimplementedError(name + kNoZlib);
}

}  // namespace opscope::zip
