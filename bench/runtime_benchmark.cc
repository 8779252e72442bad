// The runtime's speed targets: trace.json export of 1,000,000 tasks (< 1 s),
// capture overhead on a whole model run (capture on within 5% of off), and
// the recorder's cost per launch event (< 300 ns), and the capture session's
// runtime collector per launch.
//
//   build/bin/runtime_benchmark --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   OPSCOPE_BENCH_MODEL=build/bench-models/resnet18.onnx build/bin/runtime_benchmark --benchmark_filter=RunModel
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "capture/dispatcher.h"
#include "capture/recorder.h"
#include "capture/session.h"
#include "graph/export/trace_json.h"
#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"
#include "graph/runtime/executor.h"
#include "graph/runtime/scheduler.h"

namespace opscope::graph {
namespace {

TraceData SyntheticTrace(int64_t tasks) {
  TraceData d;
  d.process_name = "cpu";
  for (int s = 0; s < 4; ++s) d.threads.emplace_back(s, "compute " + std::to_string(s));
  d.tasks.reserve(tasks);
  for (int64_t i = 0; i < tasks; ++i) {
    TraceTask t;
    t.task_id = i;
    t.node_id = i / 2;
    t.op_id = 0x9e3779b97f4a7c15ull * (i + 1);
    t.tid = static_cast<int>(i % 4);
    t.ts_ns = (i / 4) * 2500;
    t.dur_ns = 2000 + i % 500;
    t.name = "/layer" + std::to_string(i % 64) + "/conv/Conv";
    t.category = "kernel";
    t.op_type = "FusedConv";
    t.kernel = "conv2d_nchw_cpu";
    t.launch_known = true;
    t.grid = {64, 1, 1};
    t.block = {256, 1, 1};
    d.tasks.push_back(std::move(t));
  }
  for (int64_t i = 0; i < tasks / 10; ++i) {
    d.flows.push_back(TraceFlow{.id = i + 1, .from_tid = 0, .to_tid = 1, .from_ts_ns = i * 25000,
                                .to_ts_ns = i * 25000 + 3000, .name = "event " + std::to_string(i)});
  }
  return d;
}

void BM_TraceExport_1M(benchmark::State& state) {
  TraceData d = SyntheticTrace(1'000'000);
  size_t bytes = 0;
  for (auto _ : state) {
    std::string json = TraceJson(d);
    bytes = json.size();
    benchmark::DoNotOptimize(json.data());
  }
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_TraceExport_1M)->Unit(benchmark::kMillisecond)->UseRealTime();

// The build passes no source dir to benchmarks, and __FILE__ may be relative
// to the build folder: look beside bench/, then above build/bin/.
std::string FindExampleModel(const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (const fs::path& root : {fs::path(__FILE__).parent_path().parent_path(),
                               exe.parent_path().parent_path().parent_path()}) {
    const fs::path model = root / "examples/models" / name;
    if (fs::exists(model, ec)) return model.string();
  }
  std::fprintf(stderr, "runtime_benchmark: examples/models/%s not found (run it from the build folder)\n",
               name.c_str());
  std::exit(2);
}

// The model run: examples/models/resnet_small.onnx, or the .onnx file
// OPSCOPE_BENCH_MODEL names (bench/make_torch_models.py's resnet18, bert,
// ...: the model classes), on OPSCOPE_BENCH_STREAMS compute streams
// (2 unless given).
struct ResnetRun {
  Model model;
  Schedule schedule;
  Device* cpu = nullptr;
  ResnetRun() {
    const char* path = std::getenv("OPSCOPE_BENCH_MODEL");
    const char* streams = std::getenv("OPSCOPE_BENCH_STREAMS");
    auto imported = ImportOnnx(path != nullptr ? std::string(path) : FindExampleModel("resnet_small.onnx"));
    if (!imported.ok()) {
      std::fprintf(stderr, "runtime_benchmark: %s\n", imported.status().ToString().c_str());
      std::exit(2);
    }
    model = std::move(*imported);
    if (!Compile(model).ok()) std::abort();
    schedule = ScheduleGraph(model.compiled, {.compute_streams = streams != nullptr ? std::atoi(streams) : 2}).value();
    cpu = GetDevice("cpu").value();
  }
};

void RunModel(benchmark::State& state, bool capture) {
  static ResnetRun* run = new ResnetRun();
  std::shared_ptr<Recorder> recorder;
  int hook = -1;
  if (capture) {
    recorder = std::make_shared<Recorder>();
    hook = Dispatcher::Global().AddHook(recorder);
  }
  for (auto _ : state) {
    auto r = Execute(run->model.compiled, run->schedule, {.device = run->cpu, .seed = 3});
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    if (capture) {
      state.PauseTiming();
      recorder->Clear();  // quiescent: Execute synchronized every stream
      state.ResumeTiming();
    }
  }
  if (capture) Dispatcher::Global().RemoveHook(hook);
}
void BM_RunModel_CaptureOff(benchmark::State& state) { RunModel(state, false); }
void BM_RunModel_CaptureOn(benchmark::State& state) { RunModel(state, true); }
BENCHMARK(BM_RunModel_CaptureOff)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RunModel_CaptureOn)->Unit(benchmark::kMillisecond)->UseRealTime();

// One launch as the dispatcher hands it to the recorder: BeforeLaunch + AfterLaunch.
void BM_Recorder_PerEvent(benchmark::State& state) {
  // A small ring of entries that stays in cache, cleared when full: the cost
  // measured is the append, not first-touch page faults of a huge buffer.
  constexpr int64_t kClearEvery = 1 << 14;
  Recorder recorder(Recorder::Options{.max_entries_per_thread = kClearEvery});
  Tensor x = Tensor::Zeros(DType::kF32, Shape({64, 64})).value();
  LaunchRecord rec;
  rec.op = OpRegistry::Global().Lookup("Relu").value();
  rec.kernel = "relu_cpu";
  rec.reads.push_back({x.raw_data(), x.nbytes()});
  rec.writes.push_back({x.raw_data(), x.nbytes()});
  rec.fingerprints.push_back(ComputeFingerprint(x));
  int64_t n = 0;
  for (auto _ : state) {
    rec.seq = n;
    rec.op_id = n;
    recorder.BeforeLaunch(rec);
    recorder.AfterLaunch(rec);
    if (++n == kClearEvery) {
      state.PauseTiming();
      recorder.Clear();
      n = 0;
      state.ResumeTiming();
    }
  }
}
BENCHMARK(BM_Recorder_PerEvent);

// The session's runtime collector per launch (AfterLaunch with events and an
// async launch list, as the executor's launches bring them).
void BM_SessionCollector_PerLaunch(benchmark::State& state) {
  constexpr int64_t kClearEvery = 1 << 14;
  SessionRuntimeCollector collector("/nonexistent");  // never flushed
  Device* cpu = GetDevice("cpu").value();
  LaunchRecord rec;
  rec.op = OpRegistry::Global().Lookup("Relu").value();
  rec.kernel = "relu_cpu";
  rec.device = cpu;
  rec.stream_id = 0;
  rec.start = std::shared_ptr<Event>(cpu->CreateEvent().value());
  rec.end = std::shared_ptr<Event>(cpu->CreateEvent().value());
  rec.async_launches = std::make_shared<std::vector<KernelLaunchInfo>>();
  int64_t n = 0;
  for (auto _ : state) {
    rec.seq = n;
    rec.op_id = n;
    collector.AfterLaunch(rec);
    if (++n == kClearEvery) {
      state.PauseTiming();
      collector.Clear();
      n = 0;
      state.ResumeTiming();
    }
  }
}
BENCHMARK(BM_SessionCollector_PerLaunch);

}  // namespace
}  // namespace opscope::graph

BENCHMARK_MAIN();
