// Fixture for ops-debug check on CUDA: one kernel per check, each with its
// bug marked. Parsed in clang's CUDA mode for the host, with opscope's own
// declarations of the CUDA built-ins; kernels_fixed.cu is the same kernels
// done right.
#include <cuda_runtime.h>

__global__ void scale_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = 2.0f * x[i];  // BUG: the last block runs past n
}

__global__ void unpack_kernel(const unsigned char* packed, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = *reinterpret_cast<const float*>(packed + i);  // BUG: i is not a byte offset
}

__global__ void clear_kernel(float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i <= n; i += blockDim.x * gridDim.x) y[i] = 0.0f;  // BUG: <=
}

__global__ void shift_kernel(const float* x, float* y, int n, int offset) {
  int src;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (offset > 0) src = i - offset;
  y[i] = x[src];  // BUG: src unset when offset <= 0
}

void LaunchScale(const float* x, float* y, int n) { scale_kernel<<<(n + 255) / 256, 256>>>(x, y, n); }
