#include "graph/runtime/stream_clock.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace opscope::graph {

double StreamClock::ToCommonNs(int64_t device_ns) const {
  double offset = begin_offset_ns;
  const int64_t span = end_device_ns - begin_device_ns;
  if (span > 0) {
    const double f = static_cast<double>(device_ns - begin_device_ns) / static_cast<double>(span);
    offset = begin_offset_ns + (end_offset_ns - begin_offset_ns) * f;
  }
  return static_cast<double>(device_ns) - offset;
}

namespace {

double Offset(const ClockAnchor& a) {
  const double host_mid = 0.5 * (static_cast<double>(a.host_before_ns) + static_cast<double>(a.host_after_ns));
  return static_cast<double>(a.device_ns) - host_mid;
}

bool Within(const ClockAnchor& a) { return a.host_before_ns <= a.device_ns && a.device_ns <= a.host_after_ns; }

}  // namespace

StatusOr<std::vector<StreamClock>> ComputeStreamClocks(const std::vector<ClockAnchor>& begin,
                                                       const std::vector<ClockAnchor>& end) {
  std::vector<StreamClock> clocks;
  for (const ClockAnchor& b : begin) {
    auto e = std::find_if(end.begin(), end.end(), [&](const ClockAnchor& x) { return x.stream_id == b.stream_id; });
    if (e == end.end()) return InternalError("stream " + std::to_string(b.stream_id) + " has no end anchor");
    StreamClock c;
    c.stream_id = b.stream_id;
    c.begin_device_ns = b.device_ns;
    c.end_device_ns = e->device_ns;
    // A clock read inside both host brackets is the host's clock as far as
    // two anchors can tell (the cpu backend's streams read steady_clock):
    // its offset is 0, not the midpoints' guess, which would move each
    // stream by up to half a bracket (tens of us when a stream thread wakes
    // late) and set the streams' waits out of order.
    const bool host_clock = Within(b) && Within(*e);
    c.begin_offset_ns = host_clock ? 0 : Offset(b);
    c.end_offset_ns = host_clock ? 0 : Offset(*e);
    c.uncertainty_ns = 0.5 * static_cast<double>(std::max(b.host_after_ns - b.host_before_ns,
                                                          e->host_after_ns - e->host_before_ns));
    clocks.push_back(c);
  }
  return clocks;
}

Status ApplyCalibration(Schedule& schedule, const std::vector<StreamClock>& clocks) {
  auto clock_of = [&](int stream) -> const StreamClock* {
    for (const StreamClock& c : clocks) {
      if (c.stream_id == stream) return &c;
    }
    return nullptr;
  };
  for (ScheduledTask& t : schedule.tasks) {
    if (t.raw_start_ns < 0) continue;
    const StreamClock* c = clock_of(t.desc.stream_id);
    if (!c) return InternalError("stream " + std::to_string(t.desc.stream_id) + " has no clock anchors");
    t.cal_start_ns = std::llround(c->ToCommonNs(t.raw_start_ns));
    t.cal_end_ns = std::max(t.cal_start_ns, static_cast<int64_t>(std::llround(c->ToCommonNs(t.raw_end_ns))));
  }
  DeriveRelativeTimes(schedule);
  return Status::Ok();
}

void DeriveRelativeTimes(Schedule& schedule) {
  int64_t raw_origin = std::numeric_limits<int64_t>::max();
  int64_t cal_origin = std::numeric_limits<int64_t>::max();
  for (const ScheduledTask& t : schedule.tasks) {
    if (t.raw_start_ns < 0) continue;
    raw_origin = std::min(raw_origin, t.raw_start_ns);
    cal_origin = std::min(cal_origin, t.cal_start_ns);
  }
  for (ScheduledTask& t : schedule.tasks) {
    if (t.raw_start_ns < 0) continue;
    t.start_us_raw = static_cast<double>(t.raw_start_ns - raw_origin) / 1e3;
    t.desc.start_us = static_cast<double>(t.cal_start_ns - cal_origin) / 1e3;
    t.desc.duration_us_raw = static_cast<double>(t.raw_end_ns - t.raw_start_ns) / 1e3;
    t.desc.duration_us_calibrated = static_cast<double>(t.cal_end_ns - t.cal_start_ns) / 1e3;
  }
}

}  // namespace opscope::graph
