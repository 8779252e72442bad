// File: device/cpu/block_cache.h
// Large buffers of the cpu device kept for reuse, as a GPU framework's
// caching allocator keeps device memory. Without it every call that makes a
// large output got it fresh from the kernel (glibc maps allocations past its
// threshold, up to 32 MiB, with mmap), and its kernel then paid a page fault
// per 4 KiB page on first touch: `ops-debug profile` measured Relu on 16 MiB
// at ~18x its memory bound, nearly all of it faults. A reused block is
// already mapped, so the kernel's time is the kernel's.
//
// Blocks of kMinBytes and more are rounded up to kGranule and kept, by exact
// rounded size, until `limit` bytes are cached; smaller ones go to malloc's
// own free lists. A reused block holds whatever its last owner wrote (as
// cudaMalloc'd memory does): callers that must see unwritten elements ask the
// dispatcher to poison outputs (RunOptions::poison_outputs).
// Off under AddressSanitizer, which must see every free to find a use after it.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>

namespace opscope {

class BlockCache {
 public:
  static constexpr size_t kMinBytes = size_t{1} << 20;
  static constexpr size_t kGranule = size_t{64} << 10;

  explicit BlockCache(size_t limit);
  ~BlockCache();  // frees every block it holds
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // nullptr on failure. Small requests are plain 64-byte aligned allocations.
  void* Allocate(size_t bytes);
  // Takes back what Allocate gave; false when `ptr` is not one of its blocks.
  bool Free(void* ptr);

  size_t cached_bytes() const;  // held for reuse now
  size_t reused() const;        // allocations served from the cache so far

 private:
  const size_t limit_;
  mutable std::mutex mu_;
  std::unordered_map<void*, size_t> live_;   // handed out, by rounded size
  std::multimap<size_t, void*> free_;        // kept for reuse
  size_t cached_ = 0, reused_ = 0;
};

}  // namespace opscope
