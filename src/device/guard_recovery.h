// File: device/guard_recovery.h
// `ops-debug run --checked`: a kernel that runs into a guard page of a cpu
// device's checked allocation is not killed by SIGSEGV while a GuardRecovery
// watches its launch; the page is opened, the first access to it recorded,
// and the run names it afterwards as a finding, with report.json written.
//
//   GuardRecovery watch(device);            // nothing on a device without guard pages
//   ... launch ...
//   for (const GuardedAccess& a : watch.Take()) ... a.begin, a.past_end, a.write ...
#pragma once

#include <cstdint>
#include <vector>

#include "opscope/device.h"

namespace opscope {

struct GuardedAccess {
  uintptr_t address = 0;        // the first faulting address in that guard page
  uintptr_t begin = 0;          // the buffer it lies against
  uint64_t bytes = 0;
  bool write = false;           // false: a read, or not known (only x86-64 tells)
  std::vector<unsigned char> past_end;  // the page after the end, where the access went there (zeros unless written)
  bool beyond_end() const { return address >= begin + bytes; }
};

class GuardRecovery {
 public:
  explicit GuardRecovery(Device* device);
  ~GuardRecovery();
  GuardRecovery(const GuardRecovery&) = delete;
  GuardRecovery& operator=(const GuardRecovery&) = delete;
  // The accesses so far; the pages are closed again.
  std::vector<GuardedAccess> Take();

 private:
  bool on_ = false;
};

}  // namespace opscope
