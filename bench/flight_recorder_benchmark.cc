// The flight recorder's cost per launch, the figure ops-debug diagnose
// promises under 1 us: its two hook calls (started, finished) and one
// synchronisation record, on a real ring file, tensor summaries off (they
// run a kernel; their cost is measured by diagnose itself, in
// diagnosis.json's slowdown). Compare with the dispatcher's own cost per
// call in dispatch_benchmark.
//
//   build/bench/flight_recorder_benchmark --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <string>

#include "capture/dispatcher.h"
#include "capture/flight_recorder.h"
#include "opscope/device.h"
#include "opscope/op.h"

namespace opscope {
namespace {

struct Ring {
  std::string path = "/tmp/opscope_bench_ring_" + std::to_string(getpid());
  std::shared_ptr<FlightRecorder> rec;
  Ring() {
    auto r = FlightRecorder::Open(path, {.slots = 64, .tensor_summaries = false});
    if (r.ok()) rec = std::move(r).value();
  }
  ~Ring() {
    rec.reset();
    std::remove(path.c_str());
  }
};

// A launch record as the dispatcher hands it over: Relu on cpu, one input,
// one output, its fingerprint taken.
struct Launch {
  Tensor x, y;
  std::vector<Tensor> inputs, outputs;
  Attrs attrs;
  LaunchRecord rec;
  Launch() {
    x = *Tensor::Empty(DType::kF32, Shape({1024}));
    y = *Tensor::Empty(DType::kF32, Shape({1024}));
    inputs = {x};
    outputs = {y};
    rec.op = *OpRegistry::Global().Lookup("Relu");
    rec.device = *GetDevice("cpu");
    rec.stream_id = 1;
    rec.kernel = "relu_cpu";
    rec.inputs = &inputs;
    rec.outputs = &outputs;
    rec.attrs = &attrs;
    rec.reads = {{x.raw_data(), x.nbytes()}};
    rec.writes = {{y.raw_data(), y.nbytes()}};
    rec.fingerprints = {ComputeFingerprint(x)};
    rec.launches = {KernelLaunchInfo{.name = "relu_cpu", .config = {.grid = {4}, .block = {256}}}};
  }
};

void BM_FlightRecorder_Launch(benchmark::State& state) {
  Ring ring;
  Launch l;
  if (!ring.rec) {
    state.SkipWithError("cannot open the ring");
    return;
  }
  for (auto _ : state) {
    ++l.rec.seq;
    ring.rec->BeforeLaunch(l.rec);
    ring.rec->AfterLaunch(l.rec);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FlightRecorder_Launch);

void BM_FlightRecorder_EventRecord(benchmark::State& state) {
  Ring ring;
  if (!ring.rec) {
    state.SkipWithError("cannot open the ring");
    return;
  }
  int event = 0;
  for (auto _ : state) ring.rec->OnRecord({"cpu", 1}, &event);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FlightRecorder_EventRecord);

}  // namespace
}  // namespace opscope

BENCHMARK_MAIN();
