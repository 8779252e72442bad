// File: device/cuda/cuda_device.h
// The `cuda` backend: one GPU through the CUDA runtime API. Memory is device
// memory (host_accessible() is false), streams are non-blocking cudaStreams,
// events are cudaEvents with timestamps on the host steady_clock scale.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <tuple>
#include <memory>
#include <mutex>
#include <vector>

#include "device/cuda/cuda_event.h"
#include "device/cuda/cuda_stream.h"
#include "opscope/device.h"

namespace opscope {

class CudaDevice : public Device {
 public:
  // FailedPrecondition("no CUDA device answered: ...") where no GPU is usable.
  static StatusOr<std::unique_ptr<Device>> Create(int ordinal);
  ~CudaDevice() override;

  const DeviceInfo& info() const override { return info_; }
  bool host_accessible() const override { return false; }
  StatusOr<void*> Allocate(size_t bytes) override;
  void Free(void* ptr) override;
  // "ptx" only (LoadCudaKernelFromPtx).
  StatusOr<const void*> LoadKernel(std::string_view language, const std::string& source,
                                   const std::string& entry) override;
  // cudaFuncGetAttributes, asked once per kernel (it takes a cudaKernel_t as
  // is), and cudaOccupancyMaxActiveBlocksPerMultiprocessor once per block size
  // and dynamic shared memory.
  KernelResources DescribeKernel(const DeviceKernel& kernel, const LaunchConfig& config) override;
  CalibrationKernels calibration_kernels() const override;
  StatusOr<std::unique_ptr<Stream>> CreateStream() override;
  StatusOr<std::unique_ptr<Event>> CreateEvent() override;
  Stream& default_stream() override { return *default_stream_; }
  // cudaDeviceSynchronize, then each stream's unreported host-function error.
  Status DoSynchronize() override;

 private:
  explicit CudaDevice(int ordinal) : ordinal_(ordinal) {}
  StatusOr<std::unique_ptr<CudaStream>> NewStream(int id);

  const int ordinal_;
  DeviceInfo info_;
  CudaClock clock_;
  std::unique_ptr<CudaStream> default_stream_;
  std::mutex mu_;
  std::vector<std::weak_ptr<CudaHostErrorState>> host_errors_;
  // Under mu_: by kernel, block threads and dynamic shared memory.
  std::map<std::tuple<const void*, int64_t, size_t>, KernelResources> kernel_resources_;
  int max_threads_per_sm_ = 0;
  int next_stream_id_ = 1;
};

}  // namespace opscope
