#include "analysis/profile/cache_flush.h"

#include <algorithm>
#include <cstring>

namespace opscope {

namespace {
constexpr int64_t kMinBytes = int64_t{8} << 20;
constexpr int64_t kMaxBytes = int64_t{1} << 30;  // a flush stays well under a second
constexpr int64_t kLine = 64;
}  // namespace

CacheFlusher::CacheFlusher(int64_t llc)
    : bytes_(std::clamp(2 * llc, kMinBytes, kMaxBytes)), buffer_(new char[bytes_]) {
  std::memset(buffer_.get(), 0, bytes_);
}

void CacheFlusher::Flush() {
  ++round_;
  char* p = buffer_.get();
  for (int64_t i = 0; i < bytes_; i += kLine) p[i] = static_cast<char>(round_ + i);
  // Read back so the compiler cannot drop the stores, and so the buffer, not
  // the kernel's data, is what the cache holds.
  volatile char sink = 0;
  char acc = 0;
  for (int64_t i = 0; i < bytes_; i += kLine) acc ^= p[i];
  sink = acc;
  (void)sink;
}

}  // namespace opscope
