// PLACEHOLDER synchronous cpu device: to be replaced by the threaded backend
// (worker thread per stream, thread pool for blocks, guard-page allocator).
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "opscope/device.h"

namespace opscope {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class SyncEvent : public Event {
 public:
  bool Query() override { return ts_ >= 0; }
  Status Synchronize() override { return Status::Ok(); }
  StatusOr<int64_t> TimestampNs() override {
    if (ts_ < 0) return FailedPreconditionError("event not reached");
    return ts_;
  }
  int64_t ts_ = -1;
};

class SyncStream : public Stream {
 public:
  explicit SyncStream(int id) : id_(id) {}
  int id() const override { return id_; }
  Status Launch(const KernelLaunch& k) override {
    const LaunchConfig& c = k.config;
    BlockContext b{.grid_dim = c.grid, .block_dim = c.block, .vector_width = c.vector_width};
    for (int64_t z = 0; z < c.grid.z; ++z)
      for (int64_t y = 0; y < c.grid.y; ++y)
        for (int64_t x = 0; x < c.grid.x; ++x) {
          b.block_idx = {x, y, z};
          k.cpu(b);
        }
    return Status::Ok();
  }
  Status Memcpy(void* dst, const void* src, size_t bytes, CopyKind) override {
    if (bytes) std::memcpy(dst, src, bytes);
    return Status::Ok();
  }
  Status Record(Event& e) override { static_cast<SyncEvent&>(e).ts_ = NowNs(); return Status::Ok(); }
  Status Wait(Event&) override { return Status::Ok(); }
  Status Synchronize() override { return Status::Ok(); }
  Status EnqueueHostFunction(std::function<Status()> fn) override { return fn(); }

 private:
  int id_;
};

class SyncCpuDevice : public Device {
 public:
  SyncCpuDevice() : default_(0) { info_.name = "cpu"; info_.description = "host cpu"; }
  const DeviceInfo& info() const override { return info_; }
  bool host_accessible() const override { return true; }
  StatusOr<void*> Allocate(size_t bytes) override {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) return InternalError("cpu allocation failed");
    return p;
  }
  void Free(void* p) override { std::free(p); }
  StatusOr<std::unique_ptr<Stream>> CreateStream() override { return std::unique_ptr<Stream>(new SyncStream(++next_)); }
  StatusOr<std::unique_ptr<Event>> CreateEvent() override { return std::unique_ptr<Event>(new SyncEvent()); }
  Stream& default_stream() override { return default_; }
  Status Synchronize() override { return Status::Ok(); }

 private:
  DeviceInfo info_;
  SyncStream default_;
  int next_ = 0;
};

const bool kRegistered = [] {
  RegisterDeviceFactory("cpu", []() -> StatusOr<std::unique_ptr<Device>> { return std::unique_ptr<Device>(new SyncCpuDevice()); });
  return true;
}();

}  // namespace
}  // namespace opscope
