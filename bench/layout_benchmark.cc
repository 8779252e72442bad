// The graph view's layout (graph/export/graph_layout.h over layout/layered.h) of a
// generated model: scopes, ranks, dummies, crossing reduction and placement
// of every scope, the work `inspector-cli run` and `export` do per layer.
//
//   build/bin/layout_benchmark --benchmark_repetitions=5
//   OPSCOPE_LAYOUT_MODEL=m.onnx build/bin/layout_benchmark --benchmark_filter=BM_Layout_Model
//
// Targets: 10,000 nodes under 0.5 s, 100,000 under 5 s. bench/layout_vs_dot.sh
// puts graphviz `dot` beside it on the same graphs.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include "graph/export/graph_layout.h"
#include "graph/onnx/onnx_import.h"
#include "graph/onnx/synthetic_model.h"

namespace opscope::graph {
namespace {

void LayOutModel(benchmark::State& state, const std::string& path) {
  StatusOr<Model> m = ImportOnnx(path);
  if (!m.ok()) {
    state.SkipWithError(m.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    GraphLayout gl = LayoutGraph(m->framework);
    benchmark::DoNotOptimize(gl.layout.width);
    state.counters["nodes"] = static_cast<double>(gl.item_node.size());
    state.counters["scopes"] = static_cast<double>(gl.request.scopes.size());
    state.counters["crossings"] = static_cast<double>(gl.layout.crossings);
  }
}

void BM_Layout_Synthetic(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("opscope_layout_bench_" + std::to_string(n) + ".onnx")).string();
  if (Status st = WriteSyntheticModel(n, path); !st.ok()) {
    state.SkipWithError(st.ToString().c_str());
    return;
  }
  LayOutModel(state, path);
  std::filesystem::remove(path);
}
BENCHMARK(BM_Layout_Synthetic)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

// Any model, for the side-by-side with dot.
void BM_Layout_Model(benchmark::State& state) {
  const char* path = std::getenv("OPSCOPE_LAYOUT_MODEL");
  if (!path) {
    state.SkipWithError("set OPSCOPE_LAYOUT_MODEL to an .onnx file");
    return;
  }
  LayOutModel(state, path);
}
BENCHMARK(BM_Layout_Model)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace opscope::graph

BENCHMARK_MAIN();
