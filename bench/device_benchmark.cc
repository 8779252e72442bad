// Overheads of the cpu device: what a launch, a host function and an event
// cost on top of the work they carry. Target: an empty 1-block kernel
// launched and synchronized in under 5 us.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "opscope/device.h"

namespace opscope {
namespace {

Device* Cpu() {
  auto d = GetDevice("cpu");
  if (!d.ok()) std::abort();
  return *d;
}

KernelLaunch EmptyKernel(int64_t blocks) {
  KernelLaunch k;
  k.name = "empty";
  k.config.grid = {blocks};
  k.config.block = {1};
  k.host = [](const BlockContext& b) { benchmark::DoNotOptimize(b.block_idx.x); };
  return k;
}

void Check(const Status& st, benchmark::State& state) {
  if (!st.ok()) state.SkipWithError(st.ToString().c_str());
}

// One launch, then wait for it: the round trip a synchronous op pays.
void BM_CpuStream_EmptyKernel(benchmark::State& state) {
  Device* dev = Cpu();
  auto stream = dev->CreateStream();
  KernelLaunch k = EmptyKernel(state.range(0));
  for (auto _ : state) {
    Check((*stream)->Launch(k), state);
    Check((*stream)->Synchronize(), state);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CpuStream_EmptyKernel)->Arg(1)->Arg(16)->UseRealTime();

// 1000 launches queued, then one synchronize: the per-launch cost in a stream.
void BM_CpuStream_EmptyKernelBatch1000(benchmark::State& state) {
  Device* dev = Cpu();
  auto stream = dev->CreateStream();
  KernelLaunch k = EmptyKernel(1);
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) Check((*stream)->Launch(k), state);
    Check((*stream)->Synchronize(), state);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_CpuStream_EmptyKernelBatch1000)->UseRealTime();

void BM_CpuStream_HostFunction(benchmark::State& state) {
  Device* dev = Cpu();
  auto stream = dev->CreateStream();
  int64_t calls = 0;
  for (auto _ : state) {
    Check((*stream)->EnqueueHostFunction([&calls] {
      ++calls;
      return Status::Ok();
    }),
          state);
    Check((*stream)->Synchronize(), state);
  }
  state.SetItemsProcessed(calls);
}
BENCHMARK(BM_CpuStream_HostFunction)->UseRealTime();

void BM_CpuEvent_RecordSync(benchmark::State& state) {
  Device* dev = Cpu();
  auto stream = dev->CreateStream();
  auto event = dev->CreateEvent();
  for (auto _ : state) {
    Check((*stream)->Record(**event), state);
    Check((*event)->Synchronize(), state);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CpuEvent_RecordSync)->UseRealTime();

}  // namespace
}  // namespace opscope

BENCHMARK_MAIN();
