// File: graph/runtime/stream_clock.h
// Puts every stream's timestamps on one clock. Each stream's clock is read
// against the host's at two anchors, one before and one after the run: the
// host reads steady_clock, records an event on the idle stream and waits for
// it, then reads steady_clock again. The offset at an anchor is the event's
// device time minus the midpoint of the host bracket (the bracket's half
// width is the uncertainty); between anchors the offset is interpolated, so a
// drifting clock is corrected too. A stream whose clock reads inside the
// host's bracket at both anchors is on the host's clock (the cpu backend's
// streams all read steady_clock): its offset is 0, since the midpoint would
// only add the bracket's error; on a GPU the offsets are real.
//
//   std::vector<graph::StreamClock> clocks = graph::ComputeStreamClocks(result.anchors);
//   graph::ApplyCalibration(schedule, clocks);  // fills raw and calibrated times
#pragma once

#include <cstdint>
#include <vector>

#include "graph/runtime/scheduler.h"

namespace opscope::graph {

struct ClockAnchor {
  int stream_id = 0;              // schedule stream id
  int64_t host_before_ns = 0;     // steady_clock before the record
  int64_t host_after_ns = 0;      // steady_clock once the event was reached
  int64_t device_ns = 0;          // the event's timestamp on the stream's clock
};

struct StreamClock {
  int stream_id = 0;
  int64_t begin_device_ns = 0, end_device_ns = 0;  // anchor times on the stream's clock
  double begin_offset_ns = 0, end_offset_ns = 0;   // device - host at each anchor
  double uncertainty_ns = 0;                       // the widest half bracket
  // Device time -> host (common) time.
  double ToCommonNs(int64_t device_ns) const;
};

// `begin` and `end` hold one anchor per stream (matched by stream_id).
StatusOr<std::vector<StreamClock>> ComputeStreamClocks(const std::vector<ClockAnchor>& begin,
                                                       const std::vector<ClockAnchor>& end);

// Fills, for every task with raw times: cal_start/end_ns, desc.start_us
// (calibrated, from the run's first calibrated start), start_us_raw (from the
// first raw start), desc.duration_us_raw and desc.duration_us_calibrated.
Status ApplyCalibration(Schedule& schedule, const std::vector<StreamClock>& clocks);
// The second half of ApplyCalibration: the relative starts and the durations
// from the raw and calibrated times the tasks hold.
void DeriveRelativeTimes(Schedule& schedule);

}  // namespace opscope::graph
