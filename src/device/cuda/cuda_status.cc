#include "device/cuda/cuda_status.h"

namespace opscope {

Status CudaStatus(cudaError_t err, const std::string& what, SourceLocation loc) {
  if (err == cudaSuccess) return Status::Ok();
  return Status(StatusCode::kDeviceError,
                what + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err), loc);
}

}  // namespace opscope
