#include "core/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <climits>

namespace opscope {
namespace {

// zlib counts in uInt: feed it at most this much at a time.
constexpr size_t kStep = size_t{1} << 30;

}  // namespace

std::string Gzip(std::string_view data, int level) {
  z_stream zs{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out;
  out.resize(deflateBound(&zs, static_cast<uLong>(std::min(data.size(), kStep))) + 64);
  size_t in_at = 0, out_at = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    const size_t in_n = std::min(data.size() - in_at, kStep);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in_at));
    zs.avail_in = static_cast<uInt>(in_n);
    const int flush = in_at + in_n == data.size() ? Z_FINISH : Z_NO_FLUSH;
    do {
      if (out.size() - out_at < 64 * 1024) out.resize(out.size() * 2 + 64 * 1024);
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_at);
      zs.avail_out = static_cast<uInt>(std::min(out.size() - out_at, kStep));
      const uInt before = zs.avail_out;
      rc = deflate(&zs, flush);
      out_at += before - zs.avail_out;
    } while (zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    in_at += in_n - zs.avail_in;
  }
  deflateEnd(&zs);
  out.resize(out_at);
  return out;
}

StatusOr<std::string> Gunzip(std::string_view gz, size_t max_bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return InternalError("zlib inflateInit2 failed");
  std::string out;
  size_t in_at = 0, out_at = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (out.size() - out_at < 64 * 1024) out.resize(std::max<size_t>(out.size() * 2, 256 * 1024));
    const size_t in_n = std::min(gz.size() - in_at, kStep);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data() + in_at));
    zs.avail_in = static_cast<uInt>(in_n);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_at);
    zs.avail_out = static_cast<uInt>(std::min(out.size() - out_at, kStep));
    const uInt before = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    out_at += before - zs.avail_out;
    in_at += in_n - zs.avail_in;
    if (out_at > max_bytes) {
      inflateEnd(&zs);
      return InvalidArgumentError("gzip data inflates past " + std::to_string(max_bytes) + " bytes");
    }
    if (rc == Z_BUF_ERROR && in_at == gz.size()) rc = Z_DATA_ERROR;  // no input left and not at the end
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      inflateEnd(&zs);
      return InvalidArgumentError(rc == Z_DATA_ERROR ? "not gzip data, or it ends early" : "zlib inflate failed");
    }
  }
  inflateEnd(&zs);
  out.resize(out_at);
  return out;
}

}  // namespace opscope
