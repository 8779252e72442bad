// Read and write of a 64M-element float32 .npy (256 MiB) in a temporary folder.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "opscope/fill.h"
#include "opscope/npy.h"

namespace opscope {
namespace {

constexpr int64_t kElements = int64_t{64} << 20;

class Scratch {
 public:
  Scratch() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base ? base : "/tmp") + "/opscope_npy_bench_XXXXXX";
    dir_ = ::mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~Scratch() { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string File(const std::string& name) const { return dir_ + "/" + name; }
  bool ok() const { return !dir_.empty(); }

 private:
  std::string dir_;
};

Tensor BigTensor() {
  Tensor t = *Tensor::Empty(DType::kF32, Shape({kElements}));
  (void)Fill(t, FillSpec{.kind = FillKind::kUniform, .seed = 1});
  return t;
}

void BM_Npy_WriteF32_64M(benchmark::State& state) {
  Scratch dir;
  if (!dir.ok()) return state.SkipWithError("cannot make a temporary folder");
  Tensor t = BigTensor();
  for (auto _ : state) {
    Status st = WriteNpy(dir.File("x.npy"), t);
    if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(t.nbytes()));
}
BENCHMARK(BM_Npy_WriteF32_64M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Npy_ReadF32_64M(benchmark::State& state) {
  Scratch dir;
  if (!dir.ok()) return state.SkipWithError("cannot make a temporary folder");
  Tensor t = BigTensor();
  if (!WriteNpy(dir.File("x.npy"), t).ok()) return state.SkipWithError("write failed");
  for (auto _ : state) {
    // Read into memory: a mapped read would only time setting up the mapping
    // (compare_benchmark times both, touching every page).
    StatusOr<Tensor> r = ReadNpy(dir.File("x.npy"), NpyReadOptions{.mode = NpyReadMode::kRead});
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
    benchmark::DoNotOptimize(r->raw_data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(t.nbytes()));
}
BENCHMARK(BM_Npy_ReadF32_64M)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace opscope

BENCHMARK_MAIN();
