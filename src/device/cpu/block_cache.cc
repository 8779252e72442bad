#include "device/cpu/block_cache.h"

#include <algorithm>
#include <cstdlib>

#include "core/asan.h"

namespace opscope {

namespace {

#if defined(OPSCOPE_ASAN)
constexpr bool kCaching = false;
#else
constexpr bool kCaching = true;
#endif

size_t Rounded(size_t bytes, size_t to) { return std::max<size_t>((bytes + to - 1) / to * to, to); }

}  // namespace

BlockCache::BlockCache(size_t limit) : limit_(kCaching ? limit : 0) {}

BlockCache::~BlockCache() {
  for (auto& [size, ptr] : free_) std::free(ptr);
}

void* BlockCache::Allocate(size_t bytes) {
  if (limit_ == 0 || bytes < kMinBytes) return std::aligned_alloc(64, Rounded(bytes, 64));
  const size_t size = Rounded(bytes, kGranule);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = free_.find(size); it != free_.end()) {
      void* p = it->second;
      free_.erase(it);
      cached_ -= size;
      ++reused_;
      live_.emplace(p, size);
      return p;
    }
  }
  void* p = std::aligned_alloc(64, size);
  if (p == nullptr) {
    // Memory is short: give back what is cached and try once more.
    std::multimap<size_t, void*> drop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      drop.swap(free_);
      cached_ = 0;
    }
    for (auto& [s, q] : drop) std::free(q);
    p = std::aligned_alloc(64, size);
    if (p == nullptr) return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  live_.emplace(p, size);
  return p;
}

bool BlockCache::Free(void* ptr) {
  size_t size = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(ptr);
    if (it == live_.end()) return false;
    size = it->second;
    live_.erase(it);
    if (cached_ + size <= limit_) {
      free_.emplace(size, ptr);
      cached_ += size;
      return true;
    }
  }
  std::free(ptr);
  return true;
}

size_t BlockCache::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

size_t BlockCache::reused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reused_;
}

}  // namespace opscope
