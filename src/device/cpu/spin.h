// File: device/cpu/spin.h
// A short bounded spin before blocking. Stream workers, Synchronize and event
// waits poll for a few microseconds first: a launch + synchronize round trip
// then costs about a microsecond instead of two futex wake-ups, while a long
// wait still sleeps and leaves the (shared, often small) machine alone.
#pragma once

#include <chrono>
#include <thread>

namespace opscope {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#else
  std::this_thread::yield();
#endif
}

// How long a waiter polls before it sleeps.
inline constexpr std::chrono::microseconds kSpinBeforeBlock{30};

// How long a pool thread that has just run blocks polls for the next launch
// before it sleeps. A model's kernels follow each other microseconds apart,
// and a sleeping pool thread woke 17 to 37 us after its launch on this
// project's 2-core VM (median; 33 us, p90 53, under a neighbour's load): the
// launcher ran alone that long in every kernel. Polling, it joins in 0.3 us.
// onnxruntime's pool spins the same way. A model's span (inspector-cli run
// --streams 1 --iterations 15, lower quartile, the library before and after
// alternating, medians of 4 to 8 rounds): mobilenet_v2 12.9 -> 10.5 ms,
// resnet18 32.1 -> 29.3, the encoder 2.26 -> 1.99; googlenet 30.9 -> 30.3
// and bert 5.7 -> 5.6 within their noise; with two streams resnet18 32.2 ->
// 31.3, googlenet 26.1 -> 25.7. The poll stops as soon as launchers fill
// every core, so a second stream's launcher does not lose its core to it.
inline constexpr std::chrono::microseconds kPoolSpinAfterWork{100};

// Whether a spin gives its core away between rounds of polls (a round of 64
// pauses is 1.6 us here, a yield 0.5 us). A pool thread that may share a core
// with its launcher (taskset or a cpuset leaves fewer CPUs than threads, so
// none is bound) does: spinning on, it held the core the launcher needed to
// make the next launch, and under `taskset -c 0` 1 launch in 20000 was
// joined while polling; yielding, the launcher runs at once.
enum class SpinYield { kNo, kBetweenRounds };

// Polls `done` until it returns true or the spin budget is spent; returns
// whether it became true. The caller then blocks on its condition variable.
template <typename Pred>
bool SpinUntil(Pred done, std::chrono::microseconds budget = kSpinBeforeBlock, SpinYield yield = SpinYield::kNo) {
  if (done()) return true;
  auto deadline = std::chrono::steady_clock::now() + budget;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
    if (yield == SpinYield::kBetweenRounds) std::this_thread::yield();
  }
}

}  // namespace opscope
