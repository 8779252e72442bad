// The zip container of .npz files (PKWARE's APPNOTE.TXT), as Python's zipfile
// writes it for np.savez and np.savez_compressed: stored or deflated members,
// zip64 extra fields and end records. The compression itself (and the
// CRC) is zlib's, in zip_deflate.cc.
#include "core/zip_archive.h"

#include <algorithm>

#include "core/little_endian.h"

namespace opscope::zip {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kVersionZip64 = 45;
constexpr uint16_t kMadeByUnix = 3 << 8;
constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // fixed: same arrays, same bytes
// Python's zipfile switches to zip64 fields past 2^31-1 (some readers use signed 32-bit fields).
constexpr uint64_t kZip64Limit = 0x7fffffff;

// Replaces the 32-bit fields that hold the 0xffffffff marker by their values
// from the zip64 extra field, which lists them in this fixed order.
static Status ApplyZip64Extra(std::string_view extra, ZipEntry& e, bool size32_max, bool csize32_max,
                       bool offset32_max, const std::string& where) {
  while (extra.size() >= 4) {
    uint16_t id = GetLE16(extra, 0), len = GetLE16(extra, 2);
    if (static_cast<size_t>(len) + 4 > extra.size()) break;
    if (id == kZip64ExtraId) {
      std::string_view d = extra.substr(4, len);
      size_t at = 0;
      auto take = [&](uint64_t& field, const char* what) -> Status {
        if (at + 8 > d.size()) return DataLossError(where + ": zip64 extra field lacks the " + what);
        field = GetLE64(d, at);
        at += 8;
        return Status::Ok();
      };
      if (size32_max) OPSCOPE_RETURN_IF_ERROR(take(e.uncompressed, "uncompressed size"));
      if (csize32_max) OPSCOPE_RETURN_IF_ERROR(take(e.compressed, "compressed size"));
      if (offset32_max) OPSCOPE_RETURN_IF_ERROR(take(e.local_offset, "local header offset"));
      return Status::Ok();
    }
    extra.remove_prefix(4 + len);
  }
  if (size32_max || csize32_max || offset32_max) {
    return DataLossError(where + ": a size or offset says 'see zip64 extra field', which is missing");
  }
  return Status::Ok();
}

StatusOr<std::vector<ZipEntry>> ReadCentralDirectory(std::string_view zip, const std::string& path) {
  auto corrupt = [&](const std::string& why) { return DataLossError(path + ": corrupt zip archive: " + why); };
  if (zip.size() < 22) {
    return InvalidArgumentError(path + ": not a .npz (zip) file: " + std::to_string(zip.size()) +
                                " bytes is too short for a zip archive");
  }
  // The end record is last, followed only by a comment of at most 65535 bytes.
  size_t end = std::string_view::npos;
  size_t lowest = zip.size() > 22 + 0xffff ? zip.size() - 22 - 0xffff : 0;
  for (size_t at = zip.size() - 22 + 1; at-- > lowest;) {
    if (GetLE32(zip, at) == kEndSig) {
      end = at;
      break;
    }
  }
  if (end == std::string_view::npos) {
    return InvalidArgumentError(path + ": not a .npz (zip) file: no end-of-central-directory record");
  }
  uint64_t count = GetLE16(zip, end + 10);
  uint64_t cd_size = GetLE32(zip, end + 12);
  uint64_t cd_offset = GetLE32(zip, end + 16);
  if (end >= 20 && GetLE32(zip, end - 20) == kEnd64LocatorSig) {
    uint64_t end64 = GetLE64(zip, end - 20 + 8);
    if (zip.size() < 56 || end64 > zip.size() - 56 || GetLE32(zip, end64) != kEnd64Sig) return corrupt("bad zip64 end record");
    count = GetLE64(zip, end64 + 32);
    cd_size = GetLE64(zip, end64 + 40);
    cd_offset = GetLE64(zip, end64 + 48);
  }
  if (cd_offset > zip.size() || cd_size > zip.size() - cd_offset) {
    return corrupt("the central directory (" + std::to_string(cd_size) + " bytes at offset " +
                   std::to_string(cd_offset) + ") lies past the end of the " + std::to_string(zip.size()) +
                   "-byte file; is it truncated?");
  }
  std::vector<ZipEntry> entries;
  size_t at = cd_offset;
  const size_t cd_end = cd_offset + cd_size;
  for (uint64_t i = 0; i < count; ++i) {
    if (at + 46 > cd_end || GetLE32(zip, at) != kCentralSig) {
      return corrupt("central directory entry " + std::to_string(i) + " of " + std::to_string(count) + " is bad");
    }
    ZipEntry e;
    e.flags = GetLE16(zip, at + 8);
    e.method = GetLE16(zip, at + 10);
    e.crc = GetLE32(zip, at + 16);
    uint32_t csize = GetLE32(zip, at + 20), usize = GetLE32(zip, at + 24);
    uint16_t name_len = GetLE16(zip, at + 28), extra_len = GetLE16(zip, at + 30), comment_len = GetLE16(zip, at + 32);
    uint32_t offset = GetLE32(zip, at + 42);
    if (at + 46 + name_len + extra_len + comment_len > cd_end) return corrupt("central directory entry overruns");
    e.name = std::string(zip.substr(at + 46, name_len));
    e.compressed = csize;
    e.uncompressed = usize;
    e.local_offset = offset;
    OPSCOPE_RETURN_IF_ERROR(ApplyZip64Extra(zip.substr(at + 46 + name_len, extra_len), e, usize == 0xffffffffu,
                                            csize == 0xffffffffu, offset == 0xffffffffu,
                                            path + " member " + e.name));
    entries.push_back(std::move(e));
    at += 46 + name_len + extra_len + comment_len;
  }
  return entries;
}

// The member's stored bytes (compressed or not) inside the archive.
StatusOr<std::string_view> MemberData(std::string_view zip, const ZipEntry& e, const std::string& where) {
  if (e.local_offset > zip.size() || zip.size() - e.local_offset < 30 || GetLE32(zip, e.local_offset) != kLocalSig) {
    return DataLossError(where + ": no local file header at offset " + std::to_string(e.local_offset));
  }
  // The local header's own sizes may be zero (data descriptor) or zip64 markers:
  // the central directory is authoritative, as in Python's zipfile.
  uint64_t start = e.local_offset + 30 + GetLE16(zip, e.local_offset + 26) + GetLE16(zip, e.local_offset + 28);
  if (start > zip.size() || e.compressed > zip.size() - start) {
    return DataLossError(where + ": truncated: the zip directory says " + std::to_string(e.compressed) +
                         " bytes of data, the file has " +
                         std::to_string(start > zip.size() ? 0 : zip.size() - start) + " after its header");
  }
  return zip.substr(start, e.compressed);
}

std::string MethodName(uint16_t m) {
  switch (m) {
    case 12: return "bzip2";
    case 14: return "LZMA";
    case 93: return "Zstandard";
    case 99: return "AES encryption";
    default: return "method " + std::to_string(m);
  }
}

std::string LocalHeader(const ZipMember& m, uint16_t method, uint16_t flags) {
  // Sizes always go in a zip64 extra field, as numpy's savez does (force_zip64).
  std::string h;
  PutLE(h, kLocalSig, 4);
  PutLE(h, kVersionZip64, 2);
  PutLE(h, flags, 2);
  PutLE(h, method, 2);
  PutLE(h, 0, 2);  // time 00:00:00
  PutLE(h, kDosDate1980, 2);
  PutLE(h, m.crc, 4);
  PutLE(h, 0xffffffffu, 4);
  PutLE(h, 0xffffffffu, 4);
  PutLE(h, m.name.size(), 2);
  PutLE(h, 20, 2);
  h += m.name;
  PutLE(h, kZip64ExtraId, 2);
  PutLE(h, 16, 2);
  PutLE(h, m.size, 8);
  PutLE(h, m.csize, 8);
  return h;
}

std::string CentralHeader(const ZipMember& m, uint16_t method, uint16_t flags) {
  bool big_sizes = m.size > kZip64Limit || m.csize > kZip64Limit;
  bool big_offset = m.offset > kZip64Limit;
  std::string extra;
  if (big_sizes || big_offset) {
    std::string fields;
    if (big_sizes) {
      PutLE(fields, m.size, 8);
      PutLE(fields, m.csize, 8);
    }
    if (big_offset) PutLE(fields, m.offset, 8);
    PutLE(extra, kZip64ExtraId, 2);
    PutLE(extra, fields.size(), 2);
    extra += fields;
  }
  std::string h;
  PutLE(h, kCentralSig, 4);
  PutLE(h, kMadeByUnix | kVersionZip64, 2);
  PutLE(h, kVersionZip64, 2);
  PutLE(h, flags, 2);
  PutLE(h, method, 2);
  PutLE(h, 0, 2);
  PutLE(h, kDosDate1980, 2);
  PutLE(h, m.crc, 4);
  PutLE(h, big_sizes ? 0xffffffffu : m.csize, 4);
  PutLE(h, big_sizes ? 0xffffffffu : m.size, 4);
  PutLE(h, m.name.size(), 2);
  PutLE(h, extra.size(), 2);
  PutLE(h, 0, 2);  // comment
  PutLE(h, 0, 2);  // disk
  PutLE(h, 0, 2);  // internal attributes
  PutLE(h, uint64_t{0100644} << 16, 4);  // a regular file, rw-r--r--
  PutLE(h, big_offset ? 0xffffffffu : m.offset, 4);
  return h + m.name + extra;
}

std::string EndRecords(uint64_t count, uint64_t cd_offset, uint64_t cd_size) {
  std::string out;
  if (count >= 0xffff || cd_offset > kZip64Limit || cd_size > kZip64Limit) {
    uint64_t end64_offset = cd_offset + cd_size;
    PutLE(out, kEnd64Sig, 4);
    PutLE(out, 44, 8);  // size of the rest of this record
    PutLE(out, kMadeByUnix | kVersionZip64, 2);
    PutLE(out, kVersionZip64, 2);
    PutLE(out, 0, 4);
    PutLE(out, 0, 4);
    PutLE(out, count, 8);
    PutLE(out, count, 8);
    PutLE(out, cd_size, 8);
    PutLE(out, cd_offset, 8);
    PutLE(out, kEnd64LocatorSig, 4);
    PutLE(out, 0, 4);
    PutLE(out, end64_offset, 8);
    PutLE(out, 1, 4);
  }
  PutLE(out, kEndSig, 4);
  PutLE(out, 0, 2);
  PutLE(out, 0, 2);
  PutLE(out, std::min<uint64_t>(count, 0xffff), 2);
  PutLE(out, std::min<uint64_t>(count, 0xffff), 2);
  PutLE(out, std::min<uint64_t>(cd_size, 0xffffffffu), 4);
  PutLE(out, std::min<uint64_t>(cd_offset, 0xffffffffu), 4);
  PutLE(out, 0, 2);
  return out;
}


}  // namespace opscope::zip
