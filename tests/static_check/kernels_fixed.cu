// Fixture for ops-debug check on CUDA: kernels.cu done right (a tail guard, a
// float pointer, an exclusive grid-stride bound, a source index always set)
// and a shared-memory reduction indexed by the thread alone. No finding expected.
#include <cuda_runtime.h>

__global__ void scale_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = 2.0f * x[i];
}

__global__ void unpack_kernel(const unsigned char* packed, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = reinterpret_cast<const float*>(packed)[i];
}

__global__ void clear_kernel(float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = 0.0f;
}

__global__ void shift_kernel(const float* x, float* y, int n, int offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int src = offset > 0 ? i - offset : i;
  y[i] = x[src];
}

__global__ void block_sum_kernel(const float* x, float* sums, int n) {
  __shared__ float partial[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = partial[0];
}

void LaunchScale(const float* x, float* y, int n) { scale_kernel<<<(n + 255) / 256, 256>>>(x, y, n); }
