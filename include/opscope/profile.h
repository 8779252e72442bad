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

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "opscope/harness.h"
#include "opscope/report.h"
#include "opscope/roofline.h"
#include "opscope/suspects.h"

namespace opscope {

// "full", "kernel" or "api"; an error names the `scope` field.
StatusOr<ProfileScope> ParseProfileScope(std::string_view text);

struct ProfileRequest {
  OpRunRequest run;         // every flag of ops-debug run; run.report gets the profile section too
  ProfileScope scope = ProfileScope::kFull;  // --mode: what is measured
  int warmup = 3;           // --warmup
  int iterations = 20;      // --iters
  bool cold_cache = false;  // --cold-cache: flush the last-level cache before every call
  double peak_bw_gbs = 0;   // --peak-bw: the memory roof, GB/s (0: calibrated)
  double peak_gflops = 0;   // --peak-flops: the compute roof, GFLOP/s, every dtype (0: calibrated)
  // The roofs as they are, in place of the two above: a sweep obtains them
  // once for all its candidates, each dtype keeping its own compute roof.
  std::optional<RoofPeaks> peaks;
  // --output: timeline.json (Chrome Trace Event Format), atomically. The page
  // of it (the web UI's timeline and roofline) is the report layer's:
  // ProfileOpWithPage writes both (src/report/profile_page.h).
  std::string timeline;
  bool measure_overhead = true;
};

// Errors (exit 2) before anything runs: every check of RunOpInstance, plus
// --iters < 1, --warmup < 0, a peak <= 0 given, an output folder that is missing.
StatusOr<OpRunReport> ProfileOpInstance(const ProfileRequest& request);

// The kernel's line ("4.8x its lower bound" in yellow when `color` and the
// time is over twice the bound), the API time's phases, the overhead.
void PrintProfile(const OpRunReport& report, std::ostream& out, bool color);

}  // namespace opscope

namespace opscope {

// ---- the hot chain of a chain of ops ----------------------------------------
// `ops-debug profile --chain "Relu>Sigmoid"`: a chain in the --baseline
// syntax ("OpA{attrs}>OpB>OpC"), stage 1 on the inputs of `base.run`
// (--input-shapes/--dtype/--inputs, seed, fill, device, plugins), each later
// stage on what the kernel of the one before wrote (generated inputs of those
// shapes only where that stage's outputs were not read back). Every stage is run,
// judged against its reference and timed alone as ProfileOpInstance does it;
// the stages then stand as the nodes of a graph run one after another (all
// of it the critical path), the output of stage k feeding stage k+1, for the
// suspects (opscope/suspects.h). base.run.op, attrs, tunables, report and the
// timeline are not used.
struct ChainStageProfile {
  std::string name;    // the op's name; "Relu#2" for its second stage
  OpRunReport report;  // with its profile section
  std::string note;    // "the next stage runs on generated inputs: ..." when it does
};

struct ChainProfile {
  std::string chain;
  std::vector<ChainStageProfile> stages;
  SuspectFacts facts;
  std::vector<Suspect> suspects;  // ranked
};

// Errors (exit 2) name --chain: a stage that does not parse, an unknown op,
// shapes that do not flow; and every error of ProfileOpInstance.
StatusOr<ChainProfile> ProfileChain(const ProfileRequest& base, const std::string& chain);

// Each stage's time, bytes and efficiency, then the ranked suspects.
void PrintChainProfile(const ChainProfile& chain, std::ostream& out, bool color);

// The ranked suspects as text lines, "  1. [fusion] fuse Relu into Sigmoid: ..."
void PrintSuspects(const std::vector<Suspect>& suspects, std::ostream& out);

}  // namespace opscope
