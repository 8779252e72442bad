#include "device/guard_recovery.h"

#include "device/cpu/checked_allocator.h"

namespace opscope {

GuardRecovery::GuardRecovery(Device* device)
    : on_(device != nullptr && device->checked_allocation() && device->backend() == "cpu") {
  if (on_) SetGuardRecovery(true);
}

GuardRecovery::~GuardRecovery() {
  if (!on_) return;
  SetGuardRecovery(false);
  TakeGuardAccesses();
}

std::vector<GuardedAccess> GuardRecovery::Take() {
  std::vector<GuardedAccess> out;
  if (!on_) return out;
  for (const GuardAccess& g : TakeGuardAccesses()) {
    out.push_back({.address = g.address, .begin = g.allocation.begin, .bytes = g.allocation.bytes, .write = g.write,
                   .past_end = g.past_end});
  }
  return out;
}

}  // namespace opscope
