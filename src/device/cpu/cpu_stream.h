// File: device/cpu/cpu_stream.h
// A cpu stream: one worker thread draining a FIFO of work items (kernel
// launches, copies, event records and waits, host functions). A launch
// spreads its blocks over the device's ThreadPool and finishes before the
// next item starts, so stream order holds; different streams run at once.
//
// Called from the stream's own worker (i.e. from inside a host function queued
// on it), every operation runs at once instead of being queued: everything
// before it in the stream is already done, and queueing would deadlock. This is
// what lets the dispatcher queue an op's whole kernel function, whose
// ParallelFor launches and synchronizes on the same stream.
//
// A host thread that synchronizes while the worker is idle runs the queued
// items itself, as the stream (same in-stream rules, same order: only one
// thread runs the stream's items at a time). A launch + synchronize then costs
// no thread hand-off, which on a loaded machine is a scheduler time slice.
// While the worker runs them, the host sleeps until the last item it waits
// for is done, not after each item (the cores are the worker's and the pool's).
//
// Errors (CUDA-like, but recoverable): the first error a host function returns
// is the stream's sticky error. Until it is reported, later launches, copies
// and host functions on the stream are skipped (their inputs may be garbage);
// records and waits still happen, so events are reached and other streams never
// hang. The next Synchronize from the host (stream or device) returns it and
// clears it, and the stream runs normally again. Unlike CUDA, one failing op
// does not poison the process-wide device for every later run.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "device/cpu/thread_pool.h"
#include "opscope/device.h"

namespace opscope {

class CpuStream : public Stream {
 public:
  CpuStream(int id, std::shared_ptr<ThreadPool> pool);
  ~CpuStream() override;  // drains the queue, then stops the worker

  int id() const override { return id_; }
  const char* device_name() const override { return "cpu"; }
  Status EnqueueHostFunction(std::function<Status()> fn) override;
  // Public here: the caller's handle (cpu_device.cc) forwards to them, after
  // its own base has reported the call.
  Status DoLaunch(const KernelLaunch& kernel) override;
  Status DoMemcpy(void* dst, const void* src, size_t bytes, CopyKind kind) override;
  Status DoRecord(Event& event) override;
  Status DoWait(Event& event) override;
  Status DoSynchronize() override;

 private:
  struct Item {
    std::function<Status()> run;
    bool skip_after_error = true;  // false for records and waits
  };

  bool OnWorker() const;
  Status Enqueue(std::function<Status()> run, bool skip_after_error);
  void WorkerLoop();
  // Pops and runs the front item as the stream; mu_ held on entry and exit.
  void RunFrontItem(std::unique_lock<std::mutex>& lock);
  Status RunGrid(const KernelLaunch& kernel);

  const int id_;
  std::shared_ptr<ThreadPool> pool_;

  std::mutex mu_;
  std::condition_variable work_cv_;  // an item arrived, or stopping
  std::condition_variable idle_cv_;  // a waiter's ticket completed (wake_ticket_)
  std::deque<Item> queue_;
  uint64_t enqueued_ = 0;
  std::atomic<uint64_t> completed_{0};
  std::atomic<int64_t> pending_{0};  // queue_.size(), readable without mu_
  int sync_waiters_ = 0;
  uint64_t wake_ticket_ = UINT64_MAX;  // the lowest ticket a sleeping waiter waits for
  bool worker_sleeping_ = false;
  std::atomic<bool> running_{false};  // some thread is running an item (set under mu_)
  bool stop_ = false;
  Status error_;  // the sticky error, not yet reported
  std::thread worker_;
};

}  // namespace opscope
