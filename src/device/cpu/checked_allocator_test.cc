#include "device/cpu/checked_allocator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace opscope {
namespace {

uintptr_t Addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(CheckedAllocator, BufferEndsFlushAgainstTheGuardPage) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (size_t bytes : {size_t{1}, size_t{12}, size_t{4096}, size_t{5000}, size_t{0}}) {
    auto p = CheckedAllocate(bytes);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ((Addr(*p) + bytes) % page, 0u) << bytes << " bytes";
    std::memset(*p, 0xab, bytes);  // all of it is writable
    auto info = FindAllocationNear(*p);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->begin, Addr(*p));
    EXPECT_EQ(info->bytes, bytes);
    EXPECT_GE(info->mapping_end, Addr(*p) + bytes + page) << "a whole guard page follows";
    EXPECT_TRUE(CheckedFree(*p));
    EXPECT_FALSE(FindAllocationNear(*p).has_value()) << "freed allocations leave the table";
  }
}

TEST(CheckedAllocator, AlignmentFollowsTheSize) {
  auto a = CheckedAllocate(4096);
  auto b = CheckedAllocate(12);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Addr(*a) % 4096, 0u);
  EXPECT_EQ(Addr(*b) % 4, 0u);
  EXPECT_TRUE(CheckedFree(*a));
  EXPECT_TRUE(CheckedFree(*b));
}

TEST(CheckedAllocator, FreeRefusesForeignPointers) {
  int x = 0;
  EXPECT_FALSE(CheckedFree(&x));
  EXPECT_FALSE(CheckedFree(nullptr));
  auto p = CheckedAllocate(64);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(CheckedFree(static_cast<char*>(*p) + 1)) << "only the start frees";
  EXPECT_TRUE(CheckedFree(*p));
  EXPECT_FALSE(CheckedFree(*p)) << "double free is refused";
}

TEST(CheckedAllocator, ReportNamesTheBufferAndTheDistance) {
  auto p = CheckedAllocate(4096);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(LabelCheckedAllocation(*p, "relu.x").ok());
  char buf[256];
  const char* base = static_cast<const char*>(*p);
  size_t n = FormatOutOfBoundsReport(base + 4096 + 4, buf, sizeof(buf));
  std::string line(buf, n);
  char expect_addr[32];
  snprintf(expect_addr, sizeof(expect_addr), "%p", static_cast<const void*>(base + 4100));
  char expect_base[32];
  snprintf(expect_base, sizeof(expect_base), "%p", *p);
  EXPECT_EQ(line, std::string("opscope: out-of-bounds access at ") + expect_addr +
                      " : byte 5 past the end of a 4096-byte cpu allocation " + expect_base + " (relu.x)");
  line.assign(buf, FormatOutOfBoundsReport(base - 8, buf, sizeof(buf)));
  EXPECT_NE(line.find(": byte 8 before the start of a 4096-byte cpu allocation"), std::string::npos) << line;
  // Truncation keeps the buffer a terminated string.
  char tiny[10];
  size_t t = FormatOutOfBoundsReport(base + 4096, tiny, sizeof(tiny));
  EXPECT_EQ(t, 9u);
  EXPECT_EQ(std::strlen(tiny), 9u);
  EXPECT_TRUE(CheckedFree(*p));
  line.assign(buf, FormatOutOfBoundsReport(base + 4096, buf, sizeof(buf)));
  EXPECT_NE(line.find("not near any checked cpu allocation"), std::string::npos) << line;
}

TEST(CheckedAllocator, LabelNeedsALiveAllocation) {
  int x;
  Status st = LabelCheckedAllocation(&x, "nope");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace opscope
