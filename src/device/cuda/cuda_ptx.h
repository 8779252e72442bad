// File: device/cuda/cuda_ptx.h
// Kernels from PTX text, JIT-compiled by the driver for whatever GPU is
// present, so a kernel can ship without nvcc in the build (a plugin, a test).
// The handle goes into KernelLaunch::device.function; the module stays loaded
// for the life of the process.
//
//   OPSCOPE_ASSIGN_OR_RETURN(const void* fn, LoadCudaKernelFromPtx(kPtx, "scale"));
//   KernelLaunch k{.name = "scale", .config = {.grid = {n / 256}, .block = {256}},
//                  .device = {.function = fn, .args = args}};
#pragma once

#include <string>

#include "opscope/status.h"

namespace opscope {

StatusOr<const void*> LoadCudaKernelFromPtx(const std::string& ptx, const std::string& entry);

}  // namespace opscope
