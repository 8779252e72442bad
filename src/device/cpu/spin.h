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

// Polls `done` until it returns true or the spin budget is spent; returns
// whether it became true. The caller then blocks on its condition variable.
template <typename Pred>
bool SpinUntil(Pred done) {
  if (done()) return true;
  auto deadline = std::chrono::steady_clock::now() + kSpinBeforeBlock;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

}  // namespace opscope
