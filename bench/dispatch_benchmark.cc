// The cost the recorder adds to one launch: a trivial op dispatched on the cpu
// device with and without a Recorder hook, and the hook calls on their own;
// and what ops-debug profile's recording (the hook plus the dispatcher's phase
// spans) does to the time of a trivial launch and of a 1 ms kernel. Run with
// --benchmark_enable_random_interleaving=true so both sides share the noise.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "capture/dispatcher.h"
#include "capture/recorder.h"
#include "opscope/op.h"

namespace opscope {
namespace {

OPSCOPE_OP("bench_noop")
    .Doc("does nothing: isolates the dispatch path")
    .Input("x").Output("y")
    .SameShape()
    .Reference([](KernelContext&) { return Status::Ok(); })
    .Kernel("cpu", [](KernelContext&) { return Status::Ok(); }, "bench_noop_cpu");

// Busy for 1 ms of steady_clock on one worker: a kernel whose time is known.
OPSCOPE_OP("bench_spin_1ms")
    .Doc("spins for 1 ms: the kernel profiling must not slow down")
    .Input("x").Output("y")
    .SameShape()
    .Reference([](KernelContext&) { return Status::Ok(); })
    .Kernel("cpu", [](KernelContext& ctx) {
      return ctx.Launch({.name = "bench_spin_1ms", .config = {.grid = {1, 1, 1}, .block = {1, 1, 1}},
                         .host = [](const BlockContext&) {
                           const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
                           while (std::chrono::steady_clock::now() < until) {
                           }
                         }});
    }, "bench_spin_1ms_cpu");

// Keeps the recorder below its capacity, so every iteration takes the full
// append path rather than the cheaper "dropped" one.
constexpr int64_t kClearEvery = 32768;

struct Fixture {
  Device* device = nullptr;
  Tensor x;
  const OpSchema* op = nullptr;
};

Fixture& Setup() {
  static Fixture* f = [] {
    auto* fx = new Fixture();
    auto dev = GetDevice("cpu");
    auto x = Tensor::Empty(DType::kF32, Shape({1}));
    auto op = OpRegistry::Global().Lookup("bench_noop");
    if (!dev.ok() || !x.ok() || !op.ok()) {
      std::cerr << "dispatch_benchmark: setup failed\n";
      std::abort();
    }
    fx->device = *dev;
    fx->x = *x;
    fx->op = *op;
    return fx;
  }();
  return *f;
}

void RunOnce(benchmark::State& state, Fixture& f, const RunOptions& opts) {
  auto r = Dispatcher::Global().Run(*f.op, {f.x}, Attrs(), opts);
  if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
  benchmark::DoNotOptimize(r);
}

void BM_Dispatch_Unrecorded(benchmark::State& state) {
  Fixture& f = Setup();
  RunOptions opts{.device = f.device};
  for (auto _ : state) RunOnce(state, f, opts);
}
BENCHMARK(BM_Dispatch_Unrecorded);

void BM_Dispatch_Recorded(benchmark::State& state) {
  Fixture& f = Setup();
  auto recorder = std::make_shared<Recorder>(Recorder::Options{.max_entries_per_thread = kClearEvery});
  int hook = Dispatcher::Global().AddHook(recorder);
  RunOptions opts{.device = f.device};
  int64_t n = 0;
  for (auto _ : state) {
    RunOnce(state, f, opts);
    if (++n % kClearEvery == 0) {
      state.PauseTiming();
      recorder->Clear();
      state.ResumeTiming();
    }
  }
  Dispatcher::Global().RemoveHook(hook);
  RecorderSnapshot snap = recorder->Snapshot();
  state.counters["dropped"] = static_cast<double>(snap.dropped);
}
BENCHMARK(BM_Dispatch_Recorded);

// As ops-debug profile records a call: the Recorder hook, the phase spans,
// no fingerprints. The difference to BM_Dispatch_Unrecorded is the overhead
// per launch that profile reports.
void ProfiledLoop(benchmark::State& state, const OpSchema& op) {
  Fixture& f = Setup();
  auto recorder = std::make_shared<Recorder>(Recorder::Options{.max_entries_per_thread = kClearEvery});
  int hook = Dispatcher::Global().AddHook(recorder);
  RunOptions opts{.device = f.device, .fingerprint = false, .time_phases = true};
  int64_t n = 0;
  for (auto _ : state) {
    auto r = Dispatcher::Global().Run(op, {f.x}, Attrs(), opts);
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    benchmark::DoNotOptimize(r);
    if (++n % kClearEvery == 0) {
      state.PauseTiming();
      recorder->Clear();
      state.ResumeTiming();
    }
  }
  Dispatcher::Global().RemoveHook(hook);
}

void BM_Dispatch_Profiled(benchmark::State& state) { ProfiledLoop(state, *Setup().op); }
BENCHMARK(BM_Dispatch_Profiled);

// Profile's overhead taken apart: the phase spans alone (no hook), and the
// dispatcher's hook path with a hook that does nothing (no phase spans).
void BM_Dispatch_PhasesOnly(benchmark::State& state) {
  Fixture& f = Setup();
  RunOptions opts{.device = f.device, .fingerprint = false, .time_phases = true};
  for (auto _ : state) RunOnce(state, f, opts);
}
BENCHMARK(BM_Dispatch_PhasesOnly);

void BM_Dispatch_NoopHook(benchmark::State& state) {
  Fixture& f = Setup();
  int hook = Dispatcher::Global().AddHook(std::make_shared<DispatchHook>());
  RunOptions opts{.device = f.device, .fingerprint = false};
  for (auto _ : state) RunOnce(state, f, opts);
  Dispatcher::Global().RemoveHook(hook);
}
BENCHMARK(BM_Dispatch_NoopHook);

const OpSchema& Spin() { return **OpRegistry::Global().Lookup("bench_spin_1ms"); }

void BM_Spin1ms_Unrecorded(benchmark::State& state) {
  Fixture& f = Setup();
  RunOptions opts{.device = f.device, .fingerprint = false};
  for (auto _ : state) {
    auto r = Dispatcher::Global().Run(Spin(), {f.x}, Attrs(), opts);
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_Spin1ms_Unrecorded)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_Spin1ms_Profiled(benchmark::State& state) { ProfiledLoop(state, Spin()); }
BENCHMARK(BM_Spin1ms_Profiled)->Unit(benchmark::kMicrosecond)->UseRealTime();

// One phase boundary: the dispatcher reads steady_clock once per phase (9 a call).
void BM_SteadyClockNow(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(std::chrono::steady_clock::now());
}
BENCHMARK(BM_SteadyClockNow);

// The hook alone: BeforeLaunch + AfterLaunch for a record like the one above.
void BM_Recorder_Append(benchmark::State& state) {
  Fixture& f = Setup();
  Recorder recorder(Recorder::Options{.max_entries_per_thread = kClearEvery});
  LaunchRecord rec;
  rec.op = f.op;
  rec.device = f.device;
  rec.stream_id = 0;
  rec.kernel = "bench_noop_cpu";
  rec.reads.push_back({f.x.raw_data(), f.x.nbytes()});
  rec.writes.push_back({f.x.raw_data(), f.x.nbytes()});
  rec.fingerprints.push_back(ComputeFingerprint(f.x));
  rec.launches.push_back({"bench_noop_cpu", LaunchConfig{}});
  int64_t n = 0;
  for (auto _ : state) {
    rec.seq = static_cast<uint64_t>(n);
    recorder.BeforeLaunch(rec);
    recorder.AfterLaunch(rec);
    if (++n % kClearEvery == 0) {
      state.PauseTiming();
      recorder.Clear();
      state.ResumeTiming();
    }
  }
}
BENCHMARK(BM_Recorder_Append);

}  // namespace
}  // namespace opscope

BENCHMARK_MAIN();
