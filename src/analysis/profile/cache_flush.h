// File: analysis/profile/cache_flush.h
// --cold-cache: before a timed call, every line of the last-level cache is
// evicted by streaming through a buffer twice its size (written, so dirty
// lines of the kernel's outputs are written back too, then read).
#pragma once

#include <cstdint>
#include <memory>

namespace opscope {

class CacheFlusher {
 public:
  explicit CacheFlusher(int64_t last_level_cache_bytes);
  int64_t bytes() const { return bytes_; }
  void Flush();

 private:
  int64_t bytes_;
  std::unique_ptr<char[]> buffer_;
  uint64_t round_ = 0;
};

}  // namespace opscope
