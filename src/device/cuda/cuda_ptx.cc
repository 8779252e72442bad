#include "device/cuda/cuda_ptx.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <utility>

#include "device/cuda/cuda_status.h"

namespace opscope {

StatusOr<const void*> LoadCudaKernelFromPtx(const std::string& ptx, const std::string& entry) {
  // Loading the same text twice reuses the library (the cache is never freed,
  // like the libraries themselves).
  static std::mutex mu;
  static auto* libraries = new std::map<std::string, cudaLibrary_t>();
  std::lock_guard<std::mutex> lock(mu);
  cudaLibrary_t library = nullptr;
  auto it = libraries->find(ptx);
  if (it != libraries->end()) {
    library = it->second;
  } else {
    OPSCOPE_CUDA_RETURN_IF_ERROR(
        cudaLibraryLoadData(&library, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        "loading PTX (JIT compile)");
    libraries->emplace(ptx, library);
  }
  cudaKernel_t kernel = nullptr;
  OPSCOPE_CUDA_RETURN_IF_ERROR(cudaLibraryGetKernel(&kernel, library, entry.c_str()),
                               "PTX has no kernel '" + entry + "'");
  return static_cast<const void*>(kernel);
}

}  // namespace opscope
