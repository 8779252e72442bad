// File: opscope/profile.h
// `ops-debug profile` as one library call: the op instance of an
// OpRunRequest is first run and judged as `ops-debug run` does it (a fast
// wrong kernel is no result), then timed over `iterations` calls after
// `warmup` ones. Every call gives two layers of time: the API time (the whole
// call as the caller sees it) broken into the dispatcher's measured phases,
// and the device time (the kernel between its stream events). The kernel's
// median is held against the roofline (opscope/roofline.h) of peaks measured
// by calibration (cached per machine; the first use measures) unless given.
// The profiler's own cost is measured: every recorded call is paired with an
// unrecorded one, interleaved, and the difference of medians reported.
//
//   ProfileRequest req{.run = {.op = "Relu", .input_shapes = {Shape({1 << 22})}}, .iterations = 50,
//                      .timeline = "timeline.json"};
//   OPSCOPE_ASSIGN_OR_RETURN(OpRunReport r, ProfileOpInstance(req));
//   PrintProfile(r, std::cout, /*color=*/false);  // one line per kernel, then the phases
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "opscope/harness.h"
#include "opscope/report.h"

namespace opscope {

struct ProfileRequest {
  OpRunRequest run;         // every flag of ops-debug run; run.report gets the profile section too
  int warmup = 3;           // --warmup
  int iterations = 20;      // --iters
  bool cold_cache = false;  // --cold-cache: flush the last-level cache before every call
  double peak_bw_gbs = 0;   // --peak-bw: the memory roof, GB/s (0: calibrated)
  double peak_gflops = 0;   // --peak-flops: the compute roof, GFLOP/s, every dtype (0: calibrated)
  std::string timeline;     // --output: timeline.json (Chrome Trace Event Format), atomically
  // The web UI's page of the timeline and the roofline, written atomically
  // to `html` before report.json: `html_page` makes it (the UI is compiled
  // into the tools, not the library) from the report so far and the timeline.
  std::string html;
  std::function<StatusOr<std::string>(const OpRunReport& report, const std::string& timeline_json)> html_page;
  bool measure_overhead = true;
};

// Errors (exit 2) before anything runs: every check of RunOpInstance, plus
// --iters < 1, --warmup < 0, a peak <= 0 given, an output folder that is missing.
StatusOr<OpRunReport> ProfileOpInstance(const ProfileRequest& request);

// The kernel's line ("4.8x its lower bound" in yellow when `color` and the
// time is over twice the bound), the API time's phases, the overhead.
void PrintProfile(const OpRunReport& report, std::ostream& out, bool color);

}  // namespace opscope
