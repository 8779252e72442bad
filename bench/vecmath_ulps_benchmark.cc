// The cpu device's own float functions (ops/builtin/ew_vecmath_avx2.cc:
// erf, tanh, expm1 under Elu, log1p under Softplus, fitted here rather than
// SLEEF's) and the ops built on them: time per element over a span in cache,
// and with --exhaustive, the error over every float against the double
// formula, the figures ew_vecmath.h states as k*MaxUlps.
//
//   build/bin/vecmath_ulps_benchmark                       # ns per element (Google Benchmark)
//   build/bin/vecmath_ulps_benchmark --exhaustive [NAME]   # max ULPs over all 2^32 floats, ~1 min each on 2 cores
//                                                          # (pow: every 16th float to 15 exponents)
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
  float exponent = 0;  // pow's
};

// One function held to its stated bound: which span function, the double
// formula, and whether f(-x) = -f(x) is part of the contract.
struct Checked {
  const char* name;
  opscope::ew::SpanFn VecMath::*fn;
  double (*exact)(double);
  double bound;
  bool odd;
};

// Elu with alpha = 1 is expm1 below zero; above it, x itself.
const Checked kChecked[] = {
    {"exp", &VecMath::exp, [](double x) { return std::exp(x); }, opscope::ew::kExpMaxUlps, false},
    {"log", &VecMath::log, [](double x) { return std::log(x); }, opscope::ew::kLogMaxUlps, false},
    {"erf", &VecMath::erf, [](double x) { return std::erf(x); }, opscope::ew::kErfMaxUlps, true},
    {"tanh", &VecMath::tanh, [](double x) { return std::tanh(x); }, opscope::ew::kTanhMaxUlps, true},
    {"expm1", &VecMath::elu, [](double x) { return x < 0 ? std::expm1(x) : x; }, opscope::ew::kExpm1MaxUlps, false},
    {"softplus", &VecMath::softplus, [](double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); },
     opscope::ew::kSoftplusMaxUlps, false},
};

constexpr size_t kChunk = 1 << 16;

// The next chunk of the floats with the sign bit clear (NaNs included) from
// `bits` on by `stride` bit patterns, times `sign`, into x; how many.
size_t NextChunk(std::vector<float>& x, uint64_t& bits, uint32_t stride, float sign) {
  size_t n = 0;
  for (; n < x.size() && bits <= 0x7fffffffu; ++n, bits += stride) {
    const uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&x[n], &b, sizeof(float));
    x[n] *= sign;
  }
  return n;
}

// Every float with the sign bit clear (NaNs included) from `first` by
// `stride` bit patterns, and its negation, in chunks through the span
// function; for an odd function f(-x) = -f(x) bit for bit is checked too.
Worst Scan(const VecMath& m, const Checked& c, uint32_t first, uint32_t stride) {
  std::vector<float> x(kChunk), y(kChunk), neg(kChunk), y_neg(kChunk);
  Worst worst;
  UnaryParams p{};
  p.alpha = 1.0;
  uint64_t bits = first;
  while (bits <= 0x7fffffffu) {
    const size_t n = NextChunk(x, bits, stride, 1.0f);
    for (size_t i = 0; i < n; ++i) neg[i] = -x[i];
    (m.*c.fn)(x.data(), y.data(), static_cast<int64_t>(n), p);
    (m.*c.fn)(neg.data(), y_neg.data(), static_cast<int64_t>(n), p);
    for (size_t i = 0; i < n; ++i) {
      const double u = FloatUlps(y[i], c.exact(static_cast<double>(x[i])));
      double u_neg = FloatUlps(y_neg[i], c.exact(static_cast<double>(neg[i])));
      if (c.odd && !(y_neg[i] == -y[i] || (std::isnan(y_neg[i]) && std::isnan(y[i])))) u_neg = INFINITY;
      if (u > worst.ulps) worst = {u, x[i]};
      if (u_neg > worst.ulps) worst = {u_neg, neg[i]};
    }
  }
  return worst;
}

// pow over every `stride`-th float from `first` and its negation, to each
// of a set of exponents (integers odd and even, halves, thirds, exponents
// that overflow and underflow part of the range), against double pow.
const float kPowExponents[] = {-150.3f, -17.0f, -3.0f, -2.5f, -1.0f, -0.5f, 0.1f, 0.5f, 1.0f / 3, 1.5f, 2.5f, 3.0f, 7.0f, 33.3f, 127.9f};

Worst PowScan(const VecMath& m, uint32_t first, uint32_t stride) {
  std::vector<float> x(kChunk), z(kChunk);
  Worst worst;
  for (const float e : kPowExponents) {
    for (const float sign : {1.0f, -1.0f}) {
      uint64_t bits = first;
      while (bits <= 0x7fffffffu) {
        const size_t n = NextChunk(x, bits, stride, sign);
        m.pow(x.data(), &e, 0, z.data(), static_cast<int64_t>(n));
        for (size_t i = 0; i < n; ++i) {
          const double u = FloatUlps(z[i], std::pow(static_cast<double>(x[i]), static_cast<double>(e)));
          if (u > worst.ulps) worst = {u, x[i], e};
        }
      }
    }
  }
  return worst;
}

