// File: opscope/device.h
// The Device interface every backend implements, in a handful of slots.
// A backend lives in src/device/<name>/ and registers a factory by name; one
// conformance suite (tests/device_conformance_test.cc) runs against each.
//
//   OPSCOPE_ASSIGN_OR_RETURN(Device* dev, GetDevice("cpu"));
//   OPSCOPE_ASSIGN_OR_RETURN(auto stream, dev->CreateStream());
//   KernelLaunch k{.name = "fill", .config = {.grid = {16}, .block = {256}},
//                  .host = [&](const BlockContext& b) { ... }};
//   OPSCOPE_RETURN_IF_ERROR(stream->Launch(k));
//   OPSCOPE_RETURN_IF_ERROR(stream->Synchronize());
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope {

struct Dim3 {
  int64_t x = 1, y = 1, z = 1;
  int64_t count() const { return x * y * z; }
  bool operator==(const Dim3&) const = default;
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  int vector_width = 1;
  std::string ToString() const;  // "grid=[16,1,1] block=[256,1,1] vec=1"
};

// What one block of a CPU kernel sees (the cpu backend's threadIdx is a loop
// inside the block body: a block runs on one worker thread).
struct BlockContext {
  Dim3 block_idx;
  Dim3 grid_dim;
  Dim3 block_dim;
  int vector_width = 1;
  int worker = 0;  // which thread runs this block: distinct among the blocks running at once
                   // within one launch, in [0, compute_units)
  int64_t linear_block() const { return block_idx.x + grid_dim.x * (block_idx.y + grid_dim.y * block_idx.z); }
};

// A kernel body the host runs, once per block: on the cpu backend's pool, or
// inline for a reference run.
using HostKernelBody = std::function<void(const BlockContext&)>;

// A kernel compiled for an accelerator, in the terms of the backend that
// launches it; which backend that is, the Device the launch goes to says.
struct DeviceKernel {
  const void* function = nullptr;  // the backend's handle (cuda: a __global__ function or CUfunction)
  void** args = nullptr;           // the arguments, as the backend's launch call takes them
  size_t shared_bytes = 0;         // dynamic shared memory per block
};

// What the backend's compiler gave one device kernel (cudaFuncGetAttributes
// on cuda), and what that allows one launch of it: how many of its blocks
// share a multiprocessor (the driver's occupancy calculator), so how full the
// multiprocessors' thread slots are. -1: not known (a host kernel has none).
struct KernelResources {
  int registers_per_thread = -1;
  int64_t static_shared_bytes = -1;   // per block, declared in the kernel
  int max_threads_per_block = -1;     // the most this kernel can be launched with
  int active_blocks_per_sm = -1;      // for the launch's block size and dynamic shared memory
  double occupancy = -1;              // active threads / the SM's thread slots, in [0, 1]
};

// One launch, backend-neutral: a backend runs the body it can run (host or
// device) and refuses a launch that has none for it.
struct KernelLaunch {
  std::string name;
  LaunchConfig config;
  HostKernelBody host;
  DeviceKernel device;
};

enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

// A point in a stream's order. Once the stream reaches it, it holds the time.
class Event {
 public:
  virtual ~Event() = default;
  virtual bool Query() = 0;  // reached?
  // Host blocks until reached. Reported to the stream observer here, once,
  // before the backend's DoSynchronize: no backend can forget it.
  Status Synchronize();
  // Nanoseconds on the device's clock (steady_clock for cpu); only once reached.
  virtual StatusOr<int64_t> TimestampNs() = 0;
  // Microseconds from `start` to this event; both must be reached.
  StatusOr<double> ElapsedUsSince(Event& start);

 protected:
  virtual Status DoSynchronize() = 0;
};

// An in-order queue of work on a device.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual int id() const = 0;
  // The device's name as observers see it ("cpu", "cuda:0").
  virtual const char* device_name() const = 0;
  // A kernel launch, reported to the stream observer (the flight recorder)
  // unless the dispatcher is making it (its own hooks record those, with the
  // op's buffers), then run by the backend's DoLaunch: a launch on a stream
  // an op made for itself is seen too.
  Status Launch(const KernelLaunch& kernel);
  // The ordering work, reported to the stream observer (the flight
  // recorder's race check) here in the base, once, before the backend's own
  // Do* method runs: a backend cannot forget one. A copy of 0 bytes is nothing
  // (not reported); a null pointer is refused before anything is reported.
  Status Memcpy(void* dst, const void* src, size_t bytes, CopyKind kind);
  Status Record(Event& event);  // the event is reached when prior work is done
  Status Wait(Event& event);    // later work waits for the event (any stream)
  Status Synchronize();         // host blocks until all enqueued work is done;
                                // returns the first error a kernel raised
  // Runs fn in stream order on the stream's own thread (optional: cpu only).
  // An error it returns becomes the stream's sticky error. While fn runs,
  // Launch on this stream runs the grid at once (on the pool) and returns when
  // it is done, and Synchronize returns at once: so an op's whole kernel
  // function can be queued on a stream, and streams overlap.
  virtual Status EnqueueHostFunction(std::function<Status()> fn);

 protected:
  // The backend's own work behind Launch, Memcpy (bytes > 0, both pointers
  // set), Record, Wait and Synchronize.
  virtual Status DoLaunch(const KernelLaunch& kernel) = 0;
  virtual Status DoMemcpy(void* dst, const void* src, size_t bytes, CopyKind kind) = 0;
  virtual Status DoRecord(Event& event) = 0;
  virtual Status DoWait(Event& event) = 0;
  virtual Status DoSynchronize() = 0;
};

