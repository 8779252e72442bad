// Elementwise Add of two 64M-element float32 tensors on the cpu device next to
// a memcpy of the same size, to see how close the Add kernel runs to the
// memory bandwidth.
//
// Bandwidth accounting (bytes moved per iteration, SetBytesProcessed):
//   Add:    3 * 64M * 4 bytes (read a, read b, write c)
//   memcpy: 2 * 64M * 4 bytes (read src, write dst)
// so bytes_per_second of the two compares bandwidth directly; the target is
// Add >= 50% of memcpy. Write-allocate traffic (reading a destination line
// before writing it) is not counted for either.
//
// BM_Add_F32_64M calls the registered cpu kernel through a KernelContext on a
// preallocated, already-touched output (the kernel alone);
// BM_Add_F32_64M_Dispatcher goes through Dispatcher::Run, which allocates a
// fresh output every call (first-touch page faults included).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

#include "capture/dispatcher.h"
#include "opscope/fill.h"
#include "opscope/op.h"

namespace opscope {
namespace {

constexpr int64_t kElements = int64_t{64} << 20;

struct AddFixture {
  Device* device = nullptr;
  const OpSchema* op = nullptr;
  Tensor a, b, c;
};

AddFixture& Setup() {
  static AddFixture* f = [] {
    auto* fx = new AddFixture();
    auto dev = GetDevice("cpu");
    auto op = OpRegistry::Global().Lookup("Add");
    auto a = Tensor::Empty(DType::kF32, Shape({kElements}));
    auto b = Tensor::Empty(DType::kF32, Shape({kElements}));
    auto c = Tensor::Empty(DType::kF32, Shape({kElements}));
    if (!dev.ok() || !op.ok() || !a.ok() || !b.ok() || !c.ok() ||
        !Fill(*a, FillSpec{.kind = FillKind::kUniform, .seed = 1}).ok() ||
        !Fill(*b, FillSpec{.kind = FillKind::kUniform, .seed = 2}).ok()) {
      std::cerr << "elementwise_benchmark: setup failed\n";
      std::abort();
    }
    std::memset(c->raw_data(), 0, c->nbytes());  // touch every page before timing
    *fx = AddFixture{*dev, *op, *a, *b, *c};
    return fx;
  }();
  return *f;
}

void BM_Add_F32_64M(benchmark::State& state) {
  AddFixture& f = Setup();
  const Attrs attrs;
  std::map<std::string, int64_t> tunables = {{"block", state.range(0)}};
  const KernelFn& kernel = f.op->kernels.at("cpu");
  for (auto _ : state) {
    KernelContext ctx("Add", {f.a, f.b}, {f.c}, attrs, f.device, &f.device->default_stream(), tunables);
    Status st = kernel(ctx);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(f.c.raw_data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 3 * kElements * 4);
}
BENCHMARK(BM_Add_F32_64M)->Arg(65536)->Arg(1 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Add_F32_64M_Dispatcher(benchmark::State& state) {
  AddFixture& f = Setup();
  RunOptions opts{.device = f.device, .fingerprint = false};
  for (auto _ : state) {
    auto r = Dispatcher::Global().Run(*f.op, {f.a, f.b}, Attrs{}, opts);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(r->outputs[0].raw_data());
  }
  state.SetBytesProcessed(state.iterations() * 3 * kElements * 4);
}
BENCHMARK(BM_Add_F32_64M_Dispatcher)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Memcpy_64M(benchmark::State& state) {
  AddFixture& f = Setup();
  for (auto _ : state) {
    std::memcpy(f.c.raw_data(), f.a.raw_data(), kElements * 4);
    benchmark::DoNotOptimize(f.c.raw_data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * kElements * 4);
}
BENCHMARK(BM_Memcpy_64M)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace opscope

BENCHMARK_MAIN();