// The worst of `scan(first, stride)` over one thread per core, each thread
// taking every threads-th float.
template <typename F>
Worst OnEveryCore(const F& scan) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<Worst> worst(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back([&, t] { worst[t] = scan(t, threads); });
  for (std::thread& t : pool) t.join();
  return *std::max_element(worst.begin(), worst.end(), [](const Worst& a, const Worst& b) { return a.ulps < b.ulps; });
}

int Exhaustive(const std::string& only) {
  const VecMath* m = Avx2VecMath();
  if (m == nullptr) {
    std::fprintf(stderr, "vecmath_ulps_benchmark: no AVX2+FMA here (or OPSCOPE_SCALAR_MATH is set): nothing to check\n");
    return 2;
  }
  int status = 0;
  bool any = false;
  for (const Checked& c : kChecked) {
    if (!only.empty() && only != c.name) continue;
    any = true;
    const Worst w = OnEveryCore([&](uint32_t first, uint32_t stride) { return Scan(*m, c, first, stride); });
    const bool holds = w.ulps <= c.bound;
    std::printf("%s over every float: max %.3f ULPs at x = %.9g; stated bound %.1f: %s\n", c.name, w.ulps, w.at, c.bound,
                holds ? "holds" : "EXCEEDED");
    std::fflush(stdout);
    if (!holds) status = 1;
  }
  if (only.empty() || only == "pow") {
    // Every 16th float: 2^28 bases, 30 times over.
    any = true;
    const Worst w = OnEveryCore([&](uint32_t first, uint32_t stride) { return PowScan(*m, 16 * first, 16 * stride); });
    const bool holds = w.ulps <= opscope::ew::kPowMaxUlps;
    std::printf("pow over every 16th float and its negation, to %zu exponents: max %.3f ULPs at x = %.9g, y = %.9g; stated bound %.1f: %s\n",
                std::size(kPowExponents), w.ulps, w.at, w.exponent, opscope::ew::kPowMaxUlps, holds ? "holds" : "EXCEEDED");
    if (!holds) status = 1;
  }
  if (!any) {
    std::fprintf(stderr, "vecmath_ulps_benchmark: --exhaustive: unknown function '%s' (exp, log, erf, tanh, expm1, softplus, pow)\n",
                 only.c_str());
    return 2;
  }
  return status;
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
void BM_Tanh(benchmark::State& state) { Span(state, &VecMath::tanh); }
void BM_Elu(benchmark::State& state) { Span(state, &VecMath::elu); }
void BM_Softplus(benchmark::State& state) { Span(state, &VecMath::softplus); }
void BM_Exp(benchmark::State& state) { Span(state, &VecMath::exp); }
void BM_Log(benchmark::State& state) { Span(state, &VecMath::log); }  // of |normal| values: NaN lanes cost the same
// pow over two spans: bases in (0, 4), exponents normal (Pow's fast path
// throughout), or with the bases' signs mixed (half NaN, a test per block).
void PowSpans(benchmark::State& state, bool mixed_signs) {
  const VecMath* m = Avx2VecMath();
  if (m == nullptr) {
    state.SkipWithError("no AVX2+FMA here");
    return;
  }
  const int64_t n = state.range(0);
  std::vector<float> x(n), y(n), z(n);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> base(mixed_signs ? -4.0f : 0.0f, 4.0f);
  std::normal_distribution<float> normal(0, 2);
  for (float& v : x) v = base(rng);
  for (float& v : y) v = normal(rng);
  for (auto _ : state) {
    m->pow(x.data(), y.data(), 1, z.data(), n);
    benchmark::DoNotOptimize(z.data());
  }
  state.counters["ns_per_element"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
void BM_Pow(benchmark::State& state) { PowSpans(state, false); }
void BM_PowMixedSigns(benchmark::State& state) { PowSpans(state, true); }

BENCHMARK(BM_Erf)->Arg(1 << 17);
BENCHMARK(BM_Pow)->Arg(1 << 17);
BENCHMARK(BM_PowMixedSigns)->Arg(1 << 17);
BENCHMARK(BM_Gelu)->Arg(1 << 17);
BENCHMARK(BM_Tanh)->Arg(1 << 17);
BENCHMARK(BM_Elu)->Arg(1 << 17);
BENCHMARK(BM_Softplus)->Arg(1 << 17);
BENCHMARK(BM_Exp)->Arg(1 << 17);
BENCHMARK(BM_Log)->Arg(1 << 17);

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--exhaustive") return Exhaustive(i + 1 < argc ? argv[i + 1] : "");
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
