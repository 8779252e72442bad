// File: device/cpu/thread_pool.h
// Runs the blocks of a kernel launch over a fixed set of worker threads.
//
// The launching thread runs blocks too: a launch always makes progress even
// while every pool thread is busy with another stream's launch (two streams
// launching at once cannot deadlock), and a 1-block launch never touches the
// pool at all, which keeps tiny launches cheap.
//
// One thread budget: size() + 1 threads run blocks at once, the launchers
// included. A pool thread joins a launch only while fewer are running, and
// steps out after its current block when a launcher of another stream
// arrives, so two streams launching on a 2-core machine run on their own two
// threads and the pool's waits; before, three threads took turns on two
// cores and every kernel of a model ran slower with a second stream than
// with one (mobilenet_v2 14.4 vs 13.1 ms, resnet18 40-45 vs 35 ms).
//
// A pool thread just out of a launch polls for the next one for 100 us
// before it sleeps (spin.h's kPoolSpinAfterWork): woken, it joined a
// launch 17 to 53 us late on a VM.
//
// Each pool thread is bound to a CPU of its own and one CPU is left to the
// launcher (helper_cpus.h says why), where the process may use enough CPUs;
// OPSCOPE_CPU_BIND=0 leaves placement to the kernel.
//
//   ThreadPool pool(3);
//   pool.Run(grid, [&](int64_t block, int worker) { ... });  // returns when all ran
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "device/cpu/helper_cpus.h"

namespace opscope {

class ThreadPool {
 public:
  // `threads` pool threads (0 is allowed: every launch then runs on its caller).
  explicit ThreadPool(int threads) : ThreadPool(threads, BindableCpus()) {}
  // Bound to `cpus` (HelperCpus): helper i starts on cpus[i + 1].
  ThreadPool(int threads, std::vector<int> cpus);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Pool threads are workers 0..size()-1; the launching thread is worker size().
  // So within one launch, worker indices are distinct and below size() + 1.
  int size() const { return static_cast<int>(threads_.size()); }

  // The CPU helper `i` is bound to now, or -1 when the pool binds none.
  int HelperCpu(int i);

  // The CPUs a pool binds to by default: the process's own (AllowedCpus),
  // none when OPSCOPE_CPU_BIND=0.
  static std::vector<int> BindableCpus();

  // Calls body(i, worker) once for every i in [0, n); returns when all are done.
  void Run(int64_t n, const std::function<void(int64_t, int)>& body);

  // Launches a pool thread joined while it polled after its last one
  // (spin.h's kPoolSpinAfterWork), without a wake-up.
  int64_t joined_polling() const { return joined_polling_.load(std::memory_order_relaxed); }

 private:
  struct Job {
    const std::function<void(int64_t, int)>* body = nullptr;
    int64_t n = 0;
    std::atomic<int64_t> next{0};  // next block index to claim
    std::atomic<int64_t> done{0};  // blocks finished
    std::atomic<int> helpers{0};   // pool threads inside this job (guarded by mu_ on change)
  };

  void WorkerLoop(int index);
  // Claims and runs blocks of `job` until none is left; a helper (given the
  // running count) also stops once it is above `budget`.
  static void RunBlocks(Job& job, int worker, const std::atomic<int>* over_budget_if_above, int budget);
  void Leave();
  // Before waking helpers: a helper bound to the launcher's CPU moves off it.
  void MakeRoomForLauncher();
  void Bind(int helper, int cpu);
  int budget() const { return size() + 1; }

  std::mutex mu_;
  std::condition_variable work_cv_;  // a job arrived, or stopping
  std::condition_variable done_cv_;  // a helper left a job
  std::vector<Job*> jobs_;           // launches that may still have blocks to claim
  bool stop_ = false;
  std::atomic<int> running_{0};      // threads running blocks now, launchers included
  std::atomic<int> open_jobs_{0};    // jobs_.size(), readable without mu_
  std::atomic<int64_t> launches_{0};  // launches that used the pool so far
  std::atomic<int64_t> joined_polling_{0};
  HelperCpus cpus_;                  // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace opscope
