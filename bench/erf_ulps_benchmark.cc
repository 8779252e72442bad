// The cpu device's float erf (ops/builtin/ew_vecmath_avx2.cc: its own
// polynomials, not SLEEF's erff) and the Gelu built on it: time per element
// over a span in cache, and with --exhaustive, the error over every float
// against double erf, the figure ew_vecmath.h states as kErfMaxUlps.
//
//   build/bin/erf_ulps_benchmark                 # ns per element (Google Benchmark)
//   build/bin/erf_ulps_benchmark --exhaustive    # max ULPs over all 2^32 floats, ~1 min on 2 cores
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ops/builtin/ew_unary.h"
#include "ops/builtin/ew_vecmath.h"

namespace {

using opscope::ew::Avx2VecMath;
using opscope::ew::FloatUlps;
using opscope::ew::UnaryParams;
using opscope::ew::VecMath;


struct Worst {
  double ulps = 0;
  float at = 0;
};

// Every float with the sign bit clear (NaNs included) from `first` by
// `stride` bit patterns, in chunks through the span function; erf(-x) is
// -erf(x) by construction (the sign is or-ed back on), checked on the way.
Worst Scan(const VecMath& m, uint32_t first, uint32_t stride) {
  constexpr size_t kChunk = 1 << 16;
  std::vector<float> x(kChunk), y(kChunk), neg(kChunk), y_neg(kChunk);
  Worst worst;
  const UnaryParams p{};
  uint64_t bits = first;
  while (bits <= 0x7fffffffu) {
    size_t n = 0;
    for (; n < kChunk && bits <= 0x7fffffffu; ++n, bits += stride) {
      const uint32_t b = static_cast<uint32_t>(bits);
      std::memcpy(&x[n], &b, sizeof(float));
      neg[n] = -x[n];
    }
    m.erf(x.data(), y.data(), static_cast<int64_t>(n), p);
    m.erf(neg.data(), y_neg.data(), static_cast<int64_t>(n), p);
    for (size_t i = 0; i < n; ++i) {
      double u = FloatUlps(y[i], std::erf(static_cast<double>(x[i])));
      if (!(y_neg[i] == -y[i] || (std::isnan(y_neg[i]) && std::isnan(y[i])))) u = INFINITY;
      if (u > worst.ulps) worst = {u, x[i]};
    }
  }
  return worst;
}

int Exhaustive() {
  const VecMath* m = Avx2VecMath();
  if (m == nullptr) {
    std::fprintf(stderr, "erf_ulps_benchmark: no AVX2+FMA here (or OPSCOPE_SCALAR_MATH is set): nothing to check\n");
    return 2;
  }
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<Worst> worst(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back([&, t] { worst[t] = Scan(*m, t, threads); });
  for (std::thread& t : pool) t.join();
  const Worst w = *std::max_element(worst.begin(), worst.end(), [](const Worst& a, const Worst& b) { return a.ulps < b.ulps; });
  std::printf("erf over every float (and its negation): max %.3f ULPs at x = %.9g; stated bound %.1f: %s\n", w.ulps,
              w.at, opscope::ew::kErfMaxUlps, w.ulps <= opscope::ew::kErfMaxUlps ? "holds" : "EXCEEDED");
  return w.ulps <= opscope::ew::kErfMaxUlps ? 0 : 1;
}

// A span of normally distributed floats (what a Gelu sees after a linear layer).
void Span(benchmark::State& state, opscope::ew::SpanFn VecMath::*fn) {
  const VecMath* m = Avx2VecMath();
  if (m == nullptr) {
    state.SkipWithError("no AVX2+FMA here");
    return;
  }
  const int64_t n = state.range(0);
  std::vector<float> x(n), y(n);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 2);
  for (float& v : x) v = normal(rng);
  const UnaryParams p{};
  for (auto _ : state) {
    (m->*fn)(x.data(), y.data(), n, p);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["ns_per_element"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_Erf(benchmark::State& state) { Span(state, &VecMath::erf); }
void BM_Gelu(benchmark::State& state) { Span(state, &VecMath::gelu); }
void BM_Exp(benchmark::State& state) { Span(state, &VecMath::exp); }  // SLEEF's, for scale
BENCHMARK(BM_Erf)->Arg(1 << 17);
BENCHMARK(BM_Gelu)->Arg(1 << 17);
BENCHMARK(BM_Exp)->Arg(1 << 17);

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--exhaustive") return Exhaustive();
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
