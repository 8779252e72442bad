#include "device/cuda/cuda_device.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "core/clock.h"
#include "device/cuda/calibrate_ptx.h"
#include "device/cuda/cuda_ptx.h"
#include "device/cuda/cuda_status.h"

namespace opscope {
namespace {

// FP32 and FP64 lanes per SM by compute capability (the CUDA programming
// guide's arithmetic-throughput table); 0 where the table has no entry.
std::pair<int, int> LanesPerSm(int major, int minor) {
  if (major == 7) return {64, 32};
  if (major == 8 && minor == 0) return {64, 32};
  if (major == 8) return {128, 2};
  if (major == 9) return {128, 64};
  if (major >= 10) return {128, 64};
  return {0, 0};
}

// What the device's attributes say it can do: the properties calibration
// prints, the DRAM bandwidth (double data rate over the bus width) and the
// FMA peak (2 FLOPs per lane per clock).
Status DescribeSpecification(int ordinal, const cudaDeviceProp& prop, DeviceInfo& info) {
  int clock_khz = 0, mem_clock_khz = 0, bus_bits = 0, l2 = 0;
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal), "cudaDeviceGetAttribute");
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, ordinal),
                               "cudaDeviceGetAttribute");
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal),
                               "cudaDeviceGetAttribute");
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ordinal), "cudaDeviceGetAttribute");
  const auto [f32_lanes, f64_lanes] = LanesPerSm(prop.major, prop.minor);
  const double clock_ghz = clock_khz / 1e6;
  info.spec_bandwidth_gbs = 2.0 * mem_clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  info.spec_gflops_f32 = 2.0 * prop.multiProcessorCount * f32_lanes * clock_ghz;
  info.spec_gflops_f64 = 2.0 * prop.multiProcessorCount * f64_lanes * clock_ghz;
  info.last_level_cache_bytes = l2;
  info.properties = {
      {"compute capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
      {"SMs", std::to_string(prop.multiProcessorCount)},
      {"clock", std::to_string(clock_khz / 1000) + " MHz"},
      {"memory", std::to_string(prop.totalGlobalMem >> 20) + " MiB, " + std::to_string(bus_bits) + "-bit bus, " +
                     std::to_string(mem_clock_khz / 1000) + " MHz"},
      {"L2", std::to_string(l2 >> 10) + " KiB"},
      {"shared memory per SM", std::to_string(prop.sharedMemPerMultiprocessor >> 10) + " KiB"},
      {"registers per SM", std::to_string(prop.regsPerMultiprocessor)},
      {"warp", std::to_string(prop.warpSize)},
  };
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<Device>> CudaDevice::Create(int ordinal) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    return FailedPreconditionError(std::string("no CUDA device answered: cudaGetDeviceCount: ") +
                                   cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
  }
  if (count == 0) return FailedPreconditionError("no CUDA device answered: cudaGetDeviceCount found 0 devices");
  if (ordinal >= count) {
    return FailedPreconditionError("no CUDA device answered: cuda:" + std::to_string(ordinal) + " asked, " +
                                   std::to_string(count) + " present");
  }
  std::unique_ptr<CudaDevice> dev(new CudaDevice(ordinal));
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal), "cudaSetDevice");
  cudaDeviceProp prop{};
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
  dev->info_.name = "cuda:" + std::to_string(ordinal);
  dev->info_.description = std::string(prop.name) + ", " + std::to_string(prop.multiProcessorCount) + " SMs";
  dev->info_.compute_units = prop.multiProcessorCount;
  dev->info_.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  dev->info_.max_threads_per_block = prop.maxThreadsPerBlock;
  dev->max_threads_per_sm_ = prop.maxThreadsPerMultiProcessor;
  OPSCOPE_RETURN_IF_ERROR(DescribeSpecification(ordinal, prop, dev->info_));

  // The clock anchor: a base event recorded on an idle device, paired with the
  // host time at which it is known to be reached.
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaEventCreate(&dev->clock_.base), "cudaEventCreate");
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  int64_t before = SteadyNowNs();
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaEventRecord(dev->clock_.base, nullptr), "cudaEventRecord");
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(dev->clock_.base), "cudaEventSynchronize");
  int64_t after = SteadyNowNs();
  dev->clock_.base_host_ns = before + (after - before) / 2;

  OPSCOPE_ASSIGN_OR_RETURN(dev->default_stream_, dev->NewStream(0));
  return std::unique_ptr<Device>(std::move(dev));
}

