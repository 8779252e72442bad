// The calibrated roofs side by side with what they stand for: the copy
// bandwidth `ops-debug calibrate` measures (the backend's worker threads,
// each copying its share) against one plain memcpy of the same size, and the
// FMA-loop float32 roof against OpenBLAS sgemm. Run both sides interleaved:
//
//   build/bin/calibrate_benchmark --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true \
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstring>
#include <vector>

#include "opscope/calibrate.h"

namespace {

constexpr int64_t kBytes = int64_t{256} << 20;  // per array, far past the LLC
constexpr int kGemmN = 1024;

opscope::CalibrateRequest Request() {
  return {.device = "cpu", .buffer_bytes = kBytes, .gemm_n = kGemmN, .repetitions = 3, .use_cache = false};
}

void BM_Calibrate_CopyAndRoof(benchmark::State& state) {
  opscope::DevicePeaks p;
  for (auto _ : state) {
    auto r = opscope::CalibrateDevice(Request());
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    p = *r;
  }
  state.counters["copy_GBps"] = p.copy_gbs;
  state.counters["triad_GBps"] = p.triad_gbs;
  state.counters["fma_f32_GFLOPs"] = p.fma_gflops_f32;
  state.counters["sgemm_f32_GFLOPs"] = p.gemm_gflops_f32;
}
BENCHMARK(BM_Calibrate_CopyAndRoof)->Unit(benchmark::kMillisecond)->Iterations(1);

// One memcpy of the same 256 MiB, one thread: what a user would try first.
void BM_Memcpy_SameSize(benchmark::State& state) {
  std::vector<char> a(kBytes, 1), b(kBytes, 0);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), kBytes);
    benchmark::DoNotOptimize(b.data());
  }
  // Read and written, as calibrate's copy counts them.
  state.counters["copy_GBps"] =
      benchmark::Counter(2.0 * kBytes * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Memcpy_SameSize)->Unit(benchmark::kMillisecond);

void BM_Sgemm_1024(benchmark::State& state) {
  std::vector<float> a(kGemmN * kGemmN, 0.5f), b(kGemmN * kGemmN, 0.25f), c(kGemmN * kGemmN);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kGemmN, kGemmN, kGemmN, 1.f, a.data(), kGemmN, b.data(),
                kGemmN, 0.f, c.data(), kGemmN);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["sgemm_f32_GFLOPs"] =
      benchmark::Counter(2.0 * kGemmN * kGemmN * kGemmN * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Sgemm_1024)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
