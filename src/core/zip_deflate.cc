// The zlib half of the zip container (core/zip_archive.h declares these):
// CRC-32, raw deflate and inflate of .npz members. The minimal build, which
// has no zlib, compiles zip_deflate_minimal.cc instead.
#include <zlib.h>

#include <algorithm>

#include "core/zip_archive.h"

namespace opscope::zip {

uint32_t Crc32(uint32_t crc, std::string_view bytes) {
  return static_cast<uint32_t>(
      crc32_z(crc, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

// Raw deflate (no zlib header), as zip method 8 wants.
StatusOr<std::string> Deflate(const std::vector<std::string_view>& pieces, const std::string& name) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return InternalError("zlib deflateInit2 failed for " + name);
  }
  std::string out;
  constexpr size_t kChunk = size_t{1} << 30;  // z_stream counts are 32-bit
  size_t produced = 0;
  for (size_t p = 0; p < pieces.size(); ++p) {
    std::string_view in = pieces[p];
    bool last_piece = p + 1 == pieces.size();
    do {
      size_t take = std::min(in.size(), kChunk);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      zs.avail_in = static_cast<uInt>(take);
      in.remove_prefix(take);
      int flush = last_piece && in.empty() ? Z_FINISH : Z_NO_FLUSH;
      int rc;
      do {
        if (out.size() - produced < 65536) out.resize(std::max<size_t>(out.size() * 2, produced + (1 << 20)));
        size_t room = std::min(out.size() - produced, kChunk);
        zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
        zs.avail_out = static_cast<uInt>(room);
        rc = deflate(&zs, flush);
        produced += room - zs.avail_out;
        if (rc == Z_STREAM_ERROR) {
          deflateEnd(&zs);
          return InternalError("zlib deflate failed for " + name);
        }
      } while (zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    } while (!in.empty());
  }
  deflateEnd(&zs);
  out.resize(produced);
  return out;
}

Status Inflate(std::string_view in, char* out, size_t out_size, const std::string& name) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return InternalError("zlib inflateInit2 failed for " + name);
  constexpr size_t kChunk = size_t{1} << 30;
  size_t in_pos = 0, out_pos = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    size_t in_take = std::min(in.size() - in_pos, kChunk);
    size_t out_room = std::min(out_size - out_pos, kChunk);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_pos));
    zs.avail_in = static_cast<uInt>(in_take);
    zs.next_out = reinterpret_cast<Bytef*>(out + out_pos);
    zs.avail_out = static_cast<uInt>(out_room);
    rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_take - zs.avail_in;
    out_pos += out_room - zs.avail_out;
    if (rc == Z_OK || rc == Z_STREAM_END) continue;
    std::string why = rc != Z_BUF_ERROR ? std::string("corrupt deflated data (") + (zs.msg ? zs.msg : "zlib error") + ")"
                      : out_pos == out_size ? "deflated data is longer than the " + std::to_string(out_size) +
                                                  " bytes the zip directory says"
                                            : std::string("deflated data is truncated");
    inflateEnd(&zs);
    return DataLossError(name + ": " + why);
  }
  inflateEnd(&zs);
  if (out_pos != out_size) {
    return DataLossError(name + ": deflated data gives " + std::to_string(out_pos) + " bytes, the zip directory says " +
                         std::to_string(out_size));
  }
  return Status::Ok();
}

// The first `n` bytes the deflated data gives (fewer when it ends sooner),
// without inflating the rest: enough to read a member's .npy header before
// trusting its declared size.
StatusOr<std::string> InflatePrefix(std::string_view in, size_t n, const std::string& name) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return InternalError("zlib inflateInit2 failed for " + name);
  std::string out(n, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(std::min(in.size(), size_t{1} << 30));
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(n);
  int rc = Z_OK;
  while (zs.avail_out > 0 && rc == Z_OK) rc = inflate(&zs, Z_NO_FLUSH);
  const size_t got = n - zs.avail_out;
  const char* msg = zs.msg;
  inflateEnd(&zs);
  if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && got == n)) {
    return DataLossError(name + ": corrupt deflated data (" + (msg ? msg : "zlib error") + ")");
  }
  out.resize(got);
  return out;
}

}  // namespace opscope::zip