CudaDevice::~CudaDevice() {
  default_stream_.reset();
  cudaSetDevice(ordinal_);
  if (clock_.base) cudaEventDestroy(clock_.base);
}

StatusOr<std::unique_ptr<CudaStream>> CudaDevice::NewStream(int id) {
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  cudaStream_t s = nullptr;
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  auto stream = std::make_unique<CudaStream>(id, ordinal_, s);
  std::lock_guard<std::mutex> lock(mu_);
  host_errors_.erase(std::remove_if(host_errors_.begin(), host_errors_.end(),
                                    [](const auto& w) { return w.expired(); }),
                     host_errors_.end());
  host_errors_.push_back(stream->host_error_state());
  return stream;
}

StatusOr<void*> CudaDevice::Allocate(size_t bytes) {
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  void* p = nullptr;
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, std::max<size_t>(bytes, 1)),
                               "cudaMalloc of " + std::to_string(bytes) + " bytes on " + info_.name);
  return p;
}

void CudaDevice::Free(void* ptr) {
  if (ptr == nullptr) return;
  cudaSetDevice(ordinal_);
  cudaFree(ptr);
}

CalibrationKernels CudaDevice::calibration_kernels() const {
  return {.language = "ptx", .text = kCalibratePtx, .fma_flops_per_step = kCalibrateFmaFlopsPerStep};
}

StatusOr<const void*> CudaDevice::LoadKernel(std::string_view language, const std::string& source,
                                             const std::string& entry) {
  if (language != "ptx") {
    return UnimplementedError("device " + info_.name + " compiles ptx kernels, not " + std::string(language) + " ('" +
                              entry + "')");
  }
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  return LoadCudaKernelFromPtx(source, entry);
}

KernelResources CudaDevice::DescribeKernel(const DeviceKernel& kernel, const LaunchConfig& config) {
  if (kernel.function == nullptr) return {};
  const int64_t threads = config.block.count();
  const auto key = std::make_tuple(kernel.function, threads, kernel.shared_bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = kernel_resources_.find(key);
    if (it != kernel_resources_.end()) return it->second;
  }
  cudaFuncAttributes a{};
  if (cudaSetDevice(ordinal_) != cudaSuccess || cudaFuncGetAttributes(&a, kernel.function) != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it, so the next call does not report it
    return {};
  }
  KernelResources r{.registers_per_thread = a.numRegs,
                    .static_shared_bytes = static_cast<int64_t>(a.sharedSizeBytes),
                    .max_threads_per_block = a.maxThreadsPerBlock};
  int blocks = 0;
  if (threads >= 1 && threads <= a.maxThreadsPerBlock && max_threads_per_sm_ > 0 &&
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel.function, static_cast<int>(threads),
                                                    kernel.shared_bytes) == cudaSuccess) {
    r.active_blocks_per_sm = blocks;
    r.occupancy = std::min(1.0, static_cast<double>(blocks) * threads / max_threads_per_sm_);
  } else {
    cudaGetLastError();  // a block the kernel cannot run with: its launch will say so
  }
  std::lock_guard<std::mutex> lock(mu_);
  kernel_resources_.emplace(key, r);
  return r;
}

StatusOr<std::unique_ptr<Stream>> CudaDevice::CreateStream() {
  int id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_stream_id_++;
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<CudaStream> s, NewStream(id));
  return std::unique_ptr<Stream>(std::move(s));
}

StatusOr<std::unique_ptr<Event>> CudaDevice::CreateEvent() {
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  cudaEvent_t e = nullptr;
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaEventCreate(&e), "cudaEventCreate");
  return std::unique_ptr<Event>(new CudaEvent(ordinal_, e, &clock_));
}

Status CudaDevice::DoSynchronize() {
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::vector<std::shared_ptr<CudaHostErrorState>> states;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& w : host_errors_) {
      if (auto s = w.lock()) states.push_back(std::move(s));
    }
  }
  Status first;
  for (const auto& s : states) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (!s->error.ok() && first.ok()) first = s->error;
    s->error = Status::Ok();
  }
  return first;
}

namespace {

// The factory has no ordinal to go by (DeviceFactory takes none): it opens GPU 0.
const bool kRegistered = [] {
  RegisterDeviceFactory("cuda", []() { return CudaDevice::Create(0); });
  return true;
}();

}  // namespace
}  // namespace opscope
