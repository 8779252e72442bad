// File: device/cuda/cuda_event.h
// A cudaEvent_t with a timestamp on the host's steady_clock scale: the device
// records a base event when it is created, anchored to steady_clock at that
// moment; an event's time is the anchor plus cudaEventElapsedTime from the
// base. (That is a float in ms: ~0.5 us resolution, coarser after hours.)
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>

#include "opscope/device.h"

namespace opscope {

struct CudaClock {
  cudaEvent_t base = nullptr;
  int64_t base_host_ns = 0;  // steady_clock when base was reached
};

class CudaEvent : public Event {
 public:
  CudaEvent(int ordinal, cudaEvent_t event, const CudaClock* clock)
      : ordinal_(ordinal), event_(event), clock_(clock) {}
  ~CudaEvent() override;

  bool Query() override;
  Status DoSynchronize() override;
  StatusOr<int64_t> TimestampNs() override;

  cudaEvent_t handle() const { return event_; }
  int ordinal() const { return ordinal_; }
  void MarkRecorded() { recorded_.store(true, std::memory_order_relaxed); }

 private:
  const int ordinal_;
  cudaEvent_t event_;
  const CudaClock* clock_;
  std::atomic<bool> recorded_{false};  // cudaEventQuery calls a never-recorded event done
};

}  // namespace opscope
