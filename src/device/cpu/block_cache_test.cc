// The cpu device's cache of large blocks: what it reuses, what it does not.
#include "device/cpu/block_cache.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "core/asan.h"

namespace opscope {
namespace {

#if defined(OPSCOPE_ASAN)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif

constexpr size_t kMiB = size_t{1} << 20;

TEST(BlockCache, ALargeBlockFreedIsHandedBackForTheSameRoundedSize) {
  if (kAsan) GTEST_SKIP() << "the cache is off under AddressSanitizer, which must see every free";
  BlockCache cache(64 * kMiB);
  void* a = cache.Allocate(4 * kMiB + 3);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  ASSERT_TRUE(cache.Free(a));
  EXPECT_EQ(cache.cached_bytes(), 4 * kMiB + BlockCache::kGranule);
  void* b = cache.Allocate(4 * kMiB + 100);  // the same 64 KiB granule
  EXPECT_EQ(b, a);
  EXPECT_EQ(cache.reused(), 1u);
  EXPECT_EQ(cache.cached_bytes(), 0u);
  void* c = cache.Allocate(8 * kMiB);  // another size: a new block
  EXPECT_NE(c, a);
  EXPECT_TRUE(cache.Free(b));
  EXPECT_TRUE(cache.Free(c));
}

// Under AddressSanitizer the cache is off: every block is malloc's, so that a
// use after free is caught.
TEST(BlockCache, UnderAddressSanitizerNothingIsKept) {
  if (!kAsan) GTEST_SKIP() << "only under AddressSanitizer";
  BlockCache cache(64 * kMiB);
  void* big = cache.Allocate(4 * kMiB);
  ASSERT_NE(big, nullptr);
  EXPECT_FALSE(cache.Free(big)) << "the cache must not own blocks it does not keep";
  std::free(big);
  EXPECT_EQ(cache.cached_bytes(), 0u);
}

TEST(BlockCache, SmallBlocksAndBlocksPastTheLimitAreNotKept) {
  if (kAsan) GTEST_SKIP() << "the cache is off under AddressSanitizer (UnderAddressSanitizerNothingIsKept)";
  BlockCache cache(6 * kMiB);
  void* small = cache.Allocate(1000);
  ASSERT_NE(small, nullptr);
  EXPECT_FALSE(cache.Free(small)) << "small blocks are malloc's";
  std::free(small);
  void* a = cache.Allocate(4 * kMiB);
  void* b = cache.Allocate(4 * kMiB);
  EXPECT_TRUE(cache.Free(a));
  EXPECT_TRUE(cache.Free(b));  // freed for real: 8 MiB would pass the 6 MiB limit
  EXPECT_LE(cache.cached_bytes(), 6 * kMiB);
  int x = 0;
  EXPECT_FALSE(cache.Free(&x)) << "a pointer it never gave";
}

}  // namespace
}  // namespace opscope
