// File: analysis/static_check/clang_prelude.h
// What libclang 14 is handed before the source, as unsaved (virtual) files.
//
// Every source: std::source_location. libstdc++ 12 defines it only when the
// compiler has __builtin_source_location, which clang 15 added; without it
// opscope/status.h (Status's constructors take one) does not parse, and
// neither does any kernel. The prelude declares a stand-in when the library
// did not, so the checks see this project's kernels whole.
//
// A .cu file: what it needs declared to parse in clang's CUDA mode without a CUDA
// toolkit: clang 14 does not know CUDA 13's headers, so the parse uses
// -nocudainc and this prelude instead (the attributes behind __global__ and
// friends, dim3, threadIdx/blockIdx/blockDim/gridDim, the launch hook, and the
// runtime and device functions kernels commonly call), handed to libclang as
// an unsaved file and included first; <cuda_runtime.h> and <cuda.h> resolve to
// empty files beside it.
//
//   args += {"-include", kCxxPreludePath};
//   args += {"-include", kCudaPreludePath, "-I", kCudaStubDir};  // .cu
#pragma once

#include <string>
#include <vector>

namespace opscope::static_check {

inline constexpr char kCxxPreludePath[] = "/opscope-static-check/opscope_cxx_prelude.h";
inline constexpr char kCudaStubDir[] = "/opscope-static-check/cuda";
inline constexpr char kCudaPreludePath[] = "/opscope-static-check/cuda/opscope_cuda_prelude.h";

struct VirtualFile {
  std::string path, text;
};
// The preludes and the empty stand-ins for the CUDA toolkit's headers.
const std::vector<VirtualFile>& PreludeFiles();

}  // namespace opscope::static_check
