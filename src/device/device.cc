#include <atomic>
#include <map>
#include <mutex>

#include "opscope/device.h"
#include "core/text_distance.h"
#include "core/text_format.h"
#include "device/stream_observer.h"

namespace opscope {

std::string LaunchConfig::ToString() const {
  auto d = [](const Dim3& v) {
    return "[" + std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z) + "]";
  };
  return "grid=" + d(grid) + " block=" + d(block) + " vec=" + std::to_string(vector_width);
}

StatusOr<double> Event::ElapsedUsSince(Event& start) {
  OPSCOPE_ASSIGN_OR_RETURN(int64_t a, start.TimestampNs());
  OPSCOPE_ASSIGN_OR_RETURN(int64_t b, TimestampNs());
  return static_cast<double>(b - a) / 1000.0;
}

// The one place each ordering call is reported (stream_observer.h), before
// the backend does it: a backend has only its Do* methods to write.
Status Event::Synchronize() {
  if (StreamObserver* o = ActiveStreamObserver()) o->OnEventSynchronize(this);
  return DoSynchronize();
}

Status Stream::Launch(const KernelLaunch& kernel) {
  if (StreamObserver* o = ActiveStreamObserver(); o != nullptr && !InDispatchedLaunch()) {
    o->OnLaunch({device_name(), id()}, kernel.name.c_str());
  }
  return DoLaunch(kernel);
}

Status Stream::Memcpy(void* dst, const void* src, size_t bytes, CopyKind kind) {
  if (bytes == 0) return Status::Ok();
  if (dst == nullptr || src == nullptr) {
    return InvalidArgumentError("memcpy of " + std::to_string(bytes) + " bytes with a null " +
                                (dst == nullptr ? "destination" : "source"));
  }
  if (StreamObserver* o = ActiveStreamObserver()) o->OnMemcpy({device_name(), id()}, dst, src, bytes, kind);
  return DoMemcpy(dst, src, bytes, kind);
}

Status Stream::Record(Event& event) {
  if (StreamObserver* o = ActiveStreamObserver()) o->OnRecord({device_name(), id()}, &event);
  return DoRecord(event);
}

Status Stream::Wait(Event& event) {
  if (StreamObserver* o = ActiveStreamObserver()) o->OnWait({device_name(), id()}, &event);
  return DoWait(event);
}

Status Stream::Synchronize() {
  if (StreamObserver* o = ActiveStreamObserver()) o->OnStreamSynchronize({device_name(), id()});
  return DoSynchronize();
}

Status Device::Synchronize() {
  if (StreamObserver* o = ActiveStreamObserver()) o->OnDeviceSynchronize(name().c_str());
  return DoSynchronize();
}

Status Stream::EnqueueHostFunction(std::function<Status()>) {
  return UnimplementedError("this backend cannot run host functions on a stream");
}

StatusOr<const void*> Device::LoadKernel(std::string_view language, const std::string&, const std::string& entry) {
  return UnimplementedError("device " + name() + " compiles no " + std::string(language) + " kernel ('" + entry +
                            "'): its kernels are host functions");
}

KernelResources Device::DescribeKernel(const DeviceKernel&, const LaunchConfig&) { return {}; }

Status Device::SetCheckedAllocation(bool on) {
  if (!on) return Status::Ok();
  return UnimplementedError("device " + name() + " has no checked allocation mode");
}

Status Device::CopySync(void* dst, const void* src, size_t bytes, CopyKind kind) {
  Stream& s = default_stream();
  OPSCOPE_RETURN_IF_ERROR(s.Memcpy(dst, src, bytes, kind));
  return s.Synchronize();
}

namespace {

struct DeviceTable {
  std::mutex mu;
  std::map<std::string, DeviceFactory> factories;
  std::map<std::string, std::unique_ptr<Device>> devices;
};

DeviceTable& Table() {
  static DeviceTable* t = new DeviceTable();  // never destroyed: worker threads may outlive statics
  return *t;
}

// The opened devices again, for a signal handler: written under the table's
// lock, read without it. Devices are never closed, so a pointer once there stays valid.
constexpr int kMaxOpenDevices = 16;
std::atomic<Device*> g_open_devices[kMaxOpenDevices];
std::atomic<int> g_open_count{0};

}  // namespace

void RegisterDeviceFactory(const std::string& name, DeviceFactory factory) {
  DeviceTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.factories[name] = std::move(factory);
}

std::vector<std::string> RegisteredDeviceNames() {
  DeviceTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  std::vector<std::string> names;
  for (const auto& [k, v] : t.factories) names.push_back(k);
  return names;
}

StatusOr<Device*> GetDevice(std::string_view name) {
  // "cpu" and "cpu:0" are one device; each backend opens its device 0 only
  // (the cpu is one device, and a cuda device past 0 is not opened yet), so
  // any other ordinal is refused rather than opening device 0 a second time.
  const size_t colon = name.find(':');
  const std::string backend(name.substr(0, colon));
  if (colon != std::string_view::npos) {
    const std::string_view ordinal = name.substr(colon + 1);
    const bool digits = !ordinal.empty() && ordinal.find_first_not_of("0123456789") == std::string_view::npos;
    if (!digits) {
      return InvalidArgumentError("device '" + std::string(name) + "': expected BACKEND or BACKEND:N, N a device number");
    }
    if (ordinal.find_first_not_of('0') != std::string_view::npos) {
      return NotFoundError("device '" + std::string(name) + "': this build opens only " + backend + ":0 (" + backend +
                           (backend == "cpu" ? " is one device)" : " devices past 0 are not supported yet)"));
    }
  }
  const std::string& key = backend;
  DeviceTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto dev = t.devices.find(key);
  if (dev != t.devices.end()) return dev->second.get();
  auto f = t.factories.find(backend);
#ifndef OPSCOPE_CUDA_BACKEND_BUILT
  // Named apart from a typo: the backend exists, this build just lacks it.
  if (f == t.factories.end() && backend == "cuda") {
    return NotFoundError("the cuda backend is not built into this opscope (no CUDA toolkit at build time)");
  }
#endif
  if (f == t.factories.end()) {
    std::vector<std::string> names;
    for (const auto& [k, v] : t.factories) names.push_back(k);
    return NotFoundError("unknown device '" + std::string(name) + "': this build has " + JoinStrings(names, ", "));
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Device> d, f->second());
  Device* raw = d.get();
  t.devices.emplace(key, std::move(d));
  if (const int n = g_open_count.load(std::memory_order_relaxed); n < kMaxOpenDevices) {
    g_open_devices[n].store(raw, std::memory_order_release);
    g_open_count.store(n + 1, std::memory_order_release);
  }
  return raw;
}

bool FindGuardedFaultOnOpenDevices(const void* addr, GuardedFault* out) {
  const int n = g_open_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    const Device* d = g_open_devices[i].load(std::memory_order_acquire);
    if (d != nullptr && d->FindGuardedFault(addr, out)) return true;
  }
  return false;
}

}  // namespace opscope
