// File: opscope/report.h
// What the op harness (opscope/harness.h) finds out about one op instance:
// the report `ops-debug run` prints and writes as report.json
// ("opscope.report/1"), as plain data a program can read field by field.
//
//   OPSCOPE_ASSIGN_OR_RETURN(OpRunReport r, RunOpInstance(request));
//   for (const OpRunOutput& o : r.outputs)
//     if (!o.passed()) std::printf("%s: %lld mismatched\n", o.name.c_str(), (long long)o.compare.mismatched);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "opscope/compare.h"
#include "opscope/op.h"
#include "opscope/roofline.h"
#include "opscope/suspects.h"
#include "opscope/tensor.h"
#include "opscope/trace.h"

namespace opscope {

// One output whose bits differed between repeats of the same call.
struct RunDifference {
  int output = 0;
  std::string name;
  int runs = 0;              // repeats compared with the first run
  int runs_differing = 0;    // of those, how many differ in any bit
  int first_differing_run = -1;           // 1-based repeat number
  int64_t elements_differing = 0;         // the most over the repeats
  int64_t first_index = -1;               // row-major, in the first differing repeat
  std::vector<int64_t> first_coords;
  double first_value = 0, other_value = 0;  // run 1 and the differing repeat there
  double max_abs_diff = 0;                  // over all repeats
  std::vector<int64_t> max_diff_coords;
};

// Which input elements one output element read.
struct InputRegion {
  std::vector<IndexBox> boxes;  // one per input; empty: the element does not read it
  std::string method;           // "index map" or "perturbation"
  int probes = 0;               // op runs the perturbation took
};

// Inputs cropped around a region under which the call still fails.
struct MinimalRepro {
  bool found = false;             // some crop smaller than the original still fails
  std::vector<Tensor> inputs;     // the cropped inputs (host, contiguous)
  std::vector<IndexBox> crops;    // per input, in the original's coordinates
  int attempts = 0;               // crops tried
  int64_t original_bytes = 0, repro_bytes = 0;
  std::string note;               // why nothing was found
  double Ratio() const { return repro_bytes ? static_cast<double>(original_bytes) / repro_bytes : 0; }
};

struct OpRunInput {
  std::string name;
  Tensor tensor;
  std::string origin;  // "normal seed 7", the .npy path, or "given"
};

// --readback stats: what the device summarised of one output (and the same
// numbers of the golden, computed on the host).
struct TensorStats {
  int64_t count = 0, nan = 0, inf = 0;
  double min = 0, max = 0, mean = 0, rms = 0;  // over finite values
};

struct OpRunOutput {
  std::string name;
  std::string location;  // where the kernel wrote it: "cpu @0x7f01…0040"
  Tensor actual;    // the kernel's, on the host (full readback), or the sampled elements
  Tensor expected;  // the golden's (float64 for the reference's float outputs)
  CompareResult compare;
  // Readback stats only: the summaries and what differed between them.
  std::optional<TensorStats> actual_stats, expected_stats;
  std::vector<std::string> stats_findings;
  // Writes outside the output's bounds, caught by the canaries around it:
  // "y: 1 element written past the end (y[1000], value 0.73)". A failure
  // even where every element inside is right.
  std::string out_of_bounds;
  // Set for an output the op's schema says it leaves alone in this call
  // (OpDef::OutputWrittenOnlyWhen): "not written in this call, by design:
  // written only when training=1". Such an output is not compared.
  std::string not_written;
  // Set where the default tolerance was widened for this output (a long sum
  // of products: analysis/harness/sum_tolerance.h), saying from what to what.
  std::string tolerance_note;
  bool passed() const {
    return out_of_bounds.empty() && (actual_stats ? stats_findings.empty() : compare.passed());
  }
};

// A tracepoint name hit by both the kernel and the reference, side by side.
struct TraceComparison {
  std::string name;
  int order = 0;
  bool matches = true;
  std::string detail;  // what differs, in words
};

struct ReproOutcome {
  std::string output;             // the output whose worst element was studied
  std::vector<int64_t> coords;    // that element
  InputRegion region;
  std::string region_text;        // "x[3,17,0:2,54:57]"
  MinimalRepro repro;
  std::vector<std::string> files; // the cropped inputs written
  std::string command;            // runs the op on them
  std::string note;               // why there is no reproducer, when there is none
  // What the reproducer still shows, judged as the crops were (the same kind
  // of failure, errors within a decade): "max error 0.14 (was 0.18)".
  std::string still_shows;
};

// Order statistics of repeated timings, in microseconds.
struct TimingStats {
  int count = 0;
  double min = 0, p25 = 0, median = 0, mean = 0, p75 = 0, max = 0;
  double iqr() const { return p75 - p25; }
};
TimingStats ComputeTimingStats(std::vector<double> samples);  // linear interpolation between ranks

struct PhaseProfile {
  std::string name;  // a dispatcher phase ("validate", ..., "finish"), or "read back"
  TimingStats us;
};

// What `ops-debug profile` measured of one op instance: the same instance
// (op_id) whose correctness the rest of the report holds.
// What `ops-debug profile` measures (--mode), as profilers name it: kFull,
// the API time by phase and the device time; kKernel, the device time only
// (the dispatcher reads no phase clocks); kApi, the host's phases only (no
// device events are recorded, so there is no device time and no roofline).
enum class ProfileScope { kFull, kKernel, kApi };
const char* ProfileScopeName(ProfileScope s);  // "full", "kernel", "api"

struct OpProfile {
  ProfileScope scope = ProfileScope::kFull;
  int warmup = 0, iterations = 0;
  bool cold_cache = false;            // the last-level cache flushed before every call
  TimingStats api_us;                 // the whole call as the caller sees it
  TimingStats device_us;              // the kernel between its stream events
  TimingStats queue_us;               // the hand-off: kernel enqueued to its start event reached
  std::vector<PhaseProfile> phases;   // where api_us goes, phase by phase, in order
  TimingStats unrecorded_api_us;      // the same calls, interleaved, without recording
  double overhead_us = 0;             // median API time recorded less unrecorded
  std::vector<KernelLaunchInfo> launches;  // of the last call
  std::optional<Cost> cost;           // empty: the op has no cost model
  DType dtype = DType::kF32;          // the roof's dtype (the first output's)
  RooflinePoint roofline;             // at the median device time
  RoofPeaks peaks;
  // The op's own suspects (opscope/suspects.h: read patterns, small grid), ranked.
  std::vector<Suspect> suspects;
  std::string peaks_note;             // how the peaks were obtained
  std::string timeline_file;          // timeline.json, when written
  std::string timeline_json;          // its text (not in report.json): the page of it is made from this
  std::string html_file;              // the page showing it, when written
};

// An op instance's verdict, as report.json and the text write it: "error"
// (the kernel failed), "nondeterministic" (--repeat saw bits differ),
// "passed" or "failed" (against the golden).
enum class RunStatus { kPassed, kFailed, kNondeterministic, kError };
const char* RunStatusName(RunStatus s);

struct OpRunReport {
  std::string op;
  std::string device;
  std::string kernel;
  std::string golden = "reference";  // "reference", "expected files", "baseline Add>Gelu@cpu"
  std::string readback = "full";
  std::vector<KernelLaunchInfo> launches;
  double device_us = -1;          // the first run
  std::vector<double> repeat_us;  // every run, with repeats
  uint64_t op_id = 0;
  // The op instance as every process names it (op, attrs, input shapes and
  // dtypes) and its input data's fingerprint: what ops-debug diagnose links
  // a crash to this report with (op_id is an identity within one process).
  uint64_t instance_key = 0, input_fingerprint = 0;
  std::vector<OpRunInput> inputs;
  std::vector<OpRunOutput> outputs;
  std::string kernel_error;  // the kernel or the golden failed after the call was validated
  int repeats = 1;
  std::vector<RunDifference> nondeterminism;
  std::vector<TracepointHit> tracepoints;
  std::vector<TraceComparison> trace_comparisons;
  std::optional<ReproOutcome> repro_outcome;
  std::vector<std::string> saved_files;
  std::string report_file;  // where report.json was written, if asked
  std::string repro;        // the ops-debug command line that runs this again
  std::optional<OpProfile> profile;  // ops-debug profile's section

  double median_us() const;  // over repeat_us; -1 when nothing ran
  bool passed() const;
  RunStatus status() const;
  int ExitCode() const { return passed() ? 0 : 1; }
};

}  // namespace opscope
