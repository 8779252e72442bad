#include "device/cpu/cpu_event.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "core/clock.h"
#include "device/cpu/spin.h"

namespace opscope {

uint64_t CpuEventState::BeginRecord() {
  std::lock_guard<std::mutex> lock(mu_);
  return ++recorded_;
}

void CpuEventState::MarkReached(uint64_t generation) {
  int64_t now = SteadyNowNs();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (generation > reached_) {
      reached_ = generation;
      timestamp_ns_ = now;
    }
  }
  cv_.notify_all();
}

bool CpuEventState::Reached(uint64_t generation) {
  std::lock_guard<std::mutex> lock(mu_);
  return reached_ >= generation;
}

void CpuEventState::WaitReached(uint64_t generation) {
  if (SpinUntil([&] { return Reached(generation); })) return;
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return reached_ >= generation; });
}

uint64_t CpuEventState::recorded() {
  std::lock_guard<std::mutex> lock(mu_);
  return recorded_;
}

StatusOr<int64_t> CpuEventState::Timestamp() {
  std::lock_guard<std::mutex> lock(mu_);
  if (recorded_ == 0) return FailedPreconditionError("event was never recorded on a stream");
  if (reached_ < recorded_) return FailedPreconditionError("event not reached yet: synchronize it first");
  return timestamp_ns_;
}

bool CpuEvent::Query() { return state_->Reached(state_->recorded()); }

Status CpuEvent::DoSynchronize() {
  state_->WaitReached(state_->recorded());
  return Status::Ok();
}

StatusOr<int64_t> CpuEvent::TimestampNs() { return state_->Timestamp(); }

}  // namespace opscope
