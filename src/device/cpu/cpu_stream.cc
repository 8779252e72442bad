#include "device/cpu/cpu_stream.h"

#include <pthread.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "device/cpu/cpu_event.h"
#include "device/cpu/spin.h"

namespace opscope {
namespace {

thread_local const CpuStream* tls_current_stream = nullptr;

Status CheckLaunch(const KernelLaunch& k) {
  const LaunchConfig& c = k.config;
  if (!k.host) return InvalidArgumentError("kernel '" + k.name + "' has no host body: the cpu device cannot run it");
  auto positive = [](const Dim3& d) { return d.x > 0 && d.y > 0 && d.z > 0; };
  if (!positive(c.grid) || !positive(c.block)) {
    return InvalidArgumentError("kernel '" + k.name + "': launch config " + c.ToString() +
                                " has a dimension below 1");
  }
  if (c.vector_width < 1) {
    return InvalidArgumentError("kernel '" + k.name + "': vector width " + std::to_string(c.vector_width) +
                                " is below 1");
  }
  return Status::Ok();
}

CpuEvent* AsCpuEvent(Event& event) { return dynamic_cast<CpuEvent*>(&event); }

}  // namespace

CpuStream::CpuStream(int id, std::shared_ptr<ThreadPool> pool) : id_(id), pool_(std::move(pool)) {
  worker_ = std::thread([this] { WorkerLoop(); });
}

CpuStream::~CpuStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_one();
  worker_.join();
}

bool CpuStream::OnWorker() const { return tls_current_stream == this; }

Status CpuStream::Enqueue(std::function<Status()> run, bool skip_after_error) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Item{std::move(run), skip_after_error});
    ++enqueued_;
    pending_.fetch_add(1, std::memory_order_release);
    wake = worker_sleeping_;
  }
  if (wake) work_cv_.notify_one();
  return Status::Ok();
}

void CpuStream::RunFrontItem(std::unique_lock<std::mutex>& lock) {
  Item item = std::move(queue_.front());
  queue_.pop_front();
  pending_.fetch_sub(1, std::memory_order_relaxed);
  running_ = true;
  bool skip = item.skip_after_error && !error_.ok();
  lock.unlock();
  const CpuStream* outer = tls_current_stream;
  tls_current_stream = this;
  Status st = skip ? Status::Ok() : item.run();
  item = Item{};  // release what the work captured before reporting it done
  tls_current_stream = outer;
  lock.lock();
  running_ = false;
  if (!st.ok() && error_.ok()) error_ = std::move(st);
  const uint64_t completed = completed_.fetch_add(1, std::memory_order_release) + 1;
  // Only the item that completes a waiter's ticket wakes the waiters: woken
  // at every item, a host synchronizing on a whole iteration spun after each
  // one on a core the worker and the pool's helper were using.
  if (sync_waiters_ > 0 && completed >= wake_ticket_) {
    wake_ticket_ = UINT64_MAX;
    idle_cv_.notify_all();
  }
}

void CpuStream::WorkerLoop() {
  // Named for perf, gdb and top (15 characters at most).
  pthread_setname_np(pthread_self(), ("opscope-strm" + std::to_string(id_)).substr(0, 15).c_str());
  tls_current_stream = this;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (queue_.empty() || running_) {
      if (stop_ && queue_.empty() && !running_) return;
      lock.unlock();
      SpinUntil([&] { return pending_.load(std::memory_order_acquire) > 0; });
      lock.lock();
      if ((queue_.empty() || running_) && !stop_) {
        worker_sleeping_ = true;
        work_cv_.wait(lock, [&] { return (!queue_.empty() && !running_) || stop_; });
        worker_sleeping_ = false;
      }
      continue;
    }
    RunFrontItem(lock);
  }
}

