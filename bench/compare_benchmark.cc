// The compare engine and the .npy read it waits on: CompareTensors over 16M
// float32 pairs (all equal; 1% mismatched; against a float64 reference), and
// ReadNpy of a 256 MiB float32 file, mapped and read.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "opscope/compare.h"
#include "opscope/fill.h"
#include "opscope/npy.h"

namespace opscope {
namespace {

constexpr int64_t kCompareElements = int64_t{16} << 20;
constexpr int64_t kFileElements = int64_t{64} << 20;

Tensor Normal(DType dtype, int64_t n, uint64_t seed) {
  Tensor t = *Tensor::Empty(dtype, Shape({n}));
  (void)Fill(t, FillSpec{.kind = FillKind::kNormal, .seed = seed});
  return t;
}

// Every 100th element of `t` moved well past the default float32 tolerance.
Tensor WithMismatches(const Tensor& t) {
  Tensor out = *t.Clone();
  float* p = out.data<float>();
  for (int64_t i = 0; i < out.numel(); i += 100) p[i] += 0.5f;
  return out;
}

void RunCompare(benchmark::State& state, const Tensor& actual, const Tensor& expected) {
  const CompareOptions options{.threads = static_cast<int>(state.range(0))};
  for (auto _ : state) {
    StatusOr<CompareResult> r = CompareTensors(actual, expected, DefaultTolerance(DType::kF32), options);
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
    benchmark::DoNotOptimize(r->mismatched);
  }
  state.SetItemsProcessed(state.iterations() * actual.numel());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(actual.nbytes() + expected.nbytes()));
}

void BM_Compare_F32_16M_AllEqual(benchmark::State& state) {
  Tensor e = Normal(DType::kF32, kCompareElements, 1);
  RunCompare(state, e, e);
}
BENCHMARK(BM_Compare_F32_16M_AllEqual)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Compare_F32_16M_OnePercentMismatched(benchmark::State& state) {
  Tensor e = Normal(DType::kF32, kCompareElements, 1);
  RunCompare(state, WithMismatches(e), e);
}
BENCHMARK(BM_Compare_F32_16M_OnePercentMismatched)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Compare_F32VsF64_16M(benchmark::State& state) {
  Tensor e = Normal(DType::kF64, kCompareElements, 1);
  RunCompare(state, *e.CastTo(DType::kF32), e);
}
BENCHMARK(BM_Compare_F32VsF64_16M)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

class Scratch {
 public:
  Scratch() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base ? base : "/tmp") + "/opscope_compare_bench_XXXXXX";
    dir_ = ::mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~Scratch() {
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  std::string File(const std::string& name) const { return dir_ + "/" + name; }
  bool ok() const { return !dir_.empty(); }

 private:
  std::string dir_;
};

// Written once for all the read benchmarks.
const std::string& BigFile() {
  static Scratch dir;
  static const std::string path = [] {
    if (!dir.ok() || !WriteNpy(dir.File("x.npy"), Normal(DType::kF32, kFileElements, 2)).ok()) return std::string();
    return dir.File("x.npy");
  }();
  return path;
}

void RunRead(benchmark::State& state, NpyReadMode mode) {
  const std::string& path = BigFile();
  if (path.empty()) return state.SkipWithError("cannot write the 256 MiB file");
  double sum = 0;
  for (auto _ : state) {
    StatusOr<Tensor> t = ReadNpy(path, NpyReadOptions{.mode = mode});
    if (!t.ok()) return state.SkipWithError(t.status().ToString().c_str());
    // Touch every page: a mapping costs its page faults on first use.
    const float* p = t->data<float>();
    for (int64_t i = 0; i < t->numel(); i += 1024) sum += p[i];
  }
  benchmark::DoNotOptimize(sum);
  state.SetBytesProcessed(state.iterations() * kFileElements * 4);
}

void BM_ReadNpy_F32_256MiB_Mapped(benchmark::State& state) { RunRead(state, NpyReadMode::kMap); }
BENCHMARK(BM_ReadNpy_F32_256MiB_Mapped)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReadNpy_F32_256MiB_Read(benchmark::State& state) { RunRead(state, NpyReadMode::kRead); }
BENCHMARK(BM_ReadNpy_F32_256MiB_Read)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace opscope

BENCHMARK_MAIN();
