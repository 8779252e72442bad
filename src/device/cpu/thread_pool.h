// File: device/cpu/thread_pool.h
// Runs the blocks of a kernel launch over a fixed set of worker threads.
//
// The launching thread runs blocks too: a launch always makes progress even
// while every pool thread is busy with another stream's launch (two streams
// launching at once cannot deadlock), and a 1-block launch never touches the
// pool at all, which keeps tiny launches cheap.
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

namespace opscope {

class ThreadPool {
 public:
  // `threads` pool threads (0 is allowed: every launch then runs on its caller).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Pool threads are workers 0..size()-1; the launching thread is worker size().
  // So within one launch, worker indices are distinct and below size() + 1.
  int size() const { return static_cast<int>(threads_.size()); }

  // Calls body(i, worker) once for every i in [0, n); returns when all are done.
  void Run(int64_t n, const std::function<void(int64_t, int)>& body);

 private:
  struct Job {
    const std::function<void(int64_t, int)>* body = nullptr;
    int64_t n = 0;
    std::atomic<int64_t> next{0};  // next block index to claim
    std::atomic<int64_t> done{0};  // blocks finished
    std::atomic<int> helpers{0};   // pool threads inside this job (guarded by mu_ on change)
  };

  void WorkerLoop(int index);
  static void RunBlocks(Job& job, int worker);

  std::mutex mu_;
  std::condition_variable work_cv_;  // a job arrived, or stopping
  std::condition_variable done_cv_;  // a helper left a job
  std::vector<Job*> jobs_;           // launches that may still have blocks to claim
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace opscope
