#include "device/cpu/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "device/cpu/spin.h"

namespace opscope {

ThreadPool::ThreadPool(int threads, std::vector<int> cpus) : cpus_(std::move(cpus), threads) {
  threads_.reserve(std::max(threads, 0));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this, i] { WorkerLoop(i); });
  std::lock_guard<std::mutex> lock(mu_);
  if (!cpus_.active()) return;
  for (int i = 0; i < threads; ++i) Bind(i, cpus_.cpu_of(i));
}

std::vector<int> ThreadPool::BindableCpus() {
  const char* bind = std::getenv("OPSCOPE_CPU_BIND");
  if (bind != nullptr && std::strcmp(bind, "0") == 0) return {};
  return AllowedCpus();
}

int ThreadPool::HelperCpu(int i) {
  std::lock_guard<std::mutex> lock(mu_);
  return cpus_.active() ? cpus_.cpu_of(i) : -1;
}

// A failed bind (a CPU taken away since) only loses the placement: the
// thread runs where the kernel puts it, as without binding.
void ThreadPool::Bind(int helper, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(threads_[helper].native_handle(), sizeof(set), &set);
}

void ThreadPool::MakeRoomForLauncher() {
  if (!cpus_.active()) return;
  const int cpu = sched_getcpu();
  if (cpu < 0) return;
  const int moved = cpus_.MakeRoomFor(cpu);
  if (moved >= 0) Bind(moved, cpus_.cpu_of(moved));
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::RunBlocks(Job& job, int worker, const std::atomic<int>* over_budget_if_above, int budget) {
  for (;;) {
    // A helper steps out once more threads run blocks than the budget (a
    // launcher of another stream arrived): at most its current block overlaps.
    if (over_budget_if_above != nullptr && over_budget_if_above->load(std::memory_order_acquire) > budget) return;
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
    running_.fetch_add(1, std::memory_order_acq_rel);
    for (int64_t i = 0; i < n; ++i) body(i, self);
    Leave();
    return;
  }
  Job job;
  job.body = &body;
  job.n = n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    MakeRoomForLauncher();
    jobs_.push_back(&job);
    open_jobs_.fetch_add(1, std::memory_order_acq_rel);
    launches_.fetch_add(1, std::memory_order_acq_rel);
    running_.fetch_add(1, std::memory_order_acq_rel);  // under mu_: a helper deciding to join sees it
  }
  // Wake only as many helpers as there are blocks beyond the caller's own.
  int64_t wanted = std::min<int64_t>(n - 1, size());
  if (wanted >= size()) {
    work_cv_.notify_all();
  } else {
    for (int64_t i = 0; i < wanted; ++i) work_cv_.notify_one();
  }
  RunBlocks(job, self, nullptr, 0);
  Leave();
  {
    // From here on no helper can join the job; the ones inside are counted.
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
    open_jobs_.fetch_sub(1, std::memory_order_acq_rel);
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

// A thread stops running blocks: a pool thread held back by the budget may
// take its place.
void ThreadPool::Leave() {
  running_.fetch_sub(1, std::memory_order_acq_rel);
  // No launch waiting for helpers (most 1-block launches): nothing to wake. A
  // launch that arrives after this check wakes its helpers itself.
  if (open_jobs_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!jobs_.empty()) work_cv_.notify_one();
}

void ThreadPool::WorkerLoop(int index) {
  // Named for perf, gdb and top (15 characters at most).
  pthread_setname_np(pthread_self(), ("opscope-pool" + std::to_string(index)).substr(0, 15).c_str());
  std::unique_lock<std::mutex> lock(mu_);
  bool ran = false;    // this thread has just run blocks
  bool polled = false;  // and then polled for the next launch
  for (;;) {
    Job* job = nullptr;
    for (Job* j : jobs_) {
      if (j->next.load(std::memory_order_relaxed) < j->n) {
        job = j;
        break;
      }
    }
    // No job with blocks left, or every core already busy (launchers of
    // other streams count): sleep until a job arrives or a thread leaves.
    if (job == nullptr || running_.load(std::memory_order_acquire) >= budget()) {
      if (stop_) return;
      // Just out of a launch, with a core to spare: poll a while for the
      // next launch (kPoolSpinAfterWork), and stop as soon as one arrives or
      // launchers (of other streams) fill every core. A helper not bound to
      // a CPU of its own may share its launcher's, and gives it away between
      // polls (spin.h); a bound one does not, as the yields bought nothing
      // there: the encoder's span read 1521 -> 1722 us with them in one run
      // of 8 rounds alternating (7 slower), 1950 -> 2024 in another.
      // cpus_.active() is set before the threads start and never changes.
      if (ran && job == nullptr && running_.load(std::memory_order_acquire) < budget()) {
        ran = false;
        polled = true;
        const int64_t seen = launches_.load(std::memory_order_acquire);
        lock.unlock();
        SpinUntil([&] {
          return launches_.load(std::memory_order_acquire) != seen ||
                 running_.load(std::memory_order_acquire) >= budget();
        }, kPoolSpinAfterWork, cpus_.active() ? SpinYield::kNo : SpinYield::kBetweenRounds);
        lock.lock();
        continue;
      }
      ran = polled = false;
      work_cv_.wait(lock);
      continue;
    }
    if (polled) joined_polling_.fetch_add(1, std::memory_order_relaxed);
    ran = true;
    polled = false;
    job->helpers.fetch_add(1, std::memory_order_relaxed);
    running_.fetch_add(1, std::memory_order_acq_rel);
    lock.unlock();
    RunBlocks(*job, index, &running_, budget());
    running_.fetch_sub(1, std::memory_order_acq_rel);
    lock.lock();
    if (job->helpers.fetch_sub(1, std::memory_order_acq_rel) == 1) done_cv_.notify_all();
  }
}

}  // namespace opscope
