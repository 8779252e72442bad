// File: device/cuda/cuda_stream.h
// A non-blocking cudaStream_t. Launches take KernelLaunch::device (function and
// args, for cudaLaunchKernel); copies are cudaMemcpyAsync.
//
// Host functions run through cudaLaunchHostFunc, in stream order, on a CUDA
// runtime thread: unlike on cpu they must not call CUDA or opscope device
// APIs (CUDA forbids it), and host functions of different streams may be
// serialized. An error one returns becomes the stream's sticky error, with the
// cpu stream's rules: later host functions are skipped until Synchronize
// reports it once and clears it. Errors of the CUDA runtime itself follow CUDA.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>

#include "opscope/device.h"

namespace opscope {

// Shared with queued host functions, so a stream destroyed with one pending
// leaves no dangling pointer.
struct CudaHostErrorState {
  std::mutex mu;
  Status error;
};

class CudaStream : public Stream {
 public:
  CudaStream(int id, int ordinal, cudaStream_t stream);
  ~CudaStream() override;  // waits for the stream, then destroys it

  int id() const override { return id_; }
  const char* device_name() const override;
  Status EnqueueHostFunction(std::function<Status()> fn) override;

  const std::shared_ptr<CudaHostErrorState>& host_error_state() const { return host_error_; }

 protected:
  Status DoLaunch(const KernelLaunch& kernel) override;
  Status DoMemcpy(void* dst, const void* src, size_t bytes, CopyKind kind) override;
  Status DoRecord(Event& event) override;
  Status DoWait(Event& event) override;
  Status DoSynchronize() override;

 private:
  const int id_;
  const int ordinal_;
  cudaStream_t stream_;
  std::shared_ptr<CudaHostErrorState> host_error_ = std::make_shared<CudaHostErrorState>();
};

}  // namespace opscope
