#include "analysis/static_check/clang_prelude.h"

namespace opscope::static_check {

namespace {

constexpr char kCxxPrelude[] = R"(#pragma once
#if defined(__cplusplus) && __cplusplus >= 202002L && __has_include(<source_location>)
#include <source_location>
#if !defined(__cpp_lib_source_location)
namespace std {
struct source_location {
  static constexpr source_location current() noexcept { return {}; }
  constexpr unsigned line() const noexcept { return 0; }
  constexpr unsigned column() const noexcept { return 0; }
  constexpr const char* file_name() const noexcept { return ""; }
  constexpr const char* function_name() const noexcept { return ""; }
};
}  // namespace std
#endif
#endif
)";

// Declarations only, as clang's CUDA mode sees them on the host side: enough
// for kernels to type-check, nothing a check reads beyond the names.
constexpr char kPrelude[] = R"(#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __restrict__ __restrict
typedef unsigned long __opscope_size_t;
struct uint3 { unsigned int x, y, z; };
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  __host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
extern const __device__ int warpSize;
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
typedef int cudaError_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
#define cudaSuccess 0
extern "C" {
int cudaConfigureCall(dim3 grid, dim3 block, __opscope_size_t shmem = 0, cudaStream_t stream = 0);  // clang's launch for CUDA < 9.2
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, __opscope_size_t shmem = 0, void* stream = 0);
cudaError_t cudaMalloc(void** p, __opscope_size_t bytes);
cudaError_t cudaFree(void* p);
cudaError_t cudaMemcpy(void* dst, const void* src, __opscope_size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, __opscope_size_t bytes, cudaMemcpyKind kind, cudaStream_t s = 0);
cudaError_t cudaMemset(void* p, int value, __opscope_size_t bytes);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaGetLastError();
const char* cudaGetErrorString(cudaError_t e);
}
__device__ void __syncthreads();
__device__ void __syncwarp(unsigned mask = 0xffffffffu);
__device__ float atomicAdd(float* p, float v);
__device__ int atomicAdd(int* p, int v);
__device__ unsigned atomicAdd(unsigned* p, unsigned v);
__device__ double atomicAdd(double* p, double v);
__device__ int atomicMax(int* p, int v);
__device__ int atomicMin(int* p, int v);
__device__ float __shfl_down_sync(unsigned mask, float v, unsigned delta, int width = 32);
__device__ float __shfl_xor_sync(unsigned mask, float v, int lane, int width = 32);
__device__ float __shfl_sync(unsigned mask, float v, int lane, int width = 32);
template <typename T> __device__ T __ldg(const T* p);
__device__ float rsqrtf(float x);
__device__ float __expf(float x);
__device__ float __fdividef(float x, float y);
__host__ __device__ int min(int a, int b);
__host__ __device__ int max(int a, int b);
)";

}  // namespace

const std::vector<VirtualFile>& PreludeFiles() {
  static const std::vector<VirtualFile> kFiles = {
      {kCxxPreludePath, kCxxPrelude},
      {kCudaPreludePath, kPrelude},
      {std::string(kCudaStubDir) + "/cuda_runtime.h", "#pragma once\n"},
      {std::string(kCudaStubDir) + "/cuda.h", "#pragma once\n"},
      {std::string(kCudaStubDir) + "/device_launch_parameters.h", "#pragma once\n"},
  };
  return kFiles;
}

}  // namespace opscope::static_check
