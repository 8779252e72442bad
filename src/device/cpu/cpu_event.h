// File: device/cpu/cpu_event.h
// A point in a cpu stream's order. Record() bumps the event's generation at
// enqueue time; the stream marks that generation reached, with a steady_clock
// timestamp, when its worker gets there. Like CUDA events: an event never
// recorded counts as reached, and Wait() on it is a no-op; re-recording
// moves the event to the new point.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "opscope/device.h"

namespace opscope {

// Shared between the event and the queued work that will reach it, so an
// event destroyed before its stream gets there leaves no dangling pointer.
class CpuEventState {
 public:
  uint64_t BeginRecord();                 // at enqueue: the generation to reach
  void MarkReached(uint64_t generation);  // on the stream worker
  bool Reached(uint64_t generation);
  void WaitReached(uint64_t generation);  // blocks the calling thread
  uint64_t recorded();
  // The timestamp of the latest reached record; error while one is pending.
  StatusOr<int64_t> Timestamp();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t recorded_ = 0;  // Record() calls so far
  uint64_t reached_ = 0;   // highest generation reached
  int64_t timestamp_ns_ = -1;
};

class CpuEvent : public Event {
 public:
  CpuEvent() : state_(std::make_shared<CpuEventState>()) {}
  bool Query() override;
  Status DoSynchronize() override;
  StatusOr<int64_t> TimestampNs() override;
  const std::shared_ptr<CpuEventState>& state() const { return state_; }

 private:
  std::shared_ptr<CpuEventState> state_;
};

int64_t SteadyClockNs();

}  // namespace opscope
