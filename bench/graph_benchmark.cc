// inspector-cli's graph side at scale: import + compile (all passes) +
// graph.json export of a generated model (graph/onnx/synthetic_model.h).
//
//   build/bin/graph_benchmark --benchmark_filter=BM_Graph --benchmark_repetitions=5
//
// Target: under 2 s for 10,000 nodes.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>

#include "graph/export/graph_json.h"
#include "graph/onnx/onnx_import.h"
#include "graph/onnx/synthetic_model.h"
#include "graph/passes/pass_manager.h"

namespace opscope::graph {
namespace {

void BM_Graph_ImportCompileExport(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto dir = std::filesystem::temp_directory_path();
  const std::string model_path = (dir / ("opscope_bench_synthetic_" + std::to_string(n) + ".onnx")).string();
  const std::string json_path = (dir / ("opscope_bench_graph_" + std::to_string(n) + ".json")).string();
  if (Status st = WriteSyntheticModel(n, model_path); !st.ok()) {
    state.SkipWithError(st.ToString().c_str());
    return;
  }
  for (auto _ : state) {
    StatusOr<Model> m = ImportOnnx(model_path);
    if (!m.ok()) {
      state.SkipWithError(m.status().ToString().c_str());
      break;
    }
    StatusOr<std::vector<PassResult>> passes = PassManager::Default().Run(*m);
    if (!passes.ok()) {
      state.SkipWithError(passes.status().ToString().c_str());
      break;
    }
    if (Status st = WriteGraphJson(*m, *passes, json_path); !st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      break;
    }
    state.counters["compiled_nodes"] = static_cast<double>(m->compiled.nodes().size());
  }
  std::filesystem::remove(model_path);
  std::filesystem::remove(json_path);
}
BENCHMARK(BM_Graph_ImportCompileExport)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace opscope::graph

BENCHMARK_MAIN();
