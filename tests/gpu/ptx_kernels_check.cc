// ptx_kernels_check: runs every PTX kernel opscope ships on a real GPU and
// checks what each computes against the host, then times the calibration's
// copy and FMA kernels. It needs only the CUDA runtime (no gtest, no opscope
// library, no Debian package), so it builds and runs on a GPU machine that has
// nothing but the toolkit:
//
//   bash tests/gpu/run_on_gpu.sh OUT_DIR   # g++ against the CUDA runtime, then runs it
//
// ctest builds and runs it too; with no GPU it exits 77 (skipped: built but
// not present). Exit 1: a kernel computed a wrong result or failed to load.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "device/cuda/calibrate_ptx.h"
#include "conformance_kernels_ptx.h"
#include "my_norm_ptx.h"

namespace {

int failures = 0;

void Check(bool ok, const std::string& what) {
  std::printf("%s  %s\n", ok ? "ok    " : "FAILED", what.c_str());
  if (!ok) ++failures;
}

bool Cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("FAILED  %s: %s\n", what, cudaGetErrorString(e));
  ++failures;
  return false;
}

// The text loaded once, an entry's handle as opscope's cuda device hands it to cudaLaunchKernel.
const void* Load(const char* ptx, const char* entry) {
  cudaLibrary_t lib = nullptr;
  if (!Cuda(cudaLibraryLoadData(&lib, ptx, nullptr, nullptr, 0, nullptr, nullptr, 0), entry)) return nullptr;
  cudaKernel_t k = nullptr;
  if (!Cuda(cudaLibraryGetKernel(&k, lib, entry), entry)) return nullptr;
  cudaFuncAttributes a{};
  if (Cuda(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(k)), "cudaFuncGetAttributes")) {
    std::printf("        %s: %d registers/thread, %zu B static shared, at most %d threads/block\n", entry, a.numRegs,
                a.sharedSizeBytes, a.maxThreadsPerBlock);
    Check(a.numRegs > 0, std::string(entry) + " tells its registers");
  }
  return reinterpret_cast<const void*>(k);
}

bool Launch(const void* fn, unsigned grid, unsigned block, std::vector<void*> args, const char* what) {
  if (fn == nullptr) return false;
  return Cuda(cudaLaunchKernel(fn, dim3(grid), dim3(block), args.data(), 0, nullptr), what) &&
         Cuda(cudaDeviceSynchronize(), what);
}

// The best of `reps` timed launches after an untimed one, in milliseconds:
// events on the stream right around the launch, the host waiting after.
float BestMs(const void* fn, unsigned grid, unsigned block, std::vector<void*> args, int reps) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  float best = 1e30f;
  for (int r = 0; r <= reps && fn != nullptr; ++r) {
    cudaEventRecord(e0);
    if (!Cuda(cudaLaunchKernel(fn, dim3(grid), dim3(block), args.data(), 0, nullptr), "timed launch")) break;
    cudaEventRecord(e1);
    if (!Cuda(cudaEventSynchronize(e1), "timed launch")) break;
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (r > 0) best = std::min(best, ms);
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  return best;
}

template <typename T>
struct DeviceArray {
  explicit DeviceArray(size_t n) : n(n) { Cuda(cudaMalloc(&p, n * sizeof(T) + 16), "cudaMalloc"); }
  ~DeviceArray() { cudaFree(p); }
  void Put(const std::vector<T>& v) { Cuda(cudaMemcpy(p, v.data(), n * sizeof(T), cudaMemcpyHostToDevice), "H2D"); }
  std::vector<T> Get() const {
    std::vector<T> v(n);
    Cuda(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), "D2H");
    return v;
  }
  void* p = nullptr;
  size_t n;
};