struct DeviceInfo {
  std::string name;            // "cpu", "cuda:0"
  std::string description;     // "AMD EPYC ... 2 threads" / "NVIDIA H200"
  int compute_units = 1;       // worker threads / SMs
  int64_t memory_bytes = 0;
  int64_t max_threads_per_block = 1024;
  // From the device's own specification, not measured: what calibration
  // (opscope/calibrate.h) prints beside its figures, and the compute roof of
  // a device it cannot run a GEMM on. 0: not known.
  std::vector<std::pair<std::string, std::string>> properties;  // {"compute capability", "9.0"}, ...
  double spec_bandwidth_gbs = 0, spec_gflops_f32 = 0, spec_gflops_f64 = 0;
  // The last-level cache a kernel's data passes through: the host's L3 (else
  // L2) for cpu, the GPU's L2 for cuda. What calibration sizes its buffers
  // past and a cold-cache profile evicts. 0: not known.
  int64_t last_level_cache_bytes = 0;
};

// The kernels a backend ships to calibrate its device from the device's own
// side (Device::calibration_kernels). `text` is what LoadKernel takes in
// `language`; empty where the backend ships none.
struct CalibrationKernels {
  std::string_view language;
  std::string_view text;
  int fma_flops_per_step = 0;  // FLOPs one thread of an fma kernel does per loop step
};

// Where a fault at an address lies against a guarded allocation (see
// Device::SetCheckedAllocation). Filled inside a signal handler: plain data.
struct GuardedFault {
  uint64_t begin = 0;      // the allocation, as Allocate returned it
  uint64_t bytes = 0;      // its size as requested
  char label[64] = {};     // what it holds (a tensor's name); "" when unlabelled
  char message[256] = {};  // the one-line report: how far past which end of which buffer
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;
  const std::string& name() const { return info().name; }
  // The backend, which names the kernels an op has for it: "cuda" of "cuda:0".
  std::string backend() const { return name().substr(0, name().find(':')); }
  // True when the host may read and write this device's memory directly.
  virtual bool host_accessible() const = 0;

