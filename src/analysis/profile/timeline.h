// File: analysis/profile/timeline.h
// timeline.json for `ops-debug profile`, in the Chrome Trace Event Format
// (Perfetto and the project's web UI open it as is):
//   pid 1 "host": one lane per host thread that dispatched; each call an "api"
//     X event, its dispatcher phases nested inside as "phase" X events;
//   pid 2 the device: one lane per stream; each kernel a "kernel" X event whose
//     args carry op, op_id, kernel, the launch config (grid, block,
//     vector_width; on CUDA shared memory per block), input and output
//     addresses and bytes, the cost model's bytes and FLOPs, bound, lower
//     bound and efficiency;
//   a flow ("s" at the hand-off on the host, "f" with bp "e" on the kernel)
//     from each call to its kernel.
// ts and dur are microseconds from the first call; device times are put on
// the host's clock by one anchor taken before the calls.
// The top-level object carries "schema": "opscope.timeline/1".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "capture/recorder.h"
#include "opscope/dispatch.h"
#include "opscope/report.h"

namespace opscope {

// One timed, recorded call.
struct ProfiledCall {
  int iteration = 0;
  uint64_t seq = 0, op_id = 0;
  int64_t api_begin_ns = 0, api_end_ns = 0;  // steady_clock around the whole call
  DispatchTimes times;
  int64_t readback_end_ns = 0;  // 0: nothing was read back (times' finish to here otherwise)
  bool has_entry = false;       // the recorder's entry was found
  LaunchEntry entry;
};

struct TimelineInput {
  std::string op, device;
  uint64_t instance_op_id = 0;  // the op instance the report is about
  int64_t device_clock_offset_ns = 0;  // device clock - host clock
  std::vector<ProfiledCall> calls;
  const OpProfile* profile = nullptr;  // cost and roofline of the kernel
};

std::string ProfileTimelineJson(const TimelineInput& in);

}  // namespace opscope