// The FMA kernel's result for thread 0 after `steps`, as the PTX computes it:
// 8 chains from 1..8, each step 4 x fma(acc, m, c), then the pairwise sum.
template <typename T>
T FmaReference(uint32_t steps, T m, T c) {
  T a[8];
  for (int j = 0; j < 8; ++j) a[j] = (j == 0) ? T(1) : a[j - 1] + T(1);
  for (uint32_t s = 0; s < steps; ++s) {
    for (int u = 0; u < 4; ++u) {
      for (T& x : a) x = std::fma(x, m, c);
    }
  }
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

void CheckCalibrationKernels() {
  const char* ptx = opscope::kCalibratePtx;
  const void* read = Load(ptx, "opscope_calibrate_read");
  const void* write = Load(ptx, "opscope_calibrate_write");
  const void* copy = Load(ptx, "opscope_calibrate_copy");
  const void* triad = Load(ptx, "opscope_calibrate_triad");
  const void* fma32 = Load(ptx, "opscope_calibrate_fma_f32");
  const void* fma64 = Load(ptx, "opscope_calibrate_fma_f64");
  const void* empty = Load(ptx, "opscope_calibrate_empty");

  // Small integers: every result exact in float whatever the order.
  const uint64_t n4 = 1000;  // float4s; the grid below has fewer threads, so the loops stride
  std::vector<float> b(4 * n4), c(4 * n4);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 13), c[i] = static_cast<float>(i % 7);
  DeviceArray<float> da(4 * n4), db(4 * n4), dc(4 * n4);
  db.Put(b), dc.Put(c);
  void *pa = da.p, *pb = db.p, *pc = dc.p;
  uint64_t n = n4;
  float three = 3.0f;
  if (Launch(triad, 3, 128, {&pa, &pb, &pc, &n, &three}, "triad")) {
    std::vector<float> a = da.Get();
    bool ok = true;
    for (size_t i = 0; i < a.size(); ++i) ok &= a[i] == b[i] + 3.0f * c[i];
    Check(ok, "triad: a = b + 3c over 1000 float4s, grid-strided");
  }
  if (Launch(copy, 3, 128, {&pa, &pb, &n}, "copy")) Check(da.Get() == b, "copy: a = b");
  float seven = 7.0f;
  if (Launch(write, 3, 128, {&pa, &n, &seven}, "write")) {
    Check(da.Get() == std::vector<float>(4 * n4, 7.0f), "write: a = 7");
  }
  // read: one thread sums a (all 7s): 4000 x 7 = 28000, stored only when it equals `never`.
  DeviceArray<float> sink(4);
  sink.Put({0, 0, 0, 0});
  void* ps = sink.p;
  float expect = 28000.0f, other = -1.0f;
  if (Launch(read, 1, 1, {&pa, &n, &other, &ps}, "read")) Check(sink.Get()[0] == 0.0f, "read: nothing stored unless the sum is `never`");
  if (Launch(read, 1, 1, {&pa, &n, &expect, &ps}, "read")) Check(sink.Get()[0] == expect, "read: the sum is 28000");

  // FMA: thread 0's sum after 5 steps, exactly as the host computes it.
  uint32_t steps = 5;
  const float m32 = 0.999999f, c32 = 1e-7f;
  float want32 = FmaReference<float>(steps, m32, c32);
  sink.Put({0, 0, 0, 0});
  if (Launch(fma32, 1, 1, {&steps, &want32, &ps}, "fma_f32")) Check(sink.Get()[0] == want32, "fma_f32: 160 FMAs of thread 0 bit for bit");
  DeviceArray<double> sink64(2);
  sink64.Put({0, 0});
  void* ps64 = sink64.p;
  double want64 = FmaReference<double>(steps, 0.999999, 1e-7);
  if (Launch(fma64, 1, 1, {&steps, &want64, &ps64}, "fma_f64")) Check(sink64.Get()[0] == want64, "fma_f64: bit for bit");
  Check(Launch(empty, 1, 1, {}, "empty"), "empty launches");

  // The figures calibrate would measure, as a plausibility check (not a pass/fail).
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const uint64_t big4 = (uint64_t{1} << 30) / 16;
  DeviceArray<float> x(4 * big4), y(4 * big4);
  void *px = x.p, *py = y.p;
  uint64_t nb = big4;
  const float copy_ms = BestMs(copy, 8 * sms, 256, {&py, &px, &nb}, 5);
  std::printf("        copy kernel: %.1f GB/s (1 GiB read + 1 GiB written, best of 5)\n", 2.0 * (1 << 30) / (copy_ms * 1e-3) * 1e-9);
  uint32_t fsteps = 1 << 16;
  float never = -1.0f;
  const float fma_ms = BestMs(fma32, 8 * sms, 256, {&fsteps, &never, &ps}, 3);
  std::printf("        FMA kernel: %.1f GFLOP/s float32\n",
              64.0 * fsteps * 8.0 * sms * 256 / (fma_ms * 1e-3) * 1e-9);
}

void CheckMyNorm() {
  const void* fn = Load(kMyNormPtx, "my_norm_f32");
  const uint64_t rows = 300, n = 77;  // not a multiple of the block
  std::vector<float> x(rows * n);
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  for (float& v : x) v = dist(rng);
  DeviceArray<float> dx(x.size()), dy(x.size());
  dx.Put(x);
  void *px = dx.p, *py = dy.p;
  uint64_t r = rows, nn = n;
  float eps = 1e-6f;
  if (!Launch(fn, (rows + 63) / 64, 64, {&px, &py, &r, &nn, &eps}, "my_norm_f32")) return;
  std::vector<float> y = dy.Get();
  double worst = 0;
  for (uint64_t i = 0; i < rows; ++i) {
    double sum = 0;
    for (uint64_t j = 0; j < n; ++j) sum += double(x[i * n + j]) * x[i * n + j];
    const double inv = 1.0 / std::sqrt(sum / n + 1e-6);
    for (uint64_t j = 0; j < n; ++j) {
      const double e = x[i * n + j] * inv;
      worst = std::max(worst, std::abs(y[i * n + j] - e) / (1e-5 + 1e-5 * std::abs(e)));
    }
  }
  Check(worst <= 1.0, "my_norm_f32 within |a-e| <= 1e-5 + 1e-5|e| of the double reference (worst at " +
                          std::to_string(worst) + " of the tolerance)");
}

void CheckConformanceKernels() {
  const void* affine = Load(kTestKernelsPtx, "opscope_test_affine");
  const void* sleep = Load(kTestKernelsPtx, "opscope_test_sleep");
  std::vector<float> x(300);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) - 40;
  DeviceArray<float> dx(x.size());
  dx.Put(x);
  void* px = dx.p;
  unsigned n = 300;
  float a = -2, b = 3;
  if (Launch(affine, 5, 64, {&px, &n, &a, &b}, "affine")) {
    std::vector<float> y = dx.Get();
    bool ok = true;
    for (size_t i = 0; i < x.size(); ++i) ok &= y[i] == x[i] * a + b;
    Check(ok, "opscope_test_affine: x = -2x + 3");
  }
  uint64_t ns = 5'000'000;
  const float ms = BestMs(sleep, 1, 1, {&ns}, 1);
  Check(ms >= 5.0f, "opscope_test_sleep(5 ms) took " + std::to_string(ms) + " ms");
}

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("skipped: no CUDA device answered (built but not present)\n");
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device 0: %s, compute capability %d.%d, %d SMs\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  CheckCalibrationKernels();
  CheckMyNorm();
  CheckConformanceKernels();
  std::printf("%s: %d check(s) failed\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
