// File: device/cpu/checked_allocator.h
// Guard-page allocations for the cpu device's checked mode, and the fault
// handler that names the buffer an out-of-bounds access ran past.
//
// Layout of one allocation (pages):
//
//   [guard][ ... data pages ... ][guard]
//                  ^ptr ........^ptr+bytes is the first byte of the last guard
//
// The buffer's END is flush against a PROT_NONE page, so writing even one
// byte past it faults at once, at the bad address. The start is rounded down
// to fit, so a checked buffer is aligned only to the largest power of two
// dividing its size (a 4096-byte buffer is page-aligned, a 12-byte one only
// 4-aligned), not to the usual 64 bytes. An underflow faults in the leading
// guard once it runs past the slack at the start of the first data page.
//
//   OPSCOPE_ASSIGN_OR_RETURN(void* p, CheckedAllocate(4096));
//   LabelCheckedAllocation(p, "x");
//   InstallOutOfBoundsHandler();  // a fault near p now prints one line naming it
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "opscope/status.h"

namespace opscope {

// A live checked allocation. Plain data, so the fault handler can copy it.
struct AllocationInfo {
  static constexpr size_t kLabelSize = 64;
  uintptr_t begin = 0;           // what Allocate returned
  size_t bytes = 0;              // as requested
  uintptr_t mapping_begin = 0;   // the whole mapping, both guard pages included
  uintptr_t mapping_end = 0;
  char label[kLabelSize] = {};   // "" when unlabelled; truncated to fit
};

StatusOr<void*> CheckedAllocate(size_t bytes);
// Unmaps a checked allocation; false (and nothing done) when ptr is not one.
bool CheckedFree(void* ptr);
// How many checked allocations are live (cheap: lets Free skip the table).
int64_t LiveCheckedAllocations();
// Names a live checked allocation (e.g. the tensor it holds) for fault reports.
Status LabelCheckedAllocation(const void* ptr, std::string_view label);

// The live checked allocation whose mapping (guard pages included) holds addr.
// Async-signal-safe: no locks, no allocation.
std::optional<AllocationInfo> FindAllocationNear(const void* addr);

// Writes the one-line report for a fault at addr into buf (NUL-terminated,
// truncated to cap) and returns its length. Async-signal-safe. E.g.
//   opscope: out-of-bounds access at 0x7f..1004 : byte 5 past the end of a 4096-byte cpu allocation 0x7f..000
size_t FormatOutOfBoundsReport(const void* addr, char* buf, size_t cap);

// Installs (once) a SIGSEGV/SIGBUS handler that writes that line to stderr,
// then hands the fault on: to the handler that was there before (a sanitizer,
// a crash reporter), else to the default action, so the process still dies of
// the signal with a core dump.
void InstallOutOfBoundsHandler();

// Recovery (ops-debug run --checked): while on, an access to a guard page of
// a live checked allocation is not fatal. The handler opens that page (read
// and write), records the first access to it, and returns, so the kernel goes
// on and the run can say what it did. Off again, the opened pages are zeroed
// and closed. One watcher at a time.
struct GuardAccess {
  uintptr_t address = 0;       // the first faulting address in that page
  AllocationInfo allocation;   // the buffer it lies against
  bool write = false;          // a write (x86-64's page-fault error code); false: a read or unknown
  std::vector<unsigned char> past_end;  // the opened page's bytes, where it is the trailing guard (zeros unless written)
};
void SetGuardRecovery(bool on);
// The accesses since recovery was turned on (at most 64 pages), then closes the pages.
std::vector<GuardAccess> TakeGuardAccesses();

}  // namespace opscope
