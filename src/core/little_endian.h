// File: core/little_endian.h
// Little-endian fields of the file formats we read (.npy headers, zip
// records), at any alignment. The caller has checked the bytes are there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace opscope {

inline uint16_t GetLE16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(b[at]) | (static_cast<unsigned char>(b[at + 1]) << 8));
}
inline uint32_t GetLE32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}
inline uint64_t GetLE64(std::string_view b, size_t at) {
  return static_cast<uint64_t>(GetLE32(b, at)) | (static_cast<uint64_t>(GetLE32(b, at + 4)) << 32);
}
// Appends the low `bytes` bytes of v.
inline void PutLE(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace opscope