  virtual StatusOr<void*> Allocate(size_t bytes) = 0;
  virtual void Free(void* ptr) = 0;
  // When on, every allocation ends at a guard page that faults on access
  // (optional: cpu only). Returns an error where unsupported.
  virtual Status SetCheckedAllocation(bool on);
  virtual bool checked_allocation() const { return false; }
  // (optional: cpu) Async-signal-safe, no lock and no allocation: true, with
  // `out` filled, when a fault at `addr` lies in or against one of this
  // device's guarded allocations. A crash handler names the buffer with it.
  virtual bool FindGuardedFault(const void* addr, GuardedFault* out) const { return false; }
  // (optional: cuda) The kernels that calibrate this device (opscope/calibrate.h),
  // with the entries opscope_calibrate_read, _write, _copy, _triad, _fma_f32,
  // _fma_f64 and _empty, each taking what the backend's file of them says.
  // Empty (the default): calibration measures by copies, or on the host.
  virtual CalibrationKernels calibration_kernels() const { return {}; }

  // A device kernel from source the backend compiles at run time ("ptx" on
  // cuda: the driver JITs it for the GPU present), for
  // KernelLaunch::device.function: a plugin or tool ships a device kernel
  // with neither nvcc nor the toolkit's headers in its build. Loading the same
  // source again reuses it; the kernel lives as long as the process.
  // Unimplemented on a backend whose kernels are host functions.
  virtual StatusOr<const void*> LoadKernel(std::string_view language, const std::string& source,
                                           const std::string& entry);
  // Registers and shared memory of a device kernel this backend runs, and its
  // occupancy when launched with `config`; every field -1 where the backend
  // cannot tell (the default, and every host kernel).
  virtual KernelResources DescribeKernel(const DeviceKernel& kernel, const LaunchConfig& config);

  virtual StatusOr<std::unique_ptr<Stream>> CreateStream() = 0;
  virtual StatusOr<std::unique_ptr<Event>> CreateEvent() = 0;
  virtual Stream& default_stream() = 0;
  // Synchronous copy convenience through the default stream.
  Status CopySync(void* dst, const void* src, size_t bytes, CopyKind kind);
  // All streams. Reported to the stream observer here, before DoSynchronize.
  Status Synchronize();

  // Bytes of tensors in this device's memory now (AllocateBuffer's, until
  // their last reference goes), and the most at once since the last
  // ResetPeakTensorBytes: what a caching allocator's max_memory_allocated
  // counts. A kernel's own scratch is not in it.
  int64_t tensor_bytes() const { return tensor_bytes_.load(std::memory_order_relaxed); }
  int64_t peak_tensor_bytes() const { return peak_tensor_bytes_.load(std::memory_order_relaxed); }
  void ResetPeakTensorBytes() { peak_tensor_bytes_.store(tensor_bytes(), std::memory_order_relaxed); }
  void AddTensorBytes(int64_t delta);

 protected:
  virtual Status DoSynchronize() = 0;

 private:
  std::atomic<int64_t> tensor_bytes_{0}, peak_tensor_bytes_{0};
};

// Backends register a factory at start-up; GetDevice creates each once.
using DeviceFactory = std::function<StatusOr<std::unique_ptr<Device>>()>;
void RegisterDeviceFactory(const std::string& name, DeviceFactory factory);
// "cpu", "cuda" (= "cuda:0"). NotFound lists the backends this build has;
// FailedPrecondition when the backend is built but no device answers.
StatusOr<Device*> GetDevice(std::string_view name);
std::vector<std::string> RegisteredDeviceNames();
// Asks every device GetDevice has opened (FindGuardedFault). Async-signal-safe:
// for a fault handler, which cannot take the table's lock.
bool FindGuardedFaultOnOpenDevices(const void* addr, GuardedFault* out);

// ---- tensors in device memory ----------------------------------------------------
// Core's Tensor knows no device; these put one on a device and bring it back.
// A nullptr device means ordinary host memory.

// Memory from `device`'s allocator, freed back to it (zeroed host memory for nullptr).
StatusOr<std::shared_ptr<Buffer>> AllocateBuffer(Device* device, size_t bytes);
// A new contiguous tensor on `device`: undefined contents (zeroed on the host).
StatusOr<Tensor> EmptyOnDevice(DType dtype, const Shape& shape, Device* device);
// Host <-> device movement through the owning device's copy engine (a plain
// memcpy for host memory).
StatusOr<Tensor> ToDevice(const Tensor& host, Device* device);
StatusOr<Tensor> ToHost(const Tensor& t);

}  // namespace opscope
