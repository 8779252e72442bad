#include "device/cuda/cuda_device.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "device/cuda/cuda_status.h"

namespace opscope {
namespace {

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
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

  // The clock anchor: a base event recorded on an idle device, paired with the
  // host time at which it is known to be reached.
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaEventCreate(&dev->clock_.base), "cudaEventCreate");
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  int64_t before = SteadyNs();
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaEventRecord(dev->clock_.base, nullptr), "cudaEventRecord");
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(dev->clock_.base), "cudaEventSynchronize");
  int64_t after = SteadyNs();
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

Status CudaDevice::Synchronize() {
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
