// Dense ops through the dispatcher on the cpu device: a ResNet-style 3x3
// convolution and a square 1024 matmul, with achieved GFLOP/s as a counter.
// Each runs with the GEMM kernels' 512-bit blocks off (/0) and on (/1,
// where the CPU has AVX-512F: dense_smallk.h's WideBlocks), side by side:
//
//   build/bin/dense_benchmark --benchmark_repetitions=5 \
//       --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <random>

#include "capture/dispatcher.h"
#include "ops/builtin/dense_smallk.h"
#include "opscope/op.h"

namespace opscope {
namespace {

Tensor RandomF32(const Shape& shape, uint32_t seed) {
  Tensor t = *Tensor::Empty(DType::kF32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = u(rng);
  return t;
}

void RunOp(benchmark::State& state, const char* op, const std::vector<Tensor>& in, const std::string& attrs,
           double flops) {
  auto cpu = GetDevice("cpu");
  auto schema = OpRegistry::Global().Lookup(op);
  if (!cpu.ok() || !schema.ok()) {
    state.SkipWithError("no cpu device or op");
    return;
  }
  auto parsed = (*schema)->ParseAttrs(attrs);
  if (!parsed.ok()) {
    state.SkipWithError(parsed.status().ToString().c_str());
    return;
  }
  RunOptions opts{.device = *cpu, .fingerprint = false};
  const bool wide = state.range(0) != 0;
  if (wide && (dense::Avx2SmallKGemm() == nullptr || !(dense::SetWideBlocks(true), dense::WideBlocks()))) {
    state.SkipWithError("no 512-bit blocks on this CPU (AVX-512F) or OPSCOPE_NO_AVX512 set");
    return;
  }
  dense::SetWideBlocks(wide);
  for (auto _ : state) {
    auto r = Dispatcher::Global().Run(**schema, in, *parsed, opts);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(r->outputs[0].raw_data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Conv_F32(benchmark::State& state) {
  // 1x64x56x56, 64 filters of 3x3, pad 1: 2 * 64 * 56 * 56 * 64 * 9 FLOPs.
  Tensor x = RandomF32(Shape({1, 64, 56, 56}), 1), w = RandomF32(Shape({64, 64, 3, 3}), 2);
  RunOp(state, "Conv", {x, w}, "pads=[1,1,1,1]", 2.0 * 64 * 56 * 56 * 64 * 9);
}
BENCHMARK(BM_Conv_F32)->Arg(0)->Arg(1)->ArgName("wide")->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MatMul_F32(benchmark::State& state) {
  const int64_t n = 1024;
  Tensor a = RandomF32(Shape({n, n}), 3), b = RandomF32(Shape({n, n}), 4);
  RunOp(state, "MatMul", {a, b}, "", 2.0 * n * n * n);
}
BENCHMARK(BM_MatMul_F32)->Arg(0)->Arg(1)->ArgName("wide")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace opscope

BENCHMARK_MAIN();
