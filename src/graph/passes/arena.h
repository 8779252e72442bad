// File: graph/passes/arena.h
// Offsets in one block of memory for buffers that come and go in a known
// order: a new one takes the smallest free block that fits (best fit), and
// the arena grows only when none does; a freed block merges with free
// neighbours. The compiler's memory plan (memory_planning.cc) and the
// runtime's per-stream arenas (executor.cc) place values with it.
//
//   Arena a;
//   const int64_t x = a.Allocate(256), y = a.Allocate(64);
//   a.Free(x, 256);
//   a.Allocate(128);  // == x: the freed block, split
#pragma once

#include <cstdint>
#include <iterator>
#include <map>

namespace opscope::graph {

class Arena {
 public:
  int64_t Allocate(int64_t size) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second >= size && (best == free_.end() || it->second < best->second)) best = it;
    }
    if (best != free_.end()) {
      const int64_t offset = best->first, left = best->second - size;
      free_.erase(best);
      if (left > 0) free_[offset + size] = left;
      return offset;
    }
    // A free block at the end of the arena grows instead of leaving a hole.
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == size_) {
        const int64_t offset = last->first;
        free_.erase(last);
        size_ = offset + size;
        return offset;
      }
    }
    const int64_t offset = size_;
    size_ += size;
    return offset;
  }

  void Free(int64_t offset, int64_t size) {
    auto it = free_.emplace(offset, size).first;
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }

  int64_t size() const { return size_; }

 private:
  std::map<int64_t, int64_t> free_;  // offset -> size
  int64_t size_ = 0;
};

}  // namespace opscope::graph
