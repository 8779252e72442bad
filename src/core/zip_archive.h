// File: core/zip_archive.h
// The zip container of .npz files: its central directory read from an
// archive in memory, a member's bytes found and inflated, and the records a
// writer puts around each member. core/npy.cc puts .npy members in it.
//
//   OPSCOPE_ASSIGN_OR_RETURN(auto entries, zip::ReadCentralDirectory(bytes, path));
//   OPSCOPE_ASSIGN_OR_RETURN(std::string_view raw, zip::MemberData(bytes, entries[0], where));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/status.h"

namespace opscope::zip {

constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;

// One member as the central directory lists it, zip64 fields applied.
struct ZipEntry {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0, uncompressed = 0, local_offset = 0;
};

// The directory of an archive held in `zip`; errors name `path`.
StatusOr<std::vector<ZipEntry>> ReadCentralDirectory(std::string_view zip, const std::string& path);
// The member's stored bytes (compressed or not) inside the archive.
StatusOr<std::string_view> MemberData(std::string_view zip, const ZipEntry& e, const std::string& where);
// "bzip2", "LZMA", ...: a compression method opscope does not read, named.
std::string MethodName(uint16_t method);

uint32_t Crc32(uint32_t crc, std::string_view bytes);
// Raw deflate (no zlib header) of the pieces one after another, as method 8 wants.
StatusOr<std::string> Deflate(const std::vector<std::string_view>& pieces, const std::string& name);
// Inflates all of `in` into exactly out_size bytes at `out`.
Status Inflate(std::string_view in, char* out, size_t out_size, const std::string& name);
// The first `n` bytes the deflated data gives (fewer when it ends sooner),
// without inflating the rest: enough to read a member's header before
// trusting its declared size.
StatusOr<std::string> InflatePrefix(std::string_view in, size_t n, const std::string& name);

// What the records around one written member say of it.
struct ZipMember {
  std::string name;
  uint32_t crc = 0;
  uint64_t size = 0, csize = 0, offset = 0;  // offset: of its local header
};
// The local header before the member's data. Sizes always go in a zip64
// extra field, as numpy's savez does (force_zip64).
std::string LocalHeader(const ZipMember& m, uint16_t method, uint16_t flags);
// The member's entry in the central directory.
std::string CentralHeader(const ZipMember& m, uint16_t method, uint16_t flags);
// The end records (zip64 ones too when the counts or offsets need them).
std::string EndRecords(uint64_t count, uint64_t cd_offset, uint64_t cd_size);

}  // namespace opscope::zip
