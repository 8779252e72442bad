#include "device/cpu/cpu_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "device/cpu/checked_allocator.h"
#include "device/cpu/cpu_event.h"
#include "device/cpu/cpu_info.h"
#include "device/stream_observer.h"

namespace opscope {
namespace {

// The handle a caller owns. The stream itself is shared with the device's
// list, so Device::Synchronize never touches a stream being destroyed.
class CpuStreamHandle : public Stream {
 public:
  explicit CpuStreamHandle(std::shared_ptr<CpuStream> s) : s_(std::move(s)) {}
  int id() const override { return s_->id(); }
  const char* device_name() const override { return s_->device_name(); }
  Status EnqueueHostFunction(std::function<Status()> fn) override { return s_->EnqueueHostFunction(std::move(fn)); }

 protected:
  // To the stream's own work: this handle's base reported the call already.
  Status DoLaunch(const KernelLaunch& k) override { return s_->DoLaunch(k); }
  Status DoMemcpy(void* dst, const void* src, size_t bytes, CopyKind kind) override {
    return s_->DoMemcpy(dst, src, bytes, kind);
  }
  Status DoRecord(Event& e) override { return s_->DoRecord(e); }
  Status DoWait(Event& e) override { return s_->DoWait(e); }
  Status DoSynchronize() override { return s_->DoSynchronize(); }

 private:
  std::shared_ptr<CpuStream> s_;
};

}  // namespace

// An eighth of the memory, at most 1 GiB, is kept for reuse.
CpuDevice::CpuDevice(int threads)
    : streams_(std::make_shared<Streams>()),
      blocks_(std::make_unique<BlockCache>(std::min<size_t>(size_t{1} << 30, PhysicalMemoryBytes() / 8))) {
  int units = threads > 0 ? threads : HardwareThreads();
  // The launching thread runs blocks too, so the pool has one thread fewer.
  pool_ = std::make_shared<ThreadPool>(std::max(units - 1, 1));
  info_.name = "cpu";
  info_.compute_units = pool_->size() + 1;
  info_.description = CpuModelName() + ", " + std::to_string(info_.compute_units) + " threads";
  info_.memory_bytes = PhysicalMemoryBytes();
  info_.last_level_cache_bytes = LastLevelCacheBytes();
  info_.properties = {{"model", CpuModelName()},
                      {"threads", std::to_string(info_.compute_units)},
                      {"last-level cache", std::to_string(LastLevelCacheBytes() >> 20) + " MiB (as the system reports it)"}};
  default_stream_ = std::make_shared<CpuStream>(0, pool_);
  streams_->live.push_back(default_stream_);
  // ops-debug diagnose turns guard pages on in the program it supervises,
  // which cannot be asked in code (it is any program on this library).
  if (const char* checked = std::getenv(kCheckedAllocationEnv); checked && std::string_view(checked) == "1") {
    (void)SetCheckedAllocation(true);
  }
}

CpuDevice::~CpuDevice() {
  default_stream_.reset();  // drains it before the pool goes
}

StatusOr<void*> CpuDevice::Allocate(size_t bytes) {
  if (checked_allocation()) return CheckedAllocate(bytes);
  void* p = blocks_->Allocate(bytes);
  if (p == nullptr) return InternalError("cpu allocation of " + std::to_string(bytes) + " bytes failed");
  return p;
}

void CpuDevice::Free(void* ptr) {
  if (ptr == nullptr) return;
  if (LiveCheckedAllocations() > 0 && CheckedFree(ptr)) return;
  if (blocks_->Free(ptr)) return;
  std::free(ptr);
}

bool CpuDevice::FindGuardedFault(const void* addr, GuardedFault* out) const {
  const std::optional<AllocationInfo> a = FindAllocationNear(addr);
  if (!a) return false;
  out->begin = a->begin;
  out->bytes = a->bytes;
  static_assert(sizeof out->label >= AllocationInfo::kLabelSize);
  std::memcpy(out->label, a->label, AllocationInfo::kLabelSize);
  FormatOutOfBoundsReport(addr, out->message, sizeof out->message);
  return true;
}

Status CpuDevice::SetCheckedAllocation(bool on) {
  if (on) InstallOutOfBoundsHandler();
  checked_.store(on, std::memory_order_relaxed);
  return Status::Ok();
}

StatusOr<std::unique_ptr<Stream>> CpuDevice::CreateStream() {
  std::lock_guard<std::mutex> lock(streams_->mu);
  auto stream = std::make_shared<CpuStream>(streams_->next_id++, pool_);
  auto& live = streams_->live;
  live.erase(std::remove_if(live.begin(), live.end(), [](const auto& w) { return w.expired(); }), live.end());
  live.push_back(stream);
  return std::unique_ptr<Stream>(new CpuStreamHandle(std::move(stream)));
}

StatusOr<std::unique_ptr<Event>> CpuDevice::CreateEvent() { return std::unique_ptr<Event>(new CpuEvent()); }

Status CpuDevice::DoSynchronize() {
  PauseStreamObserver pause;  // the streams' own syncs below are part of this one
  std::vector<std::shared_ptr<CpuStream>> streams;
  {
    std::lock_guard<std::mutex> lock(streams_->mu);
    for (const auto& w : streams_->live) {
      if (auto s = w.lock()) streams.push_back(std::move(s));
    }
  }
  Status first;
  for (const auto& s : streams) {
    Status st = s->Synchronize();
    if (!st.ok() && first.ok()) first = std::move(st).WithContext("stream " + std::to_string(s->id()));
  }
  return first;
}

namespace {

const bool kRegistered = [] {
  RegisterDeviceFactory("cpu", []() -> StatusOr<std::unique_ptr<Device>> {
    return std::unique_ptr<Device>(new CpuDevice());
  });
  return true;
}();

}  // namespace
}  // namespace opscope
