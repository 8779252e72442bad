#include "device/cuda/cuda_event.h"

#include <cmath>

#include "device/cuda/cuda_status.h"

namespace opscope {

CudaEvent::~CudaEvent() {
  cudaSetDevice(ordinal_);
  cudaEventDestroy(event_);  // legal while a record is pending: released once reached
}

bool CudaEvent::Query() {
  cudaSetDevice(ordinal_);
  return cudaEventQuery(event_) == cudaSuccess;
}

Status CudaEvent::DoSynchronize() {
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  return CudaStatus(cudaEventSynchronize(event_), "cudaEventSynchronize");
}

StatusOr<int64_t> CudaEvent::TimestampNs() {
  if (!recorded_.load(std::memory_order_relaxed)) {
    return FailedPreconditionError("event was never recorded on a stream");
  }
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_), "cudaSetDevice");
  cudaError_t q = cudaEventQuery(event_);
  if (q == cudaErrorNotReady) return FailedPreconditionError("event not reached yet: synchronize it first");
  OPSCOPE_CUDA_RETURN_IF_ERROR(q, "cudaEventQuery");
  float ms = 0;
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, clock_->base, event_), "cudaEventElapsedTime");
  return clock_->base_host_ns + static_cast<int64_t>(std::llround(static_cast<double>(ms) * 1e6));
}

}  // namespace opscope
