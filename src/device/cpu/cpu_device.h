// File: device/cpu/cpu_device.h
// The `cpu` backend: a real device on the host. Streams are worker threads
// with queues (cpu_stream.h), a kernel's blocks run on a shared thread pool
// (thread_pool.h), events carry steady_clock timestamps (cpu_event.h), and in
// checked mode every buffer ends at a guard page (checked_allocator.h).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "device/cpu/block_cache.h"
#include "device/cpu/cpu_stream.h"
#include "device/cpu/thread_pool.h"
#include "opscope/device.h"

namespace opscope {

// "1": every cpu device this process creates starts in checked mode.
inline constexpr char kCheckedAllocationEnv[] = "OPSCOPE_CHECKED_ALLOCATION";

class CpuDevice : public Device {
 public:
  // `threads`: compute units (pool threads + the launching thread); 0 = all
  // hardware threads.
  explicit CpuDevice(int threads = 0);
  ~CpuDevice() override;

  const DeviceInfo& info() const override { return info_; }
  bool host_accessible() const override { return true; }

  // 64-byte aligned; in checked mode see checked_allocator.h for alignment.
  StatusOr<void*> Allocate(size_t bytes) override;
  void Free(void* ptr) override;  // either kind, whatever the mode is now
  // Turning it on also installs the out-of-bounds fault handler.
  Status SetCheckedAllocation(bool on) override;
  bool checked_allocation() const override { return checked_.load(std::memory_order_relaxed); }
  bool FindGuardedFault(const void* addr, GuardedFault* out) const override;

  StatusOr<std::unique_ptr<Stream>> CreateStream() override;
  StatusOr<std::unique_ptr<Event>> CreateEvent() override;
  Stream& default_stream() override { return *default_stream_; }
  // Synchronizes every live stream; returns the first sticky error met (each
  // stream's error is reported and cleared, as Stream::Synchronize does).
  Status DoSynchronize() override;

 private:
  struct Streams {
    std::mutex mu;
    std::vector<std::weak_ptr<CpuStream>> live;
    int next_id = 1;
  };

  DeviceInfo info_;
  std::shared_ptr<ThreadPool> pool_;
  std::shared_ptr<Streams> streams_;
  std::unique_ptr<BlockCache> blocks_;  // large buffers kept for reuse (block_cache.h)
  std::shared_ptr<CpuStream> default_stream_;
  std::atomic<bool> checked_{false};
};

}  // namespace opscope