Status CpuStream::RunGrid(const KernelLaunch& k) {
  const LaunchConfig& c = k.config;
  const int64_t gx = c.grid.x, gxy = c.grid.x * c.grid.y;
  pool_->Run(c.grid.count(), [&](int64_t i, int worker) {
    BlockContext b{.block_idx = {i % gx, (i / gx) % c.grid.y, i / gxy},
                   .grid_dim = c.grid,
                   .block_dim = c.block,
                   .vector_width = c.vector_width,
                   .worker = worker};
    k.host(b);
  });
  return Status::Ok();
}

Status CpuStream::DoLaunch(const KernelLaunch& kernel) {
  OPSCOPE_RETURN_IF_ERROR(CheckLaunch(kernel));
  if (OnWorker()) return RunGrid(kernel);
  return Enqueue([this, k = kernel]() { return RunGrid(k); }, true);
}

Status CpuStream::DoMemcpy(void* dst, const void* src, size_t bytes, CopyKind kind) {
  // All kinds are host memory on this device; memmove tolerates overlapping D2D.
  if (OnWorker()) {
    std::memmove(dst, src, bytes);
    return Status::Ok();
  }
  return Enqueue(
      [dst, src, bytes]() {
        std::memmove(dst, src, bytes);
        return Status::Ok();
      },
      true);
}

Status CpuStream::DoRecord(Event& event) {
  CpuEvent* e = AsCpuEvent(event);
  if (e == nullptr) return InvalidArgumentError("Record: the event belongs to another device, not cpu");
  std::shared_ptr<CpuEventState> state = e->state();
  uint64_t generation = state->BeginRecord();
  if (OnWorker()) {
    state->MarkReached(generation);
    return Status::Ok();
  }
  return Enqueue(
      [state, generation]() {
        state->MarkReached(generation);
        return Status::Ok();
      },
      false);
}

Status CpuStream::DoWait(Event& event) {
  CpuEvent* e = AsCpuEvent(event);
  if (e == nullptr) return InvalidArgumentError("Wait: the event belongs to another device, not cpu");
  std::shared_ptr<CpuEventState> state = e->state();
  uint64_t generation = state->recorded();
  if (generation == 0) return Status::Ok();  // never recorded: nothing to wait for
  if (OnWorker()) {
    state->WaitReached(generation);
    return Status::Ok();
  }
  return Enqueue(
      [state, generation]() {
        state->WaitReached(generation);
        return Status::Ok();
      },
      false);
}

Status CpuStream::EnqueueHostFunction(std::function<Status()> fn) {
  if (!fn) return InvalidArgumentError("EnqueueHostFunction: empty function");
  if (OnWorker()) return fn();
  return Enqueue(std::move(fn), true);
}

Status CpuStream::DoSynchronize() {
  if (OnWorker()) {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t ticket = enqueued_;
  auto done = [&] { return completed_.load(std::memory_order_acquire) >= ticket; };
  bool helped = false;
  while (!done()) {
    if (!running_ && !queue_.empty()) {
      RunFrontItem(lock);  // the worker is idle: do its work here
      helped = true;
      continue;
    }
    // Another thread runs the stream's items (the worker, which goes from
    // one to the next without letting go): wait for the ticket, not for the
    // moment between two items. Polling for that moment, the host took a
    // core from the worker or the pool's helper after every item, three a
    // kernel: resnet18's run made 3000 to 5000 involuntary context switches
    // in 100 iterations, against onnxruntime's 100.
    lock.unlock();
    bool spun = SpinUntil(done);
    lock.lock();
    if (!spun) {
      ++sync_waiters_;
      idle_cv_.wait(lock, [&] {
        if (done() || (!running_ && !queue_.empty())) return true;
        wake_ticket_ = std::min(wake_ticket_, ticket);  // RunFrontItem wakes us there
        return false;
      });
      if (--sync_waiters_ == 0) wake_ticket_ = UINT64_MAX;  // none left to wake
    }
  }
  // Items queued after our ticket are the worker's again.
  if (helped && !queue_.empty() && worker_sleeping_) work_cv_.notify_one();
  Status st = std::move(error_);
  error_ = Status::Ok();
  return st;
}

}  // namespace opscope
