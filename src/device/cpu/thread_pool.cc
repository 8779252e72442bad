#include "device/cpu/thread_pool.h"

#include <algorithm>

#include "device/cpu/spin.h"

namespace opscope {

ThreadPool::ThreadPool(int threads) {
  threads_.reserve(std::max(threads, 0));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::RunBlocks(Job& job, int worker) {
  for (;;) {
    int64_t i = job.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= job.n) return;
    (*job.body)(i, worker);
    job.done.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::Run(int64_t n, const std::function<void(int64_t, int)>& body) {
  if (n <= 0) return;
  const int self = size();
  if (n == 1 || threads_.empty()) {
    for (int64_t i = 0; i < n; ++i) body(i, self);
    return;
  }
  Job job;
  job.body = &body;
  job.n = n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(&job);
  }
  // Wake only as many helpers as there are blocks beyond the caller's own.
  int64_t wanted = std::min<int64_t>(n - 1, size());
  if (wanted >= size()) {
    work_cv_.notify_all();
  } else {
    for (int64_t i = 0; i < wanted; ++i) work_cv_.notify_one();
  }
  RunBlocks(job, self);
  {
    // From here on no helper can join the job; the ones inside are counted.
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
  }
  // A helper's last touch of `job` is its decrement of `helpers` under mu_,
  // so once done == n and helpers == 0 the job may leave the stack.
  auto finished = [&] {
    return job.done.load(std::memory_order_acquire) == n && job.helpers.load(std::memory_order_acquire) == 0;
  };
  if (SpinUntil(finished)) return;
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, finished);
}

void ThreadPool::WorkerLoop(int index) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    Job* job = nullptr;
    for (Job* j : jobs_) {
      if (j->next.load(std::memory_order_relaxed) < j->n) {
        job = j;
        break;
      }
    }
    if (job == nullptr) {
      if (stop_) return;
      work_cv_.wait(lock);
      continue;
    }
    job->helpers.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    RunBlocks(*job, index);
    lock.lock();
    if (job->helpers.fetch_sub(1, std::memory_order_acq_rel) == 1) done_cv_.notify_all();
  }
}

}  // namespace opscope
