// File: device/cuda/cuda_status.h
// CUDA runtime errors as opscope Status values.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "opscope/status.h"

namespace opscope {

// DeviceError("<what>: <cudaErrorName>: <description>"), or Ok.
Status CudaStatus(cudaError_t err, const std::string& what,
                  SourceLocation loc = SourceLocation::current());

}  // namespace opscope

#define OPSCOPE_CUDA_RETURN_IF_ERROR(call, what) OPSCOPE_RETURN_IF_ERROR(::opscope::CudaStatus((call), (what)))
